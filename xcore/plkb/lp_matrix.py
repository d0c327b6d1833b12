"""The matrices of a probabilistic KB's LP under a query (`build_lp`), in HiGHS form.

`build_lp` presolves exactly: atoms fixed by the query are substituted, clauses that reduce to
omega(POS) fold into a piecewise-linear term, only the rest get Boole/monotonicity rows; all of it
with numpy over the KB's literal arrays (no per-literal Python loop). `xcore.plkb.lp` solves them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.plkb.kb import KB
from xcore.plkb.literals import FALSE, FREE, TRUE


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
    states = np.full(kb.domain.n_atoms, FREE, dtype=np.int8) if codes is None else kb.domain.atom_states(codes)
    if substitute:
        kind, ref, free = _presolve(kb, states, relevant_only)
    else:
        if relevant_only:
            raise XcoreError("build_lp: relevant_only needs substitute=True")
        kind, ref = np.full(len(kb), KIND_GENERAL, dtype=np.int8), np.zeros(len(kb), dtype=np.float64)
        free = np.ones(len(kb.atoms), dtype=bool)
    lay = _layout(kb, kind, free)
    is_const = kind == KIND_CONST
    offset = float(np.sum(kb.weight[is_const] * np.abs(ref[is_const] - kb.prob[is_const])))
    seg_len, seg_cost, seg_offset = _point_segments(kb, kind)
    offset += seg_offset
    S = len(seg_len)
    c0, G, g = lay.n_at, lay.G, len(lay.g_idx)
    u0 = c0 + G
    v0 = u0 + g
    s0 = v0 + g
    n_cols = s0 + S
    col_lower = np.zeros(n_cols)
    col_upper = np.ones(n_cols)
    col_upper[u0:s0] = np.inf
    col_upper[s0:] = seg_len
    if not substitute:
        st = states[lay.col_atoms]
        col_lower[:c0] = np.where(st == TRUE, 1.0, 0.0)
        col_upper[:c0] = np.where(st == FALSE, 0.0, 1.0)
    A, row_lower, row_upper = _rows(kb, lay, S, n_cols)
    cost = np.zeros(n_cols)
    cost[u0:v0] = kb.weight[lay.g_idx]
    cost[v0:s0] = kb.weight[lay.g_idx]
    cost[s0:] = seg_cost
    ref[lay.g_idx] = c0 + lay.g_inv
    n_used = int(np.sum(kind != KIND_DROP))
    return LPMatrices(A, cost, col_lower, col_upper, row_lower, row_upper, lay.col_atoms, lay.pos_col, n_used,
                      np.flatnonzero(cost), offset, kind, ref)


def _presolve(kb: KB, states: np.ndarray, relevant_only: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kind, ref, free) of the exact presolve: how each clause enters the LP under the query's atom
    `states`, the constant omega of the constant clauses, and which literals stay free."""
    n, cl = len(kb), kb.lit_clause
    kind = np.full(n, KIND_GENERAL, dtype=np.int8)
    ref = np.zeros(n, dtype=np.float64)
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
    return kind, ref, free


@dataclass
class _Layout:
    """Where the general clauses and their free literals go: one omega(c) column per DISTINCT sentence."""

    g_idx: np.ndarray  # the general clauses
    g_inv: np.ndarray  # each general clause's distinct-sentence column (0..G-1)
    G: int
    lit_g: np.ndarray  # literals with matrix entries (one copy per distinct clause)
    g_pos: np.ndarray  # clause -> its distinct-sentence index (-1: none)
    col_atoms: np.ndarray
    atom_col: np.ndarray
    pos_col: int

    @property
    def n_at(self) -> int:
        return len(self.col_atoms)


