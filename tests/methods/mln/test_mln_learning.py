"""Weight learning: PLL value and gradient against brute force and finite differences, recovery of
known weights from a Gibbs-sampled world, the training world, and the linear+PLL recipe on reviews."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.data.dataset import RelationalDataset
from xcore.data.generators.friends_smokers import friends_smokers_dataset
from xcore.data.generators.reviews import NEGATIVE_WORDS, POSITIVE_WORDS, generate_reviews
from xcore.errors import XcoreError
from xcore.logic.parser import parse_rules
from xcore.mln.exact import exact
from xcore.mln.gibbs import gibbs
from xcore.mln.learning import (
    bag_of_words,
    fit_pll,
    ground_training_world,
    learn_weights,
    linear_word_weights,
    pseudo_log_likelihood,
    training_world,
    word_rule_words,
)
from xcore.mln.model import MLNModel
from xcore.mln.reviews import review_rules
from xcore.mln.synthetic import FRIENDS_SMOKERS_RULES, random_ground_mln


def _tied(mln, n_rules: int, seed: int, n_hard: int = 0):
    """The network with clauses tied at random into `n_rules` rules (the first `n_hard` clauses hard)."""
    rng = np.random.default_rng(seed)
    rule = rng.integers(0, n_rules, mln.n_clauses).astype(np.int32)
    hard = np.zeros(mln.n_clauses, dtype=bool)
    hard[:n_hard] = True
    return dataclasses.replace(mln, rule=rule, hard=hard, hard_weight=3.0)


def _brute_pll(mln, x, theta) -> float:
    """sum_i log P(x_i | x_-i) from all 2^n world probabilities of exact enumeration."""
    w = np.where(mln.hard, mln.hard_weight, theta[mln.rule])
    n = mln.n_atoms
    worlds = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1)
    lw = mln.log_weight(worlds, w)
    log_p = lw - exact(mln, w).log_z  # log P(world) from the exact partition function
    idx = int((x << np.arange(n)).sum())
    return float(sum(log_p[idx] - np.logaddexp(log_p[idx], log_p[idx ^ (1 << i)]) for i in range(n)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_atoms=st.integers(1, 7), n_clauses=st.integers(1, 14),
       n_rules=st.integers(1, 4), n_hard=st.integers(0, 2))
def test_pll_matches_brute_force_and_gradient_matches_finite_differences(seed, n_atoms, n_clauses, n_rules, n_hard):
    mln = _tied(random_ground_mln(n_atoms, n_clauses, seed=seed), n_rules, seed, min(n_hard, n_clauses))
    rng = np.random.default_rng(seed + 1)
    x = rng.integers(0, 2, n_atoms)
    theta = rng.normal(0, 1.5, n_rules)
    value, grad = pseudo_log_likelihood(mln, x, theta)
    assert value == pytest.approx(_brute_pll(mln, x, theta), abs=1e-9)
    eps = 1e-6
    fd = np.array([(pseudo_log_likelihood(mln, x, theta + eps * e)[0]
                    - pseudo_log_likelihood(mln, x, theta - eps * e)[0]) / (2 * eps) for e in np.eye(n_rules)])
    np.testing.assert_allclose(grad, fd, atol=1e-5)
    hard_only = np.setdiff1d(np.unique(mln.rule[mln.hard]), np.unique(mln.rule[~mln.hard]))
    assert np.all(grad[hard_only] == 0)


def test_pll_of_several_worlds_is_the_sum_and_bad_input_is_refused():
    mln = random_ground_mln(6, 10, seed=2)
    theta = np.array([0.7])
    X = np.random.default_rng(0).integers(0, 2, (5, 6))
    v, g = pseudo_log_likelihood(mln, X, theta)
    parts = [pseudo_log_likelihood(mln, x, theta) for x in X]
    assert v == pytest.approx(sum(p[0] for p in parts))
    np.testing.assert_allclose(g, sum(p[1] for p in parts))
    with pytest.raises(XcoreError, match="shape"):
        pseudo_log_likelihood(mln, np.zeros(5), theta)
    with pytest.raises(XcoreError, match="0 or 1"):
        pseudo_log_likelihood(mln, np.full(6, 2), theta)
    with pytest.raises(XcoreError, match="one weight per rule"):
        pseudo_log_likelihood(mln, np.zeros(6), np.zeros(0))


@pytest.fixture(scope="module")
def sampled_friends():
    """A 2000-person friends-and-smokers network, all atoms query atoms, and 4 worlds sampled by Gibbs
    from the known weights."""
    ds = friends_smokers_dataset(n_people=2000, avg_friends=3, observed=0.0, seed=1)
    model = MLNModel(FRIENDS_SMOKERS_RULES).ground(ds)
    res = gibbs(model.mln_, n_samples=1, burn_in=300, n_chains=4, seed=0)
    return ds, model, res.state.T


def test_pll_recovers_the_weights_of_a_sampled_world(sampled_friends):
    _, model, X = sampled_friends
    true = np.array([r.weight for r in model.rules])
    est = fit_pll(model.mln_, X, np.zeros(4), l2=0.0)
    np.testing.assert_allclose(est, true, atol=0.2)
    # fixed weights stay; the others adapt
    part = fit_pll(model.mln_, X, np.array([1.5, 0.0, 0.0, 0.0]), free=np.array([False, True, True, True]), l2=0.0)
    assert part[0] == 1.5
    np.testing.assert_allclose(part, true, atol=0.2)


def test_learn_weights_end_to_end_from_an_observed_world(sampled_friends):
    ds, model, X = sampled_friends
    store = model.mln_.store
    atoms = store.frame(store.target_ids)  # predicate, a0, value... of each query atom, column order
    x = X[0]
    tables = {"friends": {"obs": ds.table("friends", "obs")}}
    for pred in ("smokes", "cancer"):
        sel = (atoms["predicate"] == pred).to_numpy()
        tables[pred] = {"obs": pd.DataFrame({"a0": atoms.loc[sel, "a0"].to_numpy(), "value": x[sel].astype(float)})}
    observed = RelationalDataset(ds.schema, tables)
    rules = learn_weights(FRIENDS_SMOKERS_RULES, observed, method="pll", target=("smokes", "cancer"), l2=0.0)
    np.testing.assert_allclose([r.weight for r in rules], [r.weight for r in model.rules], atol=0.3)
    assert [r.text("mln").split(" ", 1)[1] for r in rules] == [r.text("mln").split(" ", 1)[1] for r in model.rules]


def test_training_world_turns_training_labels_into_the_variables():
    data = generate_reviews(60, seed=4)
    world = training_world(data.dataset)
    train = data.docs[data.docs.split == "train"]
    test = set(data.docs.review[data.docs.split == "test"])
    assert set(world.table("positive", "targets")["a0"]) == set(train.review)
    assert len(world.table("positive", "obs")) == 0
    for pred in ("has_word", "same_user", "same_restaurant"):
        t = world.table(pred, "obs")
        assert not (set(t["a0"]) | (set(t["a1"]) if pred != "has_word" else set())) & test
    rules = parse_rules(review_rules({"great": 1.0}, {"same_user": 1.0}, prior=0.0), dialect="mln")
    mln, x = ground_training_world(rules, data.dataset)
    labels = train.set_index("review")["label"]
    atoms = mln.store.frame(mln.store.target_ids)["a0"]
    np.testing.assert_array_equal(x, labels.loc[atoms].to_numpy())
    # partially observed items are refused (they would silently become false)
    fs = friends_smokers_dataset(n_people=30, avg_friends=2, observed=0.5, seed=0)
    with pytest.raises(XcoreError, match="fully observed"):
        training_world(fs, target=("smokes", "cancer"))
    with pytest.raises(XcoreError, match="closed"):
        training_world(fs, target="friends")


def test_linear_word_weights_are_the_logistic_regression_coefficients():
    from sklearn.linear_model import LogisticRegression

    data = generate_reviews(200, seed=6)
    words = ["great", "rude", "menu"]
    text = review_rules({"great": 1.0, "rude": 1.0, "menu": 1.0}, {"same_user": 1.0}) + \
        "1.0 has_word(r, 'great') => !positive(r)\n1.0 has_word(r, 'menu') ^ same_user(r, r) => positive(r)\n"
    rules = parse_rules(text, dialect="mln")
    assert word_rule_words(rules) == {0: ("great", 1), 1: ("rude", 1), 2: ("menu", 1)}
    got = linear_word_weights(rules, data.dataset)
    train = data.docs[data.docs.split == "train"]
    X = np.array([[w in t.split() for w in words] for t in train.text], dtype=float)
    clf = LogisticRegression(max_iter=5000).fit(X, train.label.to_numpy())
    np.testing.assert_allclose([got[0], got[1], got[2]], clf.coef_[0], rtol=1e-4, atol=1e-6)
    bow = bag_of_words(data.dataset, words, train.review.tolist())
    np.testing.assert_array_equal(bow.toarray(), X)
    neg = parse_rules("1.0 has_word(r, 'great') => !positive(r)", dialect="mln")
    assert linear_word_weights(neg, data.dataset)[0] == pytest.approx(-clf.coef_[0][0], rel=0.2)


@pytest.fixture(scope="module")
def big_reviews():
    data = generate_reviews(3000, seed=0)
    rules = review_rules({w: 1.0 for w in data.vocabulary}, {p: 1.0 for p in data.link_predicates}, prior=0.0)
    return data, rules


@pytest.mark.slow
@pytest.mark.parametrize("method", ["linear+pll", "pll"])
def test_learned_review_weights_have_the_planted_signs(big_reviews, method):
    data, rules = big_reviews
    learned = learn_weights(rules, data.dataset, method=method)
    w = {r.text("mln").split(" ", 1)[1]: r.weight for r in learned}
    word = lambda v: w[f"has_word(r, '{v}') => positive(r)"]  # noqa: E731
    assert all(word(v) > 0.3 for v in POSITIVE_WORDS)
    assert all(word(v) < -0.3 for v in NEGATIVE_WORDS)
    assert w["same_user(r1, r2) ^ positive(r1) => positive(r2)"] > 0.1
    assert w["same_restaurant(r1, r2) ^ positive(r1) => positive(r2)"] > 0.1


def test_learn_weights_keeps_hard_and_fixed_rules_and_checks_arguments():
    data = generate_reviews(120, seed=7)
    text = review_rules({"great": 1.0, "awful": 1.0}, {"same_user": 0.75}, prior=0.0) + \
        "same_restaurant(r1, r2) ^ positive(r1) => positive(r2).\n"
    out = learn_weights(text, data.dataset, fixed=[2], l2=1.0)
    assert out[2].weight == 0.75 and out[4].is_hard
    assert out[0].weight > 0 > out[1].weight
    with pytest.raises(XcoreError, match="unknown learning method"):
        learn_weights(text, data.dataset, method="svm")
    with pytest.raises(XcoreError, match="out of range"):
        learn_weights(text, data.dataset, fixed=[9])
