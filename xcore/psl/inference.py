"""MAP inference for hinge-loss MRFs: argmin_y E(y) over [0, 1]^n, solved exactly.

Three solvers, all vectorised over ground rules:
- ``lbfgs``: scipy L-BFGS-B with box bounds, for squared programs (hard rows over one atom are
  bounds; hard rows over several atoms are held by an augmented Lagrangian, `map_auglag`);
- ``admm``: consensus ADMM as PSL does, for linear hinges and hard constraints;
- ``qp``: the same problem as a convex QP (or LP) in HiGHS, an independent exact solver.
``auto`` picks L-BFGS-B when every potential is squared, else the HiGHS QP (ADMM stays available for
parity with PSL).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.optional_deps import import_optional
from xcore.psl.admm import map_admm
from xcore.psl.lbfgsb import minimize_lbfgsb  # scipy's L-BFGS-B, loaded on first use without scipy.optimize
from xcore.psl.map_problem import MAPResult, box_bounds, start_state
from xcore.psl.program import HingeProgram
from xcore.runtime import Progress, limited_threads, new_highs, throttled


def map_inference(prog: HingeProgram, method: str = "auto", y0: np.ndarray | None = None,
                  tol: float = 1e-10, max_iter: int = 20000, progress: Progress | None = None) -> MAPResult:
    """Minimise the energy; `y0` warm-starts (e.g. from a previous solution); `progress` hears the
    iterations of L-BFGS-B and ADMM (at most every 0.1 s, so a cancel stops within one).

    BLAS is held to one thread: these solves are sparse and small per call, and idle BLAS threads
    spinning on a 2-core machine made them 10-60x slower (bench/psl_esms_parallel.py).
    """
    with limited_threads(1):
        return _map_inference(prog, method, y0, tol, max_iter, progress)


def _only_bounds(prog: HingeProgram) -> bool:
    """Every hard row is over one atom (a bound), so L-BFGS-B's box holds them all."""
    return bool(prog.C.shape[0] == 0 or (np.diff(prog.C.tocsr().indptr) <= 1).all())


def _map_inference(prog: HingeProgram, method: str, y0: np.ndarray | None, tol: float,
                   max_iter: int, progress: Progress | None = None) -> MAPResult:
    if method == "auto":
        method = "lbfgs" if bool(prog.squared.all()) else "qp"
    if method == "lbfgs":
        return map_lbfgs(prog, y0, tol, max_iter, progress)
    if method == "admm":
        return map_admm(prog, y0, tol=max(tol, 1e-9), max_iter=max_iter, progress=progress)
    if method == "qp":
        return map_qp(prog)
    raise XcoreError(f"unknown inference method {method!r}; use auto, lbfgs, admm or qp")


def map_lbfgs(prog: HingeProgram, y0: np.ndarray | None = None, tol: float = 1e-10,
              max_iter: int = 20000, progress: Progress | None = None) -> MAPResult:
    """L-BFGS-B on the smooth energy (squared hinges only).

    L-BFGS-B handles box bounds only (hard rows over one atom become bounds); hard rows over
    several atoms (``HasCat(A, +C) = 1 .``) are held by an augmented Lagrangian around it
    (`map_auglag`); linear hinges (a non-smooth energy) raise XcoreError.
    """
    bounds3 = box_bounds(prog) if prog.C.shape[0] else (np.zeros(prog.n_atoms), np.ones(prog.n_atoms), np.zeros(0))
    if bool(prog.squared.all()) and bounds3 is None:  # a bound leaves no value: the exact QP says why
        res = map_qp(prog)
        res.method = "lbfgs→qp"
        res.message = f"hard bounds conflict; solved by the HiGHS QP ({res.message})"
        return res
    if bool(prog.squared.all()) and len(bounds3[2]) > 0:
        return map_auglag(prog, bounds3, y0, tol, max_iter, progress)
    if not prog.squared.all():
        raise XcoreError("L-BFGS-B needs a smooth program (all rules squared, no hard constraints); "
                         "use method='admm' or 'qp'")
    t0 = time.perf_counter()
    lo, hi, _ = bounds3
    x0 = np.clip(start_state(prog, y0), lo, hi)
    if prog.n_atoms == 0 or (hi - lo <= 0).all():  # nothing to optimise (every atom fixed by a hard rule)
        return MAPResult(x0, prog.energy(x0), 0, time.perf_counter() - t0, "lbfgs", True)
    # The squared-hinge energy is only C1: at a kink the quasi-Newton memory can stall the line
    # search far from the optimum. Restart (fresh memory) until the projected gradient vanishes.
    nit, y = 0, x0
    tick = throttled(progress)
    seen = [0]

    def callback(*_: object) -> None:  # per L-BFGS-B iteration: the cancel check rides on `tick`
        seen[0] += 1
        tick(min((nit + seen[0]) / max_iter, 1.0), f"L-BFGS-B iteration {nit + seen[0]:,}")

    for _ in range(20):
        seen[0] = 0
        res = minimize_lbfgsb(prog.energy_and_gradient, y, lo, hi, maxiter=max_iter, gtol=tol,
                              callback=None if tick is None else callback)  # hard rows over one atom: bounds
        nit += int(res.get("nit", 0))  # scipy omits it when its own presolve ends the run
        y = np.clip(res.x, lo, hi)
        if prog.kkt_residual(y, lo, hi) <= max(np.sqrt(tol), 1e-7) or nit >= max_iter:
            break
    kkt = prog.kkt_residual(y, lo, hi)
    converged = kkt <= max(np.sqrt(tol), 1e-7) * 10
    return MAPResult(y, prog.energy(y), nit, time.perf_counter() - t0, "lbfgs", converged,
                     f"{res.message}; projected gradient {kkt:.2e}")


