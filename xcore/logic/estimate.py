"""Grounding-size estimates before grounding (System-R join sizes), for the size guard and join order.

Joining the result so far ``R`` with the next table ``S`` on the key ``K`` (the variables they
share) gives ``|R ⋈ S| = |R|·|S| / max(V(R,K), V(S,K))`` with ``V`` the number of distinct key
values. The key is treated as one attribute: ``V(S,K)`` is the distinct count of those columns
together (multi-column statistics), ``V(R,K)`` the smallest of that count in any earlier table
holding all of ``K``, the product of the per-variable counts, and ``|R|``. (Dividing by one
maximum per column instead -- independence -- underestimates rules like
``rated(U,I) & rating(U,I)``, whose two keys are perfectly correlated, by orders of magnitude.)
When the statistics can count base-table joins exactly (`AtomStore.join_size`) and an earlier
unfiltered table ``T`` holds the whole key, the skew-aware ``|R| · |T ⋈ S| / |T|`` is used instead
(exact for the first join; popular items make uniform estimates several times too small).
A constant divides by its column's distinct count, a repeated variable by the larger of the two
columns' counts, a table sharing no variable is a cross product, left joins do not change the
size. Exact for one table; an estimate for joins (uniformity and independence across tables).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import Protocol, Sequence

import numpy as np

from xcore.data.schema import Schema
from xcore.logic.ast import Constant, Rule, Variable
from xcore.logic.sql import GroundingPlan, Scan, plan_rule


class TableStats(Protocol):
    """What an estimate needs: row and distinct counts per predicate column(s), domain sizes."""

    schema: Schema

    def n_rows(self, pred: str) -> int: ...
    def n_distinct(self, pred: str, columns: int | tuple[int, ...]) -> int: ...
    def domain(self, type_name: str) -> Sequence[int] | np.ndarray: ...
    def constant_id(self, name: str) -> int: ...


@dataclass
class Stats:
    """Plain statistics (e.g. of a database too large to load): rows and per-column distinct
    counts; distinct counts of column sets default to ``min(rows, product)``."""

    schema: Schema
    rows: dict[str, int]
    distinct: dict[str, list[int]]
    domain_sizes: dict[str, int] = field(default_factory=dict)
    multi_distinct: dict[tuple[str, tuple[int, ...]], int] = field(default_factory=dict)

    def n_rows(self, pred: str) -> int:
        return int(self.rows.get(pred, 0))

    def n_distinct(self, pred: str, columns: int | tuple[int, ...]) -> int:
        cols = (columns,) if isinstance(columns, int) else tuple(columns)
        if len(cols) == 1:
            return int(self.distinct[pred][cols[0]])
        if (pred, cols) in self.multi_distinct:
            return int(self.multi_distinct[(pred, cols)])
        return int(min(self.n_rows(pred), math.prod(self.distinct[pred][c] for c in cols)))

    def domain(self, type_name: str) -> range:
        return range(int(self.domain_sizes.get(type_name, 0)))

    def constant_id(self, name: str) -> int:
        return 0  # unknown here: assume the constant exists


@dataclass
class _ScanStats:
    """One table of a plan as the estimator sees it: filtered size and its variables' columns."""

    size: float
    variables: tuple[Variable, ...]
    """Distinct variables of the scan, in column order."""
    columns: dict[Variable, int]
    scan: Scan
    stats: TableStats
    filtered: bool = False
    """True if constants or repeated variables filter the table."""

    def v(self, key: frozenset[Variable]) -> float:
        """Distinct values of the key's columns within this (filtered) table."""
        cols = tuple(sorted(self.columns[x] for x in key))
        if self.scan.source == "domain":
            return self.size
        full = self.stats.n_distinct(self.scan.name, cols if len(cols) > 1 else cols[0])
        return max(1.0, min(float(full), self.size))


def _scan_stats(scan: Scan, stats: TableStats) -> _ScanStats:
    """Size of one table after its constant filters and repeated-variable conditions."""
    if scan.source == "domain":
        n = float(len(stats.domain(scan.name)))
        var = scan.columns[0][1]
        return _ScanStats(n, (var,), {var: 0}, scan, stats)  # type: ignore[dict-item]
    size = float(stats.n_rows(scan.name))
    columns: dict[Variable, int] = {}
    filtered = False
    for i, (_, term) in enumerate(scan.columns):
        d = max(1.0, float(stats.n_distinct(scan.name, i))) if size else 1.0
        if isinstance(term, Constant):
            size = 0.0 if stats.constant_id(term.value) < 0 else size / d
            filtered = True
        elif term in columns:
            size /= max(d, float(stats.n_distinct(scan.name, columns[term])), 1.0)
            filtered = True
        else:
            columns[term] = i  # type: ignore[index]
    return _ScanStats(size, tuple(columns), columns, scan, stats, filtered)


