"""AppTest of the Markov-logic page: exact and Gibbs inference on friends/smokers, explanations, errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from xcore.data.samples import load_sample

ROOT = Path(__file__).resolve().parents[2]  # tests/app/ -> repository root
PAGE = str(ROOT / "pages" / "iexplain.py")
pytestmark = pytest.mark.xdist_group("app")


def fresh() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["dataset"] = load_sample("friends_smokers")
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.slow
def test_exact_then_gibbs_agree_and_explain():
    at = fresh()
    at.button(key="mln_run").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    exact = at.session_state["mln_model"].marginals().set_index("atom")["marginal"]
    assert any("Importance" in m.value for m in at.markdown)
    at.radio(key="mln_method").set_value("gibbs")
    at.run()
    at.button(key="mln_run").click()
    at.run()
    assert not at.exception, at.exception
    gibbs = at.session_state["mln_model"].marginals().set_index("atom")["marginal"]
    assert (gibbs - exact).abs().max() < 0.05
    assert "Max R-hat" in [m.label for m in at.metric]


def test_rule_syntax_error_is_shown():
    at = fresh()
    at.text_area(key="mln_rules").set_value("1.5 smokes(x => cancer(x)")
    at.button(key="mln_run").click()
    at.run()
    assert not at.exception, at.exception
    assert any("line 1" in e.value for e in at.error)


@pytest.fixture(scope="module")
def reviews_page():
    """The review sample: Gibbs inference, then I-Explain (3 coalitions), M-Explain and LIME."""
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["dataset"] = load_sample("reviews_demo")
    at.run()
    assert at.radio(key="mln_method").value == "gibbs"  # 150 query atoms: too many to enumerate
    assert "has_word(r, 'great') => positive(r)" in at.text_area(key="mln_rules").value
    at.button(key="mln_run").click()
    at.run()
    at.multiselect(key="mln_methods").set_value(["I-Explain", "M-Explain", "LIME"])
    at.number_input(key="mln_T").set_value(3)
    at.run()
    at.button(key="mln_explain").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.slow
def test_reviews_explained_side_by_side(reviews_page):
    at = reviews_page
    run = at.session_state["mln_run_result"]
    assert list(run.explanations) == ["I-Explain", "M-Explain", "LIME"]
    assert "**I-Explain** — prediction" in [m.value[:26] for m in at.markdown]
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Top word formulas" in t for t in titles) and any("Top relational formulas" in t for t in titles)
    assert any("Objects in embedding space" in t for t in titles)  # coalitions tab
    at.selectbox(key="mln_right").set_value("LIME")
    at.run()
    assert not at.exception, at.exception
    labels = [b.label for b in at.get("download_button")]
    assert "LIME explanations (JSON)" in labels and "I-Explain explanations (JSON)" in labels


@pytest.mark.slow
def test_reviews_evaluation_against_the_annotation(reviews_page):
    at = reviews_page
    tables = [d.value for d in at.dataframe if "word_precision" in d.value.columns]
    assert tables, "no evaluation table"
    table = tables[0].set_index("method")
    assert set(table.index) == {"I-Explain", "M-Explain", "LIME"}
    # planted words: the MLN methods find them far more often than the LIME surrogate's noise
    assert table.loc["M-Explain", "word_precision"] > 0.5
    assert pd.isna(table.loc["LIME", "relational_precision"])


def test_bad_annotation_upload_is_reported():
    at = fresh()
    at.sidebar.file_uploader(key="mln_annotation_file").set_value(("ann.json", b"{\"planted_words\": [1,", "application/json"))
    at.run()
    assert not at.exception, at.exception
    assert any("ann.json" in e.value and "malformed JSON" in e.value for e in at.error)


@pytest.mark.slow
def test_smokers_choose_the_query_predicate_and_explain_without_words():
    at = fresh()
    assert at.selectbox(key="mln_target").options == ["smokes", "cancer"]
    at.selectbox(key="mln_target").set_value("cancer")
    at.button(key="mln_run").click()
    at.run()
    assert at.multiselect(key="mln_methods").options == ["I-Explain", "M-Explain", "R-Explain"]  # no words
    at.button(key="mln_explain").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    run = at.session_state["mln_run_result"]
    assert run.setting.target == "cancer"
    assert all(e.target.startswith("cancer(") for e in run.explanations["I-Explain"])
