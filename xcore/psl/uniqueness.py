"""Is the MAP state the only optimum? Two LPs over the optimal face of the hinge-loss program.

The MAP problem is a convex QP in (y, s): min  w_lin . s_lin + w_sq . s_sq^2  over
s >= A y + b, s >= 0, C y + d <= 0 (= 0 on equality rows), y in [0, 1]. For a convex QP the
quadratic part's gradient and the linear cost are the same at every optimum, so every optimum has
the same squared distances s_sq (w > 0) and the same linear cost w_lin . s_lin. The optimal set is
therefore the polyhedron of feasible (y, s) with s_sq fixed and w_lin . s_lin at its optimal value.
Minimising and maximising one random direction r . y over it (two LPs in HiGHS) finds a flat
direction with probability 1 when there is one; the atoms that differ between the two LP solutions
can take other values at the same energy (a lower bound on the set of such atoms, with the range
each one was seen to cover).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from xcore.optional_deps import import_optional
from xcore.psl.program import HingeProgram
from xcore.runtime import new_highs

SLACK = 1e-6
"""How far the optimal face may reach beyond the given state's squared distances and linear cost
(relative to the energy): the state comes from a solver at finite tolerance. Small against `tol`."""


@dataclass
class OptimumSpread:
    """What the optimal face around a MAP state looks like along one random direction."""

    unique: bool
    """No atom moved by more than `tol` on the optimal face (along the direction checked)."""
    moving: np.ndarray
    """Indices of atoms seen to take other values at the same energy."""
    low: np.ndarray
    high: np.ndarray
    """Per moving atom, the lowest and highest value seen on the optimal face."""
    max_spread: float
    checked: bool = True
    message: str = ""
    ends: np.ndarray | None = None
    """The two LP solutions (2, n): other optima, as far apart along the direction as they go."""

    def describe(self, names=None, show: int = 3) -> str:
        """One line for the command's summary (`names` maps an atom index to its text)."""
        if not self.checked:
            return f"optimum uniqueness not checked ({self.message})"
        if self.unique:
            return "the optimum is unique (no flat direction found on the optimal face)"
        shown = ", ".join(f"{names[i] if names is not None else i} in [{lo:.3g}, {hi:.3g}]"
                          for i, lo, hi in list(zip(self.moving, self.low, self.high))[:show])
        more = f", ... ({len(self.moving):,} atoms)" if len(self.moving) > show else ""
        return (f"the optimum is NOT unique: the energy is flat along a direction; {len(self.moving):,} atoms can "
                f"take other values at the same energy (up to {self.max_spread:.3g} apart), e.g. {shown}{more}; "
                "the values written are one optimum among many")


def optimum_spread(prog: HingeProgram, y: np.ndarray, tol: float = 1e-4, seed: int = 0) -> OptimumSpread:
    """Check whether `y` (a MAP state of `prog`) is the only optimum; see the module docstring."""
    highspy = import_optional("highspy")  # start-up: HiGHS loads only when the uniqueness check runs

    n, m = prog.n_atoms, prog.n_potentials
    y = np.asarray(y, dtype=np.float64)
    if n == 0:
        return OptimumSpread(True, np.zeros(0, np.int64), np.zeros(0), np.zeros(0), 0.0)
    dist = np.maximum(prog.A @ y + prog.b, 0.0)
    sq = prog.squared & (prog.w > 0)
    lin = ~prog.squared & (prog.w > 0)
    energy = float(prog.w @ np.where(prog.squared, dist * dist, dist))
    slack = SLACK * max(1.0, energy)  # on the linear cost cap
    # columns: y (n), s (m); rows: A y - s <= -b, hard rows, and the linear cost cap
    cap = sp.csr_matrix((np.where(lin, prog.w, 0.0)[lin], (np.zeros(int(lin.sum()), int), n + np.flatnonzero(lin))),
                        shape=(1, n + m))
    G = sp.vstack([sp.hstack([prog.A, -sp.identity(m, format="csr")]),
                   sp.hstack([prog.C, sp.csr_matrix((prog.C.shape[0], m))]), cap]).tocsc()
    inf = highspy.kHighsInf
    upper = np.concatenate([-prog.b + SLACK, -prog.d + SLACK, [float(prog.w[lin] @ dist[lin]) + slack]])
    lower = np.concatenate([np.full(m, -inf), np.where(prog.equality, -prog.d - SLACK, -inf), [-inf]])
    # a squared potential's distance is the same at every optimum (up to the solver's tolerance)
    s_lo = np.zeros(m)
    s_hi = np.full(m, inf)
    s_lo[sq] = np.maximum(dist[sq] - SLACK, 0.0)
    s_hi[sq] = dist[sq] + SLACK
    r = np.random.default_rng(seed).standard_normal(n)
    ends = []
    for sense in (1.0, -1.0):
        h = new_highs()
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n + m, G.shape[0]
        lp.col_cost_ = np.concatenate([sense * r, np.zeros(m)])
        lp.col_lower_ = np.concatenate([np.zeros(n), s_lo])
        lp.col_upper_ = np.concatenate([np.ones(n), s_hi])
        lp.row_lower_, lp.row_upper_ = lower, upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = G.indptr.astype(np.int32)
        lp.a_matrix_.index_ = G.indices.astype(np.int32)
        lp.a_matrix_.value_ = G.data
        h.passModel(lp)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return OptimumSpread(True, np.zeros(0, np.int64), np.zeros(0), np.zeros(0), 0.0, checked=False,
                                 message=f"HiGHS: {h.modelStatusToString(h.getModelStatus())} on the optimal face")
        ends.append(np.asarray(h.getSolution().col_value[:n]))
    points = np.vstack([ends[0], ends[1], y])
    low, high = points.min(axis=0), points.max(axis=0)
    spread = high - low
    moving = np.flatnonzero(spread > tol)
    order = moving[np.argsort(-spread[moving], kind="stable")]
    return OptimumSpread(len(moving) == 0, order, low[order], high[order], float(spread.max(initial=0.0)),
                         ends=np.clip(np.vstack(ends), 0.0, 1.0))
