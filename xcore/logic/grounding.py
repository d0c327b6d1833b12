"""Grounding rules against a `RelationalDataset` with DuckDB, into integer arrays.

Semantics. A rule ``body -> head`` is the clause ``OR(~b for b in body) | OR(head)``; a ground
rule is one assignment of constants to the rule's variables. Each clause literal is one of:

* clause-negative (a positive body literal, or a negated head literal) -- *binding*: its ground
  atom must exist in the store (observed or target); otherwise the ground clause is trivially
  satisfied and skipped. It is an INNER JOIN on that predicate's atom table.
* clause-positive (a negated body literal, or a positive head literal) whose variables all occur
  in binding literals -- LEFT JOINED: a missing atom gets id -1 and counts as the constant 0
  (closed world).
* clause-positive with a variable that occurs in no binding literal -- inner joined as well, so
  the rule grounds over the atoms that exist (as PSL does; e.g. the prior ``rating(U, I)``
  grounds once per rating atom). With ``domain_variables=True`` (Markov-logic style) such
  variables instead range over the constants of their argument type (a cross join with the type's
  domain) and all clause-positive literals are left joined.

Constants in a rule are equality filters; a variable repeated within or across literals is a join
condition. Observed atoms with value 0 are atoms like any other. Every assignment appears once
(atom tables have unique rows). SQL generation lives in `xcore.logic.sql` (engine-independent);
this module only registers integer tables in an in-memory DuckDB and executes. Before executing,
every rule's size is estimated (`xcore.logic.estimate`); a rule above `limit` raises
`GroundingTooLarge` naming it, and the query also carries ``LIMIT limit+1`` as a hard cap.

Output per rule: `GroundRules` with ``atom_ids (n, L)`` (clause-literal order, -1 = missing),
``signs (L,)`` and ``bindings (n, V)``; `linear_form` turns them into the Lukasiewicz hinge
``d = max(0, b + A y)`` over the target atoms ``y`` as a sparse matrix, without Python loops.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import scipy.sparse as sp

from xcore.data.dataset import RelationalDataset
from xcore.errors import GroundingTooLarge, XcoreError
from xcore.logic.ast import ArithmeticRule, Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.estimate import estimate_groundings, order_joins
from xcore.logic.ground_texts import rule_texts
from xcore.logic.grounding_db import database, register_tables
from xcore.logic.linear_form import linear_form
from xcore.logic.parser import parse_rules
from xcore.logic.sql import GroundingPlan, TableNames, focused_rule_sql, plan_rule, rule_sql
from xcore.logic.summation import SummationGround, ground_summation, query_rule
from xcore.runtime import DUCKDB_MEMORY_ENV, Progress, duckdb_memory_limit, format_bytes

DEFAULT_LIMIT = 5_000_000
"""Default maximum number of ground rules per rule."""


class EstimatedTooLarge(GroundingTooLarge):
    """`GroundingTooLarge` raised from the estimate, before grounding: says it is an estimate
    (it can be far above the true count on small data) and how to raise the limit."""

    def __init__(self, rule_text: str, estimate: int, limit: int) -> None:
        super().__init__(rule_text, estimate, limit)
        shown = rule_text if len(rule_text) <= 200 else rule_text[:197] + "..."
        XcoreError.__init__(
            self,
            f"rule `{shown}` would produce about {estimate:,} ground rules by xcore's estimate "
            f"(an estimate, not a count: on small data it can be far above the true number), above "
            f"the limit of {limit:,}; add a body atom that binds its variables (a block predicate), "
            f"or raise the limit with ground(..., limit={_suggested_limit(estimate)}) "
            f"(limit=None switches the guard off)")


class CountedTooLarge(GroundingTooLarge):
    """`GroundingTooLarge` from a count stopped at ``limit + 1``: the rule has MORE than `limit`."""

    def __init__(self, rule_text: str, limit: int) -> None:
        super().__init__(rule_text, limit + 1, limit)
        shown = rule_text if len(rule_text) <= 200 else rule_text[:197] + "..."
        XcoreError.__init__(
            self,
            f"rule `{shown}` has more than {limit:,} ground rules (the limit; counting stopped there); "
            f"add a body atom that binds its variables (a block predicate) or raise the limit")


class GroundingOutOfMemory(GroundingTooLarge):
    """`GroundingTooLarge` when grounding a rule needs more memory than DuckDB and its result may use
    (`xcore.runtime.duckdb_memory_limit`): says what to change instead of DuckDB's own error."""

    def __init__(self, rule_text: str, estimate: int, memory: int, rows: int | None = None) -> None:
        super().__init__(rule_text, estimate, rows or 0)
        shown = rule_text if len(rule_text) <= 200 else rule_text[:197] + "..."
        so_far = f"its result passed {rows:,} ground rules and " if rows else ""
        XcoreError.__init__(
            self,
            f"grounding rule `{shown}` needs more than the {format_bytes(memory)} of memory allowed to DuckDB "
            f"and its results: {so_far}it has about {estimate:,} by xcore's estimate; keep the size guard on "
            f"(ground(..., limit={DEFAULT_LIMIT:_}), the default), add a body atom that binds its variables "
            f"(a block predicate), or allow more memory with the environment variable {DUCKDB_MEMORY_ENV} "
            f"(e.g. {DUCKDB_MEMORY_ENV}=16GB)")


