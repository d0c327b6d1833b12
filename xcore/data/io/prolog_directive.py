"""Whether a Prolog directive (``:- ...``) is one well-formed term: a missing '.' after a directive would
otherwise swallow the facts that follow it (``:- foo p(a).``)."""

from __future__ import annotations

import re

from xcore.data.io.prolog_text import QUOTED, short
from xcore.errors import DataError

_DIRECTIVE_TOKEN = re.compile(rf"""\s*+(?:(?P<q>{QUOTED}|`[^`\n]*+`)|(?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    |(?P<atom>[a-z][A-Za-z0-9_]*)|(?P<var>[A-Z_][A-Za-z0-9_]*)|(?P<open>[(\[{{])|(?P<close>[)\]}}])
    |(?P<comma>[,|])|(?P<sym>[-+*/\\^<>=~:.?@#&$!;]+))""", re.X)
_PREFIX_WORDS = {"dynamic", "discontiguous", "initialization", "meta_predicate", "module_transparent",
                 "multifile", "public", "thread_local", "table"}
"""Word prefix operators a directive may start with (``:- dynamic foo/1.``)."""
_INFIX_WORDS = {"is", "mod", "rem", "xor", "div", "rdiv", "as"}
_CLAUSE_OPS = {":-", "?-", "!-", "-->"}
_CLOSING = {"(": ")", "[": "]", "{": "}"}


def check_directive(clause: str, file: str, line: int) -> None:
    """Refuse a directive whose body is not one well-formed term (e.g. ``:- foo p(a).``, where a
    missing '.' after ``foo`` would otherwise swallow the fact ``p(a)``).

    A small operator-precedence-free reading of Prolog terms: operands (atoms, numbers, variables,
    quoted atoms, compound terms, lists, braces, bracketed terms) joined by operators, with prefix
    operators allowed; two operands side by side, a second ``:-`` or unbalanced brackets fail.
    Iterative (no recursion), linear in the clause length.
    """
    body = clause[2:-1]
    toks = _directive_tokens(clause, body, file, line)

    def fail(why: str, at: int) -> DataError:
        return _not_one_term(clause, body, file, line, why, at)

    stack: list[str] = []
    want_operand = True
    for i, (kind, text, at) in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        starts_operand = nxt is not None and (nxt[0] in ("q", "num", "atom", "var", "open", "sym"))
        if kind == "sym" and text in _CLAUSE_OPS and not stack:  # inside brackets it is a term: assert((p :- q))
            raise fail(f"a second {text!r}", at)
        if want_operand:
            if kind in ("q", "num", "var"):
                want_operand = False
            elif kind in ("atom", "sym"):
                if nxt is not None and nxt[0] == "open" and nxt[1] == "(" and nxt[2] == at + len(text):
                    continue  # functional notation: name(...)
                prefix = (text in _PREFIX_WORDS or kind == "sym") and starts_operand
                want_operand = prefix
            elif kind == "open":
                stack.append(_CLOSING[text])
                if nxt is not None and nxt[0] == "close" and nxt[1] == _CLOSING[text] and text != "(":
                    continue  # [] or {}: the close below ends the operand
            elif kind == "close" and stack and stack[-1] == text and toks[i - 1][0] == "open":
                stack.pop()
                want_operand = False
            else:
                raise fail(f"a term is missing before {text!r}", at)
            continue
        if kind in ("sym", "comma") or (kind == "atom" and text in _INFIX_WORDS):
            want_operand = True
        elif kind == "close":
            if not stack or stack.pop() != text:
                raise fail(f"unbalanced {text!r}", at)
        else:
            before = toks[i - 1][1]
            raise fail(f"{text!r} follows {before!r} without an operator or comma between them", at)
    if stack:
        raise fail(f"{stack[-1]!r} is missing", len(body))
    if want_operand:
        raise fail("it ends with an operator" if toks else "it is empty", len(body))


def _directive_tokens(clause: str, body: str, file: str, line: int) -> list[tuple[str, str, int]]:
    """(kind, text, offset) of each token of a directive's body, or a DataError at the first unreadable one."""
    toks: list[tuple[str, str, int]] = []
    pos = 0
    end = len(body.rstrip())
    while pos < end:
        m = _DIRECTIVE_TOKEN.match(body, pos)
        if m is None or m.end() == pos:
            raise DataError(f"directive {short(clause)!r}: cannot read {body[pos:].lstrip()[:1]!r}",
                            file=file, line=line + body.count("\n", 0, pos))
        kind = m.lastgroup or ""
        toks.append((kind, m[kind], m.start(kind)))
        pos = m.end()
    return toks


def _not_one_term(clause: str, body: str, file: str, line: int, why: str, at: int) -> DataError:
    """The error for a directive that is not one term, naming the line of the problem."""
    where = line + body.count("\n", 0, at)
    also = f" (at line {where})" if where != line else ""
    return DataError(f"directive {short(clause)!r} is not a single Prolog term: {why}{also}; a directive "
                     f"runs to its own '.', so a missing '.' joins it to what follows", file=file, line=line)
