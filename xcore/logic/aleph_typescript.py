"""Aleph's terminal output (``typescript`` files) as reference data: the bottom clauses it printed
(``[sat] [N]`` / ``[bottom clause]``) per problem and example, and a comparison of two clauses
literal for literal up to a renaming of variables.

A typescript is cleaned as its README says (``\\r``, ANSI escapes and SI bytes removed). The
problem of a bottom clause is the last ``read_all(stem)`` before it; ``?- set(K, V).`` commands
typed in the session are kept as the settings in force.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_VAR = re.compile(r"(?<![A-Za-z0-9_'])([A-Z_][A-Za-z0-9_]*)")


@dataclass
class TypescriptClause:
    """One bottom clause Aleph printed: problem stem, example atom, head, body literals, settings."""

    stem: str
    example: str
    head: str
    body: list[str]
    settings: dict[str, str] = field(default_factory=dict)
    line: int = 0


def clean(text: str) -> str:
    """The typescript without carriage returns, ANSI escapes and SI bytes."""
    return _ANSI.sub("", text.replace("\r", "").replace("\x0f", ""))


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside brackets and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def bottom_clauses(text: str) -> list[TypescriptClause]:
    """Every ``[bottom clause]`` of a typescript with its problem, example and settings."""
    lines = clean(text).split("\n")
    out: list[TypescriptClause] = []
    stem, settings, example = "", {}, ""
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.search(r"\?-\s*read_all\(\s*'?([A-Za-z0-9_]+)'?\s*\)", line)
        if m:
            stem, settings = m.group(1), {}
        m = re.search(r"\?-\s*set\(\s*([a-z_]+)\s*,\s*([^)]*)\)", line)
        if m:
            settings[m.group(1)] = m.group(2).strip()
        if line.startswith("[sat] [") and i + 1 < len(lines):
            example = lines[i + 1].strip()[1:-1]
        if line.strip() == "[bottom clause]":
            j = i + 1
            chunk = []
            while j < len(lines) and not lines[j].startswith("[literals]"):
                chunk.append(lines[j].strip())
                j += 1
            clause = " ".join(c for c in chunk if c).rstrip(".").strip()
            head, _, body = clause.partition(":-")
            out.append(TypescriptClause(stem, example, head.strip(), split_top(body) if body.strip() else [],
                                        dict(settings), i + 1))
            i = j
        i += 1
    return out


def _skeleton(literal: str) -> tuple[str, list[str]]:
    """A literal with its variables replaced by numbered slots, and the variables in slot order."""
    names: list[str] = []

    def slot(m: re.Match) -> str:
        names.append(m.group(1))
        return "\x00"

    text = re.sub(r"\s+", "", literal)
    return _VAR.sub(slot, text), names


def predicate_of(literal: str) -> str:
    """The predicate of a literal text (``B=[A|C]`` -> ``=``)."""
    m = re.match(r"\s*([a-z][A-Za-z0-9_]*|'[^']*')\s*\(", literal)
    if m:
        return m.group(1)
    ops = [op for op in ("\\==", "==", "\\=", "=<", ">=", "=:=", "is", "=", "<", ">") if op in literal]
    return ops[0] if ops else literal.strip()


def same_up_to_renaming(head_a: str, body_a: list[str], head_b: str, body_b: list[str]) -> dict[str, str] | None:
    """A variable renaming a -> b under which the two clauses have the same head and the same set of
    body literals (each literal matched once), else None. Backtracking, literals with the fewest
    candidates first."""
    if len(body_a) != len(body_b):
        return None
    ha, va = _skeleton(head_a)
    hb, vb = _skeleton(head_b)
    if ha != hb:
        return None
    mapping: dict[str, str] = {}
    for x, y in zip(va, vb):
        if mapping.setdefault(x, y) != y:
            return None
    if len(set(mapping.values())) != len(mapping):
        return None
    sa = [_skeleton(l) for l in body_a]
    sb = [_skeleton(l) for l in body_b]
    cands = [[j for j, b in enumerate(sb) if b[0] == a[0]] for a in sa]
    if any(not c for c in cands):
        return None
    order = sorted(range(len(sa)), key=lambda k: len(cands[k]))
    used = [False] * len(sb)

    def extend(m: dict[str, str], xs: list[str], ys: list[str]) -> dict[str, str] | None:
        m = dict(m)
        back = {v: k for k, v in m.items()}
        for x, y in zip(xs, ys):
            if m.get(x, y) != y or back.get(y, x) != x:
                return None
            m[x], back[y] = y, x
        return m

    def solve(k: int, m: dict[str, str]) -> dict[str, str] | None:
        if k == len(order):
            return m
        a = order[k]
        for j in cands[a]:
            if used[j]:
                continue
            m2 = extend(m, sa[a][1], sb[j][1])
            if m2 is None:
                continue
            used[j] = True
            res = solve(k + 1, m2)
            if res is not None:
                return res
            used[j] = False
        return None

    return solve(0, mapping)


@dataclass
class TypescriptLabel:
    """A clause Aleph evaluated in the first search of a session, with its cover ``[P/N]``."""

    stem: str
    clause: str
    positives: int
    negatives: int


def first_search_labels(text: str) -> list[TypescriptLabel]:
    """The clauses and ``[P/N]`` covers of the first ``[reduce]`` search after each ``read_all``: the
    only search of a session that counts over all examples (later ones drop covered positives)."""
    lines = clean(text).split("\n")
    out: list[TypescriptLabel] = []
    stem, state, chunk = "", "", []
    for line in lines:
        m = re.search(r"\?-\s*read_all\(\s*'?([A-Za-z0-9_]+)'?\s*\)", line)
        if m:
            stem, state, chunk = m.group(1), "wait", []
            continue
        if state == "wait" and line.strip() == "[reduce]":
            state, chunk = "search", []
            continue
        if state != "search":
            continue
        if line.startswith("[best clause]") or line.startswith("[search time]") or line.startswith("[atoms left]"):
            state = "done"
            continue
        lab = re.fullmatch(r"\[(\d+)/(\d+)\]", line.strip())
        if lab and chunk:
            out.append(TypescriptLabel(stem, " ".join(chunk).rstrip(".").strip(), int(lab.group(1)),
                                       int(lab.group(2))))
            chunk = []
        elif line.startswith("["):
            chunk = []
        elif line.strip():
            if chunk and chunk[-1].endswith("."):  # a clause printed without a cover: not the labelled one
                chunk = []
            chunk.append(line.strip())
    return out
