"""Evaluation metrics of I-Explain: precision@k against planted truth, Top-Exp-Acc / Peak-Acc."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.mln.evaluation import (
    AccuracyCurve,
    accuracy_curve,
    explanation_precision,
    formula_kind,
    item_direction,
    item_log_odds,
    precision_table,
)
from xcore.mln.model import MLNModel
from xcore.mln.word_baselines import BagOfWordsClassifier, lime_explain_all, shap_explain_all

try:
    from xcore.data.generators.reviews import ReviewAnnotation
except ImportError:  # the generator is written in parallel: the metrics only need these attributes
    @dataclass(frozen=True)
    class ReviewAnnotation:  # type: ignore[no-redef]
        planted_words: dict
        true_links: frozenset
        labels: dict

WORD_RULE = '{w} has_word(r, "{word}") => positive(r)'
LINK_RULE = "{w} {pred}(r1, r2) ^ positive(r1) => positive(r2)"


def word_item(review: str, word: str, weight: float, score: float, observed_q: bool = False) -> ExplanationItem:
    """The ground word formula of an MLN explanation, as `explain_atom` fills it."""
    return ExplanationItem(
        kind="ground_formula", text=f"has_word({review}, {word}) -> positive({review})", natural="", score=score,
        atoms=[f"has_word({review}, {word})", f"positive({review})"], target_index=1, roles=["body", "head"],
        observed=[True, observed_q], extras={"rule": WORD_RULE.format(w=weight, word=word), "weight": weight,
                                             "sign": 1})


def link_item(pred: str, a: str, b: str, weight: float, score: float, a_observed: bool,
              target: str) -> ExplanationItem:
    """Ground ``pred(a, b) ^ positive(a) => positive(b)`` explaining positive(target)."""
    atoms = [f"{pred}({a}, {b})", f"positive({a})", f"positive({b})"]
    t = 2 if target == b else 1
    return ExplanationItem(
        kind="ground_formula", text=f"{atoms[0]} & {atoms[1]} -> {atoms[2]}", natural="", score=score, atoms=atoms,
        target_index=t, roles=["body", "body", "head"], observed=[True, a_observed, False],
        extras={"rule": LINK_RULE.format(w=weight, pred=pred), "weight": weight, "sign": 1 if t == 2 else -1})


def explanation(review: str, items, prediction: float, truth: float | None = None) -> Explanation:
    return Explanation(target=f"positive({review})", method="test", prediction=prediction, truth=truth,
                       items=items, ordering="given")


ANN = ReviewAnnotation(
    planted_words={"great": 1, "tasty": 1, "bad": -1},
    true_links=frozenset({("same_user", "q1", "r0"), ("same_user", "r0", "q1")}),
    labels={"q1": 1, "q2": 0, "q3": 1, "r0": 1})


# ---------------------------------------------------------------------- kinds and precision
def test_formula_kind_and_direction():
    w = word_item("q1", "great", 1.5, 0.2)
    rel = link_item("same_user", "r0", "q1", 0.8, 0.1, True, "q1")
    prior = ExplanationItem(kind="ground_formula", text="positive(q1)", natural="", score=0.3, atoms=["positive(q1)"],
                            target_index=0, extras={"weight": -0.4, "sign": 1})
    cites = ExplanationItem(kind="feature_clause", text="cites(p1, p2)", natural="", score=1.0,
                            atoms=["cites(p1, p2)"])
    assert [formula_kind(i) for i in (w, rel, prior, cites)] == ["word", "relational", "other", "relational"]
    # I(f,Q) of a word formula is >= 0 whatever its weight: the direction comes from weight * sign
    assert item_direction(word_item("q1", "bad", -2.0, 0.7)) == -1
    assert item_direction(prior) == -1
    assert item_direction(cites) == 1  # no weight: the sign of the score
    assert item_direction(ExplanationItem(kind="feature_clause", text="x", natural="", score=0.5,
                                          extras={"direction": -1})) == -1


def test_word_precision_counts_planted_words_with_their_polarity():
    items = [word_item("q1", "great", 1.5, 0.9),   # planted +1, pushes +  -> correct
             word_item("q1", "food", 0.3, 0.8),    # not planted           -> wrong
             word_item("q1", "bad", 0.4, 0.7),     # planted -1, pushes +  -> wrong polarity
             link_item("same_user", "r0", "q1", 0.8, 0.6, True, "q1"),  # relational: skipped
             word_item("q1", "tasty", 1.0, 0.5)]   # planted +1            -> correct
    e = explanation("q1", items, prediction=0.8)
    assert explanation_precision(e, ANN, k=4) == pytest.approx(2 / 4)
    assert explanation_precision(e, ANN, k=4, use_polarity=False) == pytest.approx(3 / 4)
    assert explanation_precision(e, ANN, k=1) == 1.0
    # fewer than k word items: the missing slots count as wrong (divide by k)
    assert explanation_precision(e, ANN, k=10) == pytest.approx(2 / 10)
    # a wrong prediction scores 0 however good its items are
    assert explanation_precision(explanation("q1", items, prediction=0.3), ANN, k=4) == 0.0


def test_relational_precision_uses_true_links():
    items = [link_item("same_user", "r0", "q1", 0.8, 0.9, True, "q1"),        # true link (r0, q1)
             link_item("same_restaurant", "r0", "q1", 0.8, 0.8, True, "q1"),  # not a true link
             link_item("same_user", "q1", "q2", 0.8, 0.7, False, "q1"),       # q1 is the body here
             word_item("q1", "great", 1.5, 0.95)]
    e = explanation("q1", items, prediction=0.9)
    assert explanation_precision(e, ANN, k=2, kind="relational") == pytest.approx(1 / 2)
    ann = ReviewAnnotation(ANN.planted_words, ANN.true_links | {("same_user", "q1", "q2")}, ANN.labels)
    assert explanation_precision(e, ann, k=3, kind="relational") == pytest.approx(2 / 3)
    assert explanation_precision(e, ann, k=5, kind="relational") == pytest.approx(2 / 5)
    with pytest.raises(XcoreError, match="kind"):
        explanation_precision(e, ANN, kind="formula")
    with pytest.raises(XcoreError, match="no label"):
        explanation_precision(explanation("zz", items, 0.9), ANN)
    with pytest.raises(XcoreError, match="no prediction"):
        explanation_precision(Explanation(target="positive(q1)", items=items), ANN)


def test_precision_table():
    good = ExplanationSet([explanation("q1", [word_item("q1", "great", 1.5, 0.9),
                                              link_item("same_user", "r0", "q1", 0.8, 0.6, True, "q1")], 0.8),
                           explanation("q2", [word_item("q2", "bad", -2.0, 0.9)], 0.2)], method="M")
    words_only = ExplanationSet([explanation("q1", [word_item("q1", "food", 0.1, 0.9)], 0.8),
                                 explanation("q2", [word_item("q2", "bad", -2.0, 0.9)], 0.7)], method="W")
    t = precision_table({"M": good, "W": words_only}, ANN, k=1)
    assert list(t.columns) == ["method", "word_precision", "relational_precision", "n_queries"]
    assert t["method"].tolist() == ["M", "W"]
    assert t["word_precision"].tolist() == [1.0, 0.0]  # W: q1 unplanted word, q2 wrong prediction
    assert t["relational_precision"].iloc[0] == pytest.approx(0.5)  # q1: 1/1, q2: no link item -> 0
    assert np.isnan(t["relational_precision"].iloc[1])  # no relational item at all: not applicable
    assert t["n_queries"].tolist() == [2, 2]


# ---------------------------------------------------------------------- Top-Exp-Acc / Peak-Acc
def toy_explanations(q1_prediction: float) -> list[Explanation]:
    """Three queries with known formulas (hand-computed in the tests below)."""
    q1 = explanation("q1", [word_item("q1", "great", 1.5, 0.9), word_item("q1", "bad", -2.0, 0.5)],
                     q1_prediction, truth=1.0)
    q2 = explanation("q2", [word_item("q2", "bad", -2.0, 0.9),
                            link_item("same_user", "r0", "q2", 0.8, 0.5, True, "q2")], 0.1, truth=0.0)
    q3 = explanation("q3", [link_item("same_restaurant", "q1", "q3", 1.0, 0.9, False, "q3"),
                            word_item("q3", "ok", -0.5, 0.5)], 0.6, truth=1.0)
    return [q1, q2, q3]


def test_accuracy_curve_hand_computed():
    # q1 predicted positive: in q3's link formula !positive(q1) is false, so it contributes +1.0
    exps = toy_explanations(q1_prediction=0.7)
    contrib = item_log_odds(exps)
    assert [c.tolist() for c in contrib] == [[1.5, -2.0], [-2.0, 0.8], [1.0, -0.5]]
    # m=1: log-odds 1.5, -2.0, 1.0 -> [1, 0, 1] = truth -> F1 1
    # m=2: -0.5, -1.2, 0.5 -> [0, 0, 1]: tp 1, fn 1, fp 0 -> F1 2/3
    curve = accuracy_curve(exps)
    assert isinstance(curve, AccuracyCurve)
    np.testing.assert_allclose(curve.f1_by_m, [1.0, 2 / 3])
    assert (curve.top_exp_acc, curve.peak_acc, curve.peak_m) == (pytest.approx(2 / 3), 1.0, 1)
    # labels from the annotation give the same curve as the explanations' truth
    np.testing.assert_allclose(accuracy_curve(exps, labels=ANN).f1_by_m, curve.f1_by_m)


def test_accuracy_curve_other_query_state_matters():
    # q1 predicted negative: q3's link formula is satisfied whatever q3 is -> contributes 0
    exps = toy_explanations(q1_prediction=0.3)
    assert item_log_odds(exps)[2].tolist() == [0.0, -0.5]
    # m=1: [1, 0, 1] (log-odds 0 counts as positive, like P = 0.5) -> F1 1; m=2: [0, 0, 0] -> F1 0
    curve = accuracy_curve(exps)
    np.testing.assert_allclose(curve.f1_by_m, [1.0, 0.0])
    assert curve.top_exp_acc == 0.0 and curve.peak_m == 1
    # an explicit state overrides the explanation's prediction
    assert item_log_odds(exps, states={"positive(q1)": 0.9})[2].tolist() == [1.0, -0.5]
    # max_m beyond the explanations' length keeps all their items
    np.testing.assert_allclose(accuracy_curve(exps, max_m=4).f1_by_m, [1.0, 0.0, 0.0, 0.0])


def test_accuracy_curve_kind_filter_and_errors():
    exps = toy_explanations(q1_prediction=0.7)
    # relational items only: q1 none (log-odds 0 -> 1), q2 +0.8 -> 1, q3 +1.0 -> 1: tp 2, fp 1 -> F1 0.8
    rel = accuracy_curve(exps, kind="relational")
    np.testing.assert_allclose(rel.f1_by_m, [0.8])
    lone = [explanation("q3", [link_item("same_restaurant", "q9", "q3", 1.0, 0.9, False, "q3")], 0.6, 1.0)]
    with pytest.raises(XcoreError, match="unknown"):
        item_log_odds(lone)
    bare = ExplanationItem(kind="ground_formula", text="f", natural="", score=1.0, atoms=["positive(q1)"], target_index=0)
    with pytest.raises(XcoreError, match="weight/rule"):
        item_log_odds([explanation("q1", [bare], 0.6, 1.0)])
    with pytest.raises(XcoreError, match="no label"):
        accuracy_curve([explanation("q1", [word_item("q1", "great", 1.0, 0.5)], 0.6)])
    empty = accuracy_curve([explanation("q1", [], 0.6, 1.0)])
    assert len(empty.f1_by_m) == 0 and np.isnan(empty.top_exp_acc) and empty.peak_m == 0


# ---------------------------------------------------------------------- from a real network
def review_dataset() -> RelationalDataset:
    schema = Schema.of([
        Predicate("has_word", 2, ("review", "word"), closed=True, template="review {0} contains '{1}'"),
        Predicate("same_user", 2, ("review", "review"), closed=True),
        Predicate("same_restaurant", 2, ("review", "review"), closed=True),
        Predicate("positive", 1, ("review",), closed=False, template="review {0} is positive"),
    ])
    hw = pd.DataFrame({"a0": ["r1", "r1", "r2", "r3", "r3", "r4"], "a1": ["great", "bad", "great", "bad", "ok", "ok"],
                       "value": 1.0})
    su = pd.DataFrame({"a0": ["r1", "r2", "r4", "r1"], "a1": ["r2", "r1", "r1", "r4"], "value": 1.0})
    sr = pd.DataFrame({"a0": ["r2", "r3"], "a1": ["r3", "r2"], "value": 1.0})
    pos = {"obs": pd.DataFrame({"a0": ["r1"], "value": [1.0]}),
           "targets": pd.DataFrame({"a0": ["r2", "r3", "r4"], "value": np.nan}),
           "truth": pd.DataFrame({"a0": ["r2", "r3", "r4"], "value": [1.0, 0.0, 1.0]})}
    return RelationalDataset(schema, {"has_word": {"obs": hw}, "same_user": {"obs": su},
                                      "same_restaurant": {"obs": sr}, "positive": pos})


def review_network(word_rules_only: bool = False) -> MLNModel:
    rules = "\n".join([WORD_RULE.format(w=1.0, word="great"), WORD_RULE.format(w=-1.0, word="bad"),
                       WORD_RULE.format(w=0.5, word="ok")]
                      + ([] if word_rules_only else [LINK_RULE.format(w=0.8, pred="same_user"),
                                                     LINK_RULE.format(w=0.6, pred="same_restaurant")]))
    return MLNModel(rules).ground(review_dataset()).infer("exact")


def test_m_explain_items_network_and_item_paths_agree():
    model = review_network()
    marg = model.result_.marginals
    assert (marg >= 0.5).tolist() == [True, False, True]  # r2, r3, r4 (hand checks below rely on it)
    s = model.explain_all()
    by_items = item_log_odds(s)
    by_net = item_log_odds(s, mln=model.mln_, marginals=marg)
    for a, b in zip(by_items, by_net):
        np.testing.assert_allclose(a, b)
    # hand check for r2: great +1.0; same_user(r1, r2) with r1 observed positive +0.8;
    # same_restaurant(r2, r3) ^ positive(r2) => positive(r3) with r3 predicted negative: -0.6;
    # same_restaurant(r3, r2) ^ positive(r3) => positive(r2): satisfied by !positive(r3): 0
    r2 = {it.text: v for it, v in zip(s["positive(r2)"].items, by_items[0])}
    assert r2 == pytest.approx({"has_word(r2, great) -> positive(r2)": 1.0,
                                "same_user(r1, r2) & positive(r1) -> positive(r2)": 0.8,
                                "same_restaurant(r2, r3) & positive(r2) -> positive(r3)": -0.6,
                                "same_restaurant(r3, r2) & positive(r3) -> positive(r2)": 0.0})
    curve = accuracy_curve(s)
    curve_net = accuracy_curve(s, mln=model.mln_, marginals=marg)
    np.testing.assert_allclose(curve.f1_by_m, curve_net.f1_by_m)
    # whole explanations by hand: r2 1 + 0.8 - 0.6 + 0 = 1.2; r3 bad -1, ok +0.5, same_restaurant(r2, r3)
    # with r2 predicted positive +0.6, same_restaurant(r3, r2) satisfied by positive(r2) 0 -> 0.1;
    # r4 ok +0.5, same_user(r1, r4) +0.8 -> 1.3 (same_user(r4, r1) is satisfied by evidence: dropped).
    # All predicted positive against truth [1, 0, 1]: F1 = 2 * 2 / (2 * 2 + 1) = 0.8 (the local
    # log-odds of r3 disagrees with its marginal 0.48: the formulas alone miss the correlations)
    assert [c.sum() for c in by_items] == pytest.approx([1.2, 0.1, 1.3])
    assert curve.top_exp_acc == pytest.approx(0.8)
    other = review_network(word_rules_only=True).mln_  # clause indices no longer match the items
    with pytest.raises(XcoreError, match="wrong mln"):
        item_log_odds(s, mln=other, marginals=marg)


def test_word_explanations_predict_from_classifier_coefficients():
    clf = BagOfWordsClassifier.with_coefficients(review_dataset(), {"great": 2.0, "bad": -3.0, "ok": 0.5},
                                                 intercept=-0.2)
    everyone = ["r1", "r2", "r3", "r4"]  # SHAP background: every word has mean 1/2
    for s in (shap_explain_all(clf, background=everyone, method="closed_form"),
              lime_explain_all(clf, n_samples=200)):
        contrib = item_log_odds(s)
        for e, c in zip(s, contrib):
            assert c.tolist() == pytest.approx([it.extras["coef"] for it in e.items])
        curve = accuracy_curve(s)
        # whole explanation = the classifier itself: r2 great (1.8 -> 1), r3 bad+ok (-2.7 -> 0), r4 ok (0.3 -> 1)
        full = np.array([e.meta["intercept"] + c.sum() for e, c in zip(s, contrib)])
        np.testing.assert_allclose(full, clf.decision_function(["r2", "r3", "r4"]))
        assert curve.top_exp_acc == 1.0
    p = precision_table({"SHAP": shap_explain_all(clf, background=everyone, method="closed_form")},
                        ReviewAnnotation({"great": 1, "bad": -1}, frozenset(), {"r2": 1, "r3": 0, "r4": 1}), k=1)
    # r2: great (+1) correct; r3: bad (-1, |phi| largest) correct; r4: ok not planted -> 2/3
    assert p["word_precision"].iloc[0] == pytest.approx(2 / 3)
    assert np.isnan(p["relational_precision"].iloc[0])

