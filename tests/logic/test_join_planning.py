"""Issue 18, causes 2 and 3: the grounding estimate never overflows and join planning is polynomial."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.errors import GroundingTooLarge, SchemaError
from xcore.logic.estimate import Stats, estimate_groundings, order_joins
from xcore.logic.grounding import ground
from xcore.logic.parser import parse_rule
from xcore.logic.sql import MAX_RULE_LITERALS, plan_rule


def cycle(n: int) -> RelationalDataset:
    """``e`` is a directed cycle of `n` constants; ``p`` holds every constant."""
    nodes = [f"c{i}" for i in range(n)]
    e = pd.DataFrame({"a0": nodes, "a1": nodes[1:] + nodes[:1]})
    return RelationalDataset(Schema.of([Predicate("e", 2), Predicate("q", 2, closed=False)]),
                             {"e": {"obs": e}})


def chain(k: int) -> str:
    """``e(X0, X1) & ... & e(X{k-1}, Xk) -> q(X0, Xk)``."""
    body = " & ".join(f"e(X{i}, X{i + 1})" for i in range(k))
    return f"1.0: {body} -> q(X0, X{k})"


def test_long_chain_rules_plan_in_polynomial_time() -> None:
    """A 100-atom chain over a 20-cycle grounds to its 20 rules in seconds (cause 3; was 23 s)."""
    t0 = time.perf_counter()
    g = ground(parse_rule(chain(100)), cycle(20))
    assert g.n_ground_rules == 20
    assert time.perf_counter() - t0 < 15.0  # mostly DuckDB planning its 100-way join


def test_a_150_atom_chain_is_refused_at_once() -> None:
    """150 atoms (which never finished) are refused with a clear message, in no time (cause 3)."""
    t0 = time.perf_counter()
    with pytest.raises(SchemaError, match="literals, above the limit"):
        ground(parse_rule(chain(150)), cycle(20))
    assert time.perf_counter() - t0 < 2.0


def test_planning_time_grows_polynomially() -> None:
    """xcore's own planning of a chain at the length limit takes well under a second (no blow-up)."""
    store = __import__("xcore.logic.atoms", fromlist=["AtomStore"]).AtomStore.from_dataset(cycle(20))
    times = []
    for k in (40, MAX_RULE_LITERALS - 1):
        plan = plan_rule(parse_rule(chain(k)), store.schema)
        t0 = time.perf_counter()
        order_joins(plan, store)
        times.append(time.perf_counter() - t0)
    assert times[1] < 2.0


def test_rules_beyond_the_length_limit_are_refused_clearly() -> None:
    """Longer rules than `MAX_RULE_LITERALS` raise a SchemaError naming the limit (cause 3)."""
    with pytest.raises(SchemaError, match=str(MAX_RULE_LITERALS)):
        plan_rule(parse_rule(chain(MAX_RULE_LITERALS)), cycle(3).schema)


@settings(derandomize=True, max_examples=25, deadline=None)
@given(atoms=st.integers(40, 120), rows=st.sampled_from([10**3, 10**6, 10**9, 10**12]))
def test_estimate_saturates_instead_of_overflowing(atoms: int, rows: int) -> None:
    """Cross products of many large tables give a huge finite estimate, not OverflowError (cause 2)."""
    schema = Schema.of([Predicate("p", 1), Predicate("q", 1, closed=False)])
    stats = Stats(schema, rows={"p": rows, "q": 0}, distinct={"p": [rows], "q": [0]})
    body = " & ".join(f"p(X{i})" for i in range(atoms))
    est = estimate_groundings(parse_rule(f"1.0: {body} -> q(X0)"), stats)
    assert isinstance(est, int) and est >= 2**62


def test_guard_raises_grounding_too_large_for_an_infinite_estimate() -> None:
    """`ground` raises GroundingTooLarge (not OverflowError) and says it is an estimate (cause 2)."""
    nodes = [f"c{i}" for i in range(2000)]
    ds = RelationalDataset(Schema.of([Predicate("p", 1), Predicate("q", 1, closed=False)]),
                           {"p": {"obs": pd.DataFrame({"a0": nodes})}})
    body = " & ".join(f"p(X{i})" for i in range(110))
    t0 = time.perf_counter()
    with pytest.raises(GroundingTooLarge) as info:
        ground(parse_rule(f"1.0: {body} -> q(X0)"), ds)
    assert time.perf_counter() - t0 < 10.0
    msg = str(info.value)
    assert "estimate" in msg and "limit=" in msg


def test_guard_message_says_estimate_and_how_to_raise_the_limit() -> None:
    """An over-estimate on tiny data still stops, but the message says it is an estimate."""
    ds = cycle(12)
    with pytest.raises(GroundingTooLarge) as info:
        ground(parse_rule("1.0: e(A, B) & e(C, D) -> q(A, D)"), ds, limit=50)
    msg = str(info.value)
    assert "estimate" in msg and "limit=" in msg and info.value.limit == 50


def test_join_order_of_short_rules_unchanged() -> None:
    """Rules of up to 4 inner atoms still get the exhaustive order (same groundings)."""
    ds = cycle(6)
    g = ground(parse_rule("1.0: e(A, B) & e(B, C) & e(C, D) -> q(A, D)"), ds)
    assert g.n_ground_rules == 6
    assert np.all(g.rules[0].bindings >= 0)
