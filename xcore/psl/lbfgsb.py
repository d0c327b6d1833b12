"""scipy's L-BFGS-B without the rest of scipy.optimize, for the command's fresh process.

``import scipy.optimize`` runs the package's ``__init__``, which imports every solver (linprog,
shgo, differential evolution, ...): about 0.2 s of CPU in a fresh process, where MAP inference needs
only L-BFGS-B. `minimize_lbfgsb` loads scipy's own ``scipy.optimize._lbfgsb_py`` (the code behind
``minimize(method="L-BFGS-B")``) under a bare stand-in for the package, then removes the stand-in so
that a later ``import scipy.optimize`` imports the real package (reusing the loaded submodules).
Any failure falls back to the public ``scipy.optimize.minimize``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Callable

import numpy as np

_IMPL: list = []


def _load() -> tuple[Callable, Callable] | None:
    """(``_minimize_lbfgsb``, ``MemoizeJac``) from scipy, loaded without the package init; None if not possible."""
    if _IMPL:
        return _IMPL[0]
    impl = None
    try:
        if "scipy.optimize" in sys.modules:
            from scipy.optimize._lbfgsb_py import _minimize_lbfgsb  # start-up: scipy.optimize already loaded
            from scipy.optimize._optimize import MemoizeJac  # start-up: scipy.optimize already loaded
        else:
            import scipy  # noqa: F401  (the parent must be real)

            spec = importlib.util.find_spec("scipy.optimize")
            stub = types.ModuleType("scipy.optimize")
            stub.__path__ = list(spec.submodule_search_locations or [])
            stub.__spec__ = spec
            stub.__package__ = "scipy.optimize"
            sys.modules["scipy.optimize"] = stub
            try:
                _minimize_lbfgsb = importlib.import_module("scipy.optimize._lbfgsb_py")._minimize_lbfgsb
                MemoizeJac = importlib.import_module("scipy.optimize._optimize").MemoizeJac
            finally:
                if sys.modules.get("scipy.optimize") is stub:
                    del sys.modules["scipy.optimize"]
        impl = (_minimize_lbfgsb, MemoizeJac)
    except Exception:  # noqa: BLE001 - another scipy layout: the public path below works everywhere
        impl = None
    _IMPL.append(impl)
    return impl


def minimize_lbfgsb(fun_and_grad: Callable, x0: np.ndarray, lower: np.ndarray, upper: np.ndarray, *,
                    maxiter: int, gtol: float, ftol: float = 0.0, maxcor: int = 10,
                    callback: Callable | None = None):
    """``scipy.optimize.minimize(fun_and_grad, x0, jac=True, method="L-BFGS-B", bounds=...)``."""
    impl = _load()
    if impl is None:
        # start-up: all of scipy.optimize, only when its private L-BFGS-B could not be loaded alone
        from scipy.optimize import Bounds, minimize

        return minimize(fun_and_grad, x0, jac=True, method="L-BFGS-B", bounds=Bounds(lower, upper),
                        options={"maxiter": maxiter, "ftol": ftol, "gtol": gtol, "maxcor": maxcor}, callback=callback)
    run, memoize = impl
    fun = memoize(fun_and_grad)
    return run(fun, np.asarray(x0, dtype=np.float64), jac=fun.derivative,
               bounds=np.column_stack([lower, upper]), maxiter=maxiter, ftol=ftol, gtol=gtol, maxcor=maxcor,
               callback=callback)
