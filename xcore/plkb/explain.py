"""Explanations of a KB classifier's answer to one query, computed with partial queries.

* `decisive_features`: the size-k sub-query whose omega(POS) midpoint is highest (for a positive
  prediction; lowest for a negative one). Exhaustive over C(n, k) sub-queries while that is at
  most `max_exhaustive`; beyond, greedy forward selection then swap hill-climbing with seeded
  random restarts. Every evaluated sub-query is kept in the candidate table.
* `shapley_values`: Shapley values of the classifier itself with v(S) = midpoint of omega(POS)
  for the sub-query keeping only the features in S (a feature is "absent" when it is left out
  of the query; no background sample). Exact over all 2^n coalitions up to `exact_max`
  features, permutation sampling with standard errors beyond. LP answers are cached.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb, factorial
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem
from xcore.plkb.inference import Reasoner
from xcore.plkb.literals import ABSENT, Domain
from xcore.plkb.lp import DEFAULT_FACE_TOL, Interval

SCORE_TOL = 1e-7
"""Two sub-query scores (omega(POS) midpoints) closer than this are tied; ties keep evaluation
order. It must not be smaller than the LP's optimal-face tolerance (`DEFAULT_FACE_TOL`, an
absolute slack that can move a midpoint by about that much)."""
assert SCORE_TOL >= DEFAULT_FACE_TOL

CANDIDATE_COLUMNS = ("rank", "features", "query", "omega_lo", "omega_hi", "omega_mid", "size")


def tie_order(scores: Sequence[float], tol: float = SCORE_TOL) -> list[int]:
    """Indices by decreasing score; scores within `tol` of the best remaining one are tied and
    keep index (evaluation) order."""
    sc = np.asarray(scores, dtype=float)
    by_score = np.argsort(-sc, kind="stable")
    out: list[int] = []
    i, n = 0, len(by_score)
    while i < n:
        lead = sc[by_score[i]]
        j = i
        while j < n and sc[by_score[j]] >= lead - tol:
            j += 1
        out += sorted(by_score[i:j].tolist())
        i = j
    return out


def first_best(scores: Sequence[float], tol: float = SCORE_TOL) -> int:
    """Index of the first score within `tol` of the maximum (the tie rule for one choice)."""
    sc = np.asarray(scores, dtype=float)
    return int(np.flatnonzero(sc >= sc.max() - tol)[0])


def _sub_codes(codes: np.ndarray, keep: Sequence[int]) -> np.ndarray:
    out = np.full_like(codes, ABSENT)
    keep = np.asarray(list(keep), dtype=np.int64)
    out[keep] = codes[keep]
    return out


@dataclass
class DecisiveResult:
    """The k most decisive features of one prediction, with every sub-query evaluated.

    `features` are feature indices of the chosen sub-query, `interval` its omega(POS) interval;
    `full` is the interval of the whole query. `candidates` has one row per evaluated sub-query,
    best first (columns `CANDIDATE_COLUMNS`).
    """

    k: int
    positive: bool
    features: tuple[int, ...]
    interval: Interval
    full: Interval
    candidates: pd.DataFrame
    method: str
    n_evaluated: int


def decisive_features(reasoner: Reasoner, codes: np.ndarray, k: int, positive: bool | None = None,
                      max_exhaustive: int = 3000, restarts: int = 3, seed: int = 0,
                      tol: float = SCORE_TOL) -> DecisiveResult:
    """The size-k sub-query that best supports the prediction (see module docstring); scores
    within `tol` are tied and the first evaluated wins (lexicographic when exhaustive)."""
    if tol < DEFAULT_FACE_TOL:
        raise XcoreError(f"tol must be at least the face tolerance {DEFAULT_FACE_TOL:g}, got {tol!r}")
    codes = np.asarray(codes, dtype=np.int64)
    present = np.flatnonzero(codes != ABSENT)
    n = len(present)
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise XcoreError(f"k must be a positive integer, got {k!r}")
    k = min(int(k), n)
    full = reasoner.interval(codes)
    if positive is None:
        positive = full.positive
    sign = 1.0 if positive else -1.0
    dom = reasoner.kb.domain
    evaluated: dict[tuple[int, ...], Interval] = {}

    def score(subset: tuple[int, ...]) -> float:
        key = tuple(sorted(subset))
        if key not in evaluated:
            evaluated[key] = reasoner.interval(_sub_codes(codes, key))
        return sign * evaluated[key].mid

    if k == 0:
        method = "empty"
        score(())
    elif comb(n, k) <= max_exhaustive:
        method = "exhaustive"
        for subset in combinations(present.tolist(), k):
            score(subset)
    else:
        method = "hill-climb"
        _hill_climb(present.tolist(), k, score, restarts, np.random.default_rng(seed), tol)
    keys = list(evaluated)
    # only size-k sub-queries compete (greedy steps of smaller sizes are listed after them);
    # scores within tol are tied and keep evaluation order (lexicographic when exhaustive)
    signed = [sign * evaluated[key].mid for key in keys]
    full_k = [i for i in range(len(keys)) if len(keys[i]) == k]
    other = [i for i in range(len(keys)) if len(keys[i]) != k]
    order = ([full_k[j] for j in tie_order([signed[i] for i in full_k], tol)]
             + [other[j] for j in tie_order([signed[i] for i in other], tol)])
    best = keys[order[0]]
    table = pd.DataFrame({
        "rank": np.arange(1, len(order) + 1),
        "features": [tuple(dom.features[f] for f in keys[i]) for i in order],
        "query": [dom.query_text(_sub_codes(codes, keys[i])) for i in order],
        "omega_lo": [evaluated[keys[i]].lo for i in order],
        "omega_hi": [evaluated[keys[i]].hi for i in order],
        "omega_mid": [evaluated[keys[i]].mid for i in order],
        "size": [len(keys[i]) for i in order],
    }, columns=list(CANDIDATE_COLUMNS))
    return DecisiveResult(k, bool(positive), best, evaluated[best], full, table, method, len(evaluated))


def _hill_climb(items: list[int], k: int, score: Callable[[tuple[int, ...]], float], restarts: int,
                rng: np.random.Generator, tol: float = SCORE_TOL) -> tuple[int, ...]:
    """Greedy forward selection to size k, then best-improvement swaps; plus random restarts.
    A move counts only if it improves the score by more than `tol`; ties keep the first seen."""
    def climb(start: list[int]) -> tuple[list[int], float]:
        cur = sorted(start)
        cur_s = score(tuple(cur))
        while True:
            best_s, best_set = cur_s, None
            outside = [j for j in items if j not in cur]
            for i in cur:
                for j in outside:
                    cand = sorted([x for x in cur if x != i] + [j])
                    s = score(tuple(cand))
                    if s > best_s + tol:
                        best_s, best_set = s, cand
            if best_set is None:
                return cur, cur_s
            cur, cur_s = best_set, best_s

    greedy: list[int] = []
    for _ in range(k):
        rest = [j for j in items if j not in greedy]
        vals = [score(tuple(sorted(greedy + [j]))) for j in rest]
        greedy.append(rest[first_best(vals, tol)])
    best, best_s = climb(greedy)
    for _ in range(restarts):
        start = rng.choice(items, size=k, replace=False).tolist()
        cand, s = climb(start)
        if s > best_s + tol:
            best, best_s = cand, s
    return tuple(best)


# ---------------------------------------------------------------------- Shapley
@dataclass
class ShapleyResult:
    """Shapley values of the query's features; phi sums to v_full - v_empty (exactly when exact)."""

    features: tuple[int, ...]
    phi: np.ndarray
    se: np.ndarray
    v_empty: float
    v_full: float
    method: str
    n_coalitions: int
    n_permutations: int = 0
    names: tuple[str, ...] = field(default=())
    values: tuple[str, ...] = field(default=())

    def to_explanation(self, target: str = "row", prediction: float | None = None):
        """The shared `xcore.explain.Explanation`: one "feature_set" item per feature, by |phi|."""
        items = [ExplanationItem(kind="feature_set", text=f"{n}={v}", natural=f"{n} = {v}", score=float(p),
                                 direction=int(np.sign(p)), effect=float(p),
                                 atoms=[f"{n}_{v}"], extras={"se": float(s) if np.isfinite(s) else None})
                 for n, v, p, s in zip(self.names, self.values, self.phi, self.se)]
        return Explanation(
            target=target, target_text=f"Shapley values of the KB classifier for {target}",
            method=f"plkb-shapley-{self.method}", prediction=self.v_full if prediction is None else prediction,
            prediction_kind="probability",
            items=items, meta={"v_empty": self.v_empty, "v_full": self.v_full,
                               "n_coalitions": self.n_coalitions, "n_permutations": self.n_permutations})

    def to_frame(self) -> pd.DataFrame:
        """One row per feature: feature, value, phi, se, rank by |phi|."""
        order = np.asarray(tie_order(np.abs(self.phi)), dtype=np.int64)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(1, len(order) + 1)
        return pd.DataFrame({"feature": list(self.names), "value": list(self.values),
                             "phi": self.phi, "se": self.se, "rank": rank})


