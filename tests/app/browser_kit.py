"""What the real-browser tests share: Debian's chromium, an app server on a free port, opening a method page
and running it, and the one pass over every method page whose observations several tests read.

Running the five method pages costs minutes on a loaded machine, so they run once per test session
(`tests/app/conftest.py`: `method_page_runs`): each page is opened at 1400 px, run with its defaults, looked
at (signed bars, shared tabs, a screenshot for the README), measured for layout at 1400 and 1000 px, and on
the classifier page the downloads are clicked; the tests assert on what was recorded.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import traceback
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]  # tests/app/ -> repository root
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "tests" / ("screenshots" if os.environ.get("XCORE_REFRESH_SCREENSHOTS") == "1"
                          else "artifacts/screenshots")
LOGS = ROOT / "tests" / "artifacts" / "logs"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

METHOD_PAGES = [
    ("esms", "Load the Last.fm", "Demo (LastFM sample, small search)", "Test MSE"),
    ("plkb", "Load the Titanic", "Train", "Accuracy"),
    ("mln", "Load the Restaurant", "Infer and explain every query", "Top word formulas"),
    ("drm", "Load the Michalski", "Draw features and train", "Mean fidelity"),
    ("nlil", "Load the Generated scenes", "Train", "Clusters collapsed"),
]
"""(url path, its sample's load button, its run button, a text the run shows)."""
UNSIGNED = {"drm", "nlil"}
"""Pages whose explanation scores have no direction (fidelity, rule precision): grey bars, said in the caption."""
SHARED_TABS = ("Global view", "Model quality", "Downloads")
LAYOUT_WIDTHS = (1400, 1000)
LAYOUT_TABS = ("Global view", "Model quality")
"""Tabs measured after the first one (the shared run-wide views every method page has)."""
DOWNLOADS = ((None, "Explanation card (HTML)"), ("Downloads", "Report (HTML)"), ("Downloads", "Predictions (CSV)"))
"""(tab, button) of the classifier page's downloads clicked twice each (built on click: deferred)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def app_server() -> Iterator[str]:
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
        try:
            proc.wait(timeout=60)  # a loaded machine may take a while to shut the server down
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


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


DRAWN_JS = """
() => {
  if (document.querySelector('[data-stale="true"]')) return null;
  if ([...document.querySelectorAll('[data-testid="stStatusWidget"]')].some(e => e.offsetParent !== null)) return null;
  const shown = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter(shown);
  if (plots.some(p => !p.querySelector('.main-svg'))) return null;
  const boxes = [...plots, ...document.querySelectorAll('.js-plotly-plot g.legend, [data-testid="stDataFrame"]')]
    .filter(shown).map(el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]
      .map(Math.round).join(','); });
  return document.querySelectorAll('[data-testid="stElementContainer"], .element-container').length + '|'
    + boxes.join(';');
}
"""
"""The page's drawn state, or null while it is not settled: a script pass still running (the "Running"
indicator, elements of the previous pass marked stale) or a visible plotly figure without its svg. The
state is the boxes of every visible figure, legend and table, so two equal readings mean nothing moved."""


def wait_drawn(page, timeout: float = 120.0, quiet: float = 0.6) -> None:
    """Wait until the page has settled and its figures and tables stopped moving (the same drawn state
    `quiet` s apart): instead of a fixed sleep, as long as the drawing takes and no longer."""
    deadline = time.time() + timeout
    last, since = None, time.time()
    while time.time() < deadline:
        state = page.evaluate(DRAWN_JS)
        if state is None or state != last:
            last, since = state, time.time()
        elif time.time() - since >= quiet:
            return
        time.sleep(0.2)
    raise AssertionError(f"the page did not settle within {timeout:.0f} s")


def open_method_page(browser, url: str, path: str, load: str, run: str, shown: str, width: int = 1400,
                     height: int = 1600):
    """A method page opened directly, its sample loaded and a default run shown and drawn."""
    page = browser.new_page(viewport={"width": width, "height": height}, accept_downloads=True)
    page.goto(f"{url}/{path}", wait_until="domcontentloaded")
    click_when_ready(page.get_by_role("button", name=load).first)
    page.get_by_role("button", name=load).first.wait_for(state="detached", timeout=120_000)
    wait_drawn(page)  # a click during the sample's rerun is lost
    click_when_ready(page.get_by_role("button", name=run, exact=True).first)
    page.get_by_text(shown).first.wait_for(timeout=300_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=180_000)  # an explanation computed after the metrics
    wait_drawn(page, timeout=300.0)
    return page


# ---------------------------------------------------------------------- layout measures
MEASURE = """
() => {
  const visible = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const box = el => { const r = el.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
  const meet = (a, b) => !(a.r <= b.l + 1 || b.r <= a.l + 1 || a.b <= b.t + 1 || b.b <= a.t + 1);
  const problems = [];
  document.querySelectorAll('.js-plotly-plot').forEach((plot, i) => {
    if (!visible(plot)) return;
    const name = (plot.querySelector('.gtitle') || {}).textContent || `figure ${i}`;
    const legend = plot.querySelector('g.legend');
    if (!legend || !visible(legend)) return;
    const lb = box(legend.querySelector('rect.bg') || legend);
    const others = [];
    plot.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text, .g-x2title text, .annotation-text-g')
        .forEach(el => { if (visible(el)) others.push([el.textContent.slice(0, 40), box(el)]); });
    const bar = plot.querySelector('.modebar-container .modebar') || plot.querySelector('.modebar');
    if (bar && visible(bar)) others.push(['the toolbar', box(bar)]);
    for (const [what, b] of others) {
      if (meet(lb, b)) problems.push(`legend of "${name}" overlaps ${what}`);
    }
  });
  document.querySelectorAll('[data-testid="stDataFrame"]').forEach((df, i) => {
    if (!visible(df)) return;
    const scroller = df.querySelector('.dvn-scroller');
    if (!scroller || scroller.clientWidth === 0) return;
    if (scroller.scrollWidth > scroller.clientWidth + 2) {
      problems.push(`table ${i} is cut: ${scroller.scrollWidth} px of columns in ${scroller.clientWidth} px`);
    }
  });
  return problems;
}
"""
"""In the page, with getBoundingClientRect: every plotly legend box against the chart's title, axis titles
and toolbar (modebar); every table's scroller (Streamlit's data grid) against its visible width, so a
column pushed out of view is reported."""


def problems_here(page, where: str) -> list[str]:
    page.mouse.move(5, 5)  # no hover: the toolbar as it sits when not in use (its box still counts)
    wait_drawn(page)
    return [f"{where}: {p}" for p in page.evaluate(MEASURE)]


def layout_problems(page, path: str) -> dict[int, list[str]]:
    """Everything `MEASURE` finds on an open method page after its run, per window width, on the first tab
    and the shared run-wide tabs (the same run, the window narrowed)."""
    found: dict[int, list[str]] = {}
    for width in LAYOUT_WIDTHS:
        problems: list[str] = []
        page.set_viewport_size({"width": width, "height": 1600})
        problems += problems_here(page, f"{path} at {width} px, first tab")
        for tab in LAYOUT_TABS:
            page.get_by_role("tab", name=tab).first.click()
            problems += problems_here(page, f"{path} at {width} px, {tab}")
        page.get_by_role("tab").first.click()
        found[width] = problems
    return found


# ---------------------------------------------------------------------- the one pass over the method pages
@dataclass
class PageRun:
    """What was seen on one method page after its default run (the tests assert on it)."""

    path: str
    error: str | None = None
    """The traceback when the page could not be opened, run or looked at."""
    exceptions: int = -1
    signed_bars: int = 0
    no_direction_caption: int = 0
    undecided: int = 0
    tabs: dict[str, int] = field(default_factory=dict)
    shots: dict[str, int] = field(default_factory=dict)
    """Screenshot name -> size in bytes."""
    layout: dict[int, list[str]] = field(default_factory=dict)
    """Window width -> layout problems found."""
    exceptions_after_layout: int = -1
    downloads: list[tuple[str, int, str | None, int, str]] = field(default_factory=list)
    """(button, attempt, failure, bytes, suggested file name) of each download click (classifier page)."""
    downloads_error: str | None = None


def look_at_page(page, rec: PageRun) -> None:
    """The first tab after the run: exceptions, signed bars or the no-direction caption, the shared tabs, and
    a full-page screenshot (the README's; ESMS's run-wide views too)."""
    rec.exceptions = page.locator(".stException").count()
    rec.signed_bars = page.get_by_text("pushes up").count() + page.get_by_text("pushes down").count()
    rec.no_direction_caption = page.get_by_text("this score has no direction").count()
    rec.undecided = page.get_by_text("No set of").count()
    rec.tabs = {tab: page.get_by_role("tab", name=tab).count() for tab in SHARED_TABS}
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{rec.path}.png"), full_page=True)
    rec.shots[rec.path] = (SHOTS / f"{rec.path}.png").stat().st_size
    if rec.path == "esms":  # the README shows the run-wide views too
        for tab, shot, text in (("Global view", "esms_global", "Which reasons explain most predictions"),
                                ("Model quality", "esms_quality", "Predicted against true values")):
            page.get_by_role("tab", name=tab).click()
            page.get_by_text(text).first.wait_for(timeout=60_000)
            wait_drawn(page)
            page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)
            rec.shots[shot] = (SHOTS / f"{shot}.png").stat().st_size
            rec.exceptions += page.locator(".stException").count()
        page.get_by_role("tab").first.click()
        wait_drawn(page)


def click_downloads(page, rec: PageRun) -> None:
    """Each deferred download clicked twice: both clicks must deliver the file."""
    page.set_viewport_size({"width": 1400, "height": 1600})
    for tab, label in DOWNLOADS:
        if tab:
            page.get_by_role("tab", name=tab).first.click()
            wait_drawn(page)
        button = page.get_by_role("button", name=label).first
        button.wait_for(state="visible", timeout=60_000)
        for attempt in (1, 2):  # the first click, and a second one
            with page.expect_download(timeout=60_000) as info:
                button.click()
            download = info.value
            failure = download.failure()
            size = 0 if failure else len(Path(download.path()).read_bytes())
            rec.downloads.append((label, attempt, failure, size, download.suggested_filename))
    rec.exceptions_after_layout += page.locator(".stException").count()


def run_method_pages(url: str) -> dict[str, PageRun]:
    """Every method page opened directly at 1400 px (tall: the graph and the reasons in words too), its
    sample loaded and its default run shown; then looked at, measured, and (classifier) downloaded from.

    A failure on one page is recorded (with its traceback) and the next page goes on."""
    from playwright.sync_api import sync_playwright

    runs: dict[str, PageRun] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for path, load, run, shown in METHOD_PAGES:
                rec = runs[path] = PageRun(path)
                try:
                    # plotly needs longer to draw a tall page's many figures
                    page = open_method_page(browser, url, path, load, run, shown, width=1400, height=4400)
                    look_at_page(page, rec)
                    rec.layout = layout_problems(page, path)
                    rec.exceptions_after_layout = page.locator(".stException").count()
                    if path == "plkb":
                        try:
                            click_downloads(page, rec)
                        except Exception:  # noqa: BLE001 - recorded for the downloads test
                            rec.downloads_error = traceback.format_exc()
                except Exception:  # noqa: BLE001 - recorded for the tests of this page
                    rec.error = traceback.format_exc()
                    for context in browser.contexts:  # the page as it stood, beside the server log
                        for open_page in context.pages:
                            with contextlib.suppress(Exception):
                                LOGS.mkdir(parents=True, exist_ok=True)
                                open_page.screenshot(path=str(LOGS / f"method_page_{path}.png"), full_page=True)
                                (LOGS / f"method_page_{path}.txt").write_text(open_page.inner_text("body"))
                finally:
                    for context in browser.contexts:
                        for open_page in context.pages:
                            open_page.close()
        finally:
            browser.close()
    return runs
