"""AppTest of the classifier page: train on generated and bundled data, explain a row, bad knowledge."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from xcore.data.samples import load_sample

ROOT = Path(__file__).resolve().parents[2]  # tests/app/ -> repository root
PAGE = str(ROOT / "pages" / "plkb.py")
pytestmark = pytest.mark.xdist_group("app")


def fresh(dataset=None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    if dataset is not None:
        at.session_state["dataset"] = dataset
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.slow
def test_train_on_synthetic_strings_and_explain_first_row():
    at = fresh()
    at.radio(key="plkb_source").set_value("Synthetic strings")
    at.run()
    at.radio(key="plkb_kb").set_value("direct")
    at.run()
    at.button(key="plkb_train").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    run = at.session_state["plkb_run"]
    labels = {m.label: m.value for m in at.metric}
    assert float(labels["Accuracy"]) > 0.75
    assert len(run.predictions) == 300  # 30 % of 1000 rows
    # the explanation of the selected (first) row is shown with its candidate table
    assert any("omega(POS)" in m.value for m in at.markdown)


@pytest.mark.slow
def test_mushroom_sample_as_current_dataset():
    at = fresh(load_sample("mushroom"))
    assert at.radio(key="plkb_source").value == "Current dataset"
    at.button(key="plkb_train").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert float({m.label: m.value for m in at.metric}["Accuracy"]) > 0.95


def test_bad_knowledge_clause_shows_error():
    at = fresh()
    at.radio(key="plkb_source").set_value("Titanic-like passengers")
    at.run()
    at.text_area(key="plkb_knowledge").set_value("0.9: POS | ~NoSuchFeature_1")
    at.button(key="plkb_train").click()
    at.run()
    assert not at.exception, at.exception
    assert any("NoSuchFeature" in e.value for e in at.error)
    assert "plkb_run" not in at.session_state


@pytest.mark.slow
def test_identifier_columns_are_left_out_by_default():
    at = fresh(load_sample("titanic_like"))
    assert set(at.multiselect(key="plkb_drop").value) == {"passengerid", "name", "ticket", "cabin"}
    at.button(key="plkb_train").click()
    at.run()
    assert not at.exception, at.exception
    run = at.session_state["plkb_run"]
    assert "name" not in run.X_train.columns and "sex" in run.X_train.columns
