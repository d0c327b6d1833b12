"""PSL rule syntax beyond the basics: >>, spaced weights, comparisons, arithmetic rules, and
unsupported constructs named with their rule text and position; grounding of comparisons
checked against brute-force enumeration of the assignments."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from xcore.data import Predicate, RelationalDataset
from xcore.errors import ParseError
from xcore.logic import AtomStore, ground
from xcore.logic.ast import ArithmeticRule, Comparison, Variable
from xcore.logic.parser import parse_rule


@pytest.mark.parametrize("text, expected", [
    ("1.0 : A(X) >> B(X)", "1.0: A(X) -> B(X)"),
    ("2: A(X) && C(X) -> B(X) ^2", "2.0: A(X) & C(X) -> B(X) ^2"),
    ("3: B(X) << A(X) & C(X)", "3.0: A(X) & C(X) -> B(X)"),
    ("1: A(X, Y) & (X != Y) -> B(X)", "1.0: A(X, Y) & (X != Y) -> B(X)"),
    ("1: A(X, Y) & X == Y -> B(X)", "1.0: A(X, Y) & (X == Y) -> B(X)"),
    ("1: A(X, Y) & !(X == Y) -> B(X)", "1.0: A(X, Y) & (X != Y) -> B(X)"),
    ("0.5: (A(X) & C(X)) -> B(X)", "0.5: A(X) & C(X) -> B(X)"),
    ("Knows(P1, P2) = Knows(P2, P1) .", "Knows(P1, P2) - Knows(P2, P1) = 0.0 ."),
    ("2.0: A(X) + B(X) <= 1 ^2", "2.0: A(X) + B(X) <= 1.0 ^2"),
    ("1: 2 * A(X) - B(X) / 4 >= -1", "1.0: 2.0 * A(X) - 0.25 * B(X) >= -1.0"),
    ("A(X) + 2 B(X) -1 = 0 .", "A(X) + 2.0 * B(X) = 1.0 ."),
    ("A(X, 'a') + A(X, 'b') <= 1 .", "A(X, 'a') + A(X, 'b') <= 1.0 ."),
])
def test_psl_forms_parse_to_canonical_text_that_round_trips(text, expected):
    rule = parse_rule(text)
    assert rule.text() == expected
    assert parse_rule(rule.text()) == rule


def test_arithmetic_rule_is_normalised_to_one_side():
    r = parse_rule("3: A(X) + B(X) >= C(X) + 0.5")
    assert isinstance(r, ArithmeticRule)
    assert r.relation == ">=" and r.weight == 3.0 and not r.squared
    assert dict((a.predicate, c) for c, a in r.terms) == {"A": 1.0, "B": 1.0, "C": -1.0}
    assert r.constant == -0.5


def test_comparisons_are_kept_as_conditions():
    r = parse_rule("1: A(X, Y) & (X != Y) & (X % Y) -> B(X)")
    assert r.conditions == (Comparison(Variable("X"), "!=", Variable("Y")),
                            Comparison(Variable("X"), "%", Variable("Y")))
    assert [l.atom.predicate for l in r.body] == ["A"]


@pytest.mark.parametrize("text, column, words", [
    ("1: A(X, +C) -> B(X)", 9, "summation variables (+X) only appear in the atoms of arithmetic rules"),
    ("1: A(X) + B(X) <= 1 {X: C(X)}", 21, "filter variables must be summation variables"),
    ("1: A(X) -> B(X) {X: C(X)}", 17, "filter clauses ({X: ...}) belong to arithmetic rules"),
    ("1: A(f(X)) -> B(X)", 6, "functional terms"),
    ("1: @Max[A(X), 0] <= 1", 9, "expected a coefficient"),
    ("1: A(X) & (Y != X) -> B(X)", 11, "variable Y"),
    ("1: A(X) -> B(X) | (X != Y)", 19, "belong in the body"),
    ("1: ~A(X) + B(X) <= 1", 4, "negation is not allowed"),
])
def test_unsupported_constructs_name_rule_and_position(text, column, words):
    with pytest.raises(ParseError) as e:
        parse_rule(text)
    assert words in e.value.problem
    assert e.value.column == column
    assert text in str(e.value)  # the message quotes the rule with a caret under the position


def _people() -> RelationalDataset:
    lived = pd.DataFrame({"a0": ["a", "b", "c", "d"], "a1": ["x", "x", "x", "y"], "value": 1.0})
    pairs = [(p, q) for p in "abcd" for q in "abcd"]
    knows = pd.DataFrame({"a0": [p for p, _ in pairs], "a1": [q for _, q in pairs]})
    return RelationalDataset([Predicate("Lived", 2), Predicate("Knows", 2, closed=False)],
                             {"Lived": {"obs": lived}, "Knows": {"targets": knows}})


@pytest.mark.parametrize("cond, keep", [
    ("(P1 != P2)", lambda p, q: p != q),
    ("(P1 == P2)", lambda p, q: p == q),
    ("(P1 % P2)", lambda p, q: p < q),
    ("(P1 != 'a')", lambda p, q: p != "a"),
])
def test_comparisons_filter_groundings_like_enumeration(cond, keep):
    ds = _people()
    rule = parse_rule(f"1: Lived(P1, L) & Lived(P2, L) & {cond} -> Knows(P1, P2)")
    g = ground([rule], ds)[0]
    store = AtomStore.from_dataset(ds)
    cols = [rule.variables.index(Variable("P1")), rule.variables.index(Variable("P2"))]
    got = {tuple(store.constants[g.bindings[i, cols]]) for i in range(g.n)}
    lived = dict(zip(ds.observations("Lived")["a0"], ds.observations("Lived")["a1"]))
    want = {(p, q) for p, q in itertools.product(lived, lived) if lived[p] == lived[q] and keep(p, q)}
    assert got == want


def test_arithmetic_grounding_needs_every_atom_and_folds_observations():
    knows_obs = pd.DataFrame({"a0": ["a"], "a1": ["c"], "value": [0.7]})
    knows_t = pd.DataFrame({"a0": ["a", "b", "c"], "a1": ["b", "a", "a"]})
    ds = RelationalDataset([Predicate("Knows", 2, closed=False)],
                           {"Knows": {"obs": knows_obs, "targets": knows_t}})
    store = AtomStore.from_dataset(ds)
    g = ground(["Knows(P1, P2) = Knows(P2, P1) ."], store)[0]
    A, b = g.linear_form(store)
    pairs = [tuple(store.constants[g.bindings[i]]) for i in range(g.n)]
    assert sorted(pairs) == [("a", "b"), ("a", "c"), ("b", "a"), ("c", "a")]
    col = {tuple(store.constants[store.args[t]]): j for j, t in enumerate(store.target_ids)}
    for i, (p, q) in enumerate(pairs):
        expr = A[i].toarray().ravel()
        # Knows(p, q) - Knows(q, p): targets as columns, the observed Knows(a, c) = 0.7 in b
        want = np.zeros(store.n_targets)
        if (p, q) in col:
            want[col[(p, q)]] += 1
        if (q, p) in col:
            want[col[(q, p)]] -= 1
        assert np.allclose(expr, want)
        obs = {("a", "c"): 0.7}
        assert b[i] == pytest.approx(obs.get((p, q), 0.0) - obs.get((q, p), 0.0))
        assert g.texts(store, [i])[0] == f"Knows({p}, {q}) - Knows({q}, {p}) = 0.0"


def test_psl_text_quotes_number_constants_as_java_psl_needs():
    """Java PSL's grammar takes only quoted constants (it refused `HasCat(A, 1)` in a learned model):
    PSL text quotes numbers, Markov logic text keeps them bare, both read back to the same rule."""
    from xcore.logic.parser import parse_rule

    rule = parse_rule("1.0: HasCat(A, '1') & Link(A, B) -> HasCat(B, '1') ^2", dialect="psl")
    assert rule.text("psl") == "1.0: HasCat(A, '1') & Link(A, B) -> HasCat(B, '1') ^2"
    assert parse_rule(rule.text("psl"), dialect="psl") == rule
    assert "HasCat(A, 1)" in rule.text("mln")
