"""The coded problem of weighted top-k rank aggregation and its objective, shared by CEMC and the exact
references (`xcore.explain.rank_aggregation`): inputs validated and coded, rank vectors, the
objective straight from the definitions (`direct_objectives`) and its fast decomposition
(`FastObjective`). The rank convention is the module docstring of `xcore.explain.rank_aggregation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from xcore.errors import XcoreError

DISTANCES: tuple[str, ...] = ("footrule", "kendall")
"""Supported distances between a candidate top-k list and an input list."""

CHUNK_ELEMENTS = 4_000_000  # bound on temporary array sizes in vectorised evaluation


@dataclass
class Problem:
    """Validated, integer-coded aggregation problem."""

    items: list
    index: dict
    ranks: np.ndarray        # (m, n) int: rank of item x in list i (unranked -> k_i + 1)
    lengths: np.ndarray      # (m,) int: k_i
    weights: np.ndarray      # (m,) float beta_i >= 0
    k: int
    distance: str

    @property
    def n(self) -> int:
        return len(self.items)


def _code_lists(lists: Sequence[Sequence[Hashable]]) -> tuple[dict, list[list[int]]]:
    """Each list's items as codes 0..n-1 (first-appearance order), after checking every list."""
    if isinstance(lists, np.ndarray):
        lists = list(lists)
    if isinstance(lists, (str, bytes)) or not isinstance(lists, Sequence):
        raise XcoreError("lists must be a sequence of ranked lists (each a sequence of items)")
    if len(lists) == 0:
        raise XcoreError("no ranked lists to aggregate (empty input)")
    index: dict = {}
    coded: list[list[int]] = []
    for i, lst in enumerate(lists):
        if isinstance(lst, np.ndarray) or type(lst).__name__ == "Series":
            lst = lst.tolist()  # type: ignore[attr-defined]  # numpy / pandas rows: plain Python items
        if isinstance(lst, (str, bytes)) or not isinstance(lst, Sequence):
            raise XcoreError(f"list {i} is not a sequence of items (got {type(lst).__name__})")
        if len(lst) == 0:
            raise XcoreError(f"list {i} is empty; drop empty lists before aggregating")
        seen: set = set()
        row = []
        for pos, item in enumerate(lst):
            try:
                hash(item)
            except TypeError:
                raise XcoreError(f"list {i}, position {pos + 1}: item {item!r} is not hashable") from None
            if item in seen:
                raise XcoreError(f"list {i} contains item {item!r} more than once (position {pos + 1})")
            seen.add(item)
            row.append(index.setdefault(item, len(index)))
        coded.append(row)
    return index, coded


