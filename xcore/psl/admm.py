"""Consensus ADMM for hinge-loss MRFs, as PSL's own reasoner (Bach et al.): every non-zero of the
potentials and hard rows holds a local copy of its atom, updated in closed form, then averaged."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from xcore.psl.map_problem import HARD_TOL, MAPResult, box_bounds, check_hard_feasible, hard_violation, start_state
from xcore.psl.program import HingeProgram
from xcore.runtime import Progress, throttled

ADMM_RELAXATION = 1.6
"""Over-relaxation of the consensus step (Boyd et al. 2011, sec. 3.4.3: 1.5-1.8 usually speeds ADMM up)."""
ADMM_BALANCE = (10, 10.0, 2.0)
"""Normalised residual balancing (Wohlberg 2017): every 10 iterations, rho is multiplied (divided) by 2
when the relative primal residual exceeds the relative dual one tenfold (or the reverse). On
entity-resolution, whose atoms have thousands of local copies, this and the over-relaxation cut the
iterations 4.5-fold (bench/RESULTS.md, "PSL entity-resolution inference")."""


@dataclass
class _Consensus:
    """Consensus ADMM's fixed arrays: one local copy per non-zero of [A; C] (row-sorted), its row's
    offset, kind (0 linear hinge, 1 squared hinge, 2 hard <=, 3 hard =), weight and squared norm."""

    rows: np.ndarray
    cols: np.ndarray
    a: np.ndarray
    b: np.ndarray
    starts: np.ndarray
    kinds: dict[int, np.ndarray | None]
    w: np.ndarray
    norm2: np.ndarray
    count: np.ndarray
    lo: np.ndarray | float
    hi: np.ndarray | float

    def local_steps(self, s: np.ndarray, rho: float) -> np.ndarray:
        """How far each local copy moves along -a: the closed-form minimiser of its potential plus
        rho/2 |x - v|^2 (a projection for hard rows), given its row's value s = a.v + b."""
        step = np.zeros_like(s)
        for kind, idx in self.kinds.items():
            si, wi, ni = (s, self.w, self.norm2) if idx is None else (s[idx], self.w[idx], self.norm2[idx])
            if kind == 0:  # step of w/rho along -a, unless it overshoots the hinge -> project
                got = np.minimum(wi / rho, si / ni)
            elif kind == 1:
                got = 2 * wi * si / (rho + 2 * wi * ni)
            else:
                got = si / ni
            got = got if kind == 3 else np.where(si > 0, got, 0.0)
            if idx is None:
                step = got
            else:
                step[idx] = got
        return step


def _consensus(prog: HingeProgram) -> _Consensus:
    """The consensus problem of `prog`; hard rows over one atom become bounds (`box_bounds`)."""
    boxed = box_bounds(prog) if prog.C.shape[0] else None
    lo, hi = (boxed[0], boxed[1]) if boxed is not None else (0.0, 1.0)
    keep = boxed[2] if boxed is not None else np.arange(prog.C.shape[0])  # bounds are held by the clip
    M = sp.vstack([prog.A, prog.C.tocsr()[keep]], format="csr")
    M.eliminate_zeros()
    M.sort_indices()
    coo = M.tocoo()
    rows, cols, a = coo.row, coo.col, coo.data
    kind = np.concatenate([np.where(prog.squared, 1, 0), np.where(prog.equality[keep], 3, 2)])[rows]
    present = np.unique(kind)
    kinds = {int(k): (None if len(present) == 1 else np.flatnonzero(kind == k)) for k in present}
    w = np.concatenate([prog.w, np.zeros(len(keep))])[rows]
    norm2 = np.bincount(rows, a * a, minlength=M.shape[0])[rows]
    return _Consensus(rows, cols, a, np.concatenate([prog.b, prog.d[keep]]),
                      np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else np.zeros(0, np.int64),
                      kinds, w, norm2, np.bincount(cols, minlength=prog.n_atoms).astype(np.float64), lo, hi)


def map_admm(prog: HingeProgram, y0: np.ndarray | None = None, rho: float = 1.0,
             tol: float = 1e-7, max_iter: int = 20000, progress: Progress | None = None) -> MAPResult:
    """Consensus ADMM (Bach et al., PSL): closed-form local hinge updates, averaged consensus,
    over-relaxed (`ADMM_RELAXATION`) with rho balanced on the residuals (`ADMM_BALANCE`).

    Every non-zero of [A; C] holds a local copy of its atom; all updates are array operations.
    """
    t0 = time.perf_counter()
    cs = _consensus(prog)
    z = np.clip(start_state(prog, y0), cs.lo, cs.hi)
    u = np.zeros_like(cs.a)
    has_copy = cs.count > 0
    every, mu, tau = ADMM_BALANCE
    it, converged = 0, False
    tick = throttled(progress)
    for it in range(1, max_iter + 1):
        if tick is not None:
            tick(it / max_iter, f"ADMM iteration {it:,}")
        zc = z[cs.cols]
        v = zc - u
        s = cs.b.copy()
        if len(cs.starts):
            s[cs.rows[cs.starts]] += np.add.reduceat(cs.a * v, cs.starts)
        x = v - cs.local_steps(s[cs.rows], rho) * cs.a
        xh = ADMM_RELAXATION * x + (1.0 - ADMM_RELAXATION) * zc
        z_old = z
        sums = np.bincount(cs.cols, xh + u, minlength=len(z))
        z = np.where(has_copy, np.clip(sums / np.maximum(cs.count, 1), cs.lo, cs.hi), z_old)
        zc = z[cs.cols]
        u = u + xh - zc
        r_primal = float(np.sqrt(np.sum((x - zc) ** 2)))
        r_dual = rho * float(np.sqrt(np.sum(cs.count * (z - z_old) ** 2)))
        scale_p = max(float(np.sqrt(np.sum(x * x))), float(np.sqrt(np.sum(zc ** 2))), 1.0)
        scale_d = rho * float(np.sqrt(np.sum(u * u)))
        if r_primal <= tol * scale_p and r_dual <= tol * max(scale_d, 1.0):
            converged = True
            break
        if it % every == 0 and scale_d > 0:  # normalised residual balancing; u is scaled with 1/rho
            rel_p, rel_d = r_primal / scale_p, r_dual / scale_d
            if rel_p > mu * rel_d:
                rho, u = rho * tau, u / tau
            elif rel_d > mu * rel_p:
                rho, u = rho / tau, u * tau
    return _admm_result(prog, z, it, converged, t0)


def _admm_result(prog: HingeProgram, z: np.ndarray, it: int, converged: bool, t0: float) -> MAPResult:
    """ADMM's state as a result; hard constraints it leaves violated are reported (or found infeasible)."""
    message = "converged" if converged else "iteration limit reached"
    violation = hard_violation(prog, z)
    if violation > HARD_TOL:
        check_hard_feasible(prog)  # raises when no state can hold them; else say how far this one is
        converged = False
        message += f"; the hard constraints are violated by up to {violation:.3g}"
    return MAPResult(z, prog.energy(z), it, time.perf_counter() - t0, "admm", converged, message)
