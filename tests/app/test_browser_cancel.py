"""Real-browser test of the run button: a long ESMS search is cancelled twice; a click for other settings
while a run is going stops it and runs the new settings to the end.

Also: a deep link (/esms) as the server's first request gets the app's navigation (not every file of
a page folder as old-style pages), and the first "Check stability" keeps the Stability tab open.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from browser_kit import CHROMIUM, CHROMIUM_ARGS, LOGS, click_when_ready

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


SETTLED_JS = """() => !document.querySelector('[data-stale="true"]')
    && ![...document.querySelectorAll('[data-testid="stStatusWidget"]')].some(e => e.offsetParent !== null)"""
"""No element left from an earlier script pass (Streamlit marks them data-stale until the pass that
replaces them ends) and no "Running" indicator."""


def wait_idle(page, timeout: float = 120.0) -> None:
    """Wait until the page has settled (twice, a second apart): while a rerun draws, the previous
    pass's elements stand beside the new ones, so counts mean something only once it has ended."""
    time.sleep(0.5)
    wait_until(lambda: page.evaluate(SETTLED_JS) and (time.sleep(1.0) or page.evaluate(SETTLED_JS)),
               "the page to settle", timeout)


def keep_evidence(page, name: str) -> None:
    """A failed browser test leaves the page's screenshot and text beside the server log (tests/artifacts/)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(LOGS / f"{name}.png"), full_page=True)
    (LOGS / f"{name}.txt").write_text(page.inner_text("body"))


def wait_until(condition, what: str, timeout: float = 120.0) -> None:
    """Poll `condition` until it holds: the page settles when its script pass ends (stale elements of
    an interrupted pass stay until then), and a busy machine decides when that is."""
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            raise AssertionError(f"{what}: not as expected after {timeout:.0f} s")
        time.sleep(0.5)


def press(button) -> None:
    """Click a button while a run redraws the page around it: the click event goes to the button itself
    (a pointer click at its coordinates can land on a neighbour that the redraw moved there)."""
    button.wait_for(timeout=60_000)
    button.dispatch_event("click")


def set_number(page, label: str, value: int, idle: bool = True) -> None:
    """Type a number and press Enter; with `idle`, wait until the rerun that takes it has ended."""
    box = page.get_by_role("spinbutton", name=label, exact=True)  # not the field's help button
    box.wait_for(timeout=60_000)
    box.fill(str(value))
    box.press("Enter")
    time.sleep(1.5)  # the rerun that takes the new value
    if idle:
        wait_idle(page)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")
def test_cancel_a_long_run_then_run_again(app_url):  # noqa: F811
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        try:
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
                started = page.get_by_text("ESMS — explainable PSL: running…")
                started.wait_for(timeout=60_000)
                time.sleep(2.0)
                t = time.time()
                press(page.get_by_role("button", name="Cancel"))
                # the status box is replaced in place (never left stale): its label says the run ended
                page.get_by_text("ESMS — explainable PSL: cancelled").wait_for(timeout=60_000)
                assert time.time() - t < 45, "the run did not stop soon after Cancel"
                wait_idle(page)  # then nothing of an earlier pass is left: one message, one caption, the results once
                assert page.get_by_text("was cancelled").count() == 1
                assert page.get_by_text("the previous run on this data").count() == 1
                assert page.get_by_text("Test MSE").count() == first_mse
                assert page.locator(".stException").count() == 0
            # a click for other settings while a run is going stops that run and starts the new one
            click_when_ready(page.get_by_role("button", name="Run search").first)
            page.get_by_text("ESMS — explainable PSL: running…").wait_for(timeout=60_000)
            set_number(page, "Iterations N", 6, idle=False)
            time.sleep(2.0)
            press(page.get_by_role("button", name="Run search"))
            page.get_by_text("done in").first.wait_for(timeout=300_000)
            wait_idle(page)
            assert page.get_by_text("Test MSE").count() == first_mse
            # the end of the pass removed what it did not draw again: the cancel message, the captions
            assert page.get_by_text("was cancelled").count() == 0
            assert page.get_by_text("the previous run on this data").count() == 0
            assert page.get_by_text("The settings changed since the last run").count() == 0
            assert page.locator(".stException").count() == 0
        except Exception:
            keep_evidence(page, "cancel-failure")
            raise
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
