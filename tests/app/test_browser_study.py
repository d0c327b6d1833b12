"""Real-browser test of a participant: open the link in headless Debian chromium, consent, answer,
kill the server mid-session (SIGKILL), restart it, resume with the same link; nothing lost or doubled.

The screenshot of the participant view is the one README.md shows (`tests/screenshots/study_participant.png`,
refreshed by `make screenshots`; test runs write to the ignored `tests/artifacts/screenshots/`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # tests/app/ -> repository root
sys.path.insert(0, str(ROOT / "tests" / "study"))
from study_helpers import make_study  # noqa: E402

from xcore.study import StudyStore  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
SHOT = ROOT / "tests" / ("screenshots" if os.environ.get("XCORE_REFRESH_SCREENSHOTS") == "1"
                         else "artifacts/screenshots") / "study_participant.png"
KEY = "browser-test-key"
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser"),
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing")]
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, db_url: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "XCORE_STUDY_DB": db_url, "XCORE_RESEARCHER_KEY": KEY}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).status == 200:
                return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("streamlit did not start")


def idle(page, timeout: float = 60) -> None:
    """Wait until the app's script run has finished (no running indicator), then a moment more."""
    deadline = time.time() + timeout
    while time.time() < deadline and page.locator("[data-testid=stStatusWidget]:visible").count():
        time.sleep(0.3)
    time.sleep(0.5)


def answer_and_next(page, item: int) -> None:
    """Pick the 4th option of every question on screen `item` and press Next."""
    page.get_by_text(f"Item {item} of 6").first.wait_for(timeout=60_000)
    idle(page)
    radios = page.locator("[data-testid=stRadio]")
    for i in range(radios.count()):
        option = radios.nth(i).locator("input[type=radio]").nth(3)
        for _ in range(10):  # a page that just reconnected may swallow the first clicks
            radios.nth(i).locator("[data-testid=stRadioOption]").nth(3).click()
            if option.is_checked():
                break
            time.sleep(0.5)
        assert option.is_checked()
    page.get_by_role("button", name="Next").click()
    try:
        page.get_by_text(f"Item {item + 1} of 6").first.wait_for(timeout=60_000)
    except Exception:
        page.screenshot(path=str(ROOT / "tests" / "artifacts" / f"study_item{item}.png"), full_page=True)
        raise


def test_participant_in_real_browser_survives_a_server_kill(tmp_path):
    from playwright.sync_api import sync_playwright

    db_url = f"sqlite:///{tmp_path / 'browser.sqlite'}"
    store = StudyStore(db_url)
    store.publish(make_study(n_items=6))
    (token,) = store.add_participants("s1", 1)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    link = f"{url}/?study=s1&p={token}"
    server = start_server(port, db_url)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1000, "height": 1400})
            page.goto(link, wait_until="domcontentloaded")
            page.get_by_text("I have read this and agree").first.wait_for(timeout=90_000)
            page.get_by_text("I have read this and agree").first.click()
            page.get_by_role("button", name="Start").click()
            page.get_by_text("Item 1 of 6").first.wait_for(timeout=60_000)
            page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
            time.sleep(1.5)  # let plotly finish drawing
            body = page.inner_text("body").lower()
            assert "explanation a" in body or "explanation b" in body
            for word in ("mln", "i-explain", "lime", "markov", "toy run", "researcher key", "dataset"):
                assert word not in body, word
            assert page.locator("[data-testid=stSidebar]:visible").count() == 0
            assert page.locator("[data-testid=stSidebarNav]").count() == 0
            SHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOT), full_page=True)
            answer_and_next(page, 1)
            answer_and_next(page, 2)
            # kill the server in the middle of the session, then restart it on the same port
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=30)
            rows = store.responses("s1")
            assert sorted(rows["position"].unique()) == [0, 1]
            assert not rows.duplicated(["position", "question_id"]).any()
            before = len(rows)
            server = start_server(port, db_url)
            page.goto(link, wait_until="domcontentloaded")
            page.get_by_text("Item 3 of 6").first.wait_for(timeout=90_000)  # resumed where it stopped
            answer_and_next(page, 3)
            rows = store.responses("s1")
            assert sorted(rows["position"].unique()) == [0, 1, 2] and len(rows) > before
            assert not rows.duplicated(["position", "question_id"]).any()
            # the link opens no other page; a wrong token and the bare Study page open nothing
            page.goto(f"{url}/esms?study=s1&p={token}", wait_until="domcontentloaded")
            page.get_by_text("Item 4 of 6").first.wait_for(timeout=60_000)
            page.goto(f"{url}/?study=s1&p={'x' * 32}", wait_until="domcontentloaded")
            page.get_by_text("not valid").first.wait_for(timeout=60_000)
            page.goto(f"{url}/study", wait_until="domcontentloaded")
            page.get_by_text("Researcher key").first.wait_for(timeout=60_000)
            assert page.get_by_text("Studies and links").count() == 0
            # the researcher view opens with the key typed into the page, and only with the right key
            box = page.get_by_label("Researcher key")
            box.fill("wrong key")
            page.get_by_role("button", name="Open the researcher view").click()
            page.get_by_text("not right").first.wait_for(timeout=60_000)
            assert page.get_by_text("Studies and links").count() == 0
            box.fill(KEY)
            page.get_by_role("button", name="Open the researcher view").click()
            page.get_by_role("tab", name="Studies and links").wait_for(timeout=60_000)
            assert KEY not in page.url
            browser.close()
    finally:
        server.kill()
        server.wait(timeout=30)
        store.dispose()
    assert SHOT.stat().st_size > 20_000
