"""Real-browser test: start the app, pick a sample in headless Debian chromium, screenshot it.

Screenshots go to the ignored `tests/artifacts/screenshots/` so a test run leaves the work tree clean;
`make screenshots` (XCORE_REFRESH_SCREENSHOTS=1) writes them to `tests/screenshots/`, which README.md shows.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # tests/app/ -> repository root
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "tests" / ("screenshots" if os.environ.get("XCORE_REFRESH_SCREENSHOTS") == "1"
                          else "artifacts/screenshots")
SHOT = SHOTS / "home.png"
LOGS = ROOT / "tests" / "artifacts" / "logs"
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url():
    """A fresh app server on a free port, watching no files; its output goes to a log file under
    tests/artifacts/logs/ (a pipe nobody reads would fill up and stall the server on a chatty run)."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    LOGS.mkdir(parents=True, exist_ok=True)
    log_path = LOGS / f"streamlit-{port}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--server.headless", "true", "--browser.gatherUsageStats", "false",
             # other tests write into the checkout while this server runs: a watcher would reload modules
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError("streamlit did not start: " + log_path.read_text(errors="replace")[-20000:])
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")
def test_home_page_in_real_browser(app_url):
    from playwright.sync_api import sync_playwright

    from xcore.data.samples import list_samples

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


def click_when_ready(locator, attempts: int = 4) -> None:
    """Click once the button is visible and stable; Streamlit may redraw it while a page settles."""
    for i in range(attempts):
        try:
            locator.wait_for(state="visible", timeout=120_000)
            locator.click(timeout=30_000)
            return
        except Exception:  # noqa: BLE001 - redrawn under the pointer: try again
            if i == attempts - 1:
                raise
            time.sleep(2.0)

def open_method_page(browser, url: str, path: str, load: str, run: str, shown: str, width: int = 1400,
                     height: int = 1600, settle: float = 4.0):
    """A method page opened directly, its sample loaded and a default run shown (plotly given `settle` s)."""
    page = browser.new_page(viewport={"width": width, "height": height}, accept_downloads=True)
    page.goto(f"{url}/{path}", wait_until="domcontentloaded")
    click_when_ready(page.get_by_role("button", name=load).first)
    page.get_by_role("button", name=load).first.wait_for(state="detached", timeout=120_000)
    time.sleep(1.0)  # a click during the sample's rerun is lost
    click_when_ready(page.get_by_role("button", name=run, exact=True).first)
    page.get_by_text(shown).first.wait_for(timeout=300_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    time.sleep(settle)  # plotly finishes drawing
    return page



METHOD_PAGES = [
    ("esms", "Load the Last.fm", "Demo (LastFM sample, small search)", "Test MSE"),
    ("plkb", "Load the Titanic", "Train", "Accuracy"),
    ("mln", "Load the Restaurant", "Infer and explain every query", "Top word formulas"),
    ("drm", "Load the Michalski", "Draw features and train", "Mean fidelity"),
    ("nlil", "Load the Generated scenes", "Train", "Clusters collapsed"),
]
UNSIGNED = {"drm", "nlil"}
"""Pages whose explanation scores have no direction (fidelity, rule precision): grey bars, said in the caption."""


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")
def test_method_pages_in_real_browser(app_url):
    """Each method page opened directly: it offers its sample, runs, shows signed bars; a screenshot each."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for path, load, run, shown in METHOD_PAGES:
            # tall: the graph and the reasons in words too; plotly needs longer to draw its many figures
            page = open_method_page(browser, app_url, path, load, run, shown, width=1400, height=4400, settle=6.0)
            assert page.locator(".stException").count() == 0
            signed = page.get_by_text("pushes up").count() + page.get_by_text("pushes down").count()
            if path in UNSIGNED:
                assert page.get_by_text("this score has no direction").count() > 0
            else:
                assert signed > 0 or page.get_by_text("No set of").count() > 0  # a classifier row may be undecided
            for tab in ("Global view", "Model quality", "Downloads"):  # every method page has the shared views
                assert page.get_by_role("tab", name=tab).count() == 1, (path, tab)
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"{path}.png"), full_page=True)
            assert (SHOTS / f"{path}.png").stat().st_size > 20_000
            if path == "esms":  # the README shows the run-wide views too
                for tab, shot, text in (("Global view", "esms_global", "Which reasons explain most predictions"),
                                        ("Model quality", "esms_quality", "Predicted against true values")):
                    page.get_by_role("tab", name=tab).click()
                    page.get_by_text(text).first.wait_for(timeout=60_000)
                    time.sleep(1.5)
                    page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)
                    assert page.locator(".stException").count() == 0
            page.close()
        browser.close()
