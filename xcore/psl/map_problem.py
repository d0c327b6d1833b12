"""What every MAP solver shares: its result, its first state, hard rows over one atom as bounds, and
how far a state is from holding the hard constraints (with a HiGHS check that some state can)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xcore.errors import XcoreError
from xcore.optional_deps import import_optional
from xcore.psl.program import HingeProgram
from xcore.runtime import new_highs


@dataclass
class MAPResult:
    """A MAP state with the figures users want to see: energy, iterations, time."""

    y: np.ndarray
    energy: float
    iterations: int
    seconds: float
    method: str
    converged: bool
    message: str = ""


def start_state(prog: HingeProgram, y0: np.ndarray | None) -> np.ndarray:
    """The solver's first state: `y0` clipped to [0, 1] (NaN as 0.5), else 0.5 everywhere."""
    n = prog.n_atoms
    if y0 is None:
        return np.full(n, 0.5)
    y0 = np.asarray(y0, dtype=np.float64)
    if y0.shape != (n,):
        raise XcoreError(f"warm start has {y0.shape} values for {n} atoms")
    return np.clip(np.nan_to_num(y0, nan=0.5), 0.0, 1.0)


def box_bounds(prog: HingeProgram) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Hard rows over one atom as bounds on it (``SameAuthor(A, A) = 1 .`` fixes the atom):
    ``(lower, upper, other_rows)``, or None when a bound leaves no value in [0, 1] (infeasible;
    the exact QP then reports it)."""
    n = prog.n_atoms
    lo, hi = np.zeros(n), np.ones(n)
    C = prog.C.tocsr()
    single = np.flatnonzero(np.diff(C.indptr) == 1)
    if len(single):
        col = C.indices[C.indptr[single]]
        a = C.data[C.indptr[single]]
        value = -prog.d[single] / a
        eq = prog.equality[single]
        upper = eq | (a > 0)  # a y + d <= 0 with a > 0: y <= -d/a
        lower = eq | (a < 0)
        np.minimum.at(hi, col[upper], value[upper])
        np.maximum.at(lo, col[lower], value[lower])
    if (lo > hi + 1e-9).any():
        return None
    rest = np.setdiff1d(np.arange(C.shape[0]), single)
    return lo, np.maximum(hi, lo), rest


HARD_TOL = 1e-4
"""Largest violation of a hard constraint an iterative solver's state may keep (ADMM converges to it
only in the limit; PSL's own ADMM stops at a similar tolerance)."""


def hard_violation(prog: HingeProgram, y: np.ndarray) -> float:
    """How far `y` is from holding every hard constraint (C y + d <= 0, or = 0 on equality rows)."""
    if prog.C.shape[0] == 0:
        return 0.0
    r = prog.C @ y + prog.d
    return float(np.max(np.where(prog.equality, np.abs(r), np.maximum(r, 0.0))))


def check_hard_feasible(prog: HingeProgram) -> None:
    """Raise when no state in [0, 1] holds every hard constraint (a HiGHS feasibility LP)."""
    highspy = import_optional("highspy")  # start-up: HiGHS loads only for programs with hard rules

    n, C = prog.n_atoms, prog.C.tocsc()
    h = new_highs()
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, C.shape[0]
    lp.col_cost_ = np.zeros(n)
    lp.col_lower_, lp.col_upper_ = np.zeros(n), np.ones(n)
    lp.row_lower_ = np.where(prog.equality, -prog.d, -inf)
    lp.row_upper_ = -prog.d
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = C.indptr.astype(np.int32)
    lp.a_matrix_.index_ = C.indices.astype(np.int32)
    lp.a_matrix_.value_ = C.data
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    if status in (highspy.HighsModelStatus.kInfeasible, highspy.HighsModelStatus.kUnboundedOrInfeasible):
        raise XcoreError(f"the hard constraints cannot all hold (HiGHS: {h.modelStatusToString(status)}); "
                         "check the arithmetic rules and the observed values they use")
