"""Grounding: AtomStore, SQL generation, DuckDB grounding vs a naive nested-loop grounder,
the Lukasiewicz linear form, size estimates and the size guard."""

from __future__ import annotations

import inspect
import itertools
import sqlite3

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xcore.logic.grounding as grounding_mod
import xcore.logic.grounding_db as grounding_db
import xcore.logic.sql as sql_mod
from xcore.data import Predicate, RelationalDataset
from xcore.errors import GroundingTooLarge, SchemaError
from xcore.logic import parse_rule
from xcore.logic.ast import Atom, Constant, Literal, Rule, Variable
from xcore.logic.atoms import AtomStore
from xcore.logic.estimate import Stats, estimate_groundings, order_joins
from xcore.logic.grounding import GroundRules, ground, n_ground_rules
from xcore.logic.linear_form import linear_form
from xcore.logic.sql import TableNames, plan_rule, rule_sql


# ---------------------------------------------------------------------- reference grounder
class NaiveWorld:
    """The atoms and constants of a dataset as Python sets, for the reference grounder."""

    def __init__(self, ds: RelationalDataset) -> None:
        self.ds = ds
        self.exists = set()
        for p in ds.schema:
            for part in ("obs", "targets"):
                t = ds.tables[p.name][part]
                for row in t[p.columns].itertuples(index=False):
                    self.exists.add((p.name, tuple(str(a) for a in row)))
        self.constants = set(ds.constants().tolist())
        self.domains = {t: set(ds.constants(t).tolist()) for t in ds.types()}


def naive_ground(rule: Rule, ds: RelationalDataset | NaiveWorld, domain_variables: bool = False) -> list[tuple]:
    """Nested loops over every assignment of constants to the rule's variables, applying the
    grounding semantics literally. Returns (atom keys or None per clause literal, bindings)."""
    world = ds if isinstance(ds, NaiveWorld) else NaiveWorld(ds)
    exists = world.exists
    universe = sorted(world.constants | {t.value for l in rule.literals
                                         for t in l.atom.args if isinstance(t, Constant)})
    lits = rule.clause_literals()
    signs = [-1 if l.negated else 1 for l in lits]
    binding_vars = {v for l, s in zip(lits, signs) if s < 0 for v in l.atom.variables}
    types = {}
    for l in lits:
        for t, typ in zip(l.atom.args, world.ds.schema[l.atom.predicate].types):
            if isinstance(t, Variable):
                types.setdefault(t, typ)
    must_exist = [s < 0 or (not domain_variables and not set(l.atom.variables) <= binding_vars)
                  for l, s in zip(lits, signs)]
    free = [v for v in rule.variables if domain_variables and v not in binding_vars]
    out = []
    variables = rule.variables
    for values in itertools.product(universe, repeat=len(variables)):
        env = dict(zip(variables, values))
        keys = [(l.atom.predicate, tuple(env[t] if isinstance(t, Variable) else t.value for t in l.atom.args))
                for l in lits]
        if any(m and k not in exists for m, k in zip(must_exist, keys)):
            continue
        if any(env[v] not in world.domains[types[v]] for v in free):
            continue
        out.append((tuple(k if k in exists else None for k in keys), tuple(values)))
    return out


def as_keys(g: GroundRules, store: AtomStore) -> list[tuple]:
    """DuckDB ground rules in the reference's form (atom keys, binding strings)."""
    names = list(store.predicates)
    out = []
    for ids, binds in zip(g.atom_ids.tolist(), g.bindings.tolist()):
        keys = []
        for a in ids:
            if a < 0:
                keys.append(None)
            else:
                p = names[store.pred[a]]
                arity = store.schema[p].arity
                keys.append((p, tuple(store.constants[store.args[a, :arity]].tolist())))
        out.append((tuple(keys), tuple(store.constants[binds].tolist())))
    return out


def lukasiewicz_distance(g: GroundRules, store: AtomStore, y: np.ndarray) -> np.ndarray:
    """Direct evaluation of max(0, 1 - sum truth(lit)) per ground rule (loops, for reference)."""
    d = np.empty(g.n)
    for i in range(g.n):
        total = 0.0
        for a, s in zip(g.atom_ids[i], g.signs):
            if a < 0:
                v = 0.0
            elif store.is_target[a]:
                v = y[store.target_index[a]]
            else:
                v = store.value[a]
            total += v if s > 0 else 1.0 - v
        d[i] = max(0.0, 1.0 - total)
    return d


