"""AppTest of the Markov-logic page: exact and Gibbs inference on friends/smokers, explanations, errors."""

from __future__ import annotations

import pandas as pd
import pytest
from pagetest import captions, chart_titles, click, errors, page

from xcore.data.samples import load_sample

pytestmark = pytest.mark.xdist_group("app")


def latest(at):
    return list(at.session_state["_runs"].values())[-1]


def test_exact_then_gibbs_agree_and_explain():
    at = page("mln", load_sample("friends_smokers"))
    click(at, "mln_run")
    assert not errors(at)
    exact = latest(at).predictions.set_index("target")["prediction"]
    at.radio(key="mln_inference").set_value("gibbs")
    at.run()
    click(at, "mln_run")
    gibbs = latest(at).predictions.set_index("target")["prediction"]
    assert (gibbs - exact).abs().max() < 0.05
    assert "Max R-hat" in [m.label for m in at.metric]
    assert "Sampled by Gibbs sampling." in captions(at)
    # MC-SAT, chosen on the form, says so (it was once shown as "Exact enumeration")
    assert at.radio(key="mln_sampler").disabled is False
    at.radio(key="mln_sampler").set_value("mcsat")
    at.run()
    click(at, "mln_run")
    mcsat = latest(at).predictions.set_index("target")["prediction"]
    assert latest(at).model.model_.method_ == "mcsat" and (mcsat - exact).abs().max() < 0.1
    shown = captions(at)
    assert "Sampled by MC-SAT." in shown and not any(c.startswith("Exact enumeration") for c in shown)
    assert "Max R-hat" in [m.label for m in at.metric]
    at.radio(key="mln_inference").set_value("exact")
    at.run()
    assert at.radio(key="mln_sampler").disabled  # exact enumeration samples nothing


def test_rule_syntax_error_is_shown():
    at = page("mln", load_sample("friends_smokers"))
    at.text_area(key="mln_rules").set_value("1.5 smokes(x => cancer(x)")
    at.run()
    click(at, "mln_run")
    assert any("line 1" in e for e in errors(at))


@pytest.fixture(scope="module")
def reviews_page():
    """The review sample: Gibbs inference, then I-Explain (3 coalitions), M-Explain and LIME."""
    at = page("mln", load_sample("reviews_demo"))
    assert at.radio(key="mln_inference").value == "auto"  # 150 query atoms: too many to enumerate, so Gibbs
    assert any("here 150), else sampling with the Sampler setting" in c for c in captions(at))
    assert "has_word(r, 'great') => positive(r)" in at.text_area(key="mln_rules").value
    at.multiselect(key="mln_explainers").set_value(["mln:i-explain", "mln:m-explain", "mln:lime"])
    at.number_input(key="mln_T").set_value(3)
    at.run()
    click(at, "mln_run")
    assert not errors(at)
    return at


def test_reviews_explained_side_by_side(reviews_page):
    at = reviews_page
    run = latest(at)
    assert list(run.explanations) == ["mln:i-explain", "mln:m-explain", "mln:lime"]
    assert any(m.value.startswith("**I-Explain** — ") for m in at.markdown)
    titles = " ".join(chart_titles(at))
    assert "Top word formulas" in titles and "Top relational formulas" in titles
    assert "Objects in embedding space" in titles  # coalitions tab
    at.selectbox(key="mln_right").set_value("mln:lime")
    at.run()
    assert not at.exception, at.exception
    assert any("LIME coefficient" in c.value for c in at.caption)


def test_reviews_evaluation_against_the_annotation(reviews_page):
    at = reviews_page
    tables = [d.value for d in at.dataframe if "word_precision" in d.value.columns]
    assert tables, "no evaluation table"
    table = tables[0].set_index("method")
    assert set(table.index) == {"I-Explain", "M-Explain", "LIME"}
    assert table.loc["M-Explain", "word_precision"] > 0.5
    assert pd.isna(table.loc["LIME", "relational_precision"])


def test_bad_annotation_upload_is_reported():
    at = page("mln", load_sample("friends_smokers"))
    at.sidebar.file_uploader(key="mln_annotation_file").set_value(("ann.json", b"{\"planted_words\": [1,",
                                                                   "application/json"))
    at.run()
    assert not at.exception, at.exception
    assert any("ann.json" in e and "malformed JSON" in e for e in errors(at))


def test_smokers_choose_the_query_predicate_and_explain_without_words():
    at = page("mln", load_sample("friends_smokers"))
    assert at.selectbox(key="mln_target").options == ["smokes", "cancer"]
    at.selectbox(key="mln_target").set_value("cancer")
    at.run()
    assert at.multiselect(key="mln_explainers").options == ["I-Explain", "M-Explain", "R-Explain"]  # no words
    click(at, "mln_run")
    assert not errors(at)
    run = latest(at)
    assert run.model.setting_.target == "cancer"
    assert all(e.target.startswith("cancer(") for e in run.explanations["mln:i-explain"])


@pytest.mark.slow
def test_loaded_markov_logic_program_with_binary_queries_runs_every_formula_explainer():
    """A .mln + .db upload whose query predicate is binary: the page starts from the program's
    formulas (with <=> and EXIST) and explains advisedBy atoms by M-, I- and R-Explain."""
    from xcore.data import load

    program = (b"*Prof(person)\nAdv(person, person)\n1.2 Adv(x, y) => Prof(y)\n"
               b"0.5 Adv(x, y) => (Adv(y, x) <=> Prof(x))\n-0.3 EXIST y Adv(x, y)\n")
    ds = load([("p.mln", program + b"Busy(person)\n"), ("e.db", b"Prof(A)\n!Adv(A, A)\nAdv(B, A)\n"),
               ("query.db", b"Adv(x, y)\n")])
    at = page("mln", ds)
    assert at.selectbox(key="mln_target").options[:2] == ["Adv", "Busy"]  # the program's query first
    assert "<=>" in at.text_area(key="mln_rules").value
    click(at, "mln_run")
    assert not errors(at)
    run = latest(at)
    assert set(run.explanations) == {"mln:m-explain", "mln:i-explain", "mln:r-explain"}
    assert all(t.startswith("Adv(") for t in run.predictions["target"])
    assert len(run.predictions) == 2