def _inner_solve(fun: Callable[[np.ndarray], tuple[float, np.ndarray]], y: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray, tol: float, max_iter: int, nit: int) -> tuple[np.ndarray, int, float]:
    """One inner problem of the augmented Lagrangian by L-BFGS-B, restarted (as in map_lbfgs: the squared
    hinges are only C1) until its projected gradient vanishes: (state, iterations so far, KKT residual)."""
    kkt = np.inf
    for _ in range(20):
        res = minimize_lbfgsb(fun, y, lo, hi, maxiter=max_iter, gtol=tol)
        nit += int(res.get("nit", 0))
        y = np.clip(res.x, lo, hi)
        g = fun(y)[1]
        pg = np.where(y <= lo + 1e-9, np.minimum(g, 0.0), np.where(y >= hi - 1e-9, np.maximum(g, 0.0), g))
        kkt = float(np.abs(np.where(hi - lo <= 1e-12, 0.0, pg)).max(initial=0.0))
        if kkt <= max(np.sqrt(tol), 1e-7) or nit >= max_iter:
            break
    return y, nit, kkt


def map_auglag(prog: HingeProgram, bounds3: tuple[np.ndarray, np.ndarray, np.ndarray], y0: np.ndarray | None,
               tol: float = 1e-10, max_iter: int = 20000, progress: Progress | None = None,
               feasibility: float = 1e-9) -> MAPResult:
    """Squared hinges under hard linear rows: the method of multipliers with L-BFGS-B inside.

    Minimises E(y) + sum_eq (l r + mu/2 r^2) + sum_ineq (max(0, l + mu r)^2 - l^2) / (2 mu) over the
    box, r = C y + d, then updates l (l += mu r on equality rows, l = max(0, l + mu r) on
    inequality rows) and raises mu tenfold when the violation did not fall fourfold; stops when the
    rows hold to `feasibility` and the inner problem's projected gradient vanishes (a KKT point of the
    convex program, hence its optimum). Exact in the limit, like ADMM, but each step is a smooth
    solve that L-BFGS-B does in few iterations.
    """
    t0 = time.perf_counter()
    lo, hi, rest = bounds3
    C = prog.C.tocsr()[rest]
    d = prog.d[rest]
    eq = prog.equality[rest]
    CT = C.T.tocsr()
    lam = np.zeros(len(d))
    mu = 10.0 * max(1.0, float(prog.w.max(initial=1.0)))
    y = np.clip(start_state(prog, y0), lo, hi)
    tick = throttled(progress)
    nit, outer, previous = 0, 0, np.inf

    def violation_of(r: np.ndarray) -> float:
        return float(np.max(np.where(eq, np.abs(r), np.maximum(r, 0.0)), initial=0.0))

    def lagrangian(x: np.ndarray) -> tuple[float, np.ndarray]:
        e, g = prog.energy_and_gradient(x)
        r = C @ x + d
        shifted = np.where(eq, lam + mu * r, np.maximum(lam + mu * r, 0.0))
        penalty = np.where(eq, lam * r + 0.5 * mu * r * r, (shifted * shifted - lam * lam) / (2 * mu))
        return e + float(penalty.sum()), g + CT @ shifted

    converged = False
    while nit < max_iter and outer < 100:
        outer += 1
        if tick is not None:
            tick(min(nit / max_iter, 1.0), f"augmented Lagrangian step {outer} (L-BFGS-B iteration {nit:,})")
        y, nit, kkt = _inner_solve(lagrangian, y, lo, hi, tol, max_iter, nit)
        r = C @ y + d
        viol = violation_of(r)
        lam = np.where(eq, lam + mu * r, np.maximum(lam + mu * r, 0.0))
        if viol <= feasibility and kkt <= max(np.sqrt(tol), 1e-7) * 10:
            converged = True
            break
        if viol > 0.25 * previous:
            mu *= 10.0
        previous = viol
    message = (f"augmented Lagrangian: {outer} multiplier steps, {nit} L-BFGS-B iterations; "
               f"hard rows hold to {violation_of(C @ y + d):.1e}")
    return MAPResult(y, prog.energy(y), nit, time.perf_counter() - t0, "lbfgs+al", converged, message)