# ---------------------------------------------------------------------- fixtures
def friends_smokers() -> RelationalDataset:
    schema = [Predicate("friends", 2, ("person", "person")),
              Predicate("smokes", 1, ("person",), closed=False),
              Predicate("cancer", 1, ("person",), closed=False)]
    return RelationalDataset(schema, {
        "friends": {"obs": pd.DataFrame({"a0": ["anna", "bob", "carl", "anna"],
                                         "a1": ["bob", "anna", "dora", "carl"],
                                         "value": [1.0, 1.0, 0.5, 0.0]})},
        "smokes": {"obs": pd.DataFrame({"a0": ["anna"], "value": [1.0]}),
                   "targets": pd.DataFrame({"a0": ["bob", "carl"]}),
                   "truth": pd.DataFrame({"a0": ["carl", "zed"], "value": [1.0, 0.0]})},
        "cancer": {"obs": pd.DataFrame({"a0": ["dora"], "value": [0.0]}),
                   "targets": pd.DataFrame({"a0": ["anna", "bob"]})},
    })


# ---------------------------------------------------------------------- AtomStore
def test_atom_store_ids_values_and_truth():
    ds = friends_smokers()
    s = AtomStore.from_dataset(ds)
    assert s.constants.tolist() == ["anna", "bob", "carl", "dora", "zed"]
    assert s.atom_text(np.arange(s.n_atoms)).tolist() == [
        "friends(anna, bob)", "friends(bob, anna)", "friends(carl, dora)", "friends(anna, carl)",
        "smokes(anna)", "smokes(bob)", "smokes(carl)", "cancer(dora)", "cancer(anna)", "cancer(bob)"]
    assert s.target_ids.tolist() == [5, 6, 8, 9]
    assert s.target_index.tolist() == [-1, -1, -1, -1, -1, 0, 1, -1, 2, 3]
    assert s.value[:5].tolist() == [1.0, 1.0, 0.5, 0.0, 1.0] and np.isnan(s.value[s.target_ids]).all()
    assert s.is_target.sum() == 4
    # truth attaches to targets only (zed is not a target; bob has no label)
    np.testing.assert_array_equal(s.truth, [np.nan, 1.0, np.nan, np.nan])
    assert s.pred.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert s.args[2].tolist() == [2, 3] and s.args[4].tolist() == [0, -1]
    assert s.constant_id("carl") == 2 and s.constant_id("nobody") == -1
    assert s.constant_ids(["dora", "x", "anna"]).tolist() == [3, -1, 0]
    assert s.domain("person").tolist() == [0, 1, 2, 3, 4]
    f = s.frame()
    assert f.loc[7, "predicate"] == "cancer" and f.loc[7, "a0"] == "dora" and f.loc[7, "a1"] == ""
    tf = s.targets_frame()
    assert tf["atom_id"].tolist() == [5, 6, 8, 9] and tf["truth"].iloc[1] == 1.0


def test_atom_store_is_deterministic_and_lookup_is_vectorised():
    ds = friends_smokers()
    a, b = AtomStore.from_dataset(ds), AtomStore.from_dataset(ds)
    np.testing.assert_array_equal(a.args, b.args)
    ids = a.lookup("friends", pd.DataFrame({"a0": ["carl", "bob", "x"], "a1": ["dora", "bob", "y"]}))
    assert ids.tolist() == [2, -1, -1]
    assert a.lookup("smokes", np.array([[1], [3]])).tolist() == [5, -1]
    assert a.atom_text([-1, 6]).tolist() == ["<missing>", "smokes(carl)"]


def test_distinct_counts_and_exact_join_sizes():
    ds = friends_smokers()
    s = AtomStore.from_dataset(ds)
    assert s.n_distinct("friends", 0) == 3 and s.n_distinct("friends", 1) == 4
    assert s.n_distinct("friends", (0, 1)) == 4
    # friends.a1 join smokes.a0: bob, anna, carl, dora -> smokes has anna, bob, carl
    assert s.join_size("friends", (1,), "smokes", (0,)) == 3
    assert s.join_size("friends", (0,), "friends", (0,)) == 2 * 2 + 1 + 1


