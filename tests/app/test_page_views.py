"""The shared views on every method page: signed bars, the global view, model quality, waterfalls."""

from __future__ import annotations

import json

import pytest
from pagetest import click, errors, page

from xcore.data.samples import load_sample

pytestmark = pytest.mark.xdist_group("app")

CASES = {
    "esms": ("lastfm_demo", "esms_run_btn", "Predicted against true values"),
    "plkb": ("titanic_like", "plkb_train", "Confusion matrix"),
    "mln": ("friends_smokers", "mln_run", "Calibration"),
}


def figures(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def trace_names(figs) -> set[str]:
    return {t.get("name") for f in figs for t in f["data"]}


def titles(figs) -> list[str]:
    return [f["layout"].get("title", {}).get("text", "") for f in figs]


@pytest.mark.parametrize("name", list(CASES))
def test_signed_bars_global_view_and_quality_on_every_page(name):
    sample, button, quality = CASES[name]
    at = page(name, load_sample(sample))
    for _ in range(2):
        click(at, button)
        assert not errors(at)
        figs = figures(at)
        undecided = any("No set of" in i.value for i in at.info)  # the classifier's first row may tie at [0, 1]
        assert undecided or {"pushes up", "pushes down"} & trace_names(figs), "bars coloured by direction"
        assert any(t.startswith("Which reasons explain most predictions") for t in titles(figs))
        assert any(t.startswith(quality) for t in titles(figs)), titles(figs)
        assert any("Score " in c.value for c in at.caption)


def test_classifier_shapley_values_show_a_waterfall_to_the_prediction():
    at = page("plkb", load_sample("titanic_like"))
    click(at, "plkb_train")
    click(at, "plkb_shap_btn")
    figs = figures(at)
    falls = [f for f in figs if any(t.get("type") == "waterfall" for t in f["data"])]
    assert falls, titles(figs)
    w = falls[0]["data"][0]
    assert w["measure"][0] == "absolute" and w["measure"][-1] == "total"


def test_iexplain_panel_labels_coalition_estimates_and_refuses_empty_rules():
    at = page("mln", load_sample("friends_smokers"))
    click(at, "mln_run")
    heads = [m.value for m in at.markdown if m.value.startswith("**I-Explain**")]
    assert heads and ("coalition estimate" in heads[0] or "prediction" in heads[0])
    if "coalition estimate" in heads[0]:
        assert "full-network marginal" in heads[0]
    at.text_area(key="mln_rules").set_value("   ")
    at.run()
    assert any("rule editor is empty" in e for e in errors(at))
    assert at.button(key="mln_run").disabled


def test_classifier_says_when_no_k_features_decide_a_row():
    at = page("plkb", load_sample("titanic_like"))
    click(at, "plkb_train")
    run = list(at.session_state["_runs"].values())[-1]
    exp = run.explanations["plkb:decisive"]["row 1"] if "row 1" in run.explanations["plkb:decisive"] else None
    shown = [i.value for i in at.info if "No set of 2 features decides" in i.value]
    if exp is not None and exp.meta.get("undecided"):
        assert shown
    at.number_input(key="plkb_k").set_value(4)
    at.run()
    click(at, "plkb_train")
    assert not errors(at)


def test_classifier_what_if_updates_the_interval_and_the_decisive_features():
    at = page("plkb", load_sample("titanic_like"))
    click(at, "plkb_train")
    run = list(at.session_state["_runs"].values())[-1]
    target = sorted(run.predictions["target"])[0]
    before = {m.label: m.value for m in at.metric}["ω(POS) midpoint"]
    row = run.model.row(target).iloc[0]
    flip = "female" if row["sex"] == "male" else "male"
    at.selectbox(key=f"plkb_wi_{target}_sex").set_value(flip)
    at.run()
    assert not at.exception and not errors(at)
    after = {m.label: m.value for m in at.metric}["ω(POS) midpoint"]
    expected = run.model.what_if({**row.to_dict(), "sex": flip})
    assert after == f"{expected.prediction:.3f}"
    assert after != before or expected.prediction == run.model.what_if(row.to_dict()).prediction
    assert any(m.value.startswith("**Decisive features of the edited row**") for m in at.markdown)


def test_drm_page_has_the_shared_views():
    at = page("drm", load_sample("trains_michalski10"))
    for key, value in (("drm_max_draws", 400), ("drm_folds", 2), ("drm_max_epochs", 40)):  # small: 2 fold fits
        at.number_input(key=key).set_value(value)
    at.run()
    click(at, "drm_train")
    assert not errors(at)
    figs = figures(at)
    assert any(t.startswith("Which reasons explain most predictions") for t in titles(figs))
    assert any(t.startswith(("Confusion matrix", "Calibration", "Predicted against true")) for t in titles(figs)) \
        or any("No truth labels" in i.value for i in at.info)
