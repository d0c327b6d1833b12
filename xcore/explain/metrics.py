"""Explanation-quality metrics shared by every method (PSL/ESMS, Markov logic, classifiers, ...)."""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from xcore.explain.types import Explanation, ExplanationError, ExplanationSet, check_k  # noqa: F401  (re-exported)


def _as_list(explanations: Explanation | ExplanationSet | Iterable[Explanation]) -> list[Explanation]:
    if isinstance(explanations, Explanation):
        return [explanations]
    out = list(explanations)
    for i, e in enumerate(out):
        if not isinstance(e, Explanation):
            raise ExplanationError(f"entry {i} is a {type(e).__name__}, not an Explanation")
    return out


def explainable_at_k(explanations: Explanation | ExplanationSet | Iterable[Explanation], k: int) -> np.ndarray:
    """Per explanation: True iff one of its top-`k` items is explainable (False when it has no items)."""
    k = check_k(k)
    exps = _as_list(explanations)
    return np.array([any(it.explainable for it in e.items[:k]) for e in exps], dtype=bool)


def mep_at_k(explanations: Explanation | ExplanationSet | Iterable[Explanation], k: int) -> float:
    """MEP@K: the fraction of explanations whose top-`k` items contain at least one explainable item.

    An explanation with no items counts as a miss (it stays in the denominator: the prediction
    has no explanation). An empty collection gives NaN (the fraction is undefined). k >= 1.
    """
    hits = explainable_at_k(explanations, k)
    return float(hits.mean()) if len(hits) else float("nan")


def precision_at_k(explanation: Explanation, relevant: Iterable[str], k: int) -> float:
    """Fraction of the top-`k` slots filled by relevant items (matched on canonical `text`).

    The denominator is always `k`: when the explanation has fewer than `k` items the missing
    slots count as not relevant (standard IR precision@k). k >= 1.
    """
    if not isinstance(explanation, Explanation):
        raise ExplanationError(f"precision_at_k needs an Explanation, got {type(explanation).__name__}")
    k = check_k(k)
    if isinstance(relevant, str):
        raise ExplanationError("relevant must be a collection of item texts, not a single string")
    wanted = set(relevant)
    return sum(it.text in wanted for it in explanation.items[:k]) / k


def mean_precision_at_k(explanations: ExplanationSet | Iterable[Explanation],
                        relevant: Mapping[str, Iterable[str]], k: int) -> float:
    """Mean `precision_at_k` over explanations; `relevant` maps target -> relevant item texts.

    Targets missing from `relevant` have no relevant items (precision 0). Empty collection: NaN.
    """
    exps = _as_list(explanations)
    if not exps:
        return float("nan")
    return float(np.mean([precision_at_k(e, relevant.get(e.target, ()), k) for e in exps]))