def _layout(kb: KB, kind: np.ndarray, free: np.ndarray) -> _Layout:
    """The column layout: repeated clauses (knowledge restating a learned clause, a forest's repeated
    paths) share one omega(c) column and each adds its own deviation term."""
    n, cl = len(kb), kb.lit_clause
    g_idx = np.flatnonzero(kind == KIND_GENERAL)
    _, first, g_inv = np.unique(kb.clause_group[g_idx], return_index=True, return_inverse=True)
    rep = g_idx[first]
    G = len(rep)
    g_pos = np.full(n, -1, dtype=np.int64)
    g_pos[rep] = np.arange(G)
    is_rep = np.zeros(n, dtype=bool)
    is_rep[rep] = True
    lit_g = is_rep[cl] & free
    col_atoms = np.union1d([0], kb.atoms[lit_g])
    atom_col = np.full(kb.domain.n_atoms, -1, dtype=np.int64)
    atom_col[col_atoms] = np.arange(len(col_atoms))
    return _Layout(g_idx, g_inv.reshape(-1), G, lit_g, g_pos, col_atoms, atom_col, int(atom_col[0]))


def _point_segments(kb: KB, kind: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(lengths, costs, value at omega(POS) = 0) of the segments of the convex piecewise-linear
    sum_j w_j |omega(POS) - q_j| over the point clauses."""
    pt = (kind == KIND_POS) | (kind == KIND_NEG_POS)
    if not pt.any():
        return np.zeros(0), np.zeros(0), 0.0
    q = np.where(kind[pt] == KIND_POS, kb.prob[pt], 1.0 - kb.prob[pt])
    uq, inv = np.unique(q, return_inverse=True)
    wq = np.bincount(inv, weights=kb.weight[pt], minlength=len(uq))
    bounds = np.concatenate([[0.0], uq, [1.0]])
    below = np.concatenate([[0.0], np.cumsum(wq)])
    seg_len, seg_cost = np.diff(bounds), below - (wq.sum() - below)
    keep = seg_len > 0
    return seg_len[keep], seg_cost[keep], float(np.sum(wq * uq))


def _rows(kb: KB, lay: _Layout, S: int, n_cols: int) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """(A, row_lower, row_upper): Boole and monotonicity over the general clauses' free literals, their
    deviation rows, and omega(POS) = sum of segments when there are point terms."""
    G, g = lay.G, len(lay.g_idx)
    c0 = lay.n_at
    u0, v0 = c0 + G, c0 + G + g
    lit_g = lay.lit_g
    lcl = lay.g_pos[kb.lit_clause[lit_g]]
    latom = lay.atom_col[kb.atoms[lit_g]]
    lpos = kb.positive[lit_g]
    sign = np.where(lpos, 1.0, -1.0)  # omega(l) = x (positive) or 1 - x (negative)
    neg_count = np.bincount(lcl, weights=~lpos, minlength=G)
    m = len(lcl)
    ar_g, ar_G = np.arange(g), np.arange(G)
    r_mono = G + np.arange(m)
    r_dev = G + m + ar_g
    n_seg_row = 1 if S else 0
    rows = [ar_G, lcl, r_mono, r_mono, r_dev, r_dev, r_dev]
    cols = [c0 + ar_G, latom, c0 + lcl, latom, c0 + lay.g_inv, u0 + ar_g, v0 + ar_g]
    vals = [np.ones(G), -sign, np.ones(m), -sign, np.ones(g), -np.ones(g), np.ones(g)]
    if S:  # omega(POS) - sum of segments = 0
        rows += [np.full(S + 1, G + m + g)]
        cols += [np.concatenate([[lay.pos_col], n_cols - S + np.arange(S)])]
        vals += [np.concatenate([[1.0], -np.ones(S)])]
    p = kb.prob[lay.g_idx]
    row_lower = np.concatenate([np.full(G, -np.inf), np.where(lpos, 0.0, 1.0), p, np.zeros(n_seg_row)])
    row_upper = np.concatenate([neg_count, np.full(m, np.inf), p, np.zeros(n_seg_row)])
    A = _csc(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), G + m + g + n_seg_row, n_cols)
    return A, row_lower, row_upper


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
