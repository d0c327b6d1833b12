"""The Markov-logic explanation workflow: setting detection, starting rules, running every method,
splitting and normalising explanations, evaluation against the planted annotation."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.data.generators.reviews import annotation_from_json
from xcore.data.samples import load_sample
from xcore.errors import DataError, XcoreError
from xcore.mln.model import MLNModel
from xcore.mln.run_evaluation import evaluation_table, query_frame
from xcore.mln.workflow import (
    ExplainSettings,
    TextSetting,
    detect_setting,
    find_annotation,
    normalised,
    query_predicates,
    run_explainers,
    split_by_kind,
    starting_rules,
)


@pytest.fixture(scope="module")
def reviews():
    ds = load_sample("reviews_demo")
    setting = detect_setting(ds)
    model = MLNModel(starting_rules(ds, setting)).ground(ds).infer("gibbs", n_samples=600, burn_in=100,
                                                                    n_chains=4, seed=0)
    return ds, setting, model


def test_detect_setting_on_reviews_and_smokers():
    assert detect_setting(load_sample("reviews_demo")) == TextSetting(
        "positive", "review", "has_word", ("same_user", "same_restaurant"))
    smokers = load_sample("friends_smokers")
    s = detect_setting(smokers)
    assert s.domain_type == "person" and s.word_predicate is None and s.link_predicates == ("friends",)
    assert detect_setting(smokers, target="cancer").target == "cancer"
    assert query_predicates(smokers) == ["smokes", "cancer"] and query_predicates(load_sample("lastfm_demo")) == ["rating"]
    with pytest.raises(XcoreError, match="'friends' is not an open predicate with query atoms"):
        detect_setting(smokers, target="friends")
    lastfm = detect_setting(load_sample("lastfm_demo"))  # rating(user, item): binary queries are explained too
    assert lastfm.target == "rating" and lastfm.word_predicate is None


def test_starting_rules_and_annotation_of_the_sample():
    ds = load_sample("reviews_demo")
    rules = starting_rules(ds, detect_setting(ds))
    # the sample's model.mln: the generating weights (40 planted words; neutral words weigh 0) + 2 links
    assert rules.count("=> positive(r)\n") == 40 and rules.count("=> positive(r2)") == 2
    ann = find_annotation(ds)
    assert ann is not None and ann.planted_words["great"] == 1 and ann.planted_words["awful"] == -1
    assert find_annotation(load_sample("friends_smokers")) is None
    assert "smokes(x)" in starting_rules(load_sample("friends_smokers"))


def test_annotation_from_json_names_the_file_and_line():
    ann = annotation_from_json('{"planted_words": {"good": 1}, "true_links": [["same_user", "a", "b"]], '
                               '"labels": {"a": 1, "b": 0}}')
    assert ann.true_links == frozenset({("same_user", "a", "b")}) and ann.labels == {"a": 1, "b": 0}
    with pytest.raises(DataError) as e:
        annotation_from_json('{\n"planted_words": {,\n}', "up.json")
    assert e.value.file == "up.json" and e.value.line == 2
    with pytest.raises(DataError, match="planted_words must map words to"):
        annotation_from_json('{"planted_words": {"good": 2}, "true_links": [], "labels": {}}')


@pytest.mark.slow
def test_m_explain_and_word_baselines_agree_with_the_model_and_the_annotation(reviews):
    ds, setting, model = reviews
    run = run_explainers(model, ds, setting, ExplainSettings(methods=("M-Explain", "LIME", "SHAP"), top_k=8))
    queries = query_frame(run, find_annotation(ds))
    assert len(queries) == 150 and queries["atom"].str.startswith("positive(").all()
    atom = queries["atom"].iloc[0]
    direct = model.explain(atom, top_k=8)
    assert [i.text for i in run.explanation("M-Explain", atom).items] == [i.text for i in direct.items]
    assert len(run.explanations["LIME"]) == len(run.explanations["SHAP"]) == 150
    table = evaluation_table(run, find_annotation(ds)).set_index("method")
    # planted truth: the MLN's formulas name planted words and true links well above chance
    assert table.loc["M-Explain", "word_precision"] > 0.5
    assert table.loc["M-Explain", "relational_precision"] > 0.4
    assert np.isnan(table.loc["SHAP", "relational_precision"])
    assert 0.6 < table.loc["M-Explain", "top_exp_acc"] <= table.loc["M-Explain", "peak_acc"] <= 1.0
    with pytest.raises(XcoreError, match="R-Explain was not run"):
        run.explanation("R-Explain", atom)


@pytest.mark.slow
def test_r_explain_brings_i_explain_and_unknown_methods_fail(reviews):
    ds, setting, model = reviews
    run = run_explainers(model, ds, setting, ExplainSettings(methods=("R-Explain",), T=2, top_k=5,
                                                             n_samples=300, burn_in=50))
    assert list(run.explanations) == ["I-Explain", "R-Explain"]
    assert run.rexplainer.match is run.iexplainer
    with pytest.raises(XcoreError, match="unknown method 'GradCAM'"):
        run_explainers(model, ds, setting, ExplainSettings(methods=("GradCAM",)))
    with pytest.raises(XcoreError, match="ground the model"):
        run_explainers(MLNModel("1 positive(r)"), ds, setting)


def test_split_by_kind_and_normalised(reviews):
    ds, setting, model = reviews
    exp = model.explain(model.mln_.atoms_text()[0])
    parts = split_by_kind(exp, k=3)
    assert all(len(p.items) <= 3 for p in parts.values())
    assert all("has_word" in it.text for it in parts["word"].items)
    assert all("same_" in it.text for it in parts["relational"].items)
    ranked = [it.text for it in exp.ranked()]
    words = [t for t in ranked if "has_word" in t][:3]
    assert [it.text for it in parts["word"].items] == words  # rank order kept
    scaled = normalised(exp)
    assert max(abs(it.score) for it in scaled.items) == pytest.approx(1.0)
    top = max(abs(it.score) for it in exp.items)
    assert [it.score for it in scaled.items] == pytest.approx([it.score / top for it in exp.items])
    magnitudes = normalised(exp, absolute=True)
    assert [it.score for it in magnitudes.items] == pytest.approx([abs(it.score) / top for it in exp.items])
    assert [it.extras["score"] for it in magnitudes.items] == [it.score for it in exp.items]


def test_tied_word_formulas_are_ordered_by_their_effect(reviews):
    """Every word formula of a review folds into the unit clause positive(r), so their importances
    tie at 1 - P(Q); the ranking then puts the heavier words (planted ones) first."""
    ds, setting, model = reviews
    for atom in model.mln_.atoms_text()[:20]:
        words = [it for it in model.explain(atom).ranked() if "has_word" in it.text]
        if len(words) < 2:
            continue
        assert len({it.score for it in words}) == 1  # the tie
        effect = [abs(it.extras["weight"] * it.score) for it in words]
        assert effect == sorted(effect, reverse=True)


@pytest.mark.slow
def test_exact_footrule_aggregation_is_never_worse_than_cemc(reviews):
    """The same coalitions merged two ways: the exact assignment's footrule objective is <= CEMC's."""
    from xcore.mln.iexplain import IExplainer

    ds, setting, model = reviews
    opts = {"n_samples": 300, "burn_in": 50, "n_chains": 2, "seed": 0}
    cem = IExplainer(T=3, top_k=5, gibbs_options=opts).fit(model, "review")
    exact = IExplainer(T=3, top_k=5, gibbs_options=opts, aggregation="exact_footrule").fit(model, "review")
    for atom in model.mln_.atoms_text()[:25]:
        a, b = cem.explain(atom), exact.explain(atom)
        if a.meta["cemc_objective"] is not None:
            assert b.meta["cemc_objective"] <= a.meta["cemc_objective"] + 1e-9
            assert "exact" in b.meta["aggregation"]
    with pytest.raises(XcoreError, match="unknown aggregation 'median'"):
        IExplainer(aggregation="median").fit(model, "review")


def test_small_helpers_of_the_page():
    import pandas as pd

    from xcore.mln.run_evaluation import sweep_curves
    from xcore.mln.workflow import available_methods, query_object

    words = TextSetting("positive", "review", "has_word", ("same_user",))
    assert available_methods(words) == ["I-Explain", "M-Explain", "R-Explain", "LIME", "SHAP"]
    assert available_methods(TextSetting("smokes", "person")) == ["I-Explain", "M-Explain", "R-Explain"]
    assert query_object(words, "positive(r0007)") == "r0007"
    with pytest.raises(XcoreError, match="not an atom of positive"):
        query_object(words, "smokes(anna)")
    frame = pd.DataFrame({"parameter": ["C", "C", "S"], "value": [0.5, 0.1, 0.25], "word_precision": [0.6, 0.5, 0.4],
                          "relational_precision": [0.3, 0.2, 0.1], "top_exp_acc": [0.9, 0.8, 0.7], "seconds": 1.0})
    long = sweep_curves(frame, "C")
    assert len(long) == 6 and set(long["series"]) == {"word_precision", "relational_precision", "top_exp_acc"}
    assert long[long["series"] == "word_precision"]["value"].tolist() == [0.1, 0.5]  # sorted by value
    assert long[long["series"] == "word_precision"]["score"].tolist() == [0.5, 0.6]


@pytest.mark.slow
def test_coalition_summary_matches_the_fitted_coalitions(reviews):
    from xcore.mln.iexplain import IExplainer

    ds, setting, model = reviews
    ix = IExplainer(T=2, gibbs_options={"n_samples": 200, "burn_in": 20, "n_chains": 2, "seed": 0}).fit(model, "review")
    table = ix.coalition_summary()
    assert table["coalition"].tolist() == [1, 2]
    assert table["objects"].tolist() == [len(c) for c in ix.coalitions_]
    assert table["beta"].tolist() == pytest.approx(list(ix.betas_))
    assert (table["ground formulas"] > 0).all() and (table["symmetric formulas merged"] >= 0).all()
