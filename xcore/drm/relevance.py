"""Relevance levels of background predicates (paper Section 4.1): intervals, Definition 31's ordering.

A relevance file lists levels from least to most relevant, one per line: ``label: pred, pred/2``.
Predicates not listed have no relevance and are left out of intervals (Definition 32 assigns
relevance to the predicates in the assignment only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from xcore.errors import ConfigError

Interval = tuple[int, int]
LEVELS_DIR = Path(__file__).resolve().parent / "levels"


@dataclass(frozen=True)
class Relevance:
    """Ordered relevance labels (least relevant first) and each predicate's level index."""

    labels: tuple[str, ...] = ()
    level: dict[str, int] = field(default_factory=dict)

    def interval(self, predicates: list[str]) -> Interval | None:
        """Definition 32: [min, max] level of the assigned predicates among `predicates` (None if none)."""
        levels = [self.level[p] for p in predicates if p in self.level]
        return (min(levels), max(levels)) if levels else None

    def text(self) -> str:
        return "\n".join(f"{lab}: {', '.join(p for p, l in self.level.items() if l == i)}"
                         for i, lab in enumerate(self.labels))

    def show(self, intervals: list[Interval]) -> str:
        """``{[r1,r2]}`` with the level labels."""
        return "{" + ", ".join(f"[{self.labels[a]},{self.labels[b]}]" for a, b in sorted(intervals)) + "}"


def parse_relevance(text: str) -> Relevance:
    """Levels from ``label: p1, p2`` lines (least relevant first); ``#``/``%`` start comments."""
    labels: list[str] = []
    level: dict[str, int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = re.split(r"[#%]", raw, maxsplit=1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            raise ConfigError(f"line {n}: write a relevance level as 'label: pred, pred' (got {line!r})",
                              field="relevance")
        label, preds = (s.strip() for s in line.split(":", 1))
        if not label or label in labels:
            raise ConfigError(f"line {n}: level label {label!r} is empty or repeated", field="relevance")
        labels.append(label)
        for p in (p.strip() for p in preds.split(",")):
            name = p.split("/")[0].strip()
            if not name:
                continue
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                raise ConfigError(f"line {n}: {p!r} is not a predicate name", field="relevance")
            if name in level:
                raise ConfigError(f"line {n}: predicate {name} has two relevance levels", field="relevance")
            level[name] = len(labels) - 1
    return Relevance(tuple(labels), level)


def leq(s: list[Interval], t: list[Interval]) -> bool:
    """Definition 31: S precedes-or-equals T iff every interval of S is below some interval of T."""
    return all(any(a <= c and b <= d for c, d in t) for a, b in s)


def better(t: list[Interval], s: list[Interval]) -> bool:
    """T is strictly more relevant than S under Definition 31."""
    return leq(s, t) and not leq(t, s)


def rank_key(s: list[Interval]) -> tuple[int, int, int]:
    """A total order extending Definition 31 (larger is more relevant): best interval sum, best low end,
    then narrower intervals (the paper's "good structuring" narrows intervals; Definition 31 alone
    ties {[r1,r2],[r2,r2]} with {[r1,r1],[r2,r2]})."""
    if not s:
        return (-1, -1, 0)
    return (max(a + b for a, b in s), max(a for a, _ in s), -sum(b - a for a, b in s))


def shipped_levels() -> dict[str, str]:
    """The relevance files shipped with xcore (name -> text)."""
    return {p.stem: p.read_text() for p in sorted(LEVELS_DIR.glob("*.txt"))}


def default_relevance(predicates: set[str]) -> str:
    """The shipped levels whose predicates all occur in the data (e.g. the paper's trains levels)."""
    for text in shipped_levels().values():
        rel = parse_relevance(text)
        if rel.level and set(rel.level) <= predicates:
            return text
    return ""
