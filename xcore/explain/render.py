"""The one renderer of an item's direction and effect: every view (bars, tables, graphs, waterfalls, the
global view, text, HTML reports, explanation cards, the command line and study screens) states which
way a reason pushes the prediction through these functions, from the item's own `direction` field.

Natural text never states a direction by itself; the words added here do.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from xcore.explain.types import Explanation, ExplanationItem, ScoreSpec

UP, DOWN, NONE = 1, -1, 0

LEGEND: dict[int, str] = {UP: "pushes up", DOWN: "pushes down", NONE: "no direction"}
"""Legend names of the three directions (chart traces, table cells)."""

_PHRASE: dict[int, str] = {UP: "pushes it up", DOWN: "pushes it down", NONE: ""}


def direction_phrase(direction: int) -> str:
    """The words for a direction in a sentence: "pushes it up", "pushes it down", or "" for none."""
    return _PHRASE[int(np.sign(direction))]


def direction_label(direction: int) -> str:
    """The short name of a direction for legends and table cells."""
    return LEGEND[int(np.sign(direction))]


def directions(exp: Explanation, k: int | None = None) -> np.ndarray:
    """The directions of the explanation's items in rank order (the first `k`)."""
    items = exp.items if k is None else exp.top(k)
    return np.array([it.direction for it in items], dtype=np.int64)


def bar_values(exp: Explanation, k: int | None = None) -> np.ndarray:
    """The length of each item's bar with its direction as sign: |score| x direction, the plain score
    where the item has no direction (an undirected score is drawn as it is)."""
    items = exp.items if k is None else exp.top(k)
    d = directions(exp, k)
    s = np.array([it.score for it in items], dtype=np.float64)
    return np.where(d == NONE, s, np.abs(s) * d)


def score_text(item: ExplanationItem, spec: ScoreSpec | None) -> str:
    """The item's score with its label (and its effect on the prediction where the method states one)."""
    label = spec.label if spec is not None else "score"
    out = f"{label} {item.score:.3g}"
    if item.effect is not None and (spec is None or not spec.signed):
        out += f", effect {item.effect:+.3g}"
    return out


def reason_line(item: ExplanationItem, spec: ScoreSpec | None, target_text: str = "") -> str:
    """One reason in words: its natural text, its score, and the direction it pushes the prediction
    (from `item.direction` only; the score's sign is never read as a direction here)."""
    text = item.natural or item.text
    phrase = direction_phrase(item.direction)
    if phrase and target_text:
        phrase += f" (counts {'for' if item.direction > 0 else 'against'} “{target_text}”)"
    return f"{text} ({score_text(item, spec)}){' — ' + phrase if phrase else ''}"


def prediction_text(exp: Explanation) -> str:
    """The one number an explanation explains, with what it is ("probability 0.044")."""
    if exp.prediction is None:
        return "unknown"
    if exp.prediction_kind == "class" and float(exp.prediction).is_integer():
        return f"class {int(exp.prediction)}"
    kind = f"{exp.prediction_kind} " if exp.prediction_kind else ""
    return f"{kind}{exp.prediction:.3f}"


def informative(item: ExplanationItem, spec: ScoreSpec | None) -> bool:
    """False for an item that says nothing about the prediction: a zero score with no direction and
    no effect under a score that has directions (an undecided feature set, an inactive formula)."""
    directed = spec is None or spec.directed
    return not (directed and item.score == 0 and item.direction == NONE and not item.effect)


def hover_lines(item: ExplanationItem, spec: ScoreSpec | None) -> list[str]:
    """What a chart's hover shows of an item, method-neutral: text, natural text, score, direction."""
    lines = [item.text]
    if item.natural and item.natural != item.text:
        lines.append(item.natural)
    lines.append(score_text(item, spec))
    if item.direction != NONE:
        lines.append(direction_label(item.direction))
    if not item.explainable:
        lines.append("not explainable")
    return lines


_LONG_NUMBER = re.compile(r"(?<![\w.])([-+]?\d+\.\d{5,}(?:[eE][-+]?\d+)?)(?![\w.])")


def short_numbers(text: str, digits: int = 4) -> str:
    """`text` with every long decimal literal (five or more decimals, e.g. a learned weight printed in
    full, "0.8285433219120312: smokes(A)") cut to `digits` significant digits, for text shown to users;
    files keep the full precision (`Rule.text`)."""
    return _LONG_NUMBER.sub(lambda m: f"{float(m.group(1)):.{digits}g}", str(text))


def item_table(exp: Explanation, k: int = 20) -> pd.DataFrame:
    """The table every view shows of an explanation's top `k` items: rank, natural text, its
    canonical text, score, direction (in words, from the item's field), effect, explainable."""
    items = exp.top(k)
    return pd.DataFrame({
        "rank": list(range(1, len(items) + 1)),
        "natural": [short_numbers(it.natural or it.text) for it in items],
        "text": [short_numbers(it.text) for it in items],
        "score": [it.score for it in items],
        "direction": [direction_label(it.direction) for it in items],
        "effect": [float("nan") if it.effect is None else it.effect for it in items],
        "explainable": [it.explainable for it in items],
    })