# ---------------------------------------------------------------------- hand-written rules
def test_friends_smokers_ground_rules_by_hand():
    ds = friends_smokers()
    prog = ground([parse_rule("1.0: friends(X, Y) & smokes(X) -> smokes(Y) ^2"),
                   parse_rule("0.5: smokes(X) -> cancer(X)"),
                   parse_rule("0.1: ~smokes(X) ^2")], ds)
    s = prog.store
    g0, g1, g2 = prog.rules
    assert sorted(g0.texts(s).tolist()) == sorted([
        "friends(anna, bob) & smokes(anna) -> smokes(bob)",
        "friends(bob, anna) & smokes(bob) -> smokes(anna)",
        "friends(carl, dora) & smokes(carl) -> smokes(dora)",
        "friends(anna, carl) & smokes(anna) -> smokes(carl)"])
    assert g0.signs.tolist() == [-1, -1, 1]
    row = {t: i for i, t in enumerate(g0.texts(s))}["friends(carl, dora) & smokes(carl) -> smokes(dora)"]
    assert g0.atom_ids[row].tolist() == [2, 6, -1]  # smokes(dora) is not an atom: constant 0
    assert sorted(g1.texts(s).tolist()) == ["smokes(anna) -> cancer(anna)", "smokes(bob) -> cancer(bob)",
                                            "smokes(carl) -> cancer(carl)"]
    assert g2.n == 3 and n_ground_rules(prog) == prog.n_ground_rules == 10
    A, b = linear_form(g0, s)
    y = np.array([0.3, 0.8, 0.2, 0.9])  # smokes(bob), smokes(carl), cancer(anna), cancer(bob)
    np.testing.assert_allclose(np.maximum(0, b + A @ y), lukasiewicz_distance(g0, s, y))
    # friends(anna, carl) = 0 and smokes(anna) = 1: d = max(0, 1 - 1 - 0 - y_carl) = 0
    r = row_of(g0, s, "friends(anna, carl) & smokes(anna) -> smokes(carl)")
    assert b[r] == pytest.approx(0.0) and A[r].toarray().ravel().tolist() == [0, -1, 0, 0]


def row_of(g: GroundRules, s: AtomStore, text: str) -> int:
    return int(np.flatnonzero(g.texts(s) == text)[0])


def test_constants_repeated_variables_and_disjunctive_head():
    ds = friends_smokers()
    s = AtomStore.from_dataset(ds)
    g = ground([parse_rule("1.0: friends('anna', Y) & ~smokes(Y) -> cancer(Y) | smokes('anna')"),
                parse_rule("1.0: friends(X, X) -> cancer(X)")], s)
    assert sorted(g[0].texts(s).tolist()) == [
        "friends(anna, bob) & ~smokes(bob) -> cancer(bob) | smokes(anna)",
        "friends(anna, carl) & ~smokes(carl) -> cancer(carl) | smokes(anna)"]
    assert g[0].signs.tolist() == [-1, 1, 1, 1]
    assert g[1].n == 0 and g[1].atom_ids.shape == (0, 2) and g[1].bindings.shape == (0, 1)


def test_unbound_head_variables_psl_vs_domain_semantics():
    ds = friends_smokers()
    rule = parse_rule("1.0: smokes(X) -> cancer(Y)")
    psl = ground([rule], ds)[0]  # Y only in a clause-positive literal: grounds over cancer atoms
    assert psl.n == 3 * 3
    dom = ground([rule], ds, domain_variables=True)[0]  # Y ranges over the 5 persons
    assert dom.n == 3 * 5
    assert (dom.atom_ids[:, 1] == -1).sum() == 3 * 2  # carl, zed have no cancer atom


def test_zero_arity_and_variable_free_rules():
    schema = [Predicate("rain", 0, closed=False), Predicate("wet", 0), Predicate("p", 1)]
    ds = RelationalDataset(schema, {"rain": {"targets": pd.DataFrame(index=range(1))},
                                    "p": {"obs": pd.DataFrame({"a0": ["a", "b"]})}})
    rain, wet = Atom("rain"), Atom("wet")
    rules = [Rule((Literal(rain),), (Literal(wet),)),  # wet() missing -> left join gives -1
             Rule((), (Literal(wet),)),  # prior on a missing ground atom: one grounding, id -1
             Rule((Literal(Atom("p", (Variable("X"),))),), (Literal(rain),))]
    prog = ground(rules, ds)
    assert prog[0].atom_ids.tolist() == [[0, -1]]
    assert prog[1].atom_ids.tolist() == [[-1]]
    assert prog[2].n == 2 and (prog[2].atom_ids[:, 1] == 0).all()
    for g in prog:
        assert sorted(as_keys(g, prog.store)) == sorted(naive_ground(g.rule, ds))


