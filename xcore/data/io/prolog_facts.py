"""Reading one ground Prolog fact (``p(a, 'B c', 3).``) into its predicate and argument texts: a regex
fast path for plain facts, a tokenizer for quoted atoms and escapes; rules and variables are refused."""

from __future__ import annotations

import re

from xcore.data.io.manifest import MAX_ARITY
from xcore.data.io.prolog_text import QUOTED, short
from xcore.errors import DataError

_FAST = re.compile(r"^([a-z][A-Za-z0-9_]*)\s*(?:\(([^()\[\]'\"]*)\))?\s*\.$")
_SIMPLE_ARG = re.compile(r"^(?:[a-z][A-Za-z0-9_]*|[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "`": "`"}
_TOKEN = re.compile(rf"""\s*(?:(?P<q>{QUOTED})|(?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    |(?P<atom>[a-z][A-Za-z0-9_]*)|(?P<var>[A-Z_][A-Za-z0-9_]*)|(?P<punct>[()\[\],|])
    |(?P<sym>[-+*/\\^<>=~:.?@#&$!;]+))""", re.X)


def parse_fact(clause: str, file: str, line: int) -> tuple[str, tuple[str, ...]]:
    fast = _FAST.match(clause)
    if fast:
        if fast[2] is None:
            return fast[1], ()
        _check_arity(fast[2].count(",") + 1, clause, file, line)
        args = tuple(a.strip() for a in fast[2].split(","))
        if all(_SIMPLE_ARG.match(a) for a in args):
            return fast[1], args
    return _parse_fact_slow(clause[:-1], file, line)


def _tokens(body: str, file: str, line: int) -> list[tuple[str, str]]:
    toks, pos = [], 0
    body = body.rstrip()
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if m is None or m.end() == pos:
            bad = body[pos:].lstrip()[:1]
            raise DataError(f"cannot read {bad!r} in {short(body)}", file=file,
                            line=line + body.count("\n", 0, pos))
        kind = m.lastgroup or ""
        toks.append((kind, m[kind]))
        pos = m.end()
    return toks


def _parse_fact_slow(body: str, file: str, line: int) -> tuple[str, tuple[str, ...]]:
    toks = _tokens(body, file, line)
    for kind, text in toks:
        if kind == "sym" and (":-" in text or "-->" in text):
            raise DataError(f"a rule, not a fact: {short(body)} (only ground facts are supported)",
                            file=file, line=line)
        if kind == "var":
            raise DataError(f"variable {text} in {short(body)}: only ground facts are supported",
                            file=file, line=line)
    if not toks or toks[0][0] not in ("atom", "q"):
        raise DataError(f"not a fact: {short(body)}", file=file, line=line)
    name = _unquote(toks[0][1]) if toks[0][0] == "q" else toks[0][1]
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        raise DataError(f"predicate name {name!r} is not valid (letters, digits and _ only)",
                        file=file, line=line)
    if len(toks) == 1:
        return name, ()
    if toks[1] != ("punct", "(") or toks[-1] != ("punct", ")"):
        raise DataError(f"not a fact: {short(body)}", file=file, line=line)
    args: list[str] = []
    depth, current = 0, []
    for kind, text in toks[2:-1]:
        if kind == "punct" and text in "([":
            depth += 1
        elif kind == "punct" and text in ")]":
            depth -= 1
            if depth < 0:
                raise DataError(f"unbalanced brackets in {short(body)}", file=file, line=line)
        if depth == 0 and (kind, text) == ("punct", ","):
            _check_arity(len(args) + 2, body, file, line)
            args.append(_arg_text(current, body, file, line))
            current = []
        else:
            current.append((kind, text))
    if depth != 0:
        raise DataError(f"unbalanced brackets in {short(body)}", file=file, line=line)
    args.append(_arg_text(current, body, file, line))
    return name, tuple(args)


def _check_arity(n: int, clause: str, file: str, line: int) -> None:
    """Refuse facts with more than `MAX_ARITY` arguments (as PSL folders and long CSVs do)."""
    if n > MAX_ARITY:
        raise DataError(f"{short(clause)} has more than {MAX_ARITY} arguments; at most "
                        f"{MAX_ARITY} are supported", file=file, line=line)


def _arg_text(toks: list[tuple[str, str]], body: str, file: str, line: int) -> str:
    if not toks:
        raise DataError(f"empty argument in {short(body)}", file=file, line=line)
    if len(toks) == 1 and toks[0][0] == "q":
        text = _unquote(toks[0][1])
        if not text.strip():
            raise DataError(f"blank quoted argument in {short(body)}", file=file, line=line)
        return text
    words = ("q", "num", "atom", "var")
    for (k1, _), (k2, t2) in zip(toks, toks[1:]):
        if k1 in words and k2 in words:
            raise DataError(f"missing comma or operator before {t2!r} in {short(body)}",
                            file=file, line=line)
    return "".join(t for _, t in toks)


def _unquote(tok: str) -> str:
    q = tok[0]
    inner = tok[1:-1].replace(q + q, q)
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[1]), inner)
