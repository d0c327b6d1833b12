"""Potentials that share a linear form, as one consensus-ADMM block (issue 26).

A ground program often holds many potentials over the same atoms with the same coefficients that
differ only in their constant (entity-resolution: 491,025 potentials, 8,240 distinct linear forms).
Every such potential is a function of t = a.y alone, so their sum f(t) = sum_j w_j h(t + b_j)
(h a hinge, squared or not) is one convex, piecewise linear-quadratic function of t, and ADMM's local
step for the whole group -- argmin_x f(a.x) + rho/2 |x - v|^2 -- is one exact 1-D problem: x = v + s a
with t = a.v + s |a|^2. This is exact (no approximation): identical potentials are the special case
of equal constants (their weights add), and hard rows over the same form are bounds on t. ADMM then
keeps one local copy per non-zero of the distinct forms instead of one per non-zero of every
potential (980,132 -> 16,474 copies on entity-resolution), and the z-average is over few copies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class Blocks:
    """Distinct linear forms (blocks) and the potentials on each, sorted by their breakpoint.

    Copies (one per non-zero of a block's form, sorted by block): `rows` (block), `cols` (atom), `a`
    (coefficient). Per block: `norm2` = |a|^2, bounds `lo`/`hi` on t from hard rows, its members
    `first[g]:first[g + 1]`. Per member (the block's potentials, merged where equal, ascending in
    their breakpoint `bp` = -b, where the hinge starts to rise): `P` = f'(bp^-) of the members
    before it, and `L`, `S`, `SB` = running sums of linear weights, squared weights, and squared
    weights times b, through it (f'(t) = L + 2 S t + 2 SB between two breakpoints).
    """

    rows: np.ndarray
    cols: np.ndarray
    a: np.ndarray
    norm2: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    first: np.ndarray
    bp: np.ndarray
    P: np.ndarray
    L: np.ndarray
    S: np.ndarray
    SB: np.ndarray

    @property
    def n_blocks(self) -> int:
        return len(self.norm2)

    @property
    def n_members(self) -> int:
        return len(self.bp)

    def row_sums(self, values: np.ndarray) -> np.ndarray:
        """Sum of `values` (one per copy) over each block's copies."""
        return np.bincount(self.rows, values, minlength=self.n_blocks)

    def prox_t(self, t0: np.ndarray, k: np.ndarray, count: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """argmin_t f_g(t) + k_g/2 (t - t0_g)^2 per block, within its bounds [lo, hi] (exact), and the
        number of members active there (pass it back as `count` next time: a warm start).

        The derivative f'(t) + k (t - t0) is nondecreasing, so the minimiser lies on the segment
        before the first breakpoint where it is already >= 0 (found by bisection over every block at
        once), or at that breakpoint when the derivative jumps over 0 there (linear hinges)."""
        count = self._active_count(t0, k, count)
        t = t0.copy()
        on = count > 0
        idx = self.first[:-1][on] + count[on] - 1
        ko = k[on]
        t[on] = np.maximum((ko * t0[on] - self.L[idx] - 2.0 * self.SB[idx]) / (2.0 * self.S[idx] + ko), self.bp[idx])
        return np.clip(t, self.lo, self.hi), count

    def _below(self, blocks: np.ndarray, m: np.ndarray, t0: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Whether member `m` (an index within its block) of each of `blocks` is active: f'(bp^-) + k (bp - t0) < 0."""
        j = self.first[blocks] + m
        return self.P[j] + k[blocks] * (self.bp[j] - t0[blocks]) < 0

    def _active_count(self, t0: np.ndarray, k: np.ndarray, guess: np.ndarray | None) -> np.ndarray:
        """Per block, how many members have f'(bp^-) + k (bp - t0) < 0 (a prefix: it is nondecreasing).

        From a guess (last iteration's counts), only blocks whose count moved are searched, and only
        on the side it moved to; the search is a bisection over all those blocks at once."""
        n = np.diff(self.first)
        if guess is None:
            lo, hi = np.zeros(self.n_blocks, dtype=np.int64), n.copy()
            open_ = np.flatnonzero(hi > lo)
        else:
            lo, hi = guess.copy(), guess.copy()
            has_prev, has_next = np.flatnonzero(guess > 0), np.flatnonzero(guess < n)
            fell = has_prev[~self._below(has_prev, guess[has_prev] - 1, t0, k)]
            rose = has_next[self._below(has_next, guess[has_next], t0, k)]
            lo[fell] = 0
            hi[fell] = guess[fell] - 1
            lo[rose] = guess[rose] + 1
            hi[rose] = n[rose]
            open_ = np.concatenate([fell, rose])
            open_ = open_[lo[open_] < hi[open_]]
        while len(open_):
            mid = (lo[open_] + hi[open_]) // 2
            below = self._below(open_, mid, t0, k)
            lo[open_] = np.where(below, mid + 1, lo[open_])
            hi[open_] = np.where(below, hi[open_], mid)
            open_ = open_[lo[open_] < hi[open_]]
        return lo


def _row_keys(M: sp.csr_matrix) -> np.ndarray:
    """One id per row of `M`, equal exactly when two rows have the same atoms and coefficients
    (grouped per row length: one `np.unique` over the rows' index and coefficient bits)."""
    lengths = np.diff(M.indptr)
    ids = np.full(M.shape[0], -1, dtype=np.int64)
    seen = 0
    for length in np.unique(lengths[lengths > 0]):  # one pass per distinct row length, not per row
        rows = np.flatnonzero(lengths == length)
        at = M.indptr[rows][:, None] + np.arange(length)
        key = np.hstack([M.indices[at].astype(np.int64), M.data[at].view(np.int64)])
        order = np.lexsort(key.T[::-1])
        key = key[order]
        group = np.cumsum(np.r_[False, (key[1:] != key[:-1]).any(axis=1)])
        ids[rows[order]] = seen + group
        seen += int(group[-1]) + 1
    return ids


def build_blocks(A: sp.csr_matrix, b: np.ndarray, w: np.ndarray, squared: np.ndarray,
                 C: sp.csr_matrix, d: np.ndarray, equality: np.ndarray, n_atoms: int) -> Blocks:
    """The blocks of potentials `w * h(A y + b)` and hard rows `C y + d <= 0` (`= 0` where `equality`).

    Each row is divided by its largest |coefficient| (exact for hinges: h(s t) = s h(t) for s > 0,
    so a linear weight scales by s and a squared one by s^2), rows with equal atoms and coefficients
    share a block, and potentials of a block with equal constant and kind are merged (weights added).
    Potentials without atoms or weight are constants of the energy and left out."""
    A, C = sp.csr_matrix(A, copy=True), sp.csr_matrix(C, copy=True)
    A.eliminate_zeros()
    C.eliminate_zeros()
    soft = (np.diff(A.indptr) > 0) & (w > 0)
    M = sp.vstack([A[soft], C], format="csr")
    M.sort_indices()
    scale = np.maximum.reduceat(np.abs(M.data), M.indptr[:-1]) if M.nnz else np.zeros(0)
    scale = np.where(np.diff(M.indptr) > 0, scale, 1.0)
    M = sp.csr_matrix(sp.diags(1.0 / scale) @ M)
    M.sort_indices()
    ids = _row_keys(M)
    hard_kept = ids[soft.sum():] >= 0  # a hard row without atoms is a constant: feasibility checks it
    keep = np.flatnonzero(ids >= 0)
    blocks, block_of_row = np.unique(ids[keep], return_inverse=True)
    rep = keep[np.unique(block_of_row, return_index=True)[1]]
    R = M[rep]
    coo = R.tocoo()
    G = len(blocks)
    n_soft = int(soft.sum())
    block = np.full(M.shape[0], -1, dtype=np.int64)
    block[keep] = block_of_row.ravel()
    s_soft, s_hard = scale[:n_soft], scale[n_soft:]
    lo, hi = np.full(G, -np.inf), np.full(G, np.inf)
    hb = block[n_soft:]
    bound = -d / s_hard
    upper = hard_kept
    np.minimum.at(hi, hb[upper], bound[upper])
    lower = hard_kept & equality
    np.maximum.at(lo, hb[lower], bound[lower])
    sq = squared[soft]
    weight = np.where(sq, w[soft] * s_soft ** 2, w[soft] * s_soft)
    return _with_members(coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data,
                         np.bincount(coo.row, coo.data ** 2, minlength=G), lo, hi,
                         block[:n_soft], -b[soft] / s_soft, sq, weight)


def _with_members(rows: np.ndarray, cols: np.ndarray, a: np.ndarray, norm2: np.ndarray, lo: np.ndarray,
                  hi: np.ndarray, block: np.ndarray, bp: np.ndarray, sq: np.ndarray, weight: np.ndarray) -> Blocks:
    """Sort the members by (block, breakpoint, kind), merge equal ones, and precompute running sums."""
    G = len(norm2)
    order = np.lexsort((sq, bp, block))
    block, bp, sq, weight = block[order], bp[order], sq[order], weight[order]
    new = np.r_[True, (block[1:] != block[:-1]) | (bp[1:] != bp[:-1]) | (sq[1:] != sq[:-1])] if len(block) else np.zeros(0, bool)
    starts = np.flatnonzero(new)
    weight = np.add.reduceat(weight, starts) if len(starts) else weight
    block, bp, sq = block[starts], bp[starts], sq[starts]
    first = np.searchsorted(block, np.arange(G + 1))
    lin_w = np.where(sq, 0.0, weight)
    sq_w = np.where(sq, weight, 0.0)
    sqwb = -sq_w * bp

    def running(x: np.ndarray) -> np.ndarray:  # per-block inclusive sums, in extended precision
        c = np.cumsum(x.astype(np.longdouble))
        before = np.r_[np.longdouble(0), c][first[:-1]]
        return (c - np.repeat(before, np.diff(first))).astype(np.float64)

    L, S, SB = running(lin_w), running(sq_w), running(sqwb)
    P = (L - lin_w) + 2.0 * (S - sq_w) * bp + 2.0 * (SB - sqwb)
    return Blocks(rows, cols, a, norm2, lo, hi, first, bp, P, L, S, SB)
