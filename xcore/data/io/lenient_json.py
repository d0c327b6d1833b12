"""JSON as PSL's config reader accepts it: comments, trailing commas, single quotes, leading ``+``.

PSL reads ``--config X.json`` with Jackson's lenient features (``//``, ``/* */`` and ``#``
comments, trailing commas, single-quoted strings, leading ``+`` and leading zeros in numbers).
`loads` rewrites those into strict JSON with one pass over the text, keeping every line break
(so `json` error lines stay right), then calls `json.loads`; nothing is evaluated.
"""

from __future__ import annotations

import json
import re
from typing import Any

from xcore.errors import DataError

_NUMBER_FIX = re.compile(r"(?<![\w.])\+?0*(?=\d)")
"""A leading ``+`` and leading zeros of a bare number (``+07`` -> ``7``)."""


def loads(text: str, file: str) -> Any:
    """Parse lenient JSON text; errors raise DataError naming `file` and the line."""
    try:  # strict JSON (most files) reads the same either way, and json's C reader is fast
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError):
        pass
    strict = to_strict_json(text, file)
    try:
        return json.loads(strict)
    except json.JSONDecodeError as e:
        raise DataError(f"not valid JSON: {e.msg}", file=file, line=e.lineno) from None
    except (RecursionError, ValueError) as e:
        raise DataError(f"not valid JSON: {type(e).__name__}", file=file) from None


def to_strict_json(text: str, file: str = "<json>") -> str:
    """The same document as strict JSON: comments blanked, trailing commas dropped, quotes fixed."""
    out: list[str] = []
    i, n = 0, len(text)
    plain_start = 0  # start of the current run of text outside strings and comments
    pending_comma: int | None = None  # index in `out` of a comma that may be trailing

    def flush_plain(end: int) -> None:
        nonlocal pending_comma
        chunk = text[plain_start:end]
        for piece in re.split(r"(,)", chunk):
            if piece == ",":
                out.append(",")
                pending_comma = len(out) - 1
                continue
            if not piece:
                continue
            stripped = piece.strip()
            if stripped and pending_comma is not None:
                if stripped[0] in "]}":
                    out[pending_comma] = " "
                pending_comma = None
            out.append(_NUMBER_FIX.sub("", piece) if stripped else piece)

    while i < n:
        ch = text[i]
        if ch in "\"'":
            flush_plain(i)
            j, value = _read_string(text, i, file)
            if pending_comma is not None:
                pending_comma = None
            out.append(json.dumps(value, ensure_ascii=False))
            out.append("\n" * text.count("\n", i, j))
            i = plain_start = j
            continue
        if ch == "#" or text.startswith("//", i):
            flush_plain(i)
            end = text.find("\n", i)
            i = plain_start = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            flush_plain(i)
            end = text.find("*/", i + 2)
            if end < 0:
                raise DataError("unterminated /* comment", file=file, line=text.count("\n", 0, i) + 1)
            out.append("\n" * text.count("\n", i, end))
            i = plain_start = end + 2
            continue
        i += 1
    flush_plain(n)
    return "".join(out)


def _read_string(text: str, start: int, file: str) -> tuple[int, str]:
    """The end index and decoded value of the string literal starting at `start`."""
    quote = text[start]
    i = start + 1
    chunks: list[str] = []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "'":
                chunks.append("'")
                i += 2
                continue
            m = re.match(r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})', text[i:i + 6])
            if m is None:
                raise DataError(f"invalid escape \\{nxt} in a string", file=file,
                                line=text.count("\n", 0, i) + 1)
            chunks.append(json.loads(f'"{m.group()}"'))
            i += len(m.group())
            continue
        if ch == quote:
            return i + 1, "".join(chunks)
        if ch == "\n":
            break
        chunks.append(ch)
        i += 1
    raise DataError(f"unterminated string (missing closing {quote})", file=file,
                    line=text.count("\n", 0, start) + 1)
