"""AppTests of the Compare page (runs of this session side by side) and of the report and card
downloads the shared page parts add to every method page."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from xcore.data.samples import load_sample
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.methods import Run, prediction_frame

ROOT = Path(__file__).resolve().parents[2]


def toy_run(method: str, sets: dict[str, dict[str, list[str]]], fingerprint: str = "fp") -> Run:
    exps = {}
    for name, by_target in sets.items():
        exps[name] = ExplanationSet([Explanation(target=t, items=[
            ExplanationItem(kind="feature", text=x, natural=x, score=float(10 - i)) for i, x in enumerate(texts)])
            for t, texts in by_target.items()], method=name)
    targets = list(next(iter(sets.values())))
    return Run(method=method, settings={}, fingerprint=fingerprint, dataset="toy",
               predictions=prediction_frame(targets, [0.5] * len(targets)), explanations=exps)


def compare_page(runs: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "compare.py"), default_timeout=120)
    at.session_state["_runs"] = OrderedDict(runs)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_compare_page_without_runs_says_what_to_do():
    at = compare_page({})
    assert any("No runs yet" in i.value for i in at.info)


def test_compare_page_shows_agreement_disagreements_first_and_items_side_by_side():
    one = toy_run("m1", {"m1:x": {"t1": ["a", "b", "c"], "t2": ["a", "b", "c"]}})
    two = toy_run("m2", {"m2:y": {"t1": ["a", "b", "c"], "t2": ["p", "q", "b"]}})
    at = compare_page({("m1", "fp", "aaaaaa1"): one, ("m2", "fp", "bbbbbb2"): two})
    at.slider(key="compare_k").set_value(3).run()
    pairs = next(d.value for d in at.dataframe if "mean_overlap" in d.value.columns and "a" in d.value.columns)
    assert pairs.loc[0, "a"] == "m1:x" and pairs.loc[0, "b"] == "m2:y"
    assert pairs.loc[0, "mean_overlap"] == pytest.approx((1 + 1 / 3) / 2, abs=1e-3)
    worst = next(d.value for d in at.dataframe if "min_overlap" in d.value.columns)
    assert worst["target"].tolist() == ["t2", "t1"]  # the disagreement first
    items = next(d.value for d in at.dataframe if "rank" in d.value.columns)
    assert items["m2:y"].tolist() == ["p", "q", "b"]  # the selected target defaults to the worst one
    for _ in range(2):  # choosing another target, twice: the table follows
        at.selectbox(key="compare_target").set_value("t1").run()
        assert not at.exception
        items = next(d.value for d in at.dataframe if "rank" in d.value.columns)
        assert items["m2:y"].tolist() == ["a", "b", "c"]
    assert len(at.get("plotly_chart")) == 2
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Comparison (HTML)", "Agreement per target (CSV)"]


def test_one_method_with_two_settings_is_labelled_by_its_settings():
    low = toy_run("m", {"m:x": {"t1": ["a", "b"]}})
    high = toy_run("m", {"m:x": {"t1": ["b", "a"]}})
    at = compare_page({("m", "fp", "aaaaaa1"): low, ("m", "fp", "bbbbbb2"): high})
    items = next(d.value for d in at.dataframe if "rank" in d.value.columns)
    assert list(items.columns) == ["rank", "m aaaaaa/m:x", "m bbbbbb/m:x"]
    assert items["m aaaaaa/m:x"].tolist()[:2] == ["a", "b"] and items["m bbbbbb/m:x"].tolist()[:2] == ["b", "a"]


def test_compare_page_refuses_runs_on_different_data_in_words():
    one = toy_run("m1", {"m1:x": {"t1": ["a"]}})
    two = toy_run("m2", {"m2:y": {"t1": ["a"]}}, fingerprint="other")
    at = compare_page({("m1", "fp", "a1"): one, ("m2", "other", "b2"): two})
    assert any("different data" in e.value for e in at.error)


def test_method_pages_offer_the_report_and_an_explanation_card():
    at = AppTest.from_file(str(ROOT / "app_pages" / "plkb.py"), default_timeout=300)
    at.session_state["dataset"] = load_sample("titanic_like")
    at.run()
    for _ in range(2):  # train twice: the second is served from the run cache, same downloads
        at.button(key="plkb_train").click().run()
        assert not at.exception, [e.value for e in at.exception]
        labels = [b.proto.label for b in at.get("download_button")]
        assert "Report (HTML)" in labels and "Explanation card (HTML)" in labels
        assert {"Run bundle (JSON)", "Predictions (CSV)", "Explanations (JSON)"} <= set(labels)
