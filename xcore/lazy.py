"""Package attributes imported on first use (PEP 562), so that importing a package stays cheap.

``import xcore.psl`` used to import every module of the package and, through them, scipy.optimize,
networkx and DuckDB (1 s); a command that needs three of its modules paid for all of them. A
package lists where each public name lives; `lazy_exports` gives it the module-level
``__getattr__`` / ``__dir__`` that import the defining module when a name is first used, so
``from xcore.psl import PSLModel`` and ``xcore.psl.PSLModel`` keep working unchanged.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any, Callable, Mapping, Sequence


def lazy_exports(package: str, exports: Mapping[str, Sequence[str]]) -> tuple[
        Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for `package` from ``{module: [names defined there]}``."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            # a submodule the eager __init__ used to import as a side effect (``xcore.data.io``)
            if not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
                return importlib.import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__, list(where)


def defer_module(name: str) -> None:
    """Make submodule `name` load on first attribute access (`importlib.util.LazyLoader`).

    For third-party modules that get imported without being used: scipy.sparse's array-API layer
    runs ``from numpy import *``, which imports ``numpy.f2py`` (a Fortran wrapper generator, 0.1 s
    of CPU and more on a loaded machine) through numpy's lazy attributes. Deferred, the module is
    bound but only executed if something touches it. No-op when it is already imported or absent.
    """
    if name in sys.modules:
        return
    parent_name, _, child = name.rpartition(".")
    try:
        parent = importlib.import_module(parent_name) if parent_name else None
        spec = importlib.util.find_spec(name)
    except ImportError:
        return
    if spec is None or spec.loader is None:
        return
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    if parent is not None:
        setattr(parent, child, module)  # else the parent's own lazy __getattr__ would import it again