def shapley_weights(n: int) -> np.ndarray:
    """w[s] = s! (n - s - 1)! / n! for coalition sizes s = 0..n-1."""
    return np.array([factorial(s) * factorial(n - s - 1) / factorial(n) for s in range(n)])


def exact_shapley(values: np.ndarray, n: int) -> np.ndarray:
    """Shapley values from a value table over all 2^n coalitions (bit i = player i), vectorised."""
    masks = np.arange(1 << n, dtype=np.int64)
    sizes = np.array([bin(m).count("1") for m in range(1 << n)], dtype=np.int64) if n else np.zeros(1, np.int64)
    w = shapley_weights(n) if n else np.zeros(0)
    phi = np.zeros(n)
    for i in range(n):
        bit = 1 << i
        without = masks[(masks & bit) == 0]
        phi[i] = np.sum(w[sizes[without]] * (values[without | bit] - values[without]))
    return phi


def shapley_values(reasoner: Reasoner, codes: np.ndarray, exact_max: int = 12, n_permutations: int = 200,
                   seed: int = 0) -> ShapleyResult:
    """Shapley values of the present features with v(S) = midpoint of omega(POS) for sub-query S."""
    codes = np.asarray(codes, dtype=np.int64)
    present = np.flatnonzero(codes != ABSENT)
    n = len(present)
    dom: Domain = reasoner.kb.domain

    seen: set[bytes] = set()

    def v(mask_members: Sequence[int]) -> float:
        sub = _sub_codes(codes, present[list(mask_members)])
        seen.add(sub.tobytes())
        return reasoner.interval(sub).mid

    names = tuple(dom.features[f] for f in present)
    vals = tuple(dom.decode(codes).get(dom.features[f]) or "?" for f in present)
    v_empty, v_full = v([]), v(range(n))
    if n <= exact_max:
        table = np.empty(1 << n)
        for m in range(1 << n):
            table[m] = v([i for i in range(n) if m >> i & 1])
        phi = exact_shapley(table, n)
        return ShapleyResult(tuple(present.tolist()), phi, np.zeros(n), v_empty, v_full, "exact",
                             1 << n, 0, names, vals)
    rng = np.random.default_rng(seed)
    contrib = np.zeros((n_permutations, n))
    for t in range(n_permutations):
        perm = rng.permutation(n)
        prev = v_empty
        for j in range(n):
            cur = v_full if j == n - 1 else v(perm[: j + 1])
            contrib[t, perm[j]] = cur - prev
            prev = cur
    phi = contrib.mean(axis=0)
    se = contrib.std(axis=0, ddof=1) / np.sqrt(n_permutations) if n_permutations > 1 else np.full(n, np.nan)
    return ShapleyResult(tuple(present.tolist()), phi, se, v_empty, v_full, "permutation",
                         len(seen), n_permutations, names, vals)


