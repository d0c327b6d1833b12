"""Real-browser test: the report written by `xcore run` opens from disk with every network request
refused, draws the explanation graph and sorts the predictions table (headless Debian chromium)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser"),
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")]


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "xcore", "run", "esms", "sample:lastfm_demo", "--set", "iterations=4",
                           "--set", "rules_per_model=5", "--cards", "2", "--out", str(out), "-q"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return out / "report.html"


def test_report_opens_offline_and_shows_the_explanation_graph(report_file):
    from playwright.sync_api import sync_playwright

    refused: list[str] = []

    def offline(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(offline=True, viewport={"width": 1300, "height": 1800})
        context.route("**/*", offline)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(report_file.as_uri(), wait_until="load")
        graph = page.locator(".card .graph .js-plotly-plot").first
        graph.wait_for(state="visible", timeout=60_000)
        # the graph is drawn: edge and node traces in its SVG, the target among the node labels' hover data
        assert page.locator(".card .graph .js-plotly-plot .scatterlayer .trace").count() >= 2
        assert page.locator(".card .js-plotly-plot").count() >= 4  # bars and graph for two cards
        assert page.evaluate("typeof Plotly") == "object"
        # every figure fits its column (none drawn wider than its box and clipped)
        overflow = page.eval_on_selector_all(
            ".card .js-plotly-plot", "els => els.map(e => e.querySelector('svg.main-svg').getBoundingClientRect().width"
                                     " - e.parentElement.getBoundingClientRect().width)")
        assert overflow and max(overflow) <= 1
        # the predictions table sorts on a header click (numbers as numbers)
        col = page.locator("#predictions th", has_text="prediction").first
        col.click()
        values = page.eval_on_selector_all("#predictions tbody tr td:nth-child(2)", "els => els.map(e => +e.dataset.v)")
        assert values == sorted(values) and len(values) > 10
        col.click()
        values = page.eval_on_selector_all("#predictions tbody tr td:nth-child(2)", "els => els.map(e => +e.dataset.v)")
        assert values == sorted(values, reverse=True)
        page.screenshot(path=str(report_file.with_suffix(".png")), full_page=False)
        browser.close()
    assert refused == [] and errors == []
    assert report_file.with_suffix(".png").stat().st_size > 20_000
