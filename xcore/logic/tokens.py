"""Tokens of one rule line (PSL and Markov-logic syntax share them) and the dialect a line implies.

`tokenize` splits a line into `Token`s (comments dropped, strings decoded, an EOF token last);
`detect_dialect` applies the auto-detection rules of `xcore.logic.parser`'s docstring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xcore.errors import ParseError
from xcore.logic.ast import Dialect

# Token kinds: the symbol itself for punctuation, plus these names.
NUMBER, STRING, IDENT, EOF = "number", "string", "identifier", "end of line"

SYMBOLS: tuple[str, ...] = ("<=>", "->", "=>", ">>", "<<", "<-", "<=", ">=", "==", "!=", "&&", "||",
                             "(", ")", ",", ":", "&", "|", "^", "~", "!", ".", "=", "+", "-", "*", "/",
                             "%", "{", "}", "[", "]")
SYMBOL_KINDS = {"&&": "&", "||": "|", ">>": "->", "<-": "<<"}
"""PSL's alternative spellings, read as the same token kind (the text keeps the spelling)."""
PSL_ONLY_KINDS = frozenset({"<<", "!=", "==", "<=", ">=", "=", "+", "*", "/", "%", "{"})
NUMBER_RE = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")
ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token: its kind, source text, decoded value (strings) and 1-based column."""

    kind: str
    text: str
    column: int
    value: str = ""

    @property
    def end(self) -> int:
        """Column just after the token."""
        return self.column + len(self.text)

    def describe(self) -> str:
        """How an error message names the token."""
        return "end of line" if self.kind == EOF else repr(self.text)


@dataclass(frozen=True, slots=True)
class SourceLine:
    """One source line: its 1-based number and text."""

    number: int
    text: str
    source: str | None

    def error(self, problem: str, column: int) -> ParseError:
        """A ParseError at `column` of this line."""
        return ParseError(problem, self.number, column, self.text, self.source)


def tokenize(line_text: str, line: int = 1, source: str | None = None) -> list[Token]:
    """Split one line into tokens (comments dropped), ending with an EOF token.

    Raises ParseError on an unknown symbol, a malformed number or an unterminated string.
    """
    where = SourceLine(line, line_text, source)
    out: list[Token] = []
    i, n = 0, len(line_text)
    while i < n:
        ch = line_text[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "#" or line_text.startswith("//", i):
            break
        if ch in "'\"":
            token, i = _read_string(line_text, i, where)
            out.append(token)
            continue
        m = NUMBER_RE.match(line_text, i) if (ch.isdigit() or ch in "-.") else None
        if m and ch.isascii():
            end = m.end()
            if end < n and IDENT_CHAR.match(line_text, end):
                bad = IDENT_RE.match(line_text, end)
                tail = bad.group() if bad else line_text[end]
                raise where.error(f"invalid number '{m.group()}{tail}'", i + 1)
            out.append(Token(NUMBER, m.group(), i + 1))
            i = end
            continue
        m = IDENT_RE.match(line_text, i)
        if m:
            out.append(Token(IDENT, m.group(), i + 1))
            i = m.end()
            continue
        symbol = next((s for s in SYMBOLS if line_text.startswith(s, i)), None)
        if symbol is None and line_text.startswith(("@Max", "@Min"), i):
            out.append(Token("func", line_text[i:i + 4], i + 1))
            i += 4
            continue
        if symbol is None:
            raise where.error(f"unknown symbol {ch!r}", i + 1)
        out.append(Token(SYMBOL_KINDS.get(symbol, symbol), symbol, i + 1))
        i += len(symbol)
    out.append(Token(EOF, "", out[-1].end if out else 1))
    return out


def _read_string(text: str, start: int, where: SourceLine) -> tuple[Token, int]:
    """Read a quoted constant starting at `start`; backslash escapes the next character."""
    quote = text[start]
    chars: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            chars.append(ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if ch == quote:
            return Token(STRING, text[start : i + 1], start + 1, "".join(chars)), i + 1
        chars.append(ch)
        i += 1
    raise where.error(f"unterminated string: missing closing {quote}", start + 1)


# --------------------------------------------------------------------------- dialect detection
def implied_dialect(tokens: list[Token]) -> Dialect | None:
    """Dialect implied by the tokens of one line, or None when the line reads the same in both."""
    toks = tokens[:-1]
    if not toks:
        return None
    weighted = toks[0].kind == NUMBER
    if weighted and len(toks) > 1 and toks[1].kind == ":":
        return "psl"
    kinds = {t.kind for t in toks}
    if "=>" in kinds:
        return "mln"
    if "->" in kinds or kinds & PSL_ONLY_KINDS:
        return "psl"
    depth, has_and = 0, False
    for i, t in enumerate(toks):
        nxt = tokens[i + 1]
        if t.kind == "(":
            depth += 1
        elif t.kind == ")":
            depth -= 1
        elif depth == 0 and t.kind == IDENT and t.text == "v" and i > 0 and nxt.kind != "(":
            return "mln"
        elif depth == 0 and t.kind == "^":
            return "psl" if nxt.kind == NUMBER else "mln"
        elif depth == 0 and t.kind == "&":
            has_and = True
    if has_and:
        return "psl"
    if weighted:
        return "mln"
    return None


def tie_break(tokens: list[Token]) -> Dialect:
    """Dialect of an ambiguous line: Markov logic when a final '.' touches the ')', else PSL."""
    if len(tokens) >= 3 and tokens[-2].kind == "." and tokens[-3].kind == ")":
        if tokens[-3].end == tokens[-2].column:
            return "mln"
    return "psl"


def detect_dialect(line: str) -> Dialect:
    """Dialect of one rule line under the auto-detection rules in this module's docstring."""
    tokens = tokenize(line)
    return implied_dialect(tokens) or tie_break(tokens)
