"""Heavy or optional third-party packages, imported on first use through one gateway.

Why: start-up time. ``xcore --help``, ``xcore methods``, ``python -m xcore.psl`` and the Streamlit pages
must not pay for torch, scikit-learn, HiGHS, DuckDB, PyYAML, Dask, shap or onnxruntime before a
feature that needs them runs, so the modules that use them call `import_optional` inside the function
instead of importing at module level. A missing package becomes one clear `MissingDependency` naming
the ``pip install`` (the pyproject extra for the optional ones), as pandas does with
``pandas.compat._optional.import_optional_dependency``.

Only third-party names: xcore's own modules are always imported with import statements, so that the
import graph shows them (``tests/test_architecture.py`` checks both).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from xcore.errors import ConfigError

EXTRAS: dict[str, str] = {"shap": "explain", "onnxruntime": "onnx", "onnx": "onnx", "distributed": "dask",
                          "dask": "dask", "pslpython": "bench"}
"""Top-level import name -> the pyproject extra that installs it (the rest are xcore's own dependencies)."""
PIP_NAMES: dict[str, str] = {"sklearn": "scikit-learn", "yaml": "pyyaml", "torch_geometric": "torch-geometric",
                             "distributed": "dask[distributed]"}
"""Top-level import name -> its name on PyPI, where the two differ."""


class MissingDependency(ConfigError):
    """A third-party package a feature needs is not installed (the message says how to install it)."""


def import_optional(name: str, purpose: str = "") -> ModuleType:
    """The third-party module `name` (``"sklearn.cluster"``), imported now; `MissingDependency` when its
    package is absent, saying what needs it (`purpose`) and the ``pip install`` that adds it."""
    top = name.split(".")[0]
    if top == "xcore":
        raise ValueError(f"import_optional is for third-party packages; import {name} with an import statement")
    try:
        return importlib.import_module(name)
    except ImportError as e:
        if (e.name or top).split(".")[0] != top:
            raise  # the package is there but one of its own dependencies is broken: show that error
        raise MissingDependency(missing_message(top, purpose)) from None


def missing_message(top: str, purpose: str = "") -> str:
    """What to say when the package imported as `top` is missing."""
    pip_name = PIP_NAMES.get(top, top)
    need = f"{purpose} needs" if purpose else "this needs"
    if top in EXTRAS:
        return f"{need} the optional `{pip_name}` package: pip install -e '.[{EXTRAS[top]}]' (or pip install '{pip_name}')"
    return f"{need} `{pip_name}`, a dependency of xcore that is not installed: pip install -e ."
