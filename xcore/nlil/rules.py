"""Lifted rules decoded from NLIL attentions: readable text and symbolic execution by DuckDB joins.

A `Statement` is an operator chain from the head's X (``on^-1`` then ``car?``) ending in a test
predicate (unary heads) or at the head's Y (binary heads); formulas combine statements with
and / or / not. Precision, recall and support are measured by running the rule as SQL on the facts,
never by the network.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Union

import duckdb
import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Statement:
    """A primitive statement: an operator chain from X, then `test`(end) (unary heads) or end = Y (binary)."""

    ops: tuple[str, ...]
    test: str | None = None


@dataclass(frozen=True)
class Not:
    arg: Formula


@dataclass(frozen=True)
class And:
    left: Formula
    right: Formula


@dataclass(frozen=True)
class Or:
    left: Formula
    right: Formula


Formula = Union[Statement, Not, And, Or]


def simplify(f: Formula) -> Formula:
    """Drop identity operators and repeated filters, and merge ``a & a`` / ``a | a`` into ``a``."""
    if isinstance(f, Statement):
        ops: list[str] = []
        for o in f.ops:  # identities go; a filter repeated with nothing between (u? u?) is one filter
            if o != "id" and not (o.endswith("?") and ops and ops[-1] == o):
                ops.append(o)
        if ops and f.test is not None and ops[-1] == f"{f.test}?":
            ops.pop()  # u? then test u: one u
        return Statement(tuple(ops), f.test)
    if isinstance(f, Not):
        inner = simplify(f.arg)
        return inner.arg if isinstance(inner, Not) else Not(inner)
    left, right = simplify(f.left), simplify(f.right)
    if left == right:
        return left
    return type(f)(left, right)


def statements(f: Formula) -> list[Statement]:
    """The statements of a formula, left to right."""
    if isinstance(f, Statement):
        return [f]
    if isinstance(f, Not):
        return statements(f.arg)
    return statements(f.left) + statements(f.right)


def positive_statements(f: Formula) -> list[Statement]:
    """The statements not under a negation (those whose matches are evidence a rule fires)."""
    if isinstance(f, Statement):
        return [f]
    if isinstance(f, Not):
        return []
    return positive_statements(f.left) + positive_statements(f.right)


def depth(f: Formula) -> int:
    """Nesting depth of connectives (a statement is depth 0)."""
    if isinstance(f, Statement):
        return 0
    if isinstance(f, Not):
        return depth(f.arg)
    return 1 + max(depth(f.left), depth(f.right))


@dataclass(frozen=True)
class Rule:
    """``head(X[, Y]) <- body``."""

    head: str
    arity: int
    body: Formula

    @property
    def text(self) -> str:
        counter = [0]
        head = f"{self.head}(X)" if self.arity == 1 else f"{self.head}(X, Y)"
        return f"{head} <- {_text(self.body, self.arity, counter, top=True)}"

    def atoms(self) -> list[str]:
        """The body atoms (with variables), statement by statement."""
        counter = [0]
        return [a for s in statements(self.body) for a in _chain_atoms(s, self.arity, counter)]


def _fresh(counter: list[int]) -> str:
    counter[0] += 1
    return f"Z{counter[0]}" if counter[0] > 1 else "Z"


def _chain_atoms(s: Statement, arity: int, counter: list[int]) -> list[str]:
    """Atoms of one statement with fresh existential variables; the last moved-to variable is Y for binary heads."""
    moves = [o for o in s.ops if o != "id" and not o.endswith("?")]
    atoms, cur, done = [], "X", 0
    for o in s.ops:
        if o == "id":
            continue
        if o.endswith("?"):
            atoms.append(f"{o[:-1]}({cur})")
            continue
        done += 1
        nxt = "Y" if arity == 2 and done == len(moves) else _fresh(counter)
        rel, inverse = (o[:-3], True) if o.endswith("^-1") else (o, False)
        atoms.append(f"{rel}({nxt}, {cur})" if inverse else f"{rel}({cur}, {nxt})")
        cur = nxt
    if arity == 1 and s.test is not None:
        atoms.append(f"{s.test}({cur})")
    if arity == 2 and not moves:
        atoms.append("X = Y")
    return atoms or ["true"]


def _text(f: Formula, arity: int, counter: list[int], top: bool = False) -> str:
    if isinstance(f, Statement):
        body = " & ".join(_chain_atoms(f, arity, counter))
        return body if top or " & " not in body else f"({body})"
    if isinstance(f, Not):
        return f"~({_text(f.arg, arity, counter, top=True)})"
    sep = " & " if isinstance(f, And) else " | "
    inner = f"{_text(f.left, arity, counter)}{sep}{_text(f.right, arity, counter)}"
    return inner if top else f"({inner})"


# ---------------------------------------------------------------------- symbolic execution
def _sql(f: Formula, arity: int, tables: set[str], alias: list[int]) -> str:
    """A SQL boolean over the query row ``q`` (columns x[, y]) that is true where `f` holds."""
    if isinstance(f, Not):
        return f"(NOT {_sql(f.arg, arity, tables, alias)})"
    if isinstance(f, (And, Or)):
        op = "AND" if isinstance(f, And) else "OR"
        return f"({_sql(f.left, arity, tables, alias)} {op} {_sql(f.right, arity, tables, alias)})"
    froms, conds, cur = [], [], "q.x"
    ops = [o for o in f.ops if o != "id"]
    for o in ops:
        alias[0] += 1
        t = f"t{alias[0]}"
        if o.endswith("?"):
            name = o[:-1]
            froms.append(f'"{name}" AS {t}' if name in tables else f"(SELECT NULL::VARCHAR AS a0 WHERE FALSE) AS {t}")
            conds.append(f"{t}.a0 = {cur}")
            continue
        rel, inverse = (o[:-3], True) if o.endswith("^-1") else (o, False)
        froms.append(f'"{rel}" AS {t}' if rel in tables else
                     f"(SELECT NULL::VARCHAR AS a0, NULL::VARCHAR AS a1 WHERE FALSE) AS {t}")
        conds.append(f"{t}.{'a1' if inverse else 'a0'} = {cur}")
        cur = f"{t}.{'a0' if inverse else 'a1'}"
    if arity == 1 and f.test is not None:
        alias[0] += 1
        t = f"t{alias[0]}"
        froms.append(f'"{f.test}" AS {t}' if f.test in tables else f"(SELECT NULL::VARCHAR AS a0 WHERE FALSE) AS {t}")
        conds.append(f"{t}.a0 = {cur}")
    if arity == 2:
        conds.append(f"{cur} = q.y")
    if not froms:
        return "(" + " AND ".join(conds) + ")" if conds else "TRUE"
    return f"EXISTS (SELECT 1 FROM {', '.join(froms)} WHERE {' AND '.join(conds) or 'TRUE'})"


class FactStore:
    """The fact tables registered once in one DuckDB connection (per fit), so many rules run without
    re-registering hundreds of tables; the connection is rebuilt lazily after unpickling."""

    def __init__(self, facts: dict[str, pd.DataFrame]) -> None:
        self.facts = {name: frame.astype(str) for name, frame in facts.items()}
        self._con: duckdb.DuckDBPyConnection | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        return {"facts": self.facts}

    def __setstate__(self, state: dict) -> None:
        self.facts, self._con, self._lock = state["facts"], None, threading.Lock()

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con = duckdb.connect()
            for name, frame in self.facts.items():
                self._con.register(name, frame)
        return self._con

    def fires(self, rules: list[Rule | Formula], queries: pd.DataFrame, arity: int | None = None) -> np.ndarray:
        """(queries, rules) boolean: where each rule's body holds for each query row, all rules in one query."""
        if not len(queries) or not rules:
            return np.zeros((len(queries), len(rules)), dtype=bool)
        first = rules[0]
        arity = first.arity if isinstance(first, Rule) else (arity or (2 if "y" in queries.columns else 1))
        cols = ["x", "y"] if arity == 2 else ["x"]
        q = queries[cols].astype(str).assign(_i=np.arange(len(queries)))
        conds = [_sql(r.body if isinstance(r, Rule) else r, arity, set(self.facts), [0]) for r in rules]
        select = ", ".join(f"{c} AS f{i}" for i, c in enumerate(conds))
        with self._lock:
            con = self._connection()
            con.register("q", q)
            try:
                out = con.execute(f"SELECT {select} FROM q ORDER BY _i").fetchnumpy()
            finally:
                con.unregister("q")
        return np.stack([np.asarray(out[f"f{i}"], dtype=bool) for i in range(len(rules))], axis=1)


