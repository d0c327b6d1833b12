"""Weighted top-k rank aggregation: Cross-Entropy Monte Carlo (CEMC), exact references and Borda.

Combines several (partial, possibly different-length) ranked lists into one top-k list that
minimises ``sum_i beta_i * d(tau, sigma_i)`` (Lin & Ding 2009, Biometrics; R package TopKLists,
function ``CEMC``). I-Explain uses it to merge the per-coalition formula rankings.

Rank convention (exactly TopKLists' ``CEMC`` without a ``space`` argument):

* The items are the union of all input lists, in order of first appearance (n items).
* Input list ``sigma_i`` of length ``k_i`` ranks its items ``1..k_i``; every other item gets rank
  ``k_i + 1``. Input lists are *not* truncated to k: an item at position 15 of a 20-item input list
  keeps rank 15 even when k = 10.
* A candidate top-k list ``tau`` ranks its items ``1..k``; every other item gets rank ``k + 1``.
* Spearman footrule: ``sum |sigma_i(x) - tau(x)|`` over the items ranked in at least one of the
  two lists (an item in neither contributes 0), as TopKLists' ``Spearman``.
* Kendall: the number of pairs ordered strictly oppositely by the two rank vectors; pairs tied in
  either list (e.g. two items both unranked) count 0. This is TopKLists' ``Kendall2Lists.c`` with
  penalty ``p = 0`` (the ``dm="k"`` "kendall(p=0)" distance).

Both distances are integers, so the objective is a non-negative weighted sum of integers.
The footrule objective is additive over (item, position) pairs, so `footrule_assignment` solves it
exactly as a rectangular linear assignment problem; `brute_force_aggregate` enumerates all
ordered k-subsets for either distance (tiny inputs only).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Hashable, Sequence

import numpy as np
import scipy.sparse
from scipy.optimize import linear_sum_assignment

from xcore.errors import XcoreError
from xcore.explain.rank_problem import (
    DISTANCES,  # noqa: F401  (re-exported: the distances cemc takes)
    FastObjective,
    Problem,
    direct_objectives,
    prepare,
)

BRUTE_FORCE_LIMIT = 2_000_000
"""Most ordered k-subsets `brute_force_aggregate` will enumerate before refusing."""


@dataclass
class Aggregation:
    """An aggregated top-k list with its weighted distance to the inputs and the search trace."""

    ranking: list
    objective: float
    iterations: int
    history: list[float]
    probabilities: np.ndarray | None = field(default=None, repr=False)
    """CEMC only: final n x (k+1) matrix P; row r is item `items[r]`, column k = "not in top k"."""
    items: list | None = field(default=None, repr=False)
    """The item universe (row labels of `probabilities`), in order of first appearance."""


# ---------------------------------------------------------------------- public API
def aggregate_objective(ranking: Sequence[Hashable], lists: Sequence[Sequence[Hashable]],
                        weights: Sequence[float] | None = None, k: int | None = None,
                        distance: str = "footrule") -> float:
    """Weighted distance ``sum_i beta_i d(ranking, list_i)`` of one candidate top-k list.

    `k` defaults to ``len(ranking)`` and, if given, must equal it; items must occur in the lists.
    """
    ranking = list(ranking)
    if k is None:
        k = len(ranking)
    prob = prepare(lists, weights, k, distance)
    if len(ranking) != prob.k:
        raise XcoreError(f"the ranking has {len(ranking)} items but k = {prob.k}")
    codes = []
    for pos, item in enumerate(ranking):
        try:
            codes.append(prob.index[item])
        except (KeyError, TypeError):
            raise XcoreError(f"ranking position {pos + 1}: item {item!r} is not in any input list") from None
    if len(set(codes)) != len(codes):
        raise XcoreError("the ranking contains an item more than once")
    return float(direct_objectives(prob, np.array([codes], dtype=np.int64))[0])


def _enumerate_objectives(prob: Problem) -> tuple[np.ndarray, np.ndarray]:
    """All ordered k-subsets (B, k) in itertools.permutations order and their objectives."""
    total = math.perm(prob.n, prob.k)
    if total > BRUTE_FORCE_LIMIT:
        raise XcoreError(
            f"brute force would enumerate {total:,} ordered {prob.k}-subsets of {prob.n} items, "
            f"above the limit of {BRUTE_FORCE_LIMIT:,}; use cemc (or footrule_assignment)")
    flat = np.fromiter(itertools.chain.from_iterable(itertools.permutations(range(prob.n), prob.k)),
                       dtype=np.int64, count=total * prob.k)
    codes = flat.reshape(total, prob.k)
    return codes, direct_objectives(prob, codes)


def brute_force_aggregate(lists: Sequence[Sequence[Hashable]], weights: Sequence[float] | None = None,
                          k: int | None = None, distance: str = "footrule") -> Aggregation:
    """Exact optimum by enumerating every ordered k-subset (tiny inputs; reference for tests).

    Ties go to the first candidate in ``itertools.permutations`` order over first-appearance item
    order. `iterations` is the number of candidates enumerated. Raises XcoreError above
    `BRUTE_FORCE_LIMIT` candidates.
    """
    prob = prepare(lists, weights, k, distance)
    codes, obj = _enumerate_objectives(prob)
    best = int(np.argmin(obj))
    return Aggregation([prob.items[c] for c in codes[best]], float(obj[best]), int(codes.shape[0]),
                       [float(obj[best])], items=list(prob.items))


def footrule_assignment(lists: Sequence[Sequence[Hashable]], weights: Sequence[float] | None = None,
                        k: int | None = None) -> Aggregation:
    """Exact footrule optimum as a linear assignment of items to the k positions (any size).

    The footrule objective is a constant plus a sum of per-(item, position) costs, so the
    Hungarian algorithm (scipy ``linear_sum_assignment``) solves it exactly in polynomial time.
    """
    prob = prepare(lists, weights, k, "footrule")
    fast = FastObjective(prob)
    rows, cols = linear_sum_assignment(fast.G)
    codes = rows[np.argsort(cols)]
    obj = float(direct_objectives(prob, codes[None, :])[0])
    return Aggregation([prob.items[c] for c in codes], obj, 1, [obj], items=list(prob.items))


def borda(lists: Sequence[Sequence[Hashable]], weights: Sequence[float] | None = None,
          k: int | None = None) -> list:
    """Weighted Borda count: the k items with the smallest ``sum_i beta_i sigma_i(x)``.

    Uses the same rank convention as the distances (unranked in list i -> ``k_i + 1``); ties keep
    first-appearance order. A deterministic baseline and CEMC's starting guess.
    """
    prob = prepare(lists, weights, k, "footrule")
    return [prob.items[c] for c in _borda_codes(prob)]


def _borda_codes(prob: Problem) -> np.ndarray:
    score = prob.weights @ prob.ranks
    return np.argsort(score, kind="stable")[:prob.k]


def _seed_candidates(prob: Problem) -> np.ndarray:
    """Borda's list and each input list's top k (completed in Borda order), as (S, k) codes."""
    order = np.argsort(prob.weights @ prob.ranks, kind="stable")
    seeds = [order[:prob.k]]
    for i in range(prob.ranks.shape[0]):
        own = np.argsort(prob.ranks[i], kind="stable")[:prob.lengths[i]][:prob.k]
        rest = order[~np.isin(order, own)][:prob.k - own.size]
        seeds.append(np.concatenate([own, rest]))
    return np.unique(np.array(seeds, dtype=np.int64), axis=0)


def _sample_top_k(P: np.ndarray, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Draw `n_samples` top-k lists from P (n x (k+1)): position by position, all samples at once.

    Position j draws an item with probability proportional to ``P[:, j]`` among the items not yet
    used by that sample; if those have no probability left the draw is uniform over them.
    """
    n, k = P.shape[0], P.shape[1] - 1
    codes = np.empty((n_samples, k), dtype=np.int64)
    used = np.zeros((n_samples, n), dtype=bool)
    rows = np.arange(n_samples)
    for j in range(k):
        w = np.where(used, 0.0, P[None, :, j])
        cum = np.cumsum(w, axis=1)
        dead = cum[:, -1] <= 1e-12
        if dead.any():
            cum[dead] = np.cumsum(~used[dead], axis=1)
        u = rng.random(n_samples) * cum[:, -1]
        pick = (cum <= u[:, None]).sum(axis=1)
        over = pick >= n  # floating-point edge: u rounded up to the total
        if over.any():
            pick[over] = n - 1 - np.argmax((~used[over])[:, ::-1], axis=1)
        codes[:, j] = pick
        used[rows, pick] = True
    return codes