def test_rules_as_text_and_schema_errors():
    ds = friends_smokers()
    prog = ground("1.0: smokes(X) -> cancer(X)\n0.1: ~cancer(X)", ds)
    assert [g.n for g in prog] == [3, 3]
    with pytest.raises(SchemaError, match="unknown predicate"):
        ground([parse_rule("1.0: smoke(X) -> cancer(X)")], ds)
    with pytest.raises(SchemaError, match="takes 1 argument"):
        ground([parse_rule("1.0: smokes(X, Y) -> cancer(X)")], ds)


def test_progress_reports_every_rule():
    calls = []
    ground("1.0: smokes(X) -> cancer(X)\n0.1: ~cancer(X)", friends_smokers(),
           progress=lambda f, msg: calls.append(f))
    assert calls == [0.0, 0.5, 1.0]


# ---------------------------------------------------------------------- SQL text
def test_sql_is_engine_independent_text():
    src = inspect.getsource(sql_mod)
    assert "import duckdb" not in src and "duckdb." not in src
    ds = friends_smokers()
    s = AtomStore.from_dataset(ds)
    text = rule_sql(parse_rule("1.0: friends(X, Y) & smokes(X) -> smokes(Y)"), ds.schema, s.constant_id,
                    TableNames(atoms="kb_{}"))
    assert text.startswith("SELECT ") and '"kb_friends" AS t0' in text
    assert "LEFT JOIN \"kb_smokes\"" in text and "COALESCE(" in text


def _sqlite_ground(store: AtomStore, rule: Rule, domain_variables: bool) -> set[tuple]:
    """Run the generated SQL in SQLite: the same text must give the same ground rules."""
    con = sqlite3.connect(":memory:")
    plan = plan_rule(rule, store.schema, domain_variables)
    for name, p in store.predicates.items():
        cols = ["atom_id"] + [f"a{i}" for i in range(p.predicate.arity)]
        con.execute(f'CREATE TABLE "atoms_{name}" ({", ".join(cols)})')
        rows = np.column_stack([p.ids, p.args]).tolist() if p.n else []
        con.executemany(f'INSERT INTO "atoms_{name}" VALUES ({", ".join("?" * len(cols))})', rows)
    for t, dom in store.domains.items():
        con.execute(f'CREATE TABLE "domain_{t}" (const_id)')
        con.executemany(f'INSERT INTO "domain_{t}" VALUES (?)', [(int(c),) for c in dom])
    rows = con.execute(rule_sql(plan, store.schema, store.constant_id)).fetchall()
    return {tuple(r) for r in rows}


# ---------------------------------------------------------------------- random datasets and rules
TYPES = {"t": ["a", "b", "c"], "u": ["x", "y"]}
VARS = {"t": ["A", "B", "C"], "u": ["U"]}


@st.composite
def datasets(draw):
    preds = []
    tables = {}
    for k in range(draw(st.integers(2, 4))):
        arity = draw(st.integers(1, 3))
        types = tuple(draw(st.sampled_from(sorted(TYPES))) for _ in range(arity))
        name = f"p{k}"
        preds.append(Predicate(name, arity, types, closed=False))
        ground_atoms = list(itertools.product(*[TYPES[t] for t in types]))
        chosen = [a for a in ground_atoms if draw(st.integers(0, 2)) > 0]
        obs, tgt, truth = [], [], []
        for a in chosen:
            kind = draw(st.integers(0, 2))
            if kind == 0:
                tgt.append(a)
                if draw(st.booleans()):
                    truth.append((*a, draw(st.sampled_from([0.0, 0.5, 1.0]))))
            else:
                obs.append((*a, draw(st.sampled_from([0.0, 0.25, 1.0]))))
        cols = [f"a{i}" for i in range(arity)]
        tables[name] = {
            "obs": pd.DataFrame(obs, columns=cols + ["value"]) if obs else None,
            "targets": pd.DataFrame(tgt, columns=cols) if tgt else None,
            "truth": pd.DataFrame(truth, columns=cols + ["value"]) if truth else None,
        }
        tables[name] = {k2: v for k2, v in tables[name].items() if v is not None}
    return RelationalDataset(preds, tables)


