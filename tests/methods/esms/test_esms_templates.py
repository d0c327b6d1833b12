"""ESMS meta-templates: type-respecting filling (hand-enumerated), alpha-explainability, Algorithm 2."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.data.schema import Predicate, Schema
from xcore.errors import SchemaError, XcoreError
from xcore.esms.templates import (
    DEFAULT_TEMPLATES,
    HYPER_TEMPLATES,
    UNARY_TEMPLATES,
    MetaTemplate,
    counterpart_of,
    fill_templates,
    prior_rules,
    sample_rules,
)
from xcore.logic.parser import parse_rule
from xcore.logic.rule_identity import rule_key
from xcore.psl.explainable_rules import explainable_fraction, is_alpha_explainable


def small_schema() -> Schema:
    return Schema.of([
        Predicate("likes", 2, ("person", "item"), closed=False),
        Predicate("friend", 2, ("person", "person")),
        Predicate("sim", 2, ("item", "item")),
        Predicate("pop", 1, ("item",)),
        Predicate("old", 1, ("person",), explainable=False),
        Predicate("cf", 2, ("person", "item"), explainable=False),
        Predicate("rated", 2, ("person", "item")),
        Predicate("colour", 1, ("colour",)),
    ])


def texts(rules) -> set[str]:
    return {r.with_weight(1.0).text() for r in rules}


def template(name: str) -> MetaTemplate:
    return next(t for t in DEFAULT_TEMPLATES if t.name == name)


def test_local_templates_hand_enumerated():
    s = small_schema()
    assert texts(template("local").fill(s, "likes")) == {
        "1.0: cf(A, B) -> likes(A, B) ^2", "1.0: rated(A, B) -> likes(A, B) ^2"}  # likes itself: tautology
    assert texts(template("local_second").fill(s, "likes")) == {"1.0: pop(B) -> likes(A, B) ^2"}
    assert texts(template("local_first").fill(s, "likes")) == {"1.0: old(A) -> likes(A, B) ^2"}
    assert texts(template("prior_false").fill(s, "likes")) == {"1.0: ~likes(A, B) ^2"}
    assert texts(template("prior_true").fill(s, "likes", squared=False)) == {"1.0: likes(A, B)"}


def test_path2_and_similarity_hand_enumerated():
    s = small_schema()
    # _(A,B) & _(B,C) -> likes(A,C): A person, C item;
    # B person -> friend & {likes,cf,rated}; B item -> {likes,cf,rated} & sim
    pi = ("likes", "cf", "rated")
    expected = {f"1.0: friend(A, B) & {p}(B, C) -> likes(A, C) ^2" for p in pi}
    expected |= {f"1.0: {p}(A, B) & sim(B, C) -> likes(A, C) ^2" for p in pi}
    assert texts(template("path2").fill(s, "likes")) == expected
    # _(A,B) & _(C,A) -> likes(C,B): C person, B item;
    # A item -> sim(A,B) & {pi}(C,A); A person -> {pi}(A,B) & friend(C,A)
    expected = {f"1.0: sim(A, B) & {p}(C, A) -> likes(C, B) ^2" for p in pi}
    expected |= {f"1.0: {p}(A, B) & friend(C, A) -> likes(C, B) ^2" for p in pi}
    assert texts(template("similarity").fill(s, "likes")) == expected


def test_every_filled_rule_is_type_consistent_and_path3_count():
    from xcore.logic.checks import rule_variable_types

    s = small_schema()
    cands = fill_templates(s, "likes")
    for r in cands:
        rule_variable_types(r, s)  # raises on a variable with two types
    # path3 A person, D item: chains person->?->?->item over (pp: friend), (pi: 3), (ii: sim)
    # types of (B, C): (p,p): friend,friend,pi=3 ; (p,i): friend,pi,sim=3 ; (i,i): pi,sim,sim=3 ; (i,p) impossible
    assert len(template("path3").fill(s, "likes")) == 9
    assert {r.name for r in cands} == {t.name for t in DEFAULT_TEMPLATES}


def test_block_predicate_is_conjoined_and_checked():
    s = small_schema()
    rules = fill_templates(s, "likes", block_pred="rated")
    local = texts(r for r in rules if r.name == "local_second")
    assert local == {"1.0: pop(B) & rated(A, B) -> likes(A, B) ^2"}
    assert "1.0: rated(A, B) -> likes(A, B) ^2" in texts(r for r in rules if r.name == "local")  # not doubled
    assert all(not r.body for r in rules if r.name.startswith("prior"))
    with pytest.raises(SchemaError, match="block predicate"):
        fill_templates(s, "likes", block_pred="friend")
    unary = fill_templates(s, "pop")  # a unary target gets the unary shapes of the default templates
    assert unary and all(len(r.head[0].atom.args) == 1 for r in unary)
    with pytest.raises(XcoreError, match="binary targets"):
        fill_templates(s, "pop", templates=DEFAULT_TEMPLATES[:1] + (UNARY_TEMPLATES[0],))


def test_alpha_explainability():
    s = small_schema()
    r = parse_rule("1.0: old(A) & cf(A, B) -> likes(A, B) ^2")
    assert explainable_fraction(r, s) == 0.0 and not is_alpha_explainable(r, s)
    r = parse_rule("1.0: old(A) & pop(B) -> likes(A, B) ^2")
    assert explainable_fraction(r, s) == 0.5 and is_alpha_explainable(r, s, 0.25)
    assert not is_alpha_explainable(r, s, 0.5)  # must exceed alpha
    r = parse_rule("1.0: old(A) & rated(A, B) -> likes(A, B) ^2")
    assert explainable_fraction(r, s, block="rated") == 0.0  # the block atom does not count
    assert explainable_fraction(r, s) == 0.5
    assert all(not is_alpha_explainable(p, s, 0.0) for p in prior_rules("likes"))


def test_rule_key_identifies_equivalent_rules():
    a = parse_rule("1.0: friend(A, B) & likes(B, C) -> likes(A, C) ^2")
    b = parse_rule("3.0: likes(X, Z) & friend(Y, X) -> likes(Y, Z) ^2")
    c = parse_rule("1.0: friend(A, B) & likes(B, C) -> likes(A, C)")
    d = parse_rule("1.0: friend(B, A) & likes(B, C) -> likes(A, C) ^2")
    assert rule_key(a) == rule_key(b)
    assert rule_key(a) != rule_key(c) and rule_key(a) != rule_key(d)


def test_sample_rules_distinct_reproducible_and_bounded():
    s = small_schema()
    cands = fill_templates(s, "likes")
    n_unique = len({rule_key(r) for r in cands})
    out = sample_rules(cands, 10, 0.3, 0.25, np.random.default_rng(1))
    assert len(out) == 10 and len({rule_key(r) for r in out}) == 10
    again = sample_rules(cands, 10, 0.3, 0.25, np.random.default_rng(1))
    assert [r.text() for r in out] == [r.text() for r in again]
    everything = sample_rules(cands, 10_000, 0.0, 0.25, np.random.default_rng(2))
    assert len(everything) == n_unique  # stops when the pool is used up
    only = sample_rules(cands, 10_000, 1.0, 0.25, np.random.default_rng(3))
    assert only and all(is_alpha_explainable(r, s, 0.25) for r in only)
    assert len(only) == len({rule_key(r) for r in cands if is_alpha_explainable(r, s, 0.25)})
    excl = sample_rules(cands, 10_000, 0.0, 0.25, np.random.default_rng(4), exclude=prior_rules("likes"))
    assert not any(r.name.startswith("prior") for r in excl)
    with pytest.raises(XcoreError, match="gamma"):
        sample_rules(cands, 1, 1.5, 0.25, np.random.default_rng(0))


@pytest.mark.parametrize("gamma", [0.0, 0.3, 0.7])
def test_algorithm2_acceptance_probability(gamma):
    """One template with E explainable and N other fillings: a kept draw is non-explainable with
    probability q(1-gamma) / (q(1-gamma) + 1 - q), q = N / (E + N)."""
    s = small_schema()
    cands = [r for r in fill_templates(s, "likes") if r.name == "path2"]
    from xcore.esms.templates import CandidateRules

    cands = CandidateRules(cands, s, "likes", None)
    # alpha 0.5 makes the pool mixed: "cf & sim" (share 0.5) is not explainable, "friend & likes" is
    expl = np.array([is_alpha_explainable(r, s, 0.5) for r in cands])
    q = 1 - expl.mean()
    assert 0 < q < 1
    rng = np.random.default_rng(123)
    trials = 4000
    picked = [sample_rules(cands, 1, gamma, 0.5, rng)[0] for _ in range(trials)]
    frac = np.mean([not is_alpha_explainable(r, s, 0.5) for r in picked])
    p = q * (1 - gamma) / (q * (1 - gamma) + 1 - q)
    assert abs(frac - p) < 4 * np.sqrt(p * (1 - p) / trials) + 1e-9


def test_algorithm2_templates_are_uniform():
    s = small_schema()
    cands = fill_templates(s, "likes")
    groups = cands.by_template()
    rng = np.random.default_rng(7)
    trials = 3000
    names = [sample_rules(cands, 1, 0.0, 0.25, rng)[0].name for _ in range(trials)]
    freq = np.array([names.count(n) for n in groups]) / trials
    expected = 1 / len(groups)
    assert np.all(np.abs(freq - expected) < 4 * np.sqrt(expected * (1 - expected) / trials))


# ---------------------------------------------------------------------- negative counterparts (HyPER)
def counterparts(schema: Schema, block: str | None = None) -> dict[str, set[str]]:
    rules = fill_templates(schema, "likes", block, counterparts=True)
    return {n: texts(rs) for n, rs in rules.by_template().items() if n.endswith("_neg")}


def test_counterparts_hand_enumerated_without_block():
    pi = ("likes", "cf", "rated")  # the slots typed like likes(person, item): the negated ones
    got = counterparts(small_schema())
    assert got["local_neg"] == {"1.0: ~cf(A, B) -> ~likes(A, B) ^2", "1.0: ~rated(A, B) -> ~likes(A, B) ^2"}
    assert got["local_second_neg"] == {"1.0: ~pop(B) -> ~likes(A, B) ^2"}
    assert got["local_first_neg"] == {"1.0: ~old(A) -> ~likes(A, B) ^2"}
    assert got["path2_neg"] == ({f"1.0: friend(A, B) & ~{p}(B, C) -> ~likes(A, C) ^2" for p in pi}
                                | {f"1.0: ~{p}(A, B) & sim(B, C) -> ~likes(A, C) ^2" for p in pi})
    assert got["similarity_neg"] == ({f"1.0: sim(A, B) & ~{p}(C, A) -> ~likes(C, B) ^2" for p in pi}
                                     | {f"1.0: ~{p}(A, B) & friend(C, A) -> ~likes(C, B) ^2" for p in pi})
    assert got["path3_neg"] == ({f"1.0: friend(A, B) & friend(B, C) & ~{p}(C, D) -> ~likes(A, D) ^2" for p in pi}
                                | {f"1.0: friend(A, B) & ~{p}(B, C) & sim(C, D) -> ~likes(A, D) ^2" for p in pi}
                                | {f"1.0: ~{p}(A, B) & sim(B, C) & sim(C, D) -> ~likes(A, D) ^2" for p in pi})
    assert set(got) == {f"{t.name}_neg" for t in DEFAULT_TEMPLATES if not t.is_prior}
    # the default is the paper's templates only; HYPER_TEMPLATES is the same set as counterparts=True
    assert not any(r.name.endswith("_neg") for r in fill_templates(small_schema(), "likes"))
    assert texts(fill_templates(small_schema(), "likes", templates=HYPER_TEMPLATES)) == \
        texts(fill_templates(small_schema(), "likes", counterparts=True))
    assert len(fill_templates(small_schema(), "likes", templates=HYPER_TEMPLATES, counterparts=True)) == \
        len(fill_templates(small_schema(), "likes", counterparts=True))  # not doubled


def test_counterparts_with_block_scope_the_negated_slot():
    got = counterparts(small_schema(), "rated")
    assert got["local_neg"] == {"1.0: ~cf(A, B) & rated(A, B) -> ~likes(A, B) ^2",
                                "1.0: ~rated(A, B) -> ~likes(A, B) ^2"}
    assert got["local_first_neg"] == {"1.0: ~old(A) & rated(A, B) -> ~likes(A, B) ^2"}
    assert got["path2_neg"] == {
        "1.0: ~likes(A, B) & sim(B, C) & rated(A, C) & rated(A, B) -> ~likes(A, C) ^2",
        "1.0: ~cf(A, B) & sim(B, C) & rated(A, C) & rated(A, B) -> ~likes(A, C) ^2",
        "1.0: ~rated(A, B) & sim(B, C) & rated(A, C) -> ~likes(A, C) ^2",
        "1.0: friend(A, B) & ~likes(B, C) & rated(A, C) & rated(B, C) -> ~likes(A, C) ^2",
        "1.0: friend(A, B) & ~cf(B, C) & rated(A, C) & rated(B, C) -> ~likes(A, C) ^2",
        "1.0: friend(A, B) & ~rated(B, C) & rated(A, C) -> ~likes(A, C) ^2"}
    assert counterpart_of(template("path2")).text() == "[~]_(A, B) & [~]_(B, C) -> ~T(A, C)"
    assert counterpart_of(template("local")).text("likes") == "~_(A, B) -> ~likes(A, B)"
    with pytest.raises(XcoreError, match="no counterpart"):
        counterpart_of(template("prior_true"))


def _mirror(rule, block: str):
    """The paper rule a counterpart mirrors: negations dropped, the negated slot's block atom removed."""
    from xcore.logic.ast import Literal, Rule

    head_args = rule.head[0].atom.args
    neg_args = {l.atom.args for l in rule.body if l.negated}
    body = tuple(Literal(l.atom) for l in rule.body
                 if l.negated or not (l.atom.predicate == block and l.atom.args in neg_args
                                      and l.atom.args != head_args))
    return Rule(body, (Literal(rule.head[0].atom),), 1.0, True, "psl")


