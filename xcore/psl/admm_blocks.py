"""Potentials that share a linear form, as one consensus-ADMM block (issue 26).

A ground program often holds many potentials over the same atoms with the same coefficients that
differ only in their constant (entity-resolution: 491,025 potentials, 8,240 distinct linear forms).
Every such potential is a function of t = a.y alone, so their sum f(t) = sum_j w_j h(t + b_j)
(h a hinge, squared or not) is one convex, piecewise linear-quadratic function of t, and ADMM's local
step for the whole group -- argmin_x f(a.x) + rho/2 |x - v|^2 -- is one exact 1-D problem: x = v + s a
with t = a.v + s |a|^2. This is exact (no approximation): identical potentials are the special case
of equal constants (their weights add), and hard rows over the same form are bounds on t. ADMM then
keeps one local copy per non-zero of the distinct forms instead of one per non-zero of every
potential (980,132 -> 16,624 copies on entity-resolution), and the z-average is over few copies.
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
    member_of: np.ndarray | None = None
    """Per potential of the program, its member (-1: left out); with `factor` (its weight's scale) it
    lets `reweighted` redo the merged weights without regrouping."""
    factor: np.ndarray | None = None
    squared: np.ndarray | None = None
    """Per member, whether its hinge is squared."""

    @property
    def n_blocks(self) -> int:
        return len(self.norm2)

    @property
    def n_members(self) -> int:
        return len(self.bp)

    def reweighted(self, w: np.ndarray) -> Blocks:
        """The same blocks under new potential weights `w` (weight learning changes only the weights): the
        members' weights are one weighted sum (`np.bincount`), the running sums recomputed; no regrouping.
        Needs blocks built with `keep_zero=True`, so that no potential was left out for its weight."""
        if self.member_of is None:
            raise ValueError("these blocks were built without keep_zero=True: they cannot be reweighted")
        kept = self.member_of >= 0
        weight = np.bincount(self.member_of[kept], np.asarray(w, dtype=np.float64)[kept] * self.factor[kept],
                             minlength=self.n_members)
        return _running_sums(self.rows, self.cols, self.a, self.norm2, self.lo, self.hi, self.first, self.bp,
                             self.squared, weight, self.member_of, self.factor)

    def row_sums(self, values: np.ndarray) -> np.ndarray:
        """Sum of `values` (one per copy) over each block's copies."""
        return np.bincount(self.rows, values, minlength=self.n_blocks)

    def prox_t(self, t0: np.ndarray, k: np.ndarray, seg: Segments | None = None) -> tuple[np.ndarray, Segments]:
        """argmin_t f_g(t) + k_g/2 (t - t0_g)^2 per block, within its bounds [lo, hi] (exact), and the
        segment of f it lies on (pass it back as `seg` next time: a warm start).

        The derivative f'(t) + k (t - t0) is nondecreasing, so the minimiser lies on the segment
        before the first breakpoint where it is already >= 0, or at that breakpoint when the
        derivative jumps over 0 there (linear hinges). From `seg`, only blocks whose segment moved
        are searched (bisection over all of them at once, on the side it moved to)."""
        n = np.diff(self.first)
        if seg is None:
            every = np.arange(self.n_blocks)
            seg = self._segments(self._search(every, np.zeros(self.n_blocks, dtype=np.int64), n, t0, k))
        else:
            fell = np.flatnonzero(seg.p_lo + k * (seg.bp_lo - t0) >= 0)
            rose = np.flatnonzero(seg.p_hi + k * (seg.bp_hi - t0) < 0)
            if len(fell) or len(rose):
                moved = np.concatenate([fell, rose])
                c = seg.count[moved]
                lo = np.concatenate([np.zeros(len(fell), dtype=np.int64), c[len(fell):] + 1])
                hi = np.concatenate([c[:len(fell)] - 1, n[rose]])
                seg.refresh(self, moved, self._search(moved, lo, hi, t0, k))
        t = np.maximum((k * t0 - seg.L - 2.0 * seg.SB) / (2.0 * seg.S + k), seg.bp_lo)
        return np.clip(t, self.lo, self.hi), seg

    def _search(self, blocks: np.ndarray, lo: np.ndarray, hi: np.ndarray, t0: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Per block of `blocks`, how many members have f'(bp^-) + k (bp - t0) < 0, knowing it lies in
        [lo, hi] (a prefix of the members: the test is monotone), by bisection over all at once."""
        lo, hi = lo.copy(), hi.copy()
        open_ = np.flatnonzero(hi > lo)
        while len(open_):
            g = blocks[open_]
            mid = (lo[open_] + hi[open_]) // 2
            j = self.first[g] + mid
            below = self.P[j] + k[g] * (self.bp[j] - t0[g]) < 0
            lo[open_] = np.where(below, mid + 1, lo[open_])
            hi[open_] = np.where(below, hi[open_], mid)
            open_ = open_[lo[open_] < hi[open_]]
        return lo

    def _segments(self, count: np.ndarray) -> Segments:
        """The segments with `count` active members per block, their figures read from the members."""
        G = self.n_blocks
        seg = Segments(np.zeros(G, dtype=np.int64), *(np.zeros(G) for _ in range(7)))
        seg.refresh(self, np.arange(G), count)
        return seg


@dataclass
class Segments:
    """Per block, the segment of f a local step ended on: `count` active members, and cached (so a
    step that stays on it reads none of the member arrays) f'(bp^-) and bp of its last active member
    (`p_lo`, `bp_lo`; -inf when none) and first inactive one (`p_hi`, `bp_hi`; +inf when none), and
    the running sums `L`, `S`, `SB` through the last active member (0 when none)."""

    count: np.ndarray
    p_lo: np.ndarray
    bp_lo: np.ndarray
    p_hi: np.ndarray
    bp_hi: np.ndarray
    L: np.ndarray
    S: np.ndarray
    SB: np.ndarray

    def refresh(self, bl: Blocks, blocks: np.ndarray, count: np.ndarray) -> None:
        """Move `blocks` to the segments with `count` active members."""
        n = bl.first[blocks + 1] - bl.first[blocks]
        last = bl.first[blocks] + count - 1
        has_last, has_next = count > 0, count < n
        at_last, at_next = np.where(has_last, last, 0), np.where(has_next, last + 1, 0)
        self.count[blocks] = count
        if bl.n_members == 0:  # hard rows only: every segment is the empty one
            self.p_lo[blocks] = self.bp_lo[blocks] = -np.inf
            self.p_hi[blocks] = self.bp_hi[blocks] = np.inf
            self.L[blocks] = self.S[blocks] = self.SB[blocks] = 0.0
            return
        self.p_lo[blocks] = np.where(has_last, bl.P[at_last], -np.inf)
        self.bp_lo[blocks] = np.where(has_last, bl.bp[at_last], -np.inf)
        self.p_hi[blocks] = np.where(has_next, bl.P[at_next], np.inf)
        self.bp_hi[blocks] = np.where(has_next, bl.bp[at_next], np.inf)
        for name in ("L", "S", "SB"):
            getattr(self, name)[blocks] = np.where(has_last, getattr(bl, name)[at_last], 0.0)


def _row_keys(M: sp.csr_matrix) -> np.ndarray:
    """One id per row of `M`, equal exactly when two rows have the same atoms and coefficients
    (grouped per row length: one `np.lexsort` over the rows' indices and coefficient bits)."""
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
                 C: sp.csr_matrix, d: np.ndarray, equality: np.ndarray, n_atoms: int,
                 keep_zero: bool = False) -> Blocks:
    """The blocks of potentials `w * h(A y + b)` and hard rows `C y + d <= 0` (`= 0` where `equality`).

    Each row is divided by its largest |coefficient| (exact for hinges: h(s t) = s h(t) for s > 0,
    so a linear weight scales by s and a squared one by s^2), rows with equal atoms and coefficients
    share a block, and potentials of a block with equal constant and kind are merged (weights added).
    Potentials without atoms or weight are constants of the energy and left out (those without weight
    are kept when `keep_zero`, so that `Blocks.reweighted` can give them one later)."""
    A, C = sp.csr_matrix(A, copy=True), sp.csr_matrix(C, copy=True)
    A.eliminate_zeros()
    C.eliminate_zeros()
    soft = (np.diff(A.indptr) > 0) & ((w >= 0) if keep_zero else (w > 0))
    M = sp.vstack([A[soft], C], format="csr")
    M.sort_indices()
    padded = np.r_[np.abs(M.data), 0.0]  # a last row without atoms must not index past the data
    scale = np.maximum.reduceat(padded, M.indptr[:-1]) if M.shape[0] else np.zeros(0)
    scale = np.where(np.diff(M.indptr) > 0, scale, 1.0)
    M = sp.csr_matrix(sp.diags(1.0 / scale) @ M)
    M.sort_indices()
    ids = _row_keys(M)
    hard_kept = ids[soft.sum():] >= 0  # a hard row without atoms is a constant: feasibility checks it
    G = int(ids.max(initial=-1)) + 1  # the ids are 0..G-1, every one used
    keep = np.flatnonzero(ids >= 0)
    rep = np.zeros(G, dtype=np.int64)
    rep[ids[keep][::-1]] = keep[::-1]  # each block's first row (the last write wins)
    coo = M[rep].tocoo()
    n_soft = int(soft.sum())
    block = ids
    s_soft, s_hard = scale[:n_soft], scale[n_soft:]
    lo, hi = np.full(G, -np.inf), np.full(G, np.inf)
    hb = block[n_soft:]
    bound = -d / s_hard
    upper = hard_kept
    np.minimum.at(hi, hb[upper], bound[upper])
    lower = hard_kept & equality
    np.maximum.at(lo, hb[lower], bound[lower])
    sq = squared[soft]
    factor = np.where(sq, s_soft ** 2, s_soft)
    bl = _with_members(coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data,
                       np.bincount(coo.row, coo.data ** 2, minlength=G), lo, hi,
                       block[:n_soft], -b[soft] / s_soft, sq, w[soft] * factor)
    if keep_zero:
        member_of = np.full(len(w), -1, dtype=np.int64)
        member_of[np.flatnonzero(soft)] = bl.member_of
        full_factor = np.zeros(len(w))
        full_factor[soft] = factor
        bl.member_of, bl.factor = member_of, full_factor
    else:
        bl.member_of = bl.factor = None
    return bl


def _with_members(rows: np.ndarray, cols: np.ndarray, a: np.ndarray, norm2: np.ndarray, lo: np.ndarray,
                  hi: np.ndarray, block: np.ndarray, bp: np.ndarray, sq: np.ndarray, weight: np.ndarray) -> Blocks:
    """Sort the members by (block, breakpoint), merge equal neighbours (same kind too), precompute running sums."""
    G = len(norm2)
    order = np.argsort(bp)
    order = order[np.argsort(block[order], kind="stable")]  # by block, then breakpoint (lexsort's order, 2x faster)
    block, bp, sq, weight = block[order], bp[order], sq[order], weight[order]
    differs = (block[1:] != block[:-1]) | (bp[1:] != bp[:-1]) | (sq[1:] != sq[:-1])
    new = np.r_[True, differs] if len(block) else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    weight = np.add.reduceat(weight, starts) if len(starts) else weight
    member_of = np.empty(len(order), dtype=np.int64)
    member_of[order] = np.cumsum(new) - 1  # each input potential's member
    block, bp, sq = block[starts], bp[starts], sq[starts]
    first = np.searchsorted(block, np.arange(G + 1))
    return _running_sums(rows, cols, a, norm2, lo, hi, first, bp, sq, weight, member_of, None)


def _running_sums(rows: np.ndarray, cols: np.ndarray, a: np.ndarray, norm2: np.ndarray, lo: np.ndarray,
                  hi: np.ndarray, first: np.ndarray, bp: np.ndarray, sq: np.ndarray, weight: np.ndarray,
                  member_of: np.ndarray, factor: np.ndarray | None) -> Blocks:
    """The blocks with the members' weights: running sums of linear, squared and squared-times-b weights."""
    lin_w = np.where(sq, 0.0, weight)
    sq_w = np.where(sq, weight, 0.0)
    sqwb = -sq_w * bp

    def running(x: np.ndarray) -> np.ndarray:  # per-block inclusive sums, in extended precision
        c = np.cumsum(x.astype(np.longdouble))
        before = np.r_[np.longdouble(0), c][first[:-1]]
        return (c - np.repeat(before, np.diff(first))).astype(np.float64)

    L, S, SB = running(lin_w), running(sq_w), running(sqwb)
    P = (L - lin_w) + 2.0 * (S - sq_w) * bp + 2.0 * (SB - sqwb)
    return Blocks(rows, cols, a, norm2, lo, hi, first, bp, P, L, S, SB, member_of, factor, sq)