def map_qp(prog: HingeProgram) -> MAPResult:
    """The MAP problem as a QP in HiGHS: min sum w s (+ w s^2) s.t. s >= A y + b, s >= 0, C y + d <= 0."""
    highspy = import_optional("highspy")  # start-up: HiGHS loads only when the QP solver is used

    t0 = time.perf_counter()
    n, m = prog.n_atoms, prog.n_potentials
    lin = ~prog.squared
    cost = np.concatenate([np.zeros(n), np.where(lin, prog.w, 0.0)])
    # rows: A y - s <= -b ; hard: C y <= -d (or = -d)
    G = sp.vstack([sp.hstack([prog.A, -sp.identity(m, format="csr")]),
                   sp.hstack([prog.C, sp.csr_matrix((prog.C.shape[0], m))])]).tocsc()
    upper = np.concatenate([-prog.b, -prog.d])
    lower = np.concatenate([np.full(m, -np.inf), np.where(prog.equality, -prog.d, -np.inf)])
    h = new_highs()  # output off, one thread (HiGHS keeps one scheduler per process)
    # HiGHS's active-set QP can cycle for ever on small degenerate programs (a 4-atom learning
    # sub-problem with two equality rows did); its iteration cap ends such a run, and ADMM solves it.
    h.setOptionValue("qp_iteration_limit", int(max(10_000, 20 * (n + m + G.shape[0]))))
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n + m, G.shape[0]
    lp.col_cost_ = cost
    lp.col_lower_ = np.zeros(n + m)
    lp.col_upper_ = np.concatenate([np.ones(n), np.full(m, inf)])
    lp.row_lower_ = np.where(np.isinf(lower), -inf, lower)
    lp.row_upper_ = upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = G.indptr.astype(np.int32)
    lp.a_matrix_.index_ = G.indices.astype(np.int32)
    lp.a_matrix_.value_ = G.data
    h.passModel(lp)
    sq_idx = np.flatnonzero(prog.squared & (prog.w > 0))
    if len(sq_idx):
        dim = n + m
        diag = np.zeros(dim)
        diag[n + sq_idx] = 2.0 * prog.w[sq_idx]
        cols = np.flatnonzero(diag)
        start = np.searchsorted(cols, np.arange(dim + 1)).astype(np.int32)
        h.passHessian(dim, len(cols), highspy.HessianFormat.kTriangular, start,
                      cols.astype(np.int32), diag[cols])
    h.run()
    status = h.getModelStatus()
    infeasible = (highspy.HighsModelStatus.kInfeasible, highspy.HighsModelStatus.kUnboundedOrInfeasible)
    if status in infeasible:
        raise XcoreError(f"HiGHS could not solve the MAP problem: {h.modelStatusToString(status)} "
                         "(are the hard constraints satisfiable?)")
    if status != highspy.HighsModelStatus.kOptimal:
        # HiGHS's active-set QP occasionally ends in a numerical "solve error" on tiny row bounds;
        # consensus ADMM (an independent method) then solves the same problem.
        res = map_admm(prog, tol=1e-10, max_iter=100_000)
        res.method = "qp→admm"
        res.message = f"HiGHS: {h.modelStatusToString(status)}; solved by ADMM instead"
        res.seconds = time.perf_counter() - t0
        return res
    y = np.clip(np.asarray(h.getSolution().col_value[:n]), 0.0, 1.0)
    info = h.getInfo()
    iters = int(info.simplex_iteration_count + info.qp_iteration_count + info.ipm_iteration_count)
    return MAPResult(y, prog.energy(y), iters, time.perf_counter() - t0, "qp", True, "optimal")
