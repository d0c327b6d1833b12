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


MAX_ESTIMATE = 2**63 - 1
"""Largest estimate `estimate_groundings` returns (saturated: it never overflows)."""
SATURATED = 1e300
"""Estimates are saturated here (a product of many large tables overflows a float to inf, and
inf * 0 is NaN); anything this large is far above any grounding limit."""


@dataclass
class _JoinState:
    """The estimator's running state after a prefix of a join order (so a step costs O(its key))."""

    size: float = 1.0
    seen: list[_ScanStats] = field(default_factory=list)
    distinct: dict[Variable, float] = field(default_factory=dict)
    holders: dict[Variable, list[_ScanStats]] = field(default_factory=dict)
    """Per variable, the tables so far that hold it."""
    ratios: dict[tuple[int, int, frozenset], float | None] = field(default_factory=dict)
    """(table t, next table s, key) -> exact join size of t and s per row of t, None when there is no
    exact pair; it does not depend on the state, so the greedy starts of one plan share it."""
    folded: dict[tuple[int, frozenset], tuple[int, float | None]] = field(default_factory=dict)
    """(next table, one-variable key) -> (holders folded in so far, their smallest ratio): holders only
    grow, so each step folds in the new ones (a star of k atoms on one variable cost O(k) a step)."""

    def _ratio(self, t: _ScanStats, s: _ScanStats, key: frozenset[Variable], stats: TableStats) -> float | None:
        k = (id(t), id(s), key)
        if k not in self.ratios:
            exact = hasattr(stats, "join_size") and _exact_pair(t, s) and t.size > 0
            self.ratios[k] = _pair_size(t, s, key, stats) / t.size if exact else None
        return self.ratios[k]

    def _smallest_ratio(self, s: _ScanStats, key: frozenset[Variable], holding: list[_ScanStats],
                        stats: TableStats) -> float | None:
        """The smallest exact pair ratio of `s` with the tables holding the key (None: none is exact)."""
        if len(key) > 1:
            found = [r for t in holding if (r := self._ratio(t, s, key, stats)) is not None]
            return min(found) if found else None
        done, best = self.folded.get((id(s), key), (0, None))
        for t in holding[done:]:
            r = self._ratio(t, s, key, stats)
            if r is not None and (best is None or r < best):
                best = r
        self.folded[(id(s), key)] = (len(holding), best)
        return best

    def next_size(self, s: _ScanStats, stats: TableStats) -> float:
        """Estimated size after joining `s` next (does not change the state)."""
        key = frozenset(frozenset(s.variables) & self.distinct.keys())
        if not self.seen:
            size = s.size
        elif not key:
            size = self.size * s.size
        else:
            first, *others = (self.holders[x] for x in key)
            holding = [t for t in first if all(t in h for h in others)] if others else first
            best = self._smallest_ratio(s, key, holding, stats)
            if best is not None:
                size = self.size * best  # = the smallest of size * ratio: multiplying keeps the order
            else:
                v_r = min([self.size, math.prod(self.distinct[x] for x in key)] + [t.v(key) for t in holding])
                size = self.size * s.size / max(v_r, s.v(key), 1.0)
        return min(size, SATURATED)

    def advance(self, s: _ScanStats, size: float) -> None:
        """Take `s` as the next table, the result then having `size` rows."""
        for x in s.variables:
            own = s.v(frozenset([x]))
            self.distinct[x] = min(self.distinct.get(x, own), own)
            self.holders.setdefault(x, []).append(s)
        cap = max(size, 1.0)
        if any(d > cap for d in self.distinct.values()):
            self.distinct = {x: min(d, cap) for x, d in self.distinct.items()}
        self.seen.append(s)
        self.size = size


def estimate_sizes(scans: Sequence[Scan], stats: TableStats,
                   cache: dict[Scan, _ScanStats] | None = None) -> list[float]:
    """Estimated size of the result after each inner scan, in the given join order (saturated at
    `SATURATED`)."""
    out: list[float] = []
    state = _JoinState()
    cache = {} if cache is None else cache
    for scan in scans:
        s = _cached_stats(scan, stats, cache)
        size = state.next_size(s, stats)
        state.advance(s, size)
        out.append(size)
        if size == 0:
            out += [0.0] * (len(scans) - len(out))
            break
    return out


def _cached_stats(scan: Scan, stats: TableStats, cache: dict[Scan, _ScanStats]) -> _ScanStats:
    s = cache.get(scan)
    if s is None:
        s = cache[scan] = _scan_stats(scan, stats)
    return s


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
    if not sizes:
        return 1
    if not sizes[-1] < MAX_ESTIMATE:  # also NaN
        return MAX_ESTIMATE
    return int(math.ceil(sizes[-1] - 1e-9))


MAX_STARTS = 8
"""Greedy join ordering tries this many starting tables (the smallest after their filters)."""


def order_joins(plan: GroundingPlan, stats: TableStats) -> GroundingPlan:
    """The plan with its inner scans reordered to keep estimated intermediate results small.

    At most 4 inner scans: every connected permutation. More: greedy from each of the
    `MAX_STARTS` smallest tables, each step taking the linked table (sharing a variable; cross
    joins last) with the smallest next size. The order with the smallest sum of estimated
    intermediate sizes wins. Polynomial: O(starts * n^2) incremental estimate steps.
    """
    inner = list(plan.inner_scans)
    if len(inner) < 2:
        return plan
    cache: dict[Scan, _ScanStats] = {}
    if len(inner) <= 4:
        candidates = [list(p) for p in permutations(inner) if _connected(p)] or [inner]
        best = min(candidates, key=lambda order: sum(estimate_sizes(order, stats, cache)))
    else:
        by_size = sorted(range(len(inner)), key=lambda i: (_cached_stats(inner[i], stats, cache).size, i))
        starts = sorted(set(by_size[:MAX_STARTS]) | {0})
        best, best_cost = inner, math.inf
        ratios: dict = {}
        for i in starts:
            order, cost = _greedy(inner, i, stats, cache, ratios)
            if cost < best_cost:
                best, best_cost = order, cost
    left = [s for s in plan.scans if s.join == "left"]
    return replace(plan, scans=tuple(best + left))


def _greedy(inner: list[Scan], start: int, stats: TableStats, cache: dict[Scan, _ScanStats],
            ratios: dict | None = None) -> tuple[list[Scan], float]:
    """Greedy join order from `inner[start]` and its summed intermediate sizes."""
    state = _JoinState() if ratios is None else _JoinState(ratios=ratios)
    rest = list(inner)
    first = rest.pop(start)
    s = _cached_stats(first, stats, cache)
    size = state.next_size(s, stats)
    state.advance(s, size)
    order, cost = [first], size
    bound = set(_vars(first))
    while rest:
        linked = [k for k, t in enumerate(rest) if bound & _vars(t)] or range(len(rest))
        sizes = {k: state.next_size(_cached_stats(rest[k], stats, cache), stats) for k in linked}
        k = min(sizes, key=lambda k: (sizes[k], k))
        nxt = rest.pop(k)
        state.advance(_cached_stats(nxt, stats, cache), sizes[k])
        bound |= _vars(nxt)
        order.append(nxt)
        cost = min(cost + sizes[k], SATURATED)
    return order, cost


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
