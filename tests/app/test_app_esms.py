"""AppTest of the ESMS page: the demo runs end to end, explanations show, edits re-infer, errors show."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from xcore.data.samples import load_sample

ROOT = Path(__file__).resolve().parents[2]  # tests/app/ -> repository root
PAGE = str(ROOT / "pages" / "esms.py")
pytestmark = pytest.mark.xdist_group("app")


@pytest.fixture(scope="module")
def demo_app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["dataset"] = load_sample("lastfm_demo")
    at.run()
    assert not at.exception, at.exception
    at.button(key="esms_demo").click()
    at.run()
    assert not at.exception, at.exception
    return at


def test_page_without_dataset_points_home():
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception
    assert any("No dataset loaded" in i.value for i in at.info)


@pytest.mark.slow
def test_demo_runs_and_shows_metrics_and_explanations(demo_app):
    at = demo_app
    assert not at.error, [e.value for e in at.error]
    run = at.session_state["esms_run"]
    labels = [m.label for m in at.metric]
    assert {"Test MSE", "Test MAE", "MEP@1", "MEP@2", "MEP@3"} <= set(labels)
    assert run.metrics["mse"] < 0.1
    # the explanation table of the first prediction is shown, ranked by score
    assert len(at.dataframe) >= 3
    assert len(run.explanations) == len(run.predictions)


def test_edited_rules_re_infer(demo_app):
    at = demo_app
    at.text_area(key="esms_rules_text").set_value(
        "1.0: sgd_rating(U, I) & rated(U, I) -> rating(U, I) ^2\n1.0: ~rating(U, I) ^2\n")
    at.button(key="esms_reinfer").click()
    at.run()
    assert not at.exception, at.exception
    run = at.session_state["esms_run"]
    assert len(run.model.rules) == 2
    # with equal weights pulling up to sgd and down to 0, a prediction is half its sgd value
    assert (run.predictions["prediction"] <= 0.5 + 1e-6).all()


def test_broken_rule_text_shows_error(demo_app):
    at = demo_app
    before = at.session_state["esms_run"]
    at.text_area(key="esms_rules_text").set_value("1.0: rating(U, I -> rating(U, I)\n")
    at.button(key="esms_reinfer").click()
    at.run()
    assert not at.exception, at.exception
    assert any("line 1" in e.value for e in at.error)
    assert at.session_state["esms_run"] is before


@pytest.mark.slow
def test_counterpart_option_reaches_the_search():
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["dataset"] = load_sample("lastfm_demo")
    at.run()
    at.checkbox(key="esms_counterparts").check()
    at.number_input(key="esms_n").set_value(5)
    at.number_input(key="esms_lm").set_value(6)
    at.run()
    at.button(key="esms_run_btn").click()
    at.run()
    assert not at.exception, at.exception
    run = at.session_state["esms_run"]
    assert run.settings.counterparts and run.search.counterparts
    assert run.settings.iterations == 5
