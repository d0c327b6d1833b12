"""`import xcore.psl` and the modules of the PSL command stay light (issue 12): checked in a fresh process.

Not a timing test: it asserts which libraries are in ``sys.modules`` after the import, so it fails
when someone adds a module-level import of torch, scikit-learn, plotly, streamlit (or, for the
bare package, any numerical library) on these paths.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("torch", "sklearn", "plotly", "streamlit")
LAZY_PACKAGES = ("xcore.psl", "xcore.esms", "xcore.data", "xcore.data.io", "xcore.logic", "xcore.explain")


def _loaded_after(statement: str) -> set[str]:
    """Top-level packages in sys.modules after running `statement` in a fresh interpreter."""
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return set(json.loads(res.stdout.strip().splitlines()[-1]))


def test_import_xcore_psl_loads_no_numerical_library():
    loaded = _loaded_after("import xcore.psl")
    assert not loaded & {*HEAVY, "numpy", "pandas", "scipy", "duckdb", "pyarrow", "networkx"}


@pytest.mark.slow
def test_psl_command_path_imports_no_heavy_library():
    loaded = _loaded_after("from xcore.psl import PSLModel, map_inference\n"
                           "from xcore.data.io.psl_folder import load_psl_folder, read_psl_file\n"
                           "from xcore.logic import AtomStore, ground, parse_rules")
    assert not loaded & {*HEAVY, "networkx"}
    assert {"pandas", "duckdb"} <= loaded  # the statement did import the pipeline


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_resolves_to_its_module_attribute(package):
    mod = importlib.import_module(package)
    assert mod.__all__, package
    for name in mod.__all__:
        value = getattr(mod, name)
        assert value is not None
        assert name in dir(mod)
    with pytest.raises(AttributeError):
        getattr(mod, "no_such_name_here")


def test_from_import_of_lazy_names_and_submodules():
    from xcore.data import Predicate, io
    from xcore.psl import PSLModel, model

    assert PSLModel is model.PSLModel
    assert io.load_psl_folder is importlib.import_module("xcore.data.io.psl_folder").load_psl_folder
    assert Predicate("p", 1).arity == 1


def test_submodules_are_attributes_of_lazy_packages():
    code = "import xcore.data\nprint(xcore.data.io.psl_folder.read_psl_file.__name__)"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "read_psl_file"


def test_deferred_module_loads_on_first_use():
    code = ("import sys\nfrom xcore.lazy import defer_module\ndefer_module('numpy.f2py')\nimport scipy.sparse\n"
            "print('numpy.f2py.crackfortran' in sys.modules)\nimport numpy\nprint(callable(numpy.f2py.run_main))\n"
            "print('numpy.f2py.crackfortran' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True", "True"]