def _checked_weights(weights: Sequence[float] | None, m: int) -> np.ndarray:
    """The list weights beta (all ones by default): one finite non-negative number per list, not all zero."""
    if weights is None:
        return np.ones(m)
    try:
        beta = np.asarray(weights, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise XcoreError(f"weights must be numbers, got {weights!r}") from None
    if beta.shape[0] != m:
        raise XcoreError(f"got {beta.shape[0]} weights for {m} lists; give one weight per list")
    if not np.all(np.isfinite(beta)):
        raise XcoreError(f"weights must be finite, got {beta.tolist()}")
    if np.any(beta < 0):
        bad = int(np.flatnonzero(beta < 0)[0])
        raise XcoreError(f"weights must be non-negative; weight {bad} is {beta[bad]}")
    if not np.any(beta > 0):
        raise XcoreError("all weights are zero: every list would be ignored")
    return beta


def prepare(lists: Sequence[Sequence[Hashable]], weights: Sequence[float] | None,
            k: int | None, distance: str) -> Problem:
    """Validate the inputs and code items as 0..n-1 (first-appearance order)."""
    if distance not in DISTANCES:
        raise XcoreError(f"unknown distance {distance!r}; use one of {', '.join(DISTANCES)}")
    index, coded = _code_lists(lists)
    items = list(index)
    n = len(items)
    lengths = np.array([len(r) for r in coded], dtype=np.int64)
    if k is None:
        k = int(lengths.max())
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise XcoreError(f"k must be an integer, got {k!r}")
    if k < 1:
        raise XcoreError(f"k must be at least 1, got {k}")
    beta = _checked_weights(weights, len(coded))
    ranks = np.repeat(lengths[:, None] + 1, n, axis=1)
    for i, row in enumerate(coded):  # one numpy assignment per input list
        ranks[i, row] = np.arange(1, len(row) + 1)
    return Problem(items, index, ranks, lengths, beta, min(int(k), n), distance)


def candidate_ranks(codes: np.ndarray, n: int, k: int) -> np.ndarray:
    """(B, k) item codes -> (B, n) rank vectors (1..k, others k+1)."""
    b = codes.shape[0]
    r = np.full((b, n), k + 1, dtype=np.int64)
    r[np.arange(b)[:, None], codes] = np.arange(1, k + 1)[None, :]
    return r


# ---------------------------------------------------------------------- direct objective
def direct_objectives(prob: Problem, codes: np.ndarray) -> np.ndarray:
    """Objective of each candidate row in `codes` (B, k), straight from the definitions.

    This is the reference evaluator (used by `aggregate_objective` and `brute_force_aggregate`);
    CEMC uses the algebraically equivalent `FastObjective`.
    """
    n, m = prob.n, prob.ranks.shape[0]
    per = m * n * (n if prob.distance == "kendall" else 1)
    chunk = max(1, CHUNK_ELEMENTS // max(per, 1))
    out = np.empty(codes.shape[0])
    a = prob.ranks
    for s in range(0, codes.shape[0], chunk):
        r = candidate_ranks(codes[s:s + chunk], n, codes.shape[1])
        if prob.distance == "footrule":
            counted = (a[None] <= prob.lengths[None, :, None]) | (r[:, None, :] <= codes.shape[1])
            d = (np.abs(a[None] - r[:, None, :]) * counted).sum(axis=2)
        else:
            sa = np.sign(a[:, :, None] - a[:, None, :])          # (m, n, n)
            sr = np.sign(r[:, :, None] - r[:, None, :])          # (B, n, n)
            d = ((sa[None] * sr[:, None]) < 0).sum(axis=(2, 3)) // 2
        out[s:s + chunk] = d @ prob.weights
    return out


# ---------------------------------------------------------------------- fast objective
class FastObjective:
    """Objective of many candidates at once, via a decomposition over chosen items.

    Footrule: ``const + sum_j G[x_j, j]`` with ``G[x, j] = sum_i beta_i (|sigma_i(x) - (j+1)| -
    base_i(x))``, ``base_i(x) = |sigma_i(x) - (k+1)|`` if x is ranked in list i else 0.
    Kendall: ``sum_j r[x_j] - sum_{j<l} W[x_l, x_j]`` with ``W[x, y] = sum_i beta_i
    [sigma_i(x) > sigma_i(y)]`` and r its row sums (pairs outside the top k are tied in tau).
    """

    def __init__(self, prob: Problem) -> None:
        self.distance = prob.distance
        k, a, beta = prob.k, prob.ranks, prob.weights
        if prob.distance == "footrule":
            ranked = a <= prob.lengths[:, None]
            base = np.abs(a - (k + 1)) * ranked                                  # (m, n)
            self.const = float(beta @ base.sum(axis=1))
            pos = np.arange(1, k + 1)
            self.G = np.einsum("i,ixj->xj", beta,
                               np.abs(a[:, :, None] - pos[None, None, :]) - base[:, :, None])
        else:
            n = prob.n
            W = np.zeros((n, n))
            for i in range(a.shape[0]):  # one (n, n) comparison per input list
                W += beta[i] * (a[i][:, None] > a[i][None, :])
            self.W = W
            self.r = W.sum(axis=1)
            self.lower = np.tril_indices(k, -1)  # (l, j) with l > j

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        if self.distance == "footrule":
            return self.const + self.G[codes, np.arange(codes.shape[1])[None, :]].sum(axis=1)
        li, ji = self.lower
        out = self.r[codes].sum(axis=1)
        if li.size:
            chunk = max(1, CHUNK_ELEMENTS // li.size)
            for s in range(0, codes.shape[0], chunk):
                c = codes[s:s + chunk]
                out[s:s + chunk] -= self.W[c[:, li], c[:, ji]].sum(axis=1)
        return out
