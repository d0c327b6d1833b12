"""The LP of a probabilistic KB and its two-stage solution (interval of omega(POS)).

Unknowns: omega(z) of every atom z, omega(c) of every DISTINCT clause (repeated clauses, e.g.
knowledge restating a learned clause with another p, share one omega(c), so their fit is the
weighted L1 median of their p's), and deviations u, v >= 0 with omega(c_i) - p_i = u_i - v_i. Minimise sum_i w_i (u_i + v_i) (= sum_i |omega(c_i) - p_i|) subject to

* Boole:        omega(c) <= sum of omega(l) over the literals l of c,
* monotonicity: omega(c) >= omega(l) for every literal l of c,
* negation:     omega(~z) = 1 - omega(z) (substituted, so ~z needs no column of its own),
* 0 <= omega <= 1.

A query fixes omega(a_v) = 1 for its values and 0 for the other values of its features. The
answer is [min, max] of omega(POS) over the optimal face: stage 1 finds the optimal objective
f*, stage 2 adds ``sum w (u + v) <= f* + tol`` (an ABSOLUTE tolerance) and minimises then
maximises omega(POS). Matrices are built with numpy (CSC arrays, no per-literal Python loops)
and handed to HiGHS (`highspy`) directly; one `Highs` object is reused and stage 2 warm-starts
from stage 1. `build_lp` presolves exactly (fixed atoms substituted, clauses that reduce to
omega(POS) folded into a piecewise-linear term); `FullKBLP` keeps the literal formulation.
`xcore.plkb.lp_pulp` builds the literal LP as a readable pulp model.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from xcore.errors import XcoreError
from xcore.plkb.kb import KB
from xcore.plkb.literals import FALSE, FREE, TRUE
from xcore.plkb.lp_matrix import LPMatrices, build_lp
from xcore.runtime import new_highs

TIE_TOL = 1e-6
"""A midpoint within this of 0.5 counts as exactly 0.5, which is a NEGATIVE prediction (the
face tolerance can move a midpoint by ~1e-9, far below this)."""

DEFAULT_FACE_TOL = 1e-9
"""Absolute slack on the stage-1 optimum when optimising omega(POS) over the optimal face."""


PRESOLVE_MIN_COLS = 20_000
"""HiGHS presolve is switched off for LPs with fewer columns (it only adds overhead there)."""


class LPError(XcoreError):
    """The LP solver failed (not optimal); names the status."""


@dataclass(frozen=True)
class Interval:
    """The answer to a query: omega(POS) ranges over [lo, hi] on the optimal face of the LP.

    The prediction is positive iff the midpoint is > 0.5; a midpoint of exactly 0.5 (within
    `TIE_TOL`) is negative (the KB gives no net evidence for POS, so POS is not concluded).
    """

    lo: float
    hi: float
    objective: float = 0.0
    n_clauses: int = 0

    @property
    def mid(self) -> float:
        return 0.5 * (self.lo + self.hi)

    @property
    def width(self) -> float:
        return self.hi - self.lo

    @property
    def positive(self) -> bool:
        return self.mid > 0.5 + TIE_TOL

    def as_dict(self) -> dict[str, float | int | bool]:
        return {"lo": self.lo, "hi": self.hi, "mid": self.mid, "objective": self.objective,
                "n_clauses": self.n_clauses, "positive": self.positive}


# ---------------------------------------------------------------------- HiGHS
_INF = highspy.kHighsInf


def _arr(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64)


class HighsLP:
    """Two-stage solves through one reused `highspy.Highs` object (matrices passed directly)."""

    def __init__(self, face_tol: float = DEFAULT_FACE_TOL, threads: int = 1) -> None:
        self.face_tol = float(face_tol)
        self.h = new_highs(threads)
        self.n_solves = 0

    def _pass(self, lp: LPMatrices) -> None:
        A = lp.A
        n_rows, n_cols = A.shape
        status = self.h.passModel(
            int(n_cols), int(n_rows), int(A.nnz), 1, 1, 0.0,
            _arr(lp.cost), _arr(lp.col_lower), _arr(lp.col_upper),
            _arr(lp.row_lower), _arr(lp.row_upper),
            A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.astype(np.float64),
            np.zeros(n_cols, dtype=np.int32),  # all continuous
        )
        if status == highspy.HighsStatus.kError:
            raise LPError("HiGHS rejected the LP model")

    def _run(self, what: str) -> None:
        self.h.run()
        self.n_solves += 1
        st = self.h.getModelStatus()
        if st != highspy.HighsModelStatus.kOptimal:
            raise LPError(f"HiGHS: {what} ended with status {self.h.modelStatusToString(st)}")

    def solve(self, lp: LPMatrices, with_solutions: bool = False) -> tuple[Interval, dict | None]:
        """[min, max] of omega(POS) over the optimal face of `lp` (and, optionally, both solutions)."""
        self.h.clearModel()
        # presolve costs more than it saves on the small relevant-KB LPs
        self.h.setOptionValue("presolve", "off" if lp.A.shape[1] < PRESOLVE_MIN_COLS else "choose")
        self._pass(lp)
        return self._two_stage(lp, with_solutions)

    def _two_stage(self, lp: LPMatrices, with_solutions: bool) -> tuple[Interval, dict | None]:
        h = self.h
        self._run("stage 1 (optimal objective)")
        fstar = float(h.getInfo().objective_function_value)
        dev = lp.dev_cols.astype(np.int32)
        h.addRow(-_INF, fstar + self.face_tol, len(dev), dev, np.ascontiguousarray(lp.cost[dev]))
        h.changeColsCost(len(dev), dev, np.zeros(len(dev)))
        h.changeColCost(lp.pos_col, 1.0)
        h.changeObjectiveSense(highspy.ObjSense.kMinimize)
        self._run("stage 2 (min omega(POS))")
        sol_lo = np.asarray(h.getSolution().col_value)
        lo = float(sol_lo[lp.pos_col])
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self._run("stage 2 (max omega(POS))")
        sol_hi = np.asarray(h.getSolution().col_value)
        hi = float(sol_hi[lp.pos_col])
        lo, hi = min(lo, hi), max(lo, hi)
        interval = Interval(_clip01(lo), _clip01(hi), fstar + lp.offset, lp.n_clauses)
        sols = {"lo": sol_lo, "hi": sol_hi} if with_solutions else None
        return interval, sols


class FullKBLP:
    """The whole KB loaded once into HiGHS; each query only changes atom bounds (warm starts)."""

    def __init__(self, kb: KB, face_tol: float = DEFAULT_FACE_TOL, threads: int = 1) -> None:
        self.kb = kb
        self.lp = build_lp(kb, None, substitute=False)
        self.solver = HighsLP(face_tol, threads)
        self.solver._pass(self.lp)
        self._atom_cols = np.arange(len(self.lp.atom_ids), dtype=np.int32)

    def solve(self, codes: np.ndarray | None, with_solutions: bool = False) -> tuple[Interval, dict | None]:
        h, lp = self.solver.h, self.lp
        states = (np.full(self.kb.domain.n_atoms, FREE, dtype=np.int8) if codes is None
                  else self.kb.domain.atom_states(codes))[lp.atom_ids]
        lower = np.where(states == TRUE, 1.0, 0.0)
        upper = np.where(states == FALSE, 0.0, 1.0)
        h.changeColsBounds(len(self._atom_cols), self._atom_cols, lower, upper)
        n_rows = h.getNumRow()
        try:
            return self.solver._two_stage(lp, with_solutions)
        finally:  # restore the stage-1 model for the next query (keeps the basis: warm start)
            h.deleteRows(1, np.array([n_rows], dtype=np.int32))
            dev = lp.dev_cols.astype(np.int32)
            h.changeColsCost(len(dev), dev, np.ascontiguousarray(lp.cost[dev]))
            h.changeColCost(lp.pos_col, 0.0)
            h.changeObjectiveSense(highspy.ObjSense.kMinimize)


def _clip01(x: float) -> float:
    return float(min(1.0, max(0.0, x)))
