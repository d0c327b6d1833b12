"""Real-browser test of the run button: a long ESMS search is cancelled, then runs again to the end.

Also: a deep link (/esms) as the server's first request gets the app's navigation (not every file of
pages/ as old-style pages), and the first "Check stability" keeps the Stability tab open.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from test_browser import CHROMIUM, CHROMIUM_ARGS, app_url, click_when_ready  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def wait_idle(page, timeout: int = 120_000) -> None:
    """Wait until the script run has ended (Streamlit's "Running" widget gone): while a rerun draws,
    the previous pass's elements can stand beside the new ones."""
    time.sleep(0.5)
    page.locator("[data-testid='stStatusWidget']").wait_for(state="hidden", timeout=timeout)


def set_number(page, label: str, value: int) -> None:
    box = page.get_by_label(label)
    box.wait_for(timeout=60_000)
    box.fill(str(value))
    box.press("Enter")
    time.sleep(1.5)  # the rerun that takes the new value
    wait_idle(page)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")
def test_cancel_a_long_run_then_run_again(app_url):  # noqa: F811
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(f"{app_url}/esms", wait_until="domcontentloaded")  # the server's first request
        click_when_ready(page.get_by_role("button", name="Load the Last.fm").first)
        nav = page.locator("[data-testid=stSidebarNav]")
        assert nav.get_by_text("ESMS — explainable PSL").count() == 1
        assert nav.get_by_text("components").count() == 0 and nav.get_by_text("run control").count() == 0
        set_number(page, "Iterations N", 5)
        click_when_ready(page.get_by_role("button", name="Run search").first)
        page.get_by_text("Test MSE").first.wait_for(timeout=300_000)
        wait_idle(page)
        first_mse = page.get_by_text("Test MSE").count()
        set_number(page, "Iterations N", 500)  # minutes of work: cancelled twice
        for attempt in range(2):
            click_when_ready(page.get_by_role("button", name="Run search").first)
            cancel = page.get_by_role("button", name="Cancel")
            cancel.wait_for(timeout=60_000)
            time.sleep(2.0)
            t = time.time()
            cancel.click()
            page.get_by_text("was cancelled").first.wait_for(timeout=60_000)
            assert time.time() - t < 45, "the run did not stop soon after Cancel"
            assert page.locator(".stException").count() == 0
            # the previous results stay visible, said to be the previous run's
            page.get_by_text("the previous run on this data").first.wait_for(timeout=60_000)
            # the previous results are still shown (on a loaded machine Streamlit sometimes keeps a second,
            # stale copy of them after a cancel: seen 1 run in 4 with two busy cores; noted for issue 14)
            page.get_by_text("Test MSE").first.wait_for(timeout=60_000)
            assert page.get_by_text("Test MSE").count() >= first_mse
        set_number(page, "Iterations N", 6)
        click_when_ready(page.get_by_role("button", name="Run search").first)
        page.get_by_text("done in").first.wait_for(timeout=300_000)
        # the end of the pass removes what it did not draw again: the cancel message and the caption go
        page.get_by_text("was cancelled").first.wait_for(state="detached", timeout=60_000)
        page.get_by_text("the previous run on this data").first.wait_for(state="detached", timeout=60_000)
        page.get_by_text("Test MSE").first.wait_for(timeout=60_000)
        assert page.locator(".stException").count() == 0
        browser.close()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")
def test_first_check_stability_keeps_the_stability_tab(app_url):  # noqa: F811
    """Issue 14, rough edge 6: the first click after a run used to reopen the first tab (the run's progress
    box vanished, so every element below moved up one place and was drawn anew)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(f"{app_url}/esms", wait_until="domcontentloaded")
        click_when_ready(page.get_by_role("button", name="Demo (LastFM sample, small search)").first)
        page.get_by_text("Test MSE").first.wait_for(timeout=300_000)
        for _ in range(2):  # the first click is the one that jumped
            page.get_by_role("tab", name="Stability").click()
            click_when_ready(page.get_by_role("button", name="Check stability"))
            page.get_by_text("Largest score change").first.wait_for(timeout=120_000)  # visible: its tab is open
            time.sleep(1.0)
            assert page.get_by_role("tab", selected=True).inner_text().strip() == "Stability"
        assert page.locator(".stException").count() == 0
        browser.close()