def _checked_cemc_options(n_samples: int | None, n: int, rho: float, smoothing: float, patience: int,
                          max_iter: int) -> int:
    """The sample size (default 50 n) after checking every CEMC option."""
    if n_samples is None:
        n_samples = 50 * n
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise XcoreError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    if not 0 < rho < 1:
        raise XcoreError(f"rho must be in (0, 1), got {rho}")
    if not 0 < smoothing <= 1:
        raise XcoreError(f"smoothing must be in (0, 1], got {smoothing}")
    if patience < 1 or max_iter < 1:
        raise XcoreError(f"patience and max_iter must be >= 1, got {patience} and {max_iter}")
    return int(n_samples)


def _elite_frequencies(elite: np.ndarray, n: int) -> np.ndarray:
    """n x (k+1) share of the elite lists that put item x at position j (column k: not in the top k)."""
    k = elite.shape[1]
    freq = np.zeros((n, k + 1))
    np.add.at(freq, (elite, np.broadcast_to(np.arange(k), elite.shape)), 1.0)
    freq /= elite.shape[0]
    freq[:, k] = 1.0 - freq[:, :k].sum(axis=1)
    return freq


def cemc(lists: Sequence[Sequence[Hashable]], weights: Sequence[float] | None = None, k: int | None = None,
         distance: str = "footrule", n_samples: int | None = None, rho: float = 0.1, smoothing: float = 0.5,
         patience: int = 5, max_iter: int = 200, seed: int = 0) -> Aggregation:
    """Weighted top-k aggregation by Cross-Entropy Monte Carlo (Lin & Ding 2009; TopKLists CEMC).

    P (n x (k+1), column k = "not in the top k") starts uniform (``1/n``, last column ``1 - k/n``).
    Each iteration draws `n_samples` (default 50 n) top-k lists from P, keeps the best ``rho``
    fraction as elites (all samples tied with the elite threshold are used for the update), sets
    ``P <- (1 - smoothing) P + smoothing * elite frequencies`` and carries the elites into the next
    sample. The first sample also contains Borda's list and each input list's top k, so the result
    is never worse than those. Stops once neither the best objective nor the elite threshold has
    changed for `patience` consecutive iterations (TopKLists uses the threshold alone), or after
    `max_iter` iterations. `history` is the best objective after each iteration.
    """
    prob = prepare(lists, weights, k, distance)
    n, kk = prob.n, prob.k
    n_samples = _checked_cemc_options(n_samples, n, rho, smoothing, patience, max_iter)
    rng = np.random.default_rng(seed)
    objective = FastObjective(prob)
    n_elite = min(max(1, int(round(rho * n_samples))), n_samples - 1)
    P = np.full((n, kk + 1), 1.0 / n)
    P[:, kk] = 1.0 - kk / n

    carried = _seed_candidates(prob)
    carried_obj = objective(carried)
    history: list[float] = []
    best_codes, best_obj = carried[0], math.inf
    prev_threshold = math.nan
    stall = 0
    iteration = 0
    while iteration < max_iter:
        iteration += 1
        fresh = _sample_top_k(P, max(n_samples - carried.shape[0], 1), rng)
        codes = np.concatenate([carried, fresh])
        obj = np.concatenate([carried_obj, objective(fresh)])
        order = np.argsort(obj, kind="stable")
        threshold = float(obj[order[n_elite - 1]])
        tol = 1e-9 * max(1.0, abs(threshold))
        P = (1.0 - smoothing) * P + smoothing * _elite_frequencies(codes[obj <= threshold + tol], n)
        improved = not obj[order[0]] >= best_obj - 1e-9 * max(1.0, abs(obj[order[0]]))
        if improved:
            best_obj, best_codes = float(obj[order[0]]), codes[order[0]].copy()
        moved = not abs(threshold - prev_threshold) <= tol
        stall = 0 if (improved or moved) else stall + 1
        prev_threshold = threshold
        history.append(best_obj)
        carried, carried_obj = codes[order[:n_elite]], obj[order[:n_elite]]
        if stall >= patience:
            break

    final = float(direct_objectives(prob, best_codes[None, :])[0])
    return Aggregation([prob.items[c] for c in best_codes], final, iteration, history,
                       probabilities=P, items=list(prob.items))


