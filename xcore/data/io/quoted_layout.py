"""Where the records of a quoted CSV start and on which line: a vectorised scan of its quotes.

Python's csv module (strict, ``"`` quoting with ``""`` escapes, the loaders' reference) opens a
quoted field only at the start of a field and closes it only before a separator, a line break
or the end of the text. When every quote of a file is such a structural quote (or half of a
``""`` escape), a line break ends a record exactly when an even number of quotes precede it,
so the record boundaries and their physical lines follow from a few numpy passes over the
bytes, a block at a time, with no Python per record. Any other quote (inside an unquoted
field, text after a closing quote, a field left open at the end) makes `quoted_layout` return
None: the caller then reads the file the careful way, which also reports its errors exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

QUOTE, NEWLINE = ord('"'), ord("\n")
SCAN_BYTES = 1 << 22
"""Bytes scanned at a time (4 MiB): bounds the index arrays of the scan."""


@dataclass
class QuotedLayout:
    """The non-empty records of ``\\n``-terminated CSV bytes whose quotes are all structural."""

    starts: np.ndarray
    """Byte offset where each non-empty record starts (int64)."""
    ends: np.ndarray
    """Byte offset where each one ends, its terminating line break excluded (int64)."""
    lines: np.ndarray
    """1-based physical line on which each one starts (int64)."""
    multiline: bool
    """Whether some quoted field holds a line break."""

    def record(self, data: bytes, k: int) -> bytes:
        """The bytes of record `k`."""
        return data[int(self.starts[k]):int(self.ends[k])]


def quoted_layout(data: bytes, sep: bytes, block: int | None = None) -> QuotedLayout | None:
    """The record layout of `data` (BOM removed, ``\\n`` line breaks only) with the one-byte
    separator `sep`, or None when a quote is not where strict CSV quoting puts one."""
    block = block or SCAN_BYTES
    arr = np.frombuffer(data, dtype=np.uint8)
    n, sep_byte = len(arr), sep[0]
    quotes = newlines = 0  # seen in earlier blocks
    ends: list[np.ndarray] = []
    ordinals: list[np.ndarray] = []
    for s in range(0, n, block):
        chunk = arr[s:s + block]
        q = np.flatnonzero(chunk == QUOTE) + s
        nl = np.flatnonzero(chunk == NEWLINE)
        if len(q) and not _structural(arr, q, quotes % 2 == 0, sep_byte):
            return None
        before = quotes + np.searchsorted(q, nl + s)  # quotes before each line break
        term = before % 2 == 0
        ends.append(nl[term] + s)
        ordinals.append(np.flatnonzero(term) + newlines)
        quotes += len(q)
        newlines += len(nl)
    if quotes % 2:  # a quoted field runs to the end of the file
        return None
    term_at = np.concatenate(ends) if ends else np.zeros(0, np.int64)
    term_ord = np.concatenate(ordinals) if ordinals else np.zeros(0, np.int64)
    starts = np.concatenate([[0], term_at + 1]).astype(np.int64)
    stops = np.concatenate([term_at, [n]]).astype(np.int64)
    lines = np.concatenate([[1], term_ord + 2]).astype(np.int64)
    keep = stops > starts
    return QuotedLayout(starts[keep], stops[keep], lines[keep], newlines > len(term_at))


def _structural(arr: np.ndarray, q: np.ndarray, first_opens: bool, sep: int) -> bool:
    """Whether the quotes at positions `q` (alternately opening and closing, the first opening
    when `first_opens`) each open at a field start or close before a field end; a quote next to
    another quote is half of a ``""`` escape (or an empty quoted field)."""
    bound = np.zeros(256, dtype=bool)  # the bytes that may stand next to a structural quote
    bound[[sep, NEWLINE, QUOTE]] = True
    opening = 0 if first_opens else 1
    at = q[opening::2]
    if len(at) and at[0] == 0:  # a quote at the start of the text opens a field
        at = at[1:]
    if not bound[arr[at - 1]].all():
        return False
    at = q[1 - opening::2]
    if len(at) and at[-1] == len(arr) - 1:  # a quote at the end of the text closes one
        at = at[:-1]
    return bool(bound[arr[at + 1]].all())
