"""AppTest of the ESMS page: the demo runs end to end, explanations show, edits re-infer, errors show."""

from __future__ import annotations

import pytest
from pagetest import captions, click, errors, item_tables, page

from xcore.data.samples import load_sample

pytestmark = pytest.mark.xdist_group("app")


def latest(at):
    return list(at.session_state["_runs"].values())[-1]


@pytest.fixture(scope="module")
def demo_app():
    at = page("esms", load_sample("lastfm_demo"))
    return click(at, "esms_demo")


def test_page_without_dataset_says_why_and_offers_the_sample():
    at = page("esms")
    assert any("no dataset is loaded" in w.value for w in at.warning)
    click(at, "esms_load_sample")
    assert at.session_state["dataset"].name == "lastfm_demo"


def test_demo_runs_and_shows_metrics_and_explanations(demo_app):
    at = demo_app
    assert not errors(at)
    run = latest(at)
    assert {"Test MSE", "Test MAE", "MEP@1", "MEP@2", "MEP@3"} <= {m.label for m in at.metric}
    assert run.metrics["mse"] < 0.1
    table = item_tables(at)[0]
    assert len(table) >= 1 and list(table["rank"]) == list(range(1, len(table) + 1))
    assert (table["score"].abs().diff().dropna() <= 1e-12).all()  # ranked by |score|
    assert any(c.startswith("Score |w·∂φ/∂y|") for c in captions(at))
    assert len(run.explanations["esms:ground-rules"]) == len(run.predictions)


def test_edited_rules_re_infer(demo_app):
    at = demo_app
    at.text_area(key="esms_rules_text").set_value(
        "1.0: sgd_rating(U, I) & rated(U, I) -> rating(U, I) ^2\n1.0: ~rating(U, I) ^2\n")
    click(at, "esms_reinfer")
    run = latest(at)
    assert len(run.model.rules_) == 2
    # with equal weights pulling up to sgd and down to 0, a prediction is half its sgd value
    assert (run.predictions["prediction"] <= 0.5 + 1e-6).all()
    assert any("hand-edited" in i.value for i in at.info)


def test_broken_rule_text_shows_error(demo_app):
    at = demo_app
    before = latest(at)
    at.text_area(key="esms_rules_text").set_value("1.0: rating(U, I -> rating(U, I)\n")
    click(at, "esms_reinfer")
    assert any("line 1" in e for e in errors(at))
    assert latest(at) is before


def test_counterpart_option_reaches_the_search():
    at = page("esms", load_sample("lastfm_demo"))
    at.checkbox(key="esms_counterparts").check()
    at.number_input(key="esms_iterations").set_value(5)
    at.number_input(key="esms_rules_per_model").set_value(6)
    at.run()
    click(at, "esms_run_btn")
    run = latest(at)
    assert run.settings.counterparts and run.model.search_.counterparts
    assert run.settings.iterations == 5


def test_downloads_offer_bundle_predictions_and_explanations(demo_app):
    labels = [b.label for b in demo_app.get("download_button")]
    assert {"Run bundle (JSON)", "Predictions (CSV)", "Explanations (JSON)", "Model (PSL rules)"} <= set(labels)


def test_unreachable_dask_scheduler_is_an_error_in_words():
    at = page("esms", load_sample("lastfm_demo"))
    at.text_input(key="esms_scheduler").set_value("tcp://127.0.0.1:1")
    at.number_input(key="esms_iterations").set_value(2)
    at.run()
    click(at, "esms_run_btn")
    assert not at.exception
    assert any("cannot connect to the Dask scheduler at 'tcp://127.0.0.1:1'" in e for e in errors(at))


def test_too_few_labels_said_before_the_run_and_generated_data_in_one_click():
    at = page("esms", load_sample("friends_smokers"))
    assert any("Too few labelled targets for a split" in w.value for w in at.warning)
    assert any("to test it" in c for c in captions(at))
    click(at, "esms_load_generated")
    assert at.session_state["dataset"].name.startswith("friends")
    assert len(at.session_state["dataset"].truth("cancer")) > 300
    assert not any("Too few labelled targets" in w.value for w in at.warning)
    # a 0/1 unary target: joint weights with the priors and counterparts by default
    assert at.radio(key="esms_weight_learning").value == "calibrated"
    assert at.checkbox(key="esms_counterparts").value