# ---------------------------------------------------------------------- comparisons
def top_k(scores: np.ndarray, k: int, positive: bool | None = None, tol: float = SCORE_TOL) -> np.ndarray:
    """Indices of the k largest scores (toward the prediction: -score for a negative one;
    by |score| when `positive` is None). Scores within `tol` are tied and keep index order."""
    s = np.asarray(scores, dtype=float)
    key = np.abs(s) if positive is None else (s if positive else -s)
    return np.asarray(tie_order(key, tol)[:k], dtype=np.int64)


def topk_agreement(a: np.ndarray, b: np.ndarray, k: int, positive: bool | None = None) -> float:
    """Fraction of the top-k features of `a` that are also in the top-k of `b`."""
    k = min(int(k), len(a))
    if k == 0:
        return float("nan")
    return len(set(top_k(a, k, positive).tolist()) & set(top_k(b, k, positive).tolist())) / k


def explanation_accuracy(features: Sequence[int], codes: np.ndarray, seed_codes: np.ndarray) -> float:
    """Fraction of explanation features whose value in the row equals the seed string's."""
    features = np.asarray(list(features), dtype=np.int64)
    if len(features) == 0:
        return float("nan")
    return float(np.mean(np.asarray(codes)[features] == np.asarray(seed_codes)[features]))