@st.composite
def rules_for(draw, ds: RelationalDataset):
    preds = list(ds.schema)

    def literal():
        p = draw(st.sampled_from(preds))
        args = []
        for t in p.types:
            if draw(st.integers(0, 5)) == 0:
                args.append(Constant(draw(st.sampled_from(TYPES[t] + ["zz"]))))
            else:
                args.append(Variable(draw(st.sampled_from(VARS[t]))))
        return Literal(Atom(p.name, tuple(args)), negated=draw(st.integers(0, 3)) == 0)

    body = tuple(literal() for _ in range(draw(st.integers(0, 3))))
    head = tuple(literal() for _ in range(draw(st.integers(1, 2))))
    return Rule(body, head, weight=1.0)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_duckdb_grounding_equals_naive_grounder(data):
    ds = data.draw(datasets())
    rules = [data.draw(rules_for(ds)) for _ in range(3)]
    store = AtomStore.from_dataset(ds)
    world = NaiveWorld(ds)
    for domain_variables in (False, True):
        prog = ground(rules, store, domain_variables=domain_variables)
        for g in prog:
            got = as_keys(g, store)
            want = naive_ground(g.rule, world, domain_variables)
            assert len(got) == len(set(got)), "a ground rule appears twice"
            assert sorted(got, key=repr) == sorted(want, key=repr), g.rule.text()
            assert g.atom_ids.shape == (len(want), len(g.rule.clause_literals()))
            # the same SQL text runs unchanged on another engine
            sqlite_rows = _sqlite_ground(store, g.rule, domain_variables)
            assert sqlite_rows == {tuple(a) + tuple(b) for a, b in zip(g.atom_ids.tolist(), g.bindings.tolist())}
            # linear form = direct Lukasiewicz distance on random target values
            y = np.random.default_rng(len(got)).random(store.n_targets)
            A, b = linear_form(g, store)
            assert A.shape == (g.n, store.n_targets)
            np.testing.assert_allclose(np.maximum(0.0, b + A @ y), lukasiewicz_distance(g, store, y), atol=1e-12)


def test_grounding_is_deterministic_across_runs_and_join_orders():
    ds = friends_smokers()
    rule = parse_rule("1.0: friends(X, Y) & friends(Y, Z) & smokes(X) -> smokes(Z)")
    a = ground([rule], ds)[0]
    b = ground([rule], ds, engine_join_order=True, threads=1)[0]
    np.testing.assert_array_equal(a.atom_ids, b.atom_ids)
    np.testing.assert_array_equal(a.bindings, b.bindings)


def test_linear_form_sums_duplicate_atoms_and_cancels_opposites():
    ds = friends_smokers()
    s = AtomStore.from_dataset(ds)
    same = ground([parse_rule("1.0: smokes(X) -> smokes(X) | cancer(X)")], s)[0]
    A, b = linear_form(same, s)
    # y - y cancels: only cancer(X) remains, with coefficient -1; b = 1 - 1 = 0
    assert A.nnz == 2 and set(A.data.tolist()) == {-1.0}
    twice = ground([parse_rule("1.0: cancer(X) -> smokes(X) | smokes(X)")], s)[0]
    A2, _ = linear_form(twice, s)
    assert sorted(A2.data.tolist()) == [-2.0, 1.0, 1.0]  # cancer(bob) -> 2 x smokes(bob)