RESULT_SHARE = 3
"""A rule's fetched result may take 1/RESULT_SHARE of the memory limit: its arrays are copied into
numpy (atom ids, bindings) and sorted, about three times the fetched bytes at the peak."""
FETCH_BYTES = 32 << 20
"""About this many bytes per record batch fetched from DuckDB (the result is checked against its
budget per batch; a 52-literal rule's row is 600 bytes, a short rule's 30)."""


def _fetch(con: duckdb.DuckDBPyConnection, sql: str, rule_text: str, estimate: int, columns: int,
           limit: int | None) -> pa.Table:
    """The query's result as Arrow. When the row cap (`limit`) cannot outgrow the result's share of the
    memory limit it is fetched at once; otherwise a batch at a time, stopping with
    `GroundingOutOfMemory` once it outgrows that share (DuckDB's memory limit does not cover fetched
    results: with the size guard off, a 52-literal rule grew the process by 700 MB a second)."""
    memory = duckdb_memory_limit()
    budget = memory // RESULT_SHARE
    row_bytes = 8 * max(columns, 1)
    if limit is not None and (int(limit) + 1) * row_bytes <= budget:
        return con.sql(sql).to_arrow_table()
    reader = con.sql(sql).to_arrow_reader(max(2048, FETCH_BYTES // row_bytes))
    batches, size, rows = [], 0, 0
    for batch in reader:
        size += batch.nbytes
        rows += batch.num_rows
        if size > budget:
            del batches
            raise GroundingOutOfMemory(rule_text, estimate, memory, rows)
        batches.append(batch)
    return pa.Table.from_batches(batches, schema=reader.schema)


def _suggested_limit(estimate: int) -> str:
    """A limit just above the estimate, in Python syntax (``2_000_000``), or None if absurd."""
    if estimate >= 10**12:
        return "None"
    return f"{int(estimate * 1.1) + 1:_}"


@dataclass
class GroundRules:
    """The groundings of one rule: atom ids per clause literal and constant ids per variable."""

    rule: Rule
    rule_index: int
    atom_ids: np.ndarray
    """(n, L) int64 atom ids in `rule.clause_literals()` order; -1 = missing atom (value 0)."""
    signs: np.ndarray
    """(L,) int8: +1 clause-positive literal, -1 clause-negative literal."""
    bindings: np.ndarray
    """(n, V) int32 constant ids of `rule.variables`."""
    sql: str = ""
    estimate: int = 0
    seconds: float = 0.0
    flat: SummationGround | None = None
    """A rule with summation atoms: its ground rules as flat (row, atom, coefficient) entries
    (`atom_ids` is then empty: each ground rule has its own number of atoms)."""

    @property
    def n(self) -> int:
        return int(self.atom_ids.shape[0])

    def __len__(self) -> int:
        return self.n

    def linear_form(self, store: AtomStore) -> tuple[sp.csr_matrix, np.ndarray]:
        """``(A, b)`` with distance to satisfaction ``max(0, b + A @ y)``; see `linear_form`."""
        return linear_form(self, store)

    def texts(self, store: AtomStore, rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """Readable text of ground rules (all, or the given rows), e.g. ``a(x) & b(x, y) -> c(y)``."""
        return rule_texts(self, store, rows)


@dataclass
class GroundProgram:
    """All ground rules of a model over one `AtomStore`."""

    store: AtomStore
    rules: list[GroundRules] = field(default_factory=list)

    @property
    def n_ground_rules(self) -> int:
        return int(sum(g.n for g in self.rules))

    def __iter__(self) -> Iterator[GroundRules]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __getitem__(self, i: int) -> GroundRules:
        return self.rules[i]

    def linear_forms(self) -> list[tuple[sp.csr_matrix, np.ndarray]]:
        """`linear_form` of every rule, in rule order."""
        return [linear_form(g, self.store) for g in self.rules]

    def summary(self) -> pd.DataFrame:
        """One row per rule: text, estimated and actual ground rules, seconds."""
        return pd.DataFrame({
            "rule": [g.rule.text() for g in self.rules],
            "estimate": [g.estimate for g in self.rules],
            "ground_rules": [g.n for g in self.rules],
            "seconds": [g.seconds for g in self.rules],
        })


def n_ground_rules(program: GroundProgram | Iterable[GroundRules]) -> int:
    """Total number of ground rules."""
    return int(sum(g.n for g in program))


# ---------------------------------------------------------------------- grounding
def ground(
    rules: Sequence[Rule | str] | Rule | str,
    data: RelationalDataset | AtomStore,
    *,
    limit: int | None = DEFAULT_LIMIT,
    domain_variables: bool = False,
    progress: Progress | None = None,
    names: TableNames = TableNames(),
    threads: int | None = None,
    engine_join_order: bool = False,
    only_targets: bool = False,
) -> GroundProgram:
    """Ground every rule against `data`; raise `GroundingTooLarge` (before any query runs) when a
    rule's estimated size exceeds `limit` (None: no limit).

    Joins run in the order chosen by `order_joins` from xcore's own estimates (multi-column
    distinct counts); ``engine_join_order=True`` lets DuckDB's optimizer reorder them instead.
    ``only_targets=True`` keeps only the ground rules that contain a target atom (the only ones
    inference and PPLL use; `focused_rule_sql`), in the same canonical order; joins then start
    from the small target tables, and hash joins keep xcore's build sides (`grounding_db.database`). The limit
    still counts every ground rule (a count capped at ``limit + 1``, nothing materialised), so the
    same rules pass the guard as without it.
    """
    rule_list = _as_rules(rules)
    store = data if isinstance(data, AtomStore) else AtomStore.from_dataset(data)
    plans = [order_joins(plan_rule(_query_form(r), store.schema, domain_variables), store) for r in rule_list]
    estimates = [estimate_groundings(p, store) for p in plans]
    if limit is not None:
        for r, est in zip(rule_list, estimates):
            if est > limit:
                raise EstimatedTooLarge(r.text(), est, limit)
    with _DATABASE_LOCK:
        con = database(engine_join_order, threads, only_targets).cursor()  # own catalogue of registered tables
    try:
        register_tables(con, store, plans, names, targets=only_targets)
        out = GroundProgram(store)
        for i, (rule, plan) in enumerate(zip(rule_list, plans)):
            if progress:
                progress(i / max(len(plans), 1), f"grounding {rule.text()}")
            t0 = time.perf_counter()
            if _has_summation(rule):
                out.rules.append(_ground_summation_rule(con, store, rule, plan, i, names, limit, estimates[i]))
                out.rules[-1].seconds = time.perf_counter() - t0
                continue
            try:
                out.rules.append(_ground_plan(con, store, plan, i, names, limit, estimates[i], only_targets))
            except duckdb.OutOfMemoryException:
                raise GroundingOutOfMemory(rule.text(), estimates[i], duckdb_memory_limit()) from None
            out.rules[-1].seconds = time.perf_counter() - t0
        if progress:
            progress(1.0, f"{out.n_ground_rules:,} ground rules")
        return out
    finally:
        con.close()


def _has_summation(rule: Rule) -> bool:
    return isinstance(rule, ArithmeticRule) and rule.has_summation


def _query_form(rule: Rule) -> Rule:
    """The rule whose join is planned: a summation rule's atoms with ``+C`` read as variables."""
    return query_rule(rule) if _has_summation(rule) else rule


def _ground_summation_rule(con, store: AtomStore, rule: ArithmeticRule, plan: GroundingPlan, index: int,
                           names: TableNames, limit: int | None, estimate: int) -> GroundRules:
    """`GroundRules` of a rule with summation atoms (`xcore.logic.summation`), under the same limit."""
    flat = ground_summation(con, store, rule, plan, names)
    n = len(flat.constant)
    if limit is not None and max(n, len(flat.atom)) > limit:
        raise GroundingTooLarge(rule.text(), int(max(n, len(flat.atom))), int(limit))
    return GroundRules(rule, index, np.zeros((n, 0), dtype=np.int64), np.zeros(0, dtype=np.int8),
                       flat.bindings, sql=rule_sql(plan, store.schema, store.constant_id, names),
                       estimate=estimate, flat=flat)


_DATABASE_LOCK = threading.Lock()


def _first_targets(store: AtomStore) -> dict[str, int]:
    """First target atom id of every predicate that has targets (its targets run to its block's end)."""
    return {name: pa_.offset + pa_.n_obs for name, pa_ in store.predicates.items() if pa_.n_targets}


def _ground_plan(con, store: AtomStore, plan: GroundingPlan, index: int, names: TableNames,
                 limit: int | None, estimate: int, only_targets: bool = False) -> GroundRules:
    sql = rule_sql(plan, store.schema, store.constant_id, names)
    if only_targets:
        if limit is not None:  # the limit counts every ground rule, as without only_targets
            n_all = con.sql(f"SELECT count(*) FROM ({sql}\nLIMIT {int(limit) + 1}) AS g").fetchall()[0][0]
            if n_all > limit:
                raise CountedTooLarge(plan.rule.text(), int(limit))
        focused = focused_rule_sql(plan, store.schema, store.constant_id, _first_targets(store), names)
        sql = focused if focused is not None else f"SELECT * FROM ({sql}) AS g WHERE FALSE"
    capped = sql if limit is None else f"{sql}\nLIMIT {int(limit) + 1}"
    res = _fetch(con, capped, plan.rule.text(), estimate, len(plan.signs) + len(plan.variables), limit)
    L, V = len(plan.signs), len(plan.variables)
    n = res.num_rows
    if limit is not None and n > limit:
        del res
        # count without materialising, stopping at 10x the limit: an exploding rule could take
        # very long to count in full
        cap = 10 * int(limit) + 1
        count = con.sql(f"SELECT count(*) FROM ({sql}\nLIMIT {cap}) AS g").fetchall()[0][0]
        raise GroundingTooLarge(plan.rule.text(), int(count), int(limit))
    atom_ids = np.empty((n, L), dtype=np.int64)
    for j in range(L):
        _fill(atom_ids[:, j], res.column(f"l{j}"))
    bindings = np.empty((n, V), dtype=np.int32)
    for k in range(V):
        _fill(bindings[:, k], res.column(f"v{k}"))
    atom_ids, bindings = _canonical_order(atom_ids, bindings, store.n_constants)
    return GroundRules(plan.rule, index, atom_ids, np.asarray(plan.signs, dtype=np.int8), bindings,
                       sql=sql, estimate=estimate)


def _fill(out: np.ndarray, column: pa.ChunkedArray) -> None:
    """Copy an Arrow integer column (possibly chunked, no nulls) into a numpy view."""
    pos = 0
    for chunk in column.chunks:
        m = len(chunk)
        out[pos:pos + m] = chunk.to_numpy(zero_copy_only=False)
        pos += m


def _canonical_order(atom_ids: np.ndarray, bindings: np.ndarray, n_constants: int) -> tuple[np.ndarray, np.ndarray]:
    """Sort ground rules by their bindings so results do not depend on DuckDB's thread timing."""
    n, v = bindings.shape
    if n < 2 or v == 0:
        return atom_ids, bindings
    base = n_constants + 1
    if v * np.log2(base) < 62:  # one int64 key: a single argsort instead of a lexsort
        key = bindings[:, 0].astype(np.int64)
        for k in range(1, v):
            key *= base
            key += bindings[:, k]
        order = np.argsort(key)
    else:
        order = np.lexsort(bindings.T[::-1])
    return np.take(atom_ids, order, axis=0), np.take(bindings, order, axis=0)  # take: ~7x faster


def _as_rules(rules: Sequence[Rule | str] | Rule | str) -> list[Rule]:
    if isinstance(rules, Rule):
        return [rules]
    if isinstance(rules, str):
        return list(_parse_rules(rules))
    out: list[Rule] = []
    for r in rules:
        out.extend([r] if isinstance(r, Rule) else _parse_rules(r))
    return out


def _parse_rules(text: str) -> list[Rule]:
    return list(parse_rules(text))
