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

from dataclasses import dataclass, field

import highspy
import numpy as np
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.plkb.kb import KB
from xcore.plkb.literals import FALSE, FREE, TRUE
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


@dataclass
class LPMatrices:
    """One LP in HiGHS form: min cost.x + offset s.t. row_lower <= A x <= row_upper, col bounds.

    Columns: free atoms (``atom_ids``; ``pos_col`` is POS), then omega(c) of the clauses kept as
    rows ("general" clauses), their deviations u, v, then the segment columns of the point
    terms; `dev_cols` are the columns with a cost (the objective), `offset` its constant part.
    `clause_kind`/`clause_ref` say how to read each clause's omega from a solution
    (`clause_omega`): a column, omega(POS), 1 - omega(POS), or a constant.
    """

    A: sp.csc_matrix
    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    atom_ids: np.ndarray
    pos_col: int
    n_clauses: int
    dev_cols: np.ndarray = field(repr=False)
    offset: float = 0.0
    clause_kind: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]
    clause_ref: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]

    @property
    def shape(self) -> tuple[int, int]:
        return self.A.shape

    def size(self) -> dict[str, int]:
        return {"rows": int(self.A.shape[0]), "cols": int(self.A.shape[1]), "nonzeros": int(self.A.nnz)}

    def clause_omega(self, x: np.ndarray) -> np.ndarray:
        """omega of every clause of the KB in a solution `x` of this LP (NaN for dropped ones)."""
        pos = x[self.pos_col]
        ref = self.clause_ref
        col = x[np.where(self.clause_kind == KIND_GENERAL, ref, 0).astype(np.int64)]
        out = np.select([self.clause_kind == KIND_GENERAL, self.clause_kind == KIND_POS,
                         self.clause_kind == KIND_NEG_POS, self.clause_kind == KIND_DROP],
                        [col, np.full_like(col, pos), 1 - pos, np.nan], ref)
        return np.clip(out, 0.0, 1.0)


KIND_GENERAL, KIND_POS, KIND_NEG_POS, KIND_CONST, KIND_DROP = 0, 1, 2, 3, 4
"""How a clause appears in the LP: its own column and rows; omega(c) = omega(POS) exactly (the
only literal not fixed false is POS); omega(c) = 1 - omega(POS) (it is ~POS); a constant; not
at all (not relevant to the query)."""


