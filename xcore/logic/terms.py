"""A small Prolog term reader: clauses of a file (facts, rules, ``:-``/``?-``/``!-`` directives) as terms.

Enough of ISO Prolog syntax for ILP inputs (Aleph ``.b`` files, Progol files, Mutagenesis facts with
lists of lists): atoms, quoted atoms, numbers (negative ones too), variables, compound terms, lists
with ``|`` tails, and the standard operators that such files use (``:-``, ``,``, ``;``, ``/``, prefix
``+``/``-``/``#`` of mode declarations, comparisons). Errors are `DataError` naming file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Union

from xcore.errors import DataError


@dataclass(frozen=True)
class Var:
    """A logical variable (``X``, ``_G1``); the anonymous ``_`` is renamed apart by the reader."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Struct:
    """A compound term or an atom (no arguments); lists are ``'[|]'(Head, Tail)`` ending in ``[]``."""

    name: str
    args: tuple["Term", ...] = ()

    def __str__(self) -> str:
        return term_text(self)

    @property
    def key(self) -> tuple[str, int]:
        """The predicate indicator (name, arity)."""
        return (self.name, len(self.args))


Term = Union[Var, Struct, int, float]
"""A Prolog term: variable, compound/atom, or number."""

NIL = Struct("[]")
CONS = "[|]"

_PREFIX = {":-": 1200, "?-": 1200, "!-": 1200, "-": 200, "+": 200, "#": 200, "\\+": 900}
_INFIX: dict[str, tuple[int, int, int]] = {  # op -> (priority, left max, right max)
    ":-": (1200, 1199, 1199), "-->": (1200, 1199, 1199), ";": (1100, 1099, 1100), "->": (1050, 1049, 1050),
    ",": (1000, 999, 1000), "=": (700, 699, 699), "\\=": (700, 699, 699), "==": (700, 699, 699),
    "\\==": (700, 699, 699), "is": (700, 699, 699), "<": (700, 699, 699), ">": (700, 699, 699),
    "=<": (700, 699, 699), ">=": (700, 699, 699), "=:=": (700, 699, 699), "=\\=": (700, 699, 699),
    "+": (500, 500, 499), "-": (500, 500, 499), "*": (400, 400, 399), "/": (400, 400, 399),
    "//": (400, 400, 399), "mod": (400, 400, 399), "**": (200, 199, 199), "^": (200, 199, 200),
    ":": (200, 199, 200),
}

_TOKEN = re.compile(r"""
    (?P<ws>\s+|%[^\n]*|/\*.*?\*/)
  | (?P<num>\d+\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?|0'.)
  | (?P<var>[A-Z_][A-Za-z0-9_]*)
  | (?P<atom>[a-z][A-Za-z0-9_]*)
  | (?P<q>'(?:[^'\\]|\\.|'')*')
  | (?P<str>"(?:[^"\\]|\\.|"")*")
  | (?P<end>\.(?=\s|%|$))
  | (?P<punct>[()\[\]{},|])
  | (?P<sym>[-+*/\\^<>=~:.?@#&$!;]+)
""", re.X | re.S)


@dataclass(frozen=True)
class Clause:
    """One clause read from text: its term and the 1-based line it starts on."""

    term: Term
    line: int

    @property
    def directive(self) -> Term | None:
        """The goal of a ``:- G``, ``?- G`` or ``!- G`` directive, else None."""
        t = self.term
        if isinstance(t, Struct) and len(t.args) == 1 and t.name in (":-", "?-", "!-"):
            return t.args[0]
        return None


def term_text(t: Term) -> str:
    """Canonical Prolog text of a term (lists as ``[a,b]``, operators in functional form except ``/``)."""
    if isinstance(t, Var):
        return t.name
    if isinstance(t, (int, float)):
        return repr(t) if isinstance(t, float) else str(t)
    if t.name == CONS and len(t.args) == 2:
        items, tail = [], t
        while isinstance(tail, Struct) and tail.name == CONS and len(tail.args) == 2:
            items.append(term_text(tail.args[0]))
            tail = tail.args[1]
        rest = "" if tail == NIL else "|" + term_text(tail)
        return "[" + ",".join(items) + rest + "]"
    name = t.name if re.match(r"^[a-z][A-Za-z0-9_]*$|^\[\]$", t.name) else "'" + t.name.replace("'", "\\'") + "'"
    if not t.args:
        return name
    if t.name in ("/",) and len(t.args) == 2:
        return f"{term_text(t.args[0])}/{term_text(t.args[1])}"
    if t.name in ("+", "-", "#") and len(t.args) == 1:
        return f"{t.name}{term_text(t.args[0])}"
    return f"{name}({','.join(term_text(a) for a in t.args)})"


def list_items(t: Term) -> list[Term] | None:
    """The items of a proper list term, or None if `t` is not one."""
    out = []
    while isinstance(t, Struct) and t.name == CONS and len(t.args) == 2:
        out.append(t.args[0])
        t = t.args[1]
    return out if t == NIL else None


