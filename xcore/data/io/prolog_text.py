"""Bits of Prolog text the reader and the directive check share: the quoted-atom pattern and short
excerpts of a clause for error messages."""

from __future__ import annotations

QUOTED = r"'(?:[^'\\\n]|\\.|'')*+'|\"(?:[^\"\\\n]|\\.|\"\")*+\""
"""A quoted atom or string (single or double quotes, doubled or backslash-escaped quotes inside)."""


def short(text: str, n: int = 60) -> str:
    """`text` on one line, cut to `n` characters."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."