def estimate_sizes(scans: Sequence[Scan], stats: TableStats,
                   cache: dict[Scan, _ScanStats] | None = None) -> list[float]:
    """Estimated size of the result after each inner scan, in the given join order."""
    out: list[float] = []
    size = 1.0
    seen: list[_ScanStats] = []
    distinct: dict[Variable, float] = {}
    cache = {} if cache is None else cache
    for scan in scans:
        s = cache.get(scan) or cache.setdefault(scan, _scan_stats(scan, stats))
        key = frozenset(s.variables) & frozenset(distinct)
        if not seen:
            size = s.size
        elif not key:
            size *= s.size
        else:
            freq = [size * _pair_size(t, s, key, stats) / t.size for t in seen
                    if hasattr(stats, "join_size") and key <= set(t.variables) and _exact_pair(t, s) and t.size > 0]
            if freq:
                size = min(freq)
            else:
                v_r = min([size, math.prod(distinct[x] for x in key)]
                          + [t.v(key) for t in seen if key <= set(t.variables)])
                size = size * s.size / max(v_r, s.v(key), 1.0)
        for x in s.variables:
            own = s.v(frozenset([x]))
            distinct[x] = min(distinct.get(x, own), own)
        distinct = {x: min(d, max(size, 1.0)) for x, d in distinct.items()}
        seen.append(s)
        out.append(size)
        if size == 0:
            out += [0.0] * (len(scans) - len(out))
            break
    return out


def _exact_pair(a: _ScanStats, b: _ScanStats) -> bool:
    """Two unfiltered atom tables: their join size can be counted exactly from key frequencies."""
    return a.scan.source == b.scan.source == "atoms" and not a.filtered and not b.filtered


def _pair_size(t: _ScanStats, s: _ScanStats, key: frozenset[Variable], stats: TableStats) -> float:
    """Exact join size of two base tables on the key's columns (frequency products)."""
    k = sorted(key, key=lambda x: s.columns[x])
    return float(stats.join_size(t.scan.name, tuple(t.columns[x] for x in k),  # type: ignore[attr-defined]
                                 s.scan.name, tuple(s.columns[x] for x in k)))


def estimate_groundings(rule: Rule | GroundingPlan, stats: TableStats, domain_variables: bool = False) -> int:
    """Estimated number of ground rules of `rule` (System-R estimate over its inner joins)."""
    plan = rule if isinstance(rule, GroundingPlan) else plan_rule(rule, stats.schema, domain_variables)
    sizes = estimate_sizes(plan.inner_scans, stats)
    return int(math.ceil(sizes[-1] - 1e-9)) if sizes else 1


def order_joins(plan: GroundingPlan, stats: TableStats) -> GroundingPlan:
    """The plan with its inner scans reordered to keep estimated intermediate results small.

    Greedy from every starting table (all permutations when there are at most 4): the order with
    the smallest sum of estimated intermediate sizes wins; cross joins are taken last.
    """
    inner = list(plan.inner_scans)
    if len(inner) < 2:
        return plan
    cache: dict[Scan, _ScanStats] = {}
    candidates: list[list[Scan]] = []
    if len(inner) <= 4:
        candidates = [list(p) for p in permutations(inner) if _connected(p)] or [inner]
    else:
        for start in inner:
            order = [start]
            rest = [s for s in inner if s is not start]
            while rest:
                bound = {t for s in order for t in _vars(s)}
                linked = [s for s in rest if bound & _vars(s)] or rest
                best = min(linked, key=lambda s: estimate_sizes(order + [s], stats, cache)[-1])
                order.append(best)
                rest.remove(best)
            candidates.append(order)
    best = min(candidates, key=lambda order: sum(estimate_sizes(order, stats, cache)))
    left = [s for s in plan.scans if s.join == "left"]
    return replace(plan, scans=tuple(best + left))


def _vars(scan: Scan) -> set[Variable]:
    return {t for _, t in scan.columns if isinstance(t, Variable)}


def _connected(order: Sequence[Scan]) -> bool:
    """True if every scan after the first shares a variable with an earlier one (when any can)."""
    bound = set(_vars(order[0]))
    for i, s in enumerate(order[1:], start=1):
        if not (bound & _vars(s)) and any(bound & _vars(t) for t in order[i:]):
            return False
        bound |= _vars(s)
    return True
