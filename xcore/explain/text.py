"""Explanations in words: the sentences the pages, reports and the command line show under a chart."""

from __future__ import annotations

import re

from xcore.explain.render import informative, prediction_text, reason_line
from xcore.explain.types import Explanation


def _head(exp: Explanation) -> str:
    """The target, its prediction (and truth) and the explanation's note, as one sentence."""
    head = f"{exp.target_text or exp.target}: predicted {prediction_text(exp)}"
    if exp.truth is not None:
        head += f", true {exp.truth:.3f}"
    note = exp.meta.get("note")
    if isinstance(note, str) and note:
        head += f". {note.rstrip('.')}"
    return head


def _reasons(exp: Explanation, k: int) -> tuple[str, list[str]]:
    """The lead-in of the reasons list and one line per top-`k` reason: its full natural text (the
    canonical text when it has none), its score and the direction it pushes (`xcore.explain.render`)."""
    spec = exp.score_spec
    label = spec.label if spec is not None else "score"
    ref = exp.target_ref  # an atom's sentence reads well after "counts for"; a row's description does not
    about = exp.target_text if ref is not None and ref.row is None else ""
    lines = [reason_line(it, spec, about) for it in exp.top(k) if informative(it, spec)]
    return f"The {len(lines)} strongest reasons (by {label}):", lines


NO_REASON = "No item explains this prediction (nothing exerts any influence on it)."
NO_INFORMATIVE = "None of its items moves this prediction (each has score 0 and no direction)."


def explanation_text(exp: Explanation, k: int = 3) -> str:
    """A short paragraph: the target, its prediction (and truth), then the top-`k` reasons with scores
    and the direction each one pushes."""
    head = _head(exp)
    lead, lines = _reasons(exp, k)
    if not lines:
        return f"{head}. {NO_REASON if not exp.items else NO_INFORMATIVE}"
    return "\n".join([f"{head}. {lead}"] + [f"{rank}. {line}" for rank, line in enumerate(lines, start=1)])


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$:])")


def markdown_escape(text: str) -> str:
    """`text` shown literally by Markdown (Streamlit's too: no emphasis, links, LaTeX or emoji codes)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def explanation_markdown(exp: Explanation, k: int = 10) -> str:
    """`explanation_text` as Markdown: the sentence, then the top-`k` reasons as a numbered list whose
    items wrap, so each reason's natural text is readable in full (tables cut long cells)."""
    head = markdown_escape(_head(exp))
    lead, lines = _reasons(exp, k)
    if not lines:
        return f"{head}. {markdown_escape(NO_REASON if not exp.items else NO_INFORMATIVE)}"
    return "\n".join([f"{head}. {markdown_escape(lead)}", ""] +
                     [f"{rank}. {markdown_escape(line)}" for rank, line in enumerate(lines, start=1)])