# ---------------------------------------------------------------------- estimates and the guard
def _uniform_dataset(sizes: dict[str, int], n_const: int, seed: int) -> RelationalDataset:
    rng = np.random.default_rng(seed)
    preds, tables = [], {}
    for name, n in sizes.items():
        keys = rng.choice(n_const * n_const, size=n, replace=False)
        preds.append(Predicate(name, 2, ("e", "e")))
        tables[name] = {"obs": pd.DataFrame({"a0": (keys // n_const).astype(str),
                                             "a1": (keys % n_const).astype(str)})}
    return RelationalDataset(preds, tables)


def test_estimate_is_exact_for_single_table_rules():
    ds = _uniform_dataset({"r": 500, "s": 300}, 40, seed=1)
    s = AtomStore.from_dataset(ds)
    rule = parse_rule("1.0: r(X, Y) -> s(Y, X)")
    assert estimate_groundings(rule, s) == 500 == ground([rule], s)[0].n
    stats = Stats(ds.schema, rows={"r": 500, "s": 300}, distinct={"r": [40, 40], "s": [40, 40]})
    assert estimate_groundings(rule, stats) == 500


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_estimate_within_a_small_factor_on_random_joins(seed):
    ds = _uniform_dataset({"r": 1500, "s": 1200, "t": 900}, 60, seed=seed)
    s = AtomStore.from_dataset(ds)
    stats = Stats(ds.schema, rows={p: s.n_rows(p) for p in "rst"},
                  distinct={p: [s.n_distinct(p, 0), s.n_distinct(p, 1)] for p in "rst"})
    for text in ["1.0: r(X, Y) & s(Y, Z) -> t(X, Z)",
                 "1.0: r(X, Y) & s(Y, Z) & t(Z, W) -> r(X, W)",
                 "1.0: r(X, Y) & s(X, Y) -> t(X, Y)",
                 "1.0: r(X, Y) & s(Y, Z) & t(X, Z) -> r(Z, X)"]:
        rule = parse_rule(text)
        actual = ground([rule], s, limit=None)[0].n
        for source in (s, stats):  # skew-aware store statistics and plain System-R statistics
            est = estimate_groundings(rule, source)
            assert actual / 3 - 2 <= est <= 3 * actual + 2, (text, est, actual)


def test_estimate_uses_multi_column_keys_for_correlated_tables():
    # rated and rating hold the same pairs: independence would divide by V(U) * V(I)
    ds = _uniform_dataset({"rated": 2000, "sim": 1500}, 80, seed=3)
    ds.tables["rating"] = {"obs": ds.tables["rated"]["obs"].copy()}
    ds = RelationalDataset([*ds.schema, Predicate("rating", 2, ("e", "e"))], ds.tables)
    s = AtomStore.from_dataset(ds)
    rule = parse_rule("1.0: rated(U, I) & rating(U, I) & sim(I, J) -> rating(U, J)")
    actual = ground([rule], s)[0].n
    est = estimate_groundings(rule, s)
    assert actual / 2 <= est <= 2 * actual


def test_guard_fires_before_running_a_cross_product(monkeypatch):
    ds = _uniform_dataset({"r": 400, "s": 300}, 30, seed=4)
    rule = parse_rule("1.0: r(X, Y) & s(Z, W) -> r(X, W)")

    def no_engine(*args, **kwargs):
        raise AssertionError("the guard must fire before any query runs")

    monkeypatch.setattr(grounding_mod, "database", no_engine)
    with pytest.raises(GroundingTooLarge) as err:
        ground([parse_rule("1.0: r(X, Y) -> s(X, Y)"), rule], ds, limit=100_000)
    assert err.value.estimate == 400 * 300 and err.value.limit == 100_000
    assert err.value.rule_text == rule.text() and "r(X, Y) & s(Z, W)" in str(err.value)


def test_hard_cap_when_the_estimate_is_too_low(monkeypatch):
    ds = _uniform_dataset({"r": 400, "s": 300}, 30, seed=5)
    monkeypatch.setattr(grounding_mod, "estimate_groundings", lambda plan, store: 1)
    rule = parse_rule("1.0: r(X, Y) & s(Z, W) -> r(X, W)")
    with pytest.raises(GroundingTooLarge) as err:
        ground([rule], ds, limit=20_000)
    assert err.value.estimate == 400 * 300  # the exact count, not the estimate
    with pytest.raises(GroundingTooLarge) as err:
        ground([rule], ds, limit=1_000)
    assert err.value.estimate == 10_001  # counting stops at 10x the limit


def test_join_order_prefers_small_intermediates():
    ds = _uniform_dataset({"big": 3000, "small": 20}, 60, seed=6)
    s = AtomStore.from_dataset(ds)
    plan = order_joins(plan_rule(parse_rule("1.0: big(X, Y) & small(Y, Z) -> big(X, Z)"), s.schema), s)
    assert [sc.name for sc in plan.inner_scans] == ["small", "big"]


def test_parallel_chunked_scans_give_the_same_ground_rules(monkeypatch):
    ds = _uniform_dataset({"r": 3000, "s": 2000}, 70, seed=7)
    rule = parse_rule("1.0: r(X, Y) & s(Y, Z) & ~r(Z, X) -> s(X, Z)")
    whole = ground([rule], ds, limit=None)[0]
    monkeypatch.setattr(grounding_db, "SCAN_CHUNK_ROWS", 97)  # many record batches: parallel scans
    for _ in range(3):
        parts = ground([rule], ds, limit=None)[0]
        np.testing.assert_array_equal(parts.atom_ids, whole.atom_ids)
        np.testing.assert_array_equal(parts.bindings, whole.bindings)
    assert whole.n > 10_000
