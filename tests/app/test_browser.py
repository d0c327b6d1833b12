"""Real-browser test: start the app, pick a sample in headless Debian chromium, screenshot it; every method
page runs in the browser once per session (`method_page_runs`, shared with the layout test).

Screenshots go to the ignored `tests/artifacts/screenshots/` so a test run leaves the work tree clean;
`make screenshots` (XCORE_REFRESH_SCREENSHOTS=1) writes them to `tests/screenshots/`, which README.md shows.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from browser_kit import CHROMIUM, CHROMIUM_ARGS, METHOD_PAGES, SHARED_TABS, SHOTS, UNSIGNED

SHOT = SHOTS / "home.png"
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")
def test_home_page_in_real_browser(shared_app_url):
    from playwright.sync_api import sync_playwright

    from xcore.data.samples import list_samples

    app_url = shared_app_url
    samples = list_samples()
    pick = next((s for s in samples if s.name == "lastfm_demo"), samples[-1])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.goto(app_url, wait_until="domcontentloaded")
        page.get_by_text("Dataset:").first.wait_for(timeout=60_000)
        # choose another sample in the select box and load it
        box = page.locator("[data-testid=stSelectbox]").first
        box.wait_for(state="visible", timeout=90_000)  # a busy machine may take a while to lay the page out
        box.click(timeout=60_000)
        page.keyboard.type(pick.title[:12])
        page.keyboard.press("Enter")
        page.get_by_role("button", name="Load sample").click()
        page.get_by_text(f"sample: {pick.title}").first.wait_for(timeout=60_000)
        page.get_by_text("Predicates").first.wait_for()
        page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
        time.sleep(1.5)  # let plotly finish drawing
        assert page.locator(".stException").count() == 0
        SHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOT), full_page=True)
        browser.close()
    assert SHOT.stat().st_size > 20_000


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")
@pytest.mark.parametrize("path", [m[0] for m in METHOD_PAGES])
def test_method_pages_in_real_browser(method_page_runs, path):
    """Each method page opened directly: it offers its sample, runs, shows signed bars (or says its score has no
    direction), has the shared tabs, raises nothing; a screenshot each (ESMS: its run-wide views too)."""
    rec = method_page_runs[path]
    assert rec.error is None, rec.error
    assert rec.exceptions == 0, path
    if path in UNSIGNED:
        assert rec.no_direction_caption > 0
    else:
        assert rec.signed_bars > 0 or rec.undecided > 0  # a classifier row may be undecided
    for tab in SHARED_TABS:  # every method page has the shared views
        assert rec.tabs[tab] == 1, (path, tab)
    shots = [path] + (["esms_global", "esms_quality"] if path == "esms" else [])
    for shot in shots:
        assert rec.shots.get(shot, 0) > 20_000, (shot, rec.shots)
        assert (SHOTS / f"{shot}.png").stat().st_size > 20_000