class _Reader:
    """Recursive-descent operator-precedence parser over the tokens of one clause."""

    def __init__(self, tokens: list[tuple[str, str, int]], file: str) -> None:
        self.toks = tokens
        self.i = 0
        self.file = file
        self.anon = 0

    def error(self, problem: str) -> DataError:
        line = self.toks[min(self.i, len(self.toks) - 1)][2] if self.toks else None
        return DataError(problem, file=self.file, line=line)

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise self.error("unexpected end of clause")
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        tok = self.take()
        if tok[1] != text:
            raise self.error(f"expected {text!r} but found {tok[1]!r}")

    def parse(self, max_prec: int = 1200) -> Term:
        left, left_prec = self.primary(max_prec)
        while True:
            tok = self.peek()
            if tok is None:
                return left
            kind, text = tok[:2]
            op = text if kind in ("sym", "atom") or (kind == "punct" and text in ",|") else None
            if op == "|":
                op = ";"
            if op not in _INFIX:
                return left
            prec, lmax, rmax = _INFIX[op]
            if prec > max_prec or left_prec > lmax:
                return left
            self.take()
            right = self.parse(rmax)
            left, left_prec = Struct(op, (left, right)), prec

    def primary(self, max_prec: int) -> tuple[Term, int]:
        kind, text = self.take()[:2]
        if kind == "num":
            return _number(text), 0
        if kind == "var":
            if text == "_":
                self.anon += 1
                return Var(f"_{self.anon}"), 0
            return Var(text), 0
        if kind == "str":
            return Struct(_unquote(text)), 0
        if kind == "punct" and text == "(":
            t = self.parse(1200)
            self.expect(")")
            return t, 0
        if kind == "punct" and text == "[":
            return self.list_term(), 0
        if kind == "punct" and text == "{":
            t = self.parse(1200)
            self.expect("}")
            return Struct("{}", (t,)), 0
        if kind in ("atom", "q", "sym") or (kind == "punct" and text == ","):
            name = _unquote(text) if kind == "q" else text
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(" and nxt[0] == "punct" and self._adjacent():
                self.take()
                args = [self.parse(999)]
                while self.peek() is not None and self.peek()[1] == ",":  # type: ignore[index]
                    self.take()
                    args.append(self.parse(999))
                self.expect(")")
                return Struct(name, tuple(args)), 0
            if kind == "sym" and name == "-" and nxt is not None and nxt[0] == "num" and self._adjacent():
                return -_number(self.take()[1]), 0
            if kind != "q" and name in _PREFIX and nxt is not None and not _is_closer(nxt):
                prec = _PREFIX[name]
                if prec <= max_prec:
                    arg = self.parse(prec if name in (":-", "?-", "!-") else prec)
                    return Struct(name, (arg,)), prec
            return Struct(name), 0
        raise self.error(f"unexpected {text!r}")

    def _adjacent(self) -> bool:
        """Whether the current token directly follows the previous one (``f(`` not ``f (``)."""
        cur = self.toks[self.i]
        return cur[3] == cur[4]

    def list_term(self) -> Term:
        if self.peek() is not None and self.peek()[1] == "]":  # type: ignore[index]
            self.take()
            return NIL
        items = [self.parse(999)]
        tail: Term = NIL
        while True:
            tok = self.take()
            if tok[1] == ",":
                items.append(self.parse(999))
            elif tok[1] == "|":
                tail = self.parse(999)
                self.expect("]")
                break
            elif tok[1] == "]":
                break
            else:
                raise self.error(f"expected ',' or ']' in a list, found {tok[1]!r}")
        for item in reversed(items):
            tail = Struct(CONS, (item, tail))
        return tail


def _is_closer(tok: tuple) -> bool:
    return tok[0] in ("end",) or (tok[0] == "punct" and tok[1] in ")],|") or (
        tok[0] == "sym" and tok[1] in _INFIX and tok[1] not in ("-", "+"))


def _number(text: str) -> int | float:
    if text.startswith("0'"):
        return ord(text[2])
    return float(text) if any(c in text for c in ".eE") else int(text)


def _unquote(tok: str) -> str:
    q = tok[0]
    inner = tok[1:-1].replace(q + q, q)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), inner)


def _tokenize(text: str, file: str) -> Iterator[list[tuple]]:
    """Token lists of each clause: (kind, text, line, start, end) per token."""
    pos, line, current = 0, 1, []
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise DataError(f"cannot read {text[pos:pos + 20]!r}", file=file, line=line)
        kind = m.lastgroup or ""
        tok = m.group(0)
        if kind == "ws":
            if tok.startswith("/*") and not tok.endswith("*/"):
                raise DataError("unterminated /* comment", file=file, line=line)
        elif kind == "end":
            if current:
                yield current
            current = []
        else:
            current.append((kind, tok, line, m.start(), m.end()))
        line += tok.count("\n")
        pos = m.end()
    if current:
        raise DataError(f"the last clause does not end with '.': {' '.join(t[1] for t in current)[:60]}",
                        file=file, line=current[0][2])


def _fix_adjacency(tokens: list[tuple]) -> list[tuple]:
    """Tokens as (kind, text, line, end_of_previous, start) so `_adjacent` compares offsets."""
    out = []
    for i, (kind, text, line, start, end) in enumerate(tokens):
        prev_end = tokens[i - 1][4] if i else -1
        out.append((kind, text, line, prev_end, start))
    return out


def read_clauses(text: str, file: str = "<text>") -> list[Clause]:
    """Every clause of a Prolog text, in order, with its line (raises `DataError` naming file and line)."""
    out = []
    for toks in _tokenize(text, file):
        r = _Reader(_fix_adjacency(toks), file)
        term = r.parse(1200)
        if r.i != len(r.toks):
            raise r.error(f"unexpected {r.toks[r.i][1]!r} after a complete term")
        out.append(Clause(term, toks[0][2]))
    return out


def read_term(text: str) -> Term:
    """One term from text (a trailing '.' is optional)."""
    text = text.strip()
    if not text.endswith("."):
        text += " ."
    clauses = read_clauses(text)
    if len(clauses) != 1:
        raise DataError(f"expected one term, found {len(clauses)}", file="<term>")
    return clauses[0].term


def conjuncts(t: Term) -> list[Term]:
    """The goals of a ``,``-conjunction (a single goal is a one-item list)."""
    if isinstance(t, Struct) and t.name == "," and len(t.args) == 2:
        return conjuncts(t.args[0]) + conjuncts(t.args[1])
    return [t]