def fires(rule: Rule | Formula, facts: dict[str, pd.DataFrame] | FactStore, queries: pd.DataFrame,
          arity: int | None = None) -> np.ndarray:
    """Where the rule's body holds for each query row (columns x[, y]), by DuckDB joins on `facts`."""
    store = facts if isinstance(facts, FactStore) else FactStore(facts)
    if not isinstance(rule, Rule) and arity is None:
        arity = 2 if "y" in queries.columns else 1
    return store.fires([rule], queries, arity)[:, 0]


def quality(fired: np.ndarray, label: np.ndarray) -> dict[str, float]:
    """Precision, recall and support of a rule's firings against 0/1 labels."""
    label = np.asarray(label) >= 0.5
    tp = int((fired & label).sum())
    support = int(fired.sum())
    return {"precision": tp / support if support else 0.0, "recall": tp / int(label.sum()) if label.any() else 0.0,
            "support": support, "true_positives": tp}


def groundings(rule: Rule, facts: dict[str, pd.DataFrame], x: str, limit: int = 3) -> list[list[str]]:
    """Up to `limit` sets of ground atoms per non-negated statement of the rule that match for the query
    subject `x` (unary heads): the subgraph that makes the rule fire."""
    out: list[list[str]] = []
    for s in positive_statements(rule.body):
        ops = [o for o in s.ops if o != "id"]
        if not ops and s.test is None:
            continue
        con = duckdb.connect()
        try:
            for name, frame in facts.items():
                con.register(name, frame.astype(str))
            con.register("q", pd.DataFrame({"x": [str(x)]}))
            alias = [0]
            cond = _sql(s, 1, set(facts), alias)
            if not cond.startswith("EXISTS"):
                continue
            inner = cond[len("EXISTS (SELECT 1 "):-1]
            cols = ", ".join(f"t{i}.*" for i in range(1, alias[0] + 1))
            rows = con.execute(f"SELECT {cols} FROM q, {inner[len('FROM '):]} LIMIT {int(limit)}").fetchall()
        finally:
            con.close()
        atoms = _atoms_of(s, rows)
        out += atoms
    return out


def _atoms_of(s: Statement, rows: list[tuple]) -> list[list[str]]:
    """Ground atoms of a statement's join rows (columns t1.*, t2.*, ...)."""
    names = [o for o in s.ops if o != "id"] + ([f"{s.test}?"] if s.test else [])
    result = []
    for row in rows:
        atoms, i = [], 0
        for o in names:
            if o.endswith("?"):
                atoms.append(f"{o[:-1]}({row[i]})")
                i += 1
            else:
                rel = o.removesuffix("^-1")
                atoms.append(f"{rel}({row[i]}, {row[i + 1]})")
                i += 2
        result.append(atoms)
    return result