def test_counterparts_have_the_explainability_of_the_rule_they_mirror():
    s = small_schema()
    paper = {r.with_weight(1.0).text(): r for r in fill_templates(s, "likes", "rated")}
    neg = [r for r in fill_templates(s, "likes", "rated", counterparts=True) if r.name.endswith("_neg")]
    assert len(neg) == 2 + 1 + 1 + 6 + 6 + 9
    for r in neg:
        m = _mirror(r, "rated")
        assert m.text() in paper, m.text()
        for alpha in (0.0, 0.25, 0.5):
            assert is_alpha_explainable(r, s, alpha, "rated") == is_alpha_explainable(m, s, alpha, "rated")
        assert explainable_fraction(r, s, "rated") == explainable_fraction(m, s, "rated")
    r = parse_rule("1.0: ~cf(A, B) & sim(B, C) & rated(A, C) & rated(A, B) -> ~likes(A, C) ^2")
    assert explainable_fraction(r, s, block="rated") == 0.5  # ~cf counts as cf (not explainable)
    r = parse_rule("1.0: ~pop(B) & rated(A, B) -> ~likes(A, B) ^2")
    assert explainable_fraction(r, s, block="rated") == 1.0 and is_alpha_explainable(r, s, 0.25, "rated")


def _two_sided_data(seed: int = 0):
    """likes(U, I) = MAP of pop(B) -> likes and ~pop(B) -> ~likes (so likes ~ pop), a held-out split."""
    import pandas as pd

    from xcore.data.dataset import RelationalDataset
    from xcore.esms.validation_split import split_targets
    from xcore.psl.model import PSLModel

    rng = np.random.default_rng(seed)
    people, items = [f"u{i}" for i in range(8)], [f"i{i}" for i in range(10)]
    pairs = pd.DataFrame([(p, i) for p in people for i in items], columns=["a0", "a1"])
    seen = rng.random(len(pairs)) < 0.3
    obs = pairs[seen].assign(value=rng.uniform(0, 1, int(seen.sum())))
    targets = pairs[~seen].reset_index(drop=True)
    schema = [Predicate("likes", 2, ("user", "item"), closed=False), Predicate("pop", 1, ("item",)),
              Predicate("old", 1, ("user",)), Predicate("friend", 2, ("user", "user"))]
    friends = [(a, b) for a in people for b in people if a != b and rng.random() < 0.3]
    tables = {"pop": {"obs": pd.DataFrame({"a0": items, "value": rng.uniform(0.1, 0.9, len(items))})},
              "old": {"obs": pd.DataFrame({"a0": people, "value": rng.uniform(0, 1, len(people))})},
              "friend": {"obs": pd.DataFrame({"a0": [a for a, _ in friends], "a1": [b for _, b in friends],
                                              "value": 1.0})}}
    base = RelationalDataset(schema, {**tables, "likes": {"obs": obs, "targets": targets}})
    y = PSLModel("5.0: pop(B) -> likes(A, B) ^2\n5.0: ~pop(B) -> ~likes(A, B) ^2").ground(base).infer().y
    ds = RelationalDataset(schema, {**tables, "likes": {"obs": obs, "targets": targets,
                                                        "truth": targets.assign(value=y)}})
    return split_targets(ds, "likes", 0.3, seed=0)


