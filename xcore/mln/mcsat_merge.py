"""The network MC-SAT walks on: the same distribution with repeated clauses merged.

Identical ground clauses (the same signed literals) add their weights: exp(w1 n + w2 n) =
exp((w1 + w2) n). Unit clauses of one atom net out: a weight w on ``!q`` equals a weight -w on ``q``
up to a constant, so every atom keeps at most one unit clause, written with the literal that makes
its net weight positive. Why it matters for MC-SAT: each kept clause is drawn on its own, so two
opposing heavy unit clauses (cse: -2.4 on ``q`` and -1.9 on ``!q``) would fix ``q`` at whatever value
it has almost every step, although their net effect on ``q`` is small; and rc1000 repeats the same
hard clause once per co-author. A merged clause is hard when its |net weight| is at least the
network's `hard_weight` (it then counts as kept whenever satisfied). Rows longer than `MAX_MERGE`
literals are left as they are. Vectorised: rows as padded literal codes, one `np.unique`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xcore.mln.network import GroundMLN

MAX_MERGE = 32
"""Clauses with more literals are never merged (keeps the padded key matrix small)."""


def merged_network(mln: GroundMLN) -> GroundMLN:
    """The equivalent network with repeated clauses summed and unit clauses netted per atom."""
    S = mln.S
    length = np.diff(S.indptr)
    short = np.flatnonzero((length >= 1) & (length <= MAX_MERGE))
    long_rows = np.flatnonzero(length > MAX_MERGE)
    w = mln.weights.astype(np.float64).copy()
    codes = (S.indices.astype(np.int64) + 1) * S.data.astype(np.int64)       # +-(atom + 1) per literal
    unit = length == 1
    first = S.indptr[:-1]
    # unit clauses: the positive literal, weight negated for a negative one
    w[unit] = w[unit] * np.sign(codes[first[unit]])
    codes_unit = np.abs(codes[first[unit]])
    width = int(length[short].max(initial=1))
    key = np.zeros((len(short), width), dtype=np.int64)
    col = np.arange(S.nnz) - np.repeat(first, length)
    row_of = np.repeat(np.arange(mln.n_clauses), length)
    pick = np.isin(row_of, short)
    where = np.searchsorted(short, row_of[pick])
    key[where, col[pick]] = codes[pick]
    key[np.searchsorted(short, np.flatnonzero(unit)), 0] = codes_unit
    groups, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    net = np.bincount(inverse, weights=w[short], minlength=len(groups))
    # a unit whose net weight is negative is written on the negative literal with the positive weight
    is_unit = (groups[:, 1:] == 0).all(axis=1) if width > 1 else np.ones(len(groups), dtype=bool)
    flip = is_unit & (net < 0)
    groups[flip, 0] = -groups[flip, 0]
    net[flip] = -net[flip]
    keep = net != 0.0
    groups, net = groups[keep], net[keep]
    n_lit = (groups != 0).sum(axis=1)
    rows = np.repeat(np.arange(len(groups)), n_lit)
    lits = groups[groups != 0]
    long = S[long_rows].tocoo()  # long clauses as they are
    parts_rows, parts_cols = [rows, long.row.astype(np.int64) + len(net)], [np.abs(lits) - 1, long.col.astype(np.int64)]
    parts_vals = [np.sign(lits), long.data.astype(np.int64)]
    w_all = np.concatenate([net, mln.weights[long_rows]])
    M = sp.csr_matrix((np.concatenate(parts_vals).astype(np.int8),
                       (np.concatenate(parts_rows), np.concatenate(parts_cols))),
                      shape=(len(w_all), mln.n_atoms), dtype=np.int8)
    M.sort_indices()
    hard = w_all >= mln.hard_weight
    m = len(w_all)
    return GroundMLN(None, None, M, w_all, np.zeros(m, np.int32), np.arange(m), hard, mln.hard_weight)
