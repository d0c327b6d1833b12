"""`Clause`: one weighted clause of a probabilistic KB (its own module so `kbtext` needs no `kb` import)."""

from __future__ import annotations

from dataclasses import dataclass

from xcore.plkb.literals import Lit


@dataclass(frozen=True)
class Clause:
    """One weighted clause: probability `p` that the disjunction of `lits` holds."""

    p: float
    lits: tuple[Lit, ...]
    source: str = "user"
    support: int = -1

    def body_text(self) -> str:
        """The disjunction in the text format (``POS | ~a_1``)."""
        return " | ".join(lit.text() for lit in self.lits)

    def text(self) -> str:
        """The clause as one line of the text format (``p: body``)."""
        return f"{format_probability(self.p)}: {self.body_text()}"


def format_probability(p: float) -> str:
    """Shortest text that reads back as exactly `p`."""
    return repr(float(p))
