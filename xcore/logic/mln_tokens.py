"""Tokens of Markov-logic text: comments stripped, statements joined across lines, tokens with positions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from xcore.errors import ParseError

_TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?(?![A-Za-z_]))
  | (?P<ident>\??[A-Za-z_][A-Za-z0-9_]*(?:!(?!=))?)
  | (?P<sym><=>|=>|=/=|!=|->|<-|[()\[\]{},.=!~^|&*@+:])
""", re.VERBOSE)
QUANTIFIERS = {"EXIST": "exists", "EXISTS": "exists", "FORALL": "forall"}


@dataclass(frozen=True)
class Token:
    """A token: kind (ident, number, string, a symbol), text, 1-based line and column."""

    kind: str
    text: str
    line: int
    column: int



def strip_comments(text: str, source: str | None) -> str:
    """Blank out ``//`` and ``/* */`` comments, keeping line and column positions."""
    out, i, n = [], 0, len(text)
    quote = None
    while i < n:
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == quote or ch == "\n":
                quote = None
            i += 1
            continue
        if ch in "\"'":
            quote = ch
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line = text.count("\n", 0, i) + 1
                col = i - (text.rfind("\n", 0, i) + 1) + 1
                raise ParseError("unterminated /* comment", line, col, text.splitlines()[line - 1], source)
            chunk = text[i:j + 2]
            out.append("".join(c if c == "\n" else " " for c in chunk))
            i = j + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def tokenize_line(text: str, line: int, source: str | None = None) -> list[Token]:
    """Tokens of one line (comments already removed)."""
    out, i = [], 0
    while i < len(text):
        m = _TOKEN_RE.match(text, i)
        if m is None:
            raise ParseError(f"unexpected character {text[i]!r}", line, i + 1, text, source)
        kind = m.lastgroup or "sym"
        if kind != "ws":
            out.append(Token(m.group() if kind == "sym" else kind, m.group(), line, i + 1))
        i = m.end()
    return out


def unquote(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), body)


def split_statements(text: str) -> list[tuple[int, str]]:
    """(line number, text) of each statement: one per line, joined with the next lines while
    brackets are open or the line ends in a connective (long formulas wrapped over lines)."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    first = 0
    for n, raw in enumerate(text.split("\n"), 1):
        if not pending and not raw.strip():
            continue
        if not pending:
            first = n
        pending.append(raw.rstrip())
        joined = "\n".join(pending)
        depth = sum(joined.count(c) for c in "({") - sum(joined.count(c) for c in ")}")
        words = joined.split()
        if (depth > 0 or words[-1] in _CONTINUES) and len(pending) < 200 and not joined.lstrip().startswith("#"):
            continue
        out.append((first, joined))
        pending = []
    if pending:
        out.append((first, "\n".join(pending)))
    return out


_CONTINUES = ("^", "v", "=>", "<=>", "|", "&", "->")


def statement_tokens(stmt: str, first_line: int, source: str | None) -> list[Token]:
    toks: list[Token] = []
    for k, line in enumerate(stmt.split("\n")):
        toks.extend(tokenize_line(line, first_line + k, source))
    return toks



def join_tokens(toks: Sequence[Token]) -> str:
    """Canonical text of a token run: ``F(x, y) => (S(x) <=> !S(y))``."""
    out = ""
    prev: Token | None = None
    for tok in toks:
        tight = prev is None or tok.kind in (")", ",") or prev.kind in ("(", "!", "~", "+") \
            or (tok.kind == "(" and prev.kind == "ident" and prev.text not in QUANTIFIERS and prev.text != "v")
        out += ("" if tight else " ") + tok.text
        if tok.kind == ",":
            out += " "
            prev = Token("(", "", 0, 0)  # no second space after the comma
            continue
        prev = tok
    return out


