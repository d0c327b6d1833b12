"""AppTest of the classifier page: train on generated and bundled data, explain a row, bad knowledge."""

from __future__ import annotations

import pytest
from pagetest import click, errors, item_tables, page

from xcore.data.samples import load_sample

pytestmark = pytest.mark.xdist_group("app")


def latest(at):
    return list(at.session_state["_runs"].values())[-1]


def test_generate_synthetic_strings_train_direct_and_explain_first_row():
    at = page("plkb", load_sample("friends_smokers"))  # not a table: the generator still works
    at.radio(key="plkb_gen_kind").set_value("Synthetic strings")
    click(at, "plkb_generate")
    assert at.session_state["dataset"].tabular is not None
    at.radio(key="plkb_kb").set_value("direct")
    at.run()
    click(at, "plkb_train")
    assert not errors(at)
    run = latest(at)
    assert float({m.label: m.value for m in at.metric}["Accuracy"]) > 0.75
    assert len(run.predictions) == 300  # 30 % of 1000 rows
    table = item_tables(at)[0]
    assert len(table) >= 1 and table["text"].iloc[0].count("=") == 2  # k = 2 features
    assert any("ω(POS)" in c.value for c in at.caption)


def test_mushroom_sample():
    at = page("plkb", load_sample("mushroom"))
    click(at, "plkb_train")
    assert not errors(at)
    assert float({m.label: m.value for m in at.metric}["Accuracy"]) > 0.95


def test_identifier_columns_are_left_out_by_default():
    at = page("plkb", load_sample("titanic_like"))
    assert set(at.multiselect(key="plkb_drop").value) == {"passengerid", "name", "ticket", "cabin"}
    click(at, "plkb_train")
    run = latest(at)
    assert "name" not in run.model.X_train_.columns and "sex" in run.model.X_train_.columns


def test_shapley_button_twice():
    at = page("plkb", load_sample("titanic_like"))
    click(at, "plkb_train")
    for _ in range(2):
        click(at, "plkb_shap_btn")
        assert not errors(at)
        assert any("Shapley value φ" in c.value for c in at.caption)


def test_kb_default_suits_the_data_and_the_paper_figures_draw():
    at = page("plkb", load_sample("nursery"))
    assert at.radio(key="plkb_kb").value == "tree"  # the Direct KB is the wrong choice on Nursery
    assert any("Suggested: Tree KB" in c.value for c in at.caption)
    at.selectbox(key="plkb_positive_class").set_value("priority")  # several classes: the page asks which to explain
    at.run()
    click(at, "plkb_train")
    at.number_input(key="plkb_agree_rows").set_value(10)
    at.run()
    for _ in range(2):
        click(at, "plkb_agree_btn")
        assert not errors(at)
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Same features as SHAP" in t for t in titles)
    assert any("How often each feature is chosen" in t for t in titles)
    click(at, "plkb_curves_btn")
    assert any("F1 as clauses are added" in c.proto.spec for c in at.get("plotly_chart"))
