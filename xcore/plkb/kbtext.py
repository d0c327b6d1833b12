"""The KB text format: one clause per line, ``p: LIT | LIT | ...``.

A literal is ``POS``, ``feature_value`` or ``feature=value``, optionally negated with ``~`` (or
``!``). Names with spaces or special characters are double-quoted (``"age group"="60+"``, with
``\\"`` and ``\\\\`` escapes). ``#`` starts a comment; blank lines are ignored. Because feature
names and values may themselves contain ``_``, ``feature_value`` is split against the domain; an
ambiguous split is an error that suggests ``feature=value``. The writer uses ``feature_value``
whenever that reads back unambiguously, so a written KB always parses back to the same KB.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from xcore.errors import ParseError, SchemaError
from xcore.plkb.clause import Clause
from xcore.plkb.literals import POS, Domain, Lit

if TYPE_CHECKING:
    from xcore.plkb.kb import KB

_PROB = re.compile(r"\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*:")
_BARE = re.compile(r"[^\s|#\"=~!:]+")
_NEGATIONS = ("~", "!", "\u00ac")


class _Line:
    """A cursor over one line, for error positions."""

    def __init__(self, text: str, lineno: int, source: str | None) -> None:
        self.text, self.lineno, self.source, self.pos = text, lineno, source, 0

    def error(self, problem: str, pos: int | None = None) -> ParseError:
        return ParseError(problem, self.lineno, (self.pos if pos is None else pos) + 1, self.text, self.source)

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.text) or self.text[self.pos] == "#"

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def name(self, what: str) -> str:
        """A bare token or a double-quoted string."""
        if self.peek() == '"':
            start = self.pos
            self.pos += 1
            out = []
            while self.pos < len(self.text):
                ch = self.text[self.pos]
                if ch == "\\" and self.pos + 1 < len(self.text):
                    out.append(self.text[self.pos + 1])
                    self.pos += 2
                    continue
                if ch == '"':
                    self.pos += 1
                    return "".join(out)
                out.append(ch)
                self.pos += 1
            raise self.error("unterminated quoted name (missing closing \")", start)
        m = _BARE.match(self.text, self.pos)
        if not m:
            found = self.peek() or "end of line"
            raise self.error(f"expected {what}, found {found!r}")
        self.pos = m.end()
        return m.group(0)


def parse_clauses(text: str, domain: Domain | None = None, source: str | None = None,
                  clause_source: str = "user") -> list[Clause]:
    """Parse the text format into `Clause`s; with a domain every literal is checked against it.

    Syntax errors raise `ParseError` (line and column); a literal naming an unknown feature or
    value raises `SchemaError` naming the line, column and the known names. Without a domain,
    ``a_v`` splits at its last underscore.
    """
    if not isinstance(text, str):
        raise ParseError(f"KB text must be a string, got {type(text).__name__}", 1, 1, source=source)
    clauses: list[Clause] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = _Line(raw.rstrip("\r"), lineno, source)
        if line.at_end():
            continue
        m = _PROB.match(line.text, line.pos)
        if not m:
            raise line.error("expected a probability and a colon, like `0.9: POS | ~a3_0`")
        p_pos = m.start(1)
        p = float(m.group(1))
        if not 0.0 <= p <= 1.0:
            raise line.error(f"probability {m.group(1)} is outside [0, 1]", p_pos)
        line.pos = m.end()
        lits: list[Lit] = []
        while True:
            line.skip_ws()
            lits.append(_literal(line, domain))
            if line.at_end():
                break
            if line.peek() != "|":
                raise line.error(f"expected '|' or the end of the line, found {line.peek()!r}")
            line.pos += 1
        clauses.append(Clause(p, tuple(lits), clause_source))
    return clauses


def _literal(line: _Line, domain: Domain | None) -> Lit:
    positive = True
    while line.peek() in _NEGATIONS and line.peek():
        positive = not positive
        line.pos += 1
        line.skip_ws()
    if line.at_end() or line.peek() == "|":
        raise line.error("expected a literal (POS, feature_value or feature=value)")
    start = line.pos
    quoted = line.peek() == '"'
    first = line.name("a literal")
    if line.peek() == "=":
        line.pos += 1
        value = line.name("a value after '='")
        if domain is not None:
            _check(domain, first, value, line, start)
        return Lit(first, value, positive)
    if first == POS and not quoted:
        return Lit(None, None, positive)
    feature, value = _split(first, domain, line, start)
    return Lit(feature, value, positive)


def _check(domain: Domain, feature: str, value: str, line: _Line, pos: int) -> None:
    where = f"{line.source + ', ' if line.source else ''}line {line.lineno}, column {pos + 1}"
    if not domain.has(feature):
        raise SchemaError(f"{where}: unknown feature {feature!r} in `{line.text.strip()}`; "
                          f"known features: {', '.join(domain.features[:15])}"
                          f"{' ...' if domain.n_features > 15 else ''}")
    if not domain.has(feature, value):
        vals = domain.values[domain.feature_index(feature)]
        raise SchemaError(f"{where}: unknown value {value!r} of feature {feature!r}; "
                          f"known values: {', '.join(vals[:20])}{' ...' if len(vals) > 20 else ''}")


def _split(token: str, domain: Domain | None, line: _Line, pos: int) -> tuple[str, str]:
    """Split ``feature_value`` (against the domain when given)."""
    cuts = [i for i, ch in enumerate(token) if ch == "_" and 0 < i < len(token) - 1]
    if not cuts:
        raise line.error(f"cannot tell feature from value in {token!r}; write feature_value or "
                         f"feature=value", pos)
    if domain is None:
        i = cuts[-1]
        return token[:i], token[i + 1:]
    ok = [(token[:i], token[i + 1:]) for i in cuts if domain.has(token[:i], token[i + 1:])]
    if len(ok) == 1:
        return ok[0]
    if len(ok) > 1:
        options = " or ".join(f"{f}={v}" for f, v in ok)
        raise line.error(f"{token!r} is ambiguous: write {options}", pos)
    known = [token[:i] for i in cuts if domain.has(token[:i])]
    if known:
        f = known[-1]
        _check(domain, f, token[len(f) + 1:], line, pos)
    _check(domain, token[:cuts[-1]], token[cuts[-1] + 1:], line, pos)
    raise AssertionError("unreachable")  # pragma: no cover


# ---------------------------------------------------------------------- writer
def _quote(s: str) -> str:
    if _BARE.fullmatch(s) and s != POS:
        return s
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def atom_tokens(domain: Domain) -> list[str]:
    """Text of every atom id as the writer prints it: ``feature_value`` when unambiguous."""
    out = [POS]
    for f, vals in zip(domain.features, domain.values):
        for v in vals:
            token = f"{f}_{v}"
            simple = _BARE.fullmatch(f) and _BARE.fullmatch(v) and _BARE.fullmatch(token)
            if simple and token != POS:
                cuts = [i for i, ch in enumerate(token) if ch == "_" and 0 < i < len(token) - 1]
                splits = [(token[:i], token[i + 1:]) for i in cuts if domain.has(token[:i], token[i + 1:])]
                if splits == [(f, v)]:
                    out.append(token)
                    continue
            out.append(f"{_quote(f)}={_quote(v)}")
    return out


def write_kb(kb: "KB", header: str | None = None) -> str:
    """The KB as text, one ``p: body`` line per clause (p printed exactly)."""
    lines = []
    if header:
        lines += [f"# {h}" for h in header.splitlines()]
    bodies = kb.body_texts()
    probs = np.array([repr(float(p)) for p in kb.prob], dtype=object)
    lines += [f"{p}: {b}" for p, b in zip(probs, bodies)]
    return "\n".join(lines) + ("\n" if lines else "")
