"""Bag-of-words baselines: classifier features, LIME ranking, SHAP vs brute-force Shapley values."""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.errors import XcoreError
from xcore.explain.types import Explanation
from xcore.mln.model import MLNModel
from xcore.mln.word_baselines import (
    BagOfWordsClassifier,
    lime_explain,
    lime_explain_all,
    shap_explain,
    shap_explain_all,
    shap_values,
    weighted_ridge,
)

PLANTED = {"great": 1, "tasty": 1, "bad": -1, "rude": -1}
NOISE = ["food", "menu", "ok", "place"]


def review_schema() -> Schema:
    return Schema.of([
        Predicate("has_word", 2, ("review", "word"), closed=True, template="review {0} contains '{1}'"),
        Predicate("same_user", 2, ("review", "review"), closed=True),
        Predicate("same_restaurant", 2, ("review", "review"), closed=True),
        Predicate("positive", 1, ("review",), closed=False, template="review {0} is positive"),
    ])


def review_dataset(n: int = 60, seed: int = 0, test_fraction: float = 0.3) -> RelationalDataset:
    """Reviews whose planted words follow the label (noise words do not); a few same_user links."""
    rng = np.random.default_rng(seed)
    reviews = np.array([f"r{i}" for i in range(n)], dtype=object)
    label = rng.random(n) < 0.5
    rows = []
    for w, pol in PLANTED.items():
        p = np.where(label == (pol > 0), 0.6, 0.08)
        rows += [(r, w) for r in reviews[rng.random(n) < p]]
    for w in NOISE:
        rows += [(r, w) for r in reviews[rng.random(n) < 0.4]]
    hw = pd.DataFrame(rows, columns=["a0", "a1"]).assign(value=1.0)
    pairs = rng.integers(0, n, (n // 2, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    links = np.concatenate([pairs, pairs[:, ::-1]])
    su = pd.DataFrame({"a0": reviews[links[:, 0]], "a1": reviews[links[:, 1]], "value": 1.0}).drop_duplicates()
    test = rng.random(n) < test_fraction
    pos = {"obs": pd.DataFrame({"a0": reviews[~test], "value": label[~test].astype(float)}),
           "targets": pd.DataFrame({"a0": reviews[test], "value": np.nan}),
           "truth": pd.DataFrame({"a0": reviews[test], "value": label[test].astype(float)})}
    return RelationalDataset(review_schema(), {"has_word": {"obs": hw}, "same_user": {"obs": su}, "positive": pos})


@pytest.fixture(scope="module")
def data() -> RelationalDataset:
    return review_dataset()


# ---------------------------------------------------------------------- classifier
def test_matrix_is_the_has_word_table(data):
    clf = BagOfWordsClassifier().fit(data)
    assert clf.vocabulary_.tolist() == sorted(set(PLANTED) | set(NOISE))
    reviews = ["r3", "r0", "nobody", "r3", "r17"]
    X = clf.matrix(reviews).toarray()
    hw = data.table("has_word", "obs")
    for i, r in enumerate(reviews):  # reference: one review at a time from the raw table
        words = set(hw.loc[hw["a0"] == r, "a1"])
        assert X[i].tolist() == [1.0 if w in words else 0.0 for w in clf.vocabulary_]


def test_fit_learns_the_planted_polarity_and_matches_sklearn(data):
    clf = BagOfWordsClassifier(C=10.0).fit(data)
    coef = dict(zip(clf.vocabulary_, clf.coef_))
    assert all(np.sign(coef[w]) == pol for w, pol in PLANTED.items())
    X = clf.matrix(clf.test_reviews_)
    np.testing.assert_allclose(clf.predict_proba(clf.test_reviews_), clf.model_.predict_proba(X), atol=1e-12)
    np.testing.assert_array_equal(clf.predict(clf.test_reviews_), clf.model_.predict(X))
    assert set(clf.test_reviews_) == set(data.table("positive", "targets")["a0"])


def test_classifier_errors(data):
    with pytest.raises(XcoreError, match="fit"):
        BagOfWordsClassifier().decision_function(["r1"])
    one_class = RelationalDataset(review_schema(), {
        "has_word": {"obs": pd.DataFrame({"a0": ["a", "b"], "a1": ["x", "y"], "value": 1.0})},
        "positive": {"obs": pd.DataFrame({"a0": ["a", "b"], "value": [1.0, 1.0]})}})
    with pytest.raises(XcoreError, match="both classes"):
        BagOfWordsClassifier().fit(one_class)
    with pytest.raises(XcoreError, match="arity"):
        BagOfWordsClassifier(word_predicate="positive").fit(data)
    with pytest.raises(XcoreError, match="not in the dataset"):
        BagOfWordsClassifier.with_coefficients(data, {"zebra": 1.0})


# ---------------------------------------------------------------------- LIME
KNOWN = {"great": 3.0, "bad": -2.5, "ok": 0.05, "food": -0.02, "menu": 0.01, "place": 0.03,
         "tasty": 0.8, "rude": -0.6}


def test_weighted_ridge_matches_sklearn():
    rng = np.random.default_rng(3)
    X = (rng.random((200, 5)) < 0.5).astype(float)
    y = rng.random(200)
    w = rng.random(200)
    coef, b, r2 = weighted_ridge(X, y, w, alpha=0.7)
    ref = Ridge(alpha=0.7).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(coef, ref.coef_, atol=1e-10)
    assert b == pytest.approx(ref.intercept_, abs=1e-10)
    assert r2 == pytest.approx(ref.score(X, y, sample_weight=w), abs=1e-10)


def _review_with(data, words):
    hw = data.table("has_word", "obs")
    sets = hw.groupby("a0")["a1"].agg(set)
    return next(r for r, s in sets.items() if set(words) <= s)


def test_lime_ranks_large_coefficients_first(data):
    clf = BagOfWordsClassifier.with_coefficients(data, KNOWN, intercept=0.1)
    review = _review_with(data, ["great", "bad"])
    exp = lime_explain(clf, review, n_samples=1500, top_k=None, seed=1)
    present = set(clf.vocabulary_[clf.word_columns(review)])
    words = [it.extras["word"] for it in exp.items]
    assert set(words) == present  # only the review's own words
    expected = sorted(present, key=lambda w: -abs(KNOWN[w]))
    assert words[:2] == expected[:2]  # the two dominant words lead
    assert all(np.sign(it.score) == np.sign(KNOWN[it.extras["word"]]) for it in exp.items[:2])
    assert exp.method == "LIME" and exp.target == f"positive({review})"
    assert exp.prediction == pytest.approx(clf.predict_proba([review])[0, 1])
    assert exp.meta["surrogate_r2"] > 0.9
    again = lime_explain(clf, review, n_samples=1500, top_k=None, seed=1)
    assert [it.score for it in again.items] == [it.score for it in exp.items]  # seeded
    assert Explanation.from_json(exp.to_json()) == exp


def test_lime_items_have_the_mln_word_formula_text(data):
    """A LIME item names exactly the ground word formula M-Explain lists for the same review."""
    rules = "\n".join(f'{KNOWN[w]} has_word(r, "{w}") => positive(r)' for w in sorted(KNOWN))
    mln = MLNModel(rules).ground(data).infer("gibbs", n_samples=50, burn_in=10, n_chains=1, seed=0)
    clf = BagOfWordsClassifier.with_coefficients(data, KNOWN)
    review = str(clf.test_reviews_[0])
    lime = lime_explain(clf, review, n_samples=200, top_k=None)
    m = mln.explain(f"positive({review})")
    assert {(it.text, it.natural) for it in lime.items} == {(it.text, it.natural) for it in m.items}
    assert {tuple(it.atoms) for it in lime.items} == {tuple(it.atoms) for it in m.items}
    assert lime.target == m.target


def test_lime_all_and_wordless_review(data):
    clf = BagOfWordsClassifier.with_coefficients(data, KNOWN)
    s = lime_explain_all(clf, n_samples=100, top_k=3)
    assert s.targets == [f"positive({r})" for r in clf.test_reviews_]
    assert all(len(e.items) <= 3 for e in s)
    assert s[0].items[0].score == lime_explain(clf, clf.test_reviews_[0], n_samples=100, top_k=3).items[0].score
    empty = lime_explain(clf, "nobody", n_samples=50)
    assert empty.items == [] and "no words" in empty.meta["note"]
    with pytest.raises(XcoreError, match="duplicates"):
        lime_explain_all(clf, ["r1", "r1"])


# ---------------------------------------------------------------------- SHAP
def brute_force_shapley(clf, x: np.ndarray, background: np.ndarray) -> np.ndarray:
    """Exact Shapley values of the log-odds: enumerate coalitions of all words; the value of a
    coalition is the mean log-odds over background rows with the other words taken from the row."""
    V = len(x)
    value = {}
    for mask in itertools.product([0, 1], repeat=V):
        m = np.array(mask, dtype=bool)
        rows = np.where(m[None, :], x[None, :], background)
        value[mask] = float(clf.decision_matrix(rows).mean())
    phi = np.zeros(V)
    for j in range(V):
        for mask in value:
            if mask[j]:
                continue
            s = sum(mask)
            with_j = mask[:j] + (1,) + mask[j + 1:]
            phi[j] += math.factorial(s) * math.factorial(V - s - 1) / math.factorial(V) * (value[with_j] - value[mask])
    return phi


@pytest.fixture(scope="module")
def small():
    """A 6-word vocabulary (so 64 coalitions) and a fitted classifier."""
    rng = np.random.default_rng(5)
    words = ["bad", "food", "great", "ok", "rude", "tasty"]
    n = 30
    reviews = [f"s{i}" for i in range(n)]
    label = rng.random(n) < 0.5
    rows = [(r, w) for i, r in enumerate(reviews) for w in words
            if rng.random() < (0.7 if (w in PLANTED and (PLANTED[w] > 0) == label[i]) else 0.25)]
    hw = pd.DataFrame(rows, columns=["a0", "a1"]).assign(value=1.0)
    test = np.arange(n) >= 20
    rv = np.array(reviews, dtype=object)
    ds = RelationalDataset(review_schema(), {"has_word": {"obs": hw}, "positive": {
        "obs": pd.DataFrame({"a0": rv[~test], "value": label[~test].astype(float)}),
        "targets": pd.DataFrame({"a0": rv[test], "value": np.nan}),
        "truth": pd.DataFrame({"a0": rv[test], "value": label[test].astype(float)})}})
    return BagOfWordsClassifier(C=2.0).fit(ds)


def test_shap_closed_form_equals_brute_force_shapley(small):
    clf = small
    assert len(clf.vocabulary_) == 6
    bg_reviews = clf.train_reviews_[:8]
    B = clf.matrix(bg_reviews).toarray()
    phi, expected, backend = shap_values(clf, clf.test_reviews_, background=bg_reviews, method="closed_form")
    assert backend == "closed_form"
    X = clf.matrix(clf.test_reviews_).toarray()
    for i in range(len(X)):
        np.testing.assert_allclose(phi[i], brute_force_shapley(clf, X[i], B), atol=1e-10)
    # efficiency: the values add up to f(x) - E_bg[f]
    np.testing.assert_allclose(phi.sum(axis=1) + expected, clf.decision_matrix(X), atol=1e-10)
    assert expected == pytest.approx(clf.decision_matrix(B).mean())


def test_shap_package_matches_closed_form(small):
    pytest.importorskip("shap")
    phi_c, e_c, _ = shap_values(small, small.test_reviews_, method="closed_form")
    phi_s, e_s, backend = shap_values(small, small.test_reviews_, method="shap")
    assert backend == "shap"
    np.testing.assert_allclose(phi_s, phi_c, atol=1e-10)
    assert e_s == pytest.approx(e_c, abs=1e-10)


def test_shap_without_package(small, monkeypatch):
    monkeypatch.setitem(sys.modules, "shap", None)  # import shap -> ImportError
    with pytest.raises(XcoreError, match="optional `shap` package"):
        shap_values(small, small.test_reviews_, method="shap")
    assert shap_values(small, small.test_reviews_, method="auto")[2] == "closed_form"
    with pytest.raises(XcoreError, match="unknown SHAP method"):
        shap_values(small, small.test_reviews_, method="kernel")


def test_shap_explanations(small):
    clf = small
    s = shap_explain_all(clf, top_k=None, method="closed_form")
    phi, expected, _ = shap_values(clf, clf.test_reviews_, method="closed_form")
    for i, e in enumerate(s):
        review = str(clf.test_reviews_[i])
        present = set(clf.vocabulary_[clf.word_columns(review)])
        assert {it.extras["word"] for it in e.items} == present
        assert [abs(it.score) for it in e.items] == sorted((abs(it.score) for it in e.items), reverse=True)
        for it in e.items:
            assert it.score == pytest.approx(phi[i, clf.vocabulary_.tolist().index(it.extras["word"])])
            assert it.text == f"has_word({review}, {it.extras['word']}) -> positive({review})"
        assert e.meta["sum_phi"] + expected == pytest.approx(e.meta["log_odds"])
        assert e.method == "SHAP"
        one = shap_explain(clf, review, top_k=None, method="closed_form")
        assert [(it.text, it.score) for it in one.items] == [(it.text, it.score) for it in e.items]
    full = shap_explain_all(clf, top_k=None, method="closed_form", present_only=False)
    assert all(len(e.items) == len(clf.vocabulary_) for e in full)
    absent = [it for e in full for it in e.items if not it.extras["present"]]
    assert absent and all(it.text.startswith("!has_word(") and it.extras["value"] == 0.0 for it in absent)
    with pytest.raises(XcoreError, match="word columns"):
        shap_values(clf, ["s1"], background=np.ones((3, 2)))