@pytest.mark.slow
def test_search_with_counterparts_runs_is_reproducible_and_fits_two_sided_truth():
    from xcore.esms.search import ESMSSearch, gamma_sweep

    train, valid = _two_sided_data()
    kw = dict(rules_per_model=4, iterations=12, n_jobs=1, seed=0)
    a = ESMSSearch("likes", counterparts=True, **kw).fit(train, valid)
    b = ESMSSearch("likes", counterparts=True, **kw).fit(train, valid)
    assert a.get_params()["counterparts"] is True and ESMSSearch("likes").counterparts is False
    assert [r.text() for r in a.best_rules_] == [r.text() for r in b.best_rules_]
    assert a.best_score_ == b.best_score_
    assert a.history_["rules"].tolist() == b.history_["rules"].tolist()
    drawn = {x for rules in a.history_["rules"] for x in rules}
    assert any("->" in x and "~" in x.split("->")[0] for x in drawn)  # counterpart rules were drawn and grounded
    paper = ESMSSearch("likes", **kw).fit(train, valid)
    assert not any("->" in x and "~" in x.split("->")[0] for rules in paper.history_["rules"] for x in rules)
    # the truth is two-sided: the counterpart ~pop(B) -> ~likes(A, B) lets the search fit it better
    assert a.best_score_ < paper.best_score_
    sweep = gamma_sweep(train, valid, "likes", grid=[0.0, 1.0], counterparts=True, **kw)
    assert sweep["score"].iloc[0] == pytest.approx(a.best_score_)
