"""The gateway to heavy or optional third-party packages (`xcore.optional_deps`): it imports a package on
first use, names the pip install when the package is missing, and refuses xcore's own modules."""

from __future__ import annotations

import sys

import pytest

from xcore.errors import ConfigError, XcoreError
from xcore.optional_deps import MissingDependency, import_optional


def test_imports_a_third_party_module_by_name():
    import json

    assert import_optional("json") is json
    assert import_optional("numpy.linalg").__name__ == "numpy.linalg"


def test_a_missing_optional_package_names_its_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "shap", None)  # import shap -> ImportError
    with pytest.raises(MissingDependency, match=r"the SHAP comparison needs the optional `shap` package: "
                                                r"pip install -e '\.\[explain\]'") as info:
        import_optional("shap", "the SHAP comparison")
    assert isinstance(info.value, ConfigError) and isinstance(info.value, XcoreError)


def test_a_missing_dependency_of_xcore_says_to_reinstall(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.cluster", None)  # even when another test loaded it
    with pytest.raises(MissingDependency, match="needs `scikit-learn`, a dependency of xcore .*pip install -e ."):
        import_optional("sklearn.cluster", "clustering")


def test_a_broken_dependency_inside_a_present_package_is_not_hidden(monkeypatch, tmp_path):
    (tmp_path / "brokenpkg_xc").mkdir()
    (tmp_path / "brokenpkg_xc" / "__init__.py").write_text("import no_such_module_xc\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_module_xc"):
        import_optional("brokenpkg_xc")


def test_xcore_modules_are_refused():
    with pytest.raises(ValueError, match="import statement"):
        import_optional("xcore.psl.model")