def coalition_weights(importance_matrices: Sequence[np.ndarray | scipy.sparse.spmatrix]) -> np.ndarray:
    """I-Explain list weights ``beta_i = 1 - z_i / sum(z)``, z_i = Frobenius norm of matrix i.

    All ones when every norm is zero, and ``[1.0]`` for a single matrix (the formula would give 0).
    Dense arrays and scipy sparse matrices/arrays are accepted.
    """
    if isinstance(importance_matrices, (np.ndarray, str, bytes)) or scipy.sparse.issparse(importance_matrices):
        raise XcoreError("coalition_weights takes a sequence of matrices, one per ranked list")
    mats = list(importance_matrices)
    if not mats:
        raise XcoreError("no importance matrices given (empty input)")
    z = np.empty(len(mats))
    for i, mat in enumerate(mats):
        if scipy.sparse.issparse(mat):
            csr = scipy.sparse.csr_matrix(mat, dtype=float, copy=True)
            csr.sum_duplicates()  # duplicate entries add up, as in the dense matrix
            data = csr.data
        else:
            try:
                data = np.asarray(mat, dtype=float).ravel()
            except (TypeError, ValueError):
                raise XcoreError(f"importance matrix {i} is not numeric") from None
        if not np.all(np.isfinite(data)):
            raise XcoreError(f"importance matrix {i} contains non-finite values")
        z[i] = float(np.sqrt(np.sum(data * data)))
    if len(mats) == 1:
        return np.ones(1)
    total = z.sum()
    if total == 0:
        return np.ones(len(mats))
    return 1.0 - z / total