def build_lp(kb: KB, codes: np.ndarray | None = None, substitute: bool = True,
             relevant_only: bool = False) -> LPMatrices:
    """The LP of `kb` under a query (None: nothing observed).

    With `substitute` (an exact presolve), atoms fixed by the query are replaced by constants:
    a clause with a true literal has omega 1; a clause whose literals are all false except POS
    (or ~POS) has omega(c) = omega(POS) (or 1 - omega(POS)), so it only adds w |omega(POS) - q|
    with q = p (or 1 - p); a clause with no literal left has omega 0. The sum of the
    w |omega(POS) - q| terms is convex piecewise linear in omega(POS) and enters as segment
    columns (omega(POS) = sum of segment lengths used, each segment costing its slope; convexity
    makes the LP fill them in order). Only the remaining clauses get Boole/monotonicity rows.
    Without `substitute`, every atom and clause keeps its column and fixed atoms get equal
    bounds (the formulation as written, used for the full-KB model whose bounds change per query).
    With `relevant_only` (needs `substitute`), clauses that `KB.relevant_mask` would drop are left
    out (same LP as ``build_lp(kb.relevant(codes), codes)``, without copying the KB).
    """
    n = len(kb)
    n_atoms = kb.domain.n_atoms
    states = np.full(n_atoms, FREE, dtype=np.int8) if codes is None else kb.domain.atom_states(codes)
    cl = kb.lit_clause
    w = kb.weight
    kind = np.full(n, KIND_GENERAL, dtype=np.int8)
    ref = np.zeros(n, dtype=np.float64)
    if substitute:
        lit_state = states[kb.atoms]
        free = lit_state == FREE
        lit_true = ~free & (kb.positive == (lit_state == TRUE))
        any_true = np.bincount(cl, weights=lit_true, minlength=n) > 0
        n_free = np.bincount(cl, weights=free, minlength=n)
        free_pos_atom = free & (kb.atoms == 0)
        n_free_pos = np.bincount(cl, weights=free_pos_atom, minlength=n)
        sign_pos = np.bincount(cl, weights=free_pos_atom & kb.positive, minlength=n) > 0
        const = any_true | (n_free == 0)
        point = ~const & (n_free == 1) & (n_free_pos == 1)
        if relevant_only:
            # drop clauses with a true literal or a free feature atom (both never relevant)
            drop = any_true | ((n_free - n_free_pos) > 0)
            const &= ~drop
            point &= ~drop
            kind[drop] = KIND_DROP
        kind[const] = KIND_CONST
        ref[const] = any_true[const]
        kind[point & sign_pos] = KIND_POS
        kind[point & ~sign_pos] = KIND_NEG_POS
    else:
        if relevant_only:
            raise XcoreError("build_lp: relevant_only needs substitute=True")
        free = np.ones(len(kb.atoms), dtype=bool)
    general = kind == KIND_GENERAL
    g_idx = np.flatnonzero(general)
    g = len(g_idx)
    # one omega(c) column per distinct sentence: repeated clauses (knowledge restating a learned
    # clause, a forest's repeated paths) share it and each adds its own deviation term
    _, first, g_inv = np.unique(kb.clause_group[g_idx], return_index=True, return_inverse=True)
    g_inv = g_inv.reshape(-1)
    rep = g_idx[first]
    G = len(rep)
    g_pos = np.full(n, -1, dtype=np.int64)
    g_pos[rep] = np.arange(G)
    is_rep = np.zeros(n, dtype=bool)
    is_rep[rep] = True
    lit_g = is_rep[cl] & free  # literals that get matrix entries (one copy per distinct clause)
    col_atoms = np.union1d([0], kb.atoms[lit_g])
    n_at = len(col_atoms)
    atom_col = np.full(n_atoms, -1, dtype=np.int64)
    atom_col[col_atoms] = np.arange(n_at)
    pos_col = int(atom_col[0])
    is_const = kind == KIND_CONST
    offset = float(np.sum(w[is_const] * np.abs(ref[is_const] - kb.prob[is_const])))
    # point terms: segments of the convex piecewise-linear sum_j w_j |POS - q_j|
    pt = (kind == KIND_POS) | (kind == KIND_NEG_POS)
    seg_len = seg_cost = np.zeros(0)
    if pt.any():
        q = np.where(kind[pt] == KIND_POS, kb.prob[pt], 1.0 - kb.prob[pt])
        uq, inv = np.unique(q, return_inverse=True)
        wq = np.bincount(inv, weights=w[pt], minlength=len(uq))
        bounds = np.concatenate([[0.0], uq, [1.0]])
        below = np.concatenate([[0.0], np.cumsum(wq)])
        seg_len, seg_cost = np.diff(bounds), below - (wq.sum() - below)
        keep = seg_len > 0
        seg_len, seg_cost = seg_len[keep], seg_cost[keep]
        offset += float(np.sum(wq * uq))  # value of the sum at omega(POS) = 0
    S = len(seg_len)
    c0 = n_at
    u0 = c0 + G
    v0 = u0 + g
    s0 = v0 + g
    n_cols = s0 + S

    col_lower = np.zeros(n_cols)
    col_upper = np.ones(n_cols)
    col_upper[u0:s0] = np.inf
    col_upper[s0:] = seg_len
    if not substitute:
        st = states[col_atoms]
        col_lower[:n_at] = np.where(st == TRUE, 1.0, 0.0)
        col_upper[:n_at] = np.where(st == FALSE, 0.0, 1.0)
    # general clauses: Boole and monotonicity over their free literals, and the deviation row
    lcl = g_pos[cl[lit_g]]
    latom = atom_col[kb.atoms[lit_g]]
    lpos = kb.positive[lit_g]
    sign = np.where(lpos, 1.0, -1.0)  # omega(l) = x (positive) or 1 - x (negative)
    neg_count = np.bincount(lcl, weights=~lpos, minlength=G)
    m = len(lcl)
    ar_g = np.arange(g)
    ar_G = np.arange(G)
    r_mono = G + np.arange(m)
    r_dev = G + m + ar_g
    n_seg_row = 1 if S else 0
    r_seg = G + m + g
    rows = [ar_G, lcl, r_mono, r_mono, r_dev, r_dev, r_dev]
    cols = [c0 + ar_G, latom, c0 + lcl, latom, c0 + g_inv, u0 + ar_g, v0 + ar_g]
    vals = [np.ones(G), -sign, np.ones(m), -sign, np.ones(g), -np.ones(g), np.ones(g)]
    if S:  # omega(POS) - sum of segments = 0
        rows += [np.full(S + 1, r_seg)]
        cols += [np.concatenate([[pos_col], s0 + np.arange(S)])]
        vals += [np.concatenate([[1.0], -np.ones(S)])]
    row_lower = np.concatenate([np.full(G, -np.inf), np.where(lpos, 0.0, 1.0), kb.prob[g_idx], np.zeros(n_seg_row)])
    row_upper = np.concatenate([neg_count, np.full(m, np.inf), kb.prob[g_idx], np.zeros(n_seg_row)])
    n_rows = G + m + g + n_seg_row
    A = _csc(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), n_rows, n_cols)
    cost = np.zeros(n_cols)
    cost[u0:v0] = w[g_idx]
    cost[v0:s0] = w[g_idx]
    cost[s0:] = seg_cost
    ref[g_idx] = c0 + g_inv
    n_used = int(np.sum(kind != KIND_DROP))
    return LPMatrices(A, cost, col_lower, col_upper, row_lower, row_upper, col_atoms, pos_col, n_used,
                      np.flatnonzero(cost), offset, kind, ref)


def _csc(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n_rows: int, n_cols: int) -> sp.csc_matrix:
    """CSC matrix from triplets (duplicates summed), without scipy's COO round trip."""
    order = np.lexsort((rows, cols))
    r, c, v = rows[order], cols[order], vals[order]
    if len(r) > 1:
        dup = (r[1:] == r[:-1]) & (c[1:] == c[:-1])
        if dup.any():
            start = np.concatenate([[True], ~dup])
            grp = np.cumsum(start) - 1
            v = np.bincount(grp, weights=v)
            r, c = r[start], c[start]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(c, minlength=n_cols))])
    return sp.csc_matrix((v, r, indptr), shape=(n_rows, n_cols))


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
