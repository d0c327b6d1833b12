"""The HTML run report and explanation cards: sections, plotly inlined exactly once, escaping, chosen
targets, graphs for ground-rule explanations, `report_html(run)`."""

from __future__ import annotations

import re

import pytest

from xcore.data.samples import load_sample
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.methods import REGISTRY, Run, prediction_frame, run_method
from xcore.report import card_html, plotly_js, report_html


@pytest.fixture(scope="module")
def esms_run():
    ds = load_sample("lastfm_demo")
    settings = REGISTRY["esms"].default_settings(ds).replace(iterations=4, rules_per_model=5)
    return ds, run_method("esms", ds, settings, cache=None)


def test_report_has_every_section_plotly_once_and_graph_cards(esms_run):
    ds, run = esms_run
    html = report_html(run, data_summary=ds.summary())
    assert html.count(plotly_js()[:200]) == 1
    rest = html.replace(plotly_js(), "")
    assert "cdn.plot.ly" not in rest and "<script src=" not in rest and "http" not in rest.replace("http-equiv", "")
    assert re.findall(r'<section id="(\w+)">', html) == ["data", "settings", "metrics", "model", "predictions",
                                                          "explanations"]
    targets = [str(t) for t in run.predictions["target"][:5]]
    assert re.findall(r'class="card" data-target="([^"]+)"', html) == [t.replace("'", "&#x27;") for t in targets]
    assert html.count('-graph"') >= 5 and 'class="sortable" id="predictions"' in html
    for name in ("gamma", "rules_per_model", "mep@1"):
        assert f"<td>{name}</td>" in html
    assert all(f"<td>{p}</td>" in html for p in ds.summary()["predicate"]) if "predicate" in ds.summary() else True


def test_report_cards_for_chosen_targets_and_unknown_targets_refused(esms_run):
    _, run = esms_run
    last = str(run.predictions["target"].iloc[-1])
    html = report_html(run, targets=[last])
    assert html.count('class="card"') == 1 and f'data-target="{last}"' in html
    with pytest.raises(XcoreError, match=r"no explanation of target 'rating\(nobody, x\)'"):
        report_html(run, targets=["rating(nobody, x)"])


def test_every_text_is_escaped():
    evil = "<script>alert(1)</script>"
    item = ExplanationItem(kind="ground_rule", text=f"r({evil}) -> s(a)", natural=evil, score=1.0,
                           atoms=[f"r({evil})", "s(a)"], target_index=1, roles=["body", "head"])
    exp = Explanation(target="s(a)", target_text=evil, items=[item], method="toy:x")
    run = Run(method="toy", settings={"note": evil}, fingerprint="f", dataset=evil,
              predictions=prediction_frame(["s(a)"], [0.5], extra=[evil]),
              explanations={"toy:x": ExplanationSet([exp], method="toy:x")})
    for html in (report_html(run), card_html(exp)):
        body = html[html.index("</head>"):]
        assert evil not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_a_card_is_standalone_with_bars_and_graph(esms_run):
    _, run = esms_run
    exp = run.explanations["esms:ground-rules"][0]
    html = card_html(exp)
    assert html.startswith("<!DOCTYPE html>") and html.count(plotly_js()[:200]) == 1
    assert html.count("Plotly.newPlot") == 2 and exp.items[0].natural.replace("'", "&#x27;") in html
