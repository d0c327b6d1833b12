"""Which way an explanation item pushes its target: up (+1), down (-1) or not known (0).

Methods record it differently: a ground PSL rule's signed force (-w·∂φ/∂y) in ``extras["force"]``,
a Markov-logic formula's weight and the sign of the target's literal, an explicit
``extras["direction"]``; for signed scores (Shapley, LIME, SHAP) the score's sign is the direction.
"""

from __future__ import annotations

import math

import numpy as np

from xcore.explain.types import Explanation, ExplanationItem

UP, DOWN, UNKNOWN = 1, -1, 0
LABELS = {UP: "pushes up", DOWN: "pushes down", UNKNOWN: "direction not given"}


def _sign(value: object) -> int:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return UNKNOWN
    return UNKNOWN if not math.isfinite(v) or v == 0 else (UP if v > 0 else DOWN)


def item_direction(item: ExplanationItem, signed_score: bool = False) -> int:
    """+1 if the item pushes the prediction up, -1 if down, 0 if the method does not say."""
    ex = item.extras
    for key in ("direction", "force"):
        if ex.get(key) is not None:
            return _sign(ex[key])
    if ex.get("weight") is not None and ex.get("sign") is not None:
        return _sign(float(ex["weight"]) * float(ex["sign"]))
    return _sign(item.score) if signed_score else UNKNOWN


def directions(exp: Explanation, k: int | None = None) -> np.ndarray:
    """Directions of the explanation's items in rank order (the first `k`)."""
    signed = exp.score_spec is not None and exp.score_spec.signed
    items = exp.items if k is None else exp.top(k)
    return np.array([item_direction(it, signed) for it in items], dtype=np.int64)


def signed_scores(exp: Explanation, k: int | None = None) -> np.ndarray:
    """Scores with the direction as their sign (|score| times direction; unsigned where unknown)."""
    items = exp.items if k is None else exp.top(k)
    d = directions(exp, k)
    s = np.array([it.score for it in items], dtype=np.float64)
    return np.where(d == UNKNOWN, s, np.abs(s) * d)
