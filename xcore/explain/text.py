"""Explanations in words: the sentences the pages, reports and the command line show under a chart."""

from __future__ import annotations

from xcore.explain.types import Explanation


def _value(v: float | None) -> str:
    return "unknown" if v is None else f"{v:.3f}"


def explanation_text(exp: Explanation, k: int = 3) -> str:
    """A short paragraph: the target, its prediction (and truth), then the top-`k` reasons with scores
    and, for signed scores, the direction each one pushes."""
    head = f"{exp.target_text or exp.target}: predicted {_value(exp.prediction)}"
    if exp.truth is not None:
        head += f", true {_value(exp.truth)}"
    note = exp.meta.get("note")
    if isinstance(note, str) and note:
        head += f". {note}"
    if not exp.items:
        return head + ". No item explains this prediction (nothing exerts any influence on it)."
    spec = exp.score_spec
    label = spec.label if spec is not None else "score"
    lines = [head + f". The {min(k, exp.n_items)} strongest reasons (by {label}):"]
    for rank, it in enumerate(exp.top(k), start=1):
        words = it.natural or it.text
        direction = ""
        if spec is not None and spec.signed and it.score != 0:
            direction = ", pushes it up" if it.score > 0 else ", pushes it down"
        lines.append(f"{rank}. {words} ({label} {it.score:.3g}{direction})")
    return "\n".join(lines)
