"""Real-browser layout checks on every method page after a default run, at 1400 and 1000 px wide, and
downloads that arrive on the first click.

Found in the browser: legends drawn on plotly's toolbar and over chart titles in half-width columns,
Compare's scatter under its legend, global-view tables whose number columns were cut, and a download
that produced nothing on its first click (`MediaFileStorageError: Deferred file ... not found`).

Written against page URLs and visible text (tab names, button labels), not module names: the pages
are being moved. Measured in the page with getBoundingClientRect: every plotly legend box against the
chart's title, axis titles and toolbar (modebar); every table's scroller (Streamlit's data grid)
against its visible width, so a column pushed out of view fails.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_browser import CHROMIUM, CHROMIUM_ARGS, METHOD_PAGES, app_url, open_method_page  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser"), pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")]

WIDTHS = (1400, 1000)
TABS = ("Global view", "Model quality")
"""Tabs checked after the first one (the shared run-wide views every method page has)."""

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


def run_page(browser, url: str, path: str, load: str, run: str, shown: str, width: int):
    """A method page opened directly, its sample loaded and a default run shown."""
    return open_method_page(browser, url, path, load, run, shown, width=width)


def problems_here(page, where: str) -> list[str]:
    page.mouse.move(5, 5)  # no hover: the toolbar as it sits when not in use (its box still counts)
    time.sleep(1.5)
    return [f"{where}: {p}" for p in page.evaluate(MEASURE)]


@pytest.fixture(scope="module")
def layout_problems(app_url):
    """Everything measured on every method page after a default run, at each width and tab."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for path, load, run, shown in METHOD_PAGES:
            page = run_page(browser, app_url, path, load, run, shown, WIDTHS[0])
            for width in WIDTHS:  # the same run, the window narrowed
                page.set_viewport_size({"width": width, "height": 1600})
                time.sleep(2.0)
                problems += problems_here(page, f"{path} at {width} px, first tab")
                for tab in TABS:
                    page.get_by_role("tab", name=tab).first.click()
                    time.sleep(2.5)
                    problems += problems_here(page, f"{path} at {width} px, {tab}")
                page.get_by_role("tab").first.click()
                time.sleep(1.0)
            assert page.locator(".stException").count() == 0, path
            page.close()
        browser.close()
    return problems


def test_no_legend_over_titles_or_toolbar_on_method_pages(layout_problems):
    legends = [p for p in layout_problems if "legend" in p]
    assert not legends, "\n".join(legends)


@pytest.mark.xfail(reason="not done: at 1400 px the shared tables fit, the drm page's 4th table (994 px of "
                          "columns in 938) and the nlil page's first (974 in 938) do not; at 1000 px the main column "
                          "is 538 px wide (sidebar open) and the item and global tables scroll sideways (584-857 px)", strict=False)
def test_no_table_column_cut_on_method_pages(layout_problems):
    tables = [p for p in layout_problems if "table" in p]
    assert not tables, "\n".join(tables)


def test_downloads_arrive_on_the_first_click_and_again(app_url):
    from playwright.sync_api import sync_playwright

    path, load, run, shown = next(m for m in METHOD_PAGES if m[0] == "plkb")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = run_page(browser, app_url, path, load, run, shown, 1400)
        got = []
        # built on click (deferred): the explanation card in the first tab, the report under Downloads
        for tab, label in ((None, "Explanation card (HTML)"), ("Downloads", "Report (HTML)"),
                           ("Downloads", "Predictions (CSV)")):
            if tab:
                page.get_by_role("tab", name=tab).first.click()
                time.sleep(1.5)
            button = page.get_by_role("button", name=label).first
            button.wait_for(state="visible", timeout=60_000)
            for attempt in (1, 2):  # the first click, and a second one
                with page.expect_download(timeout=60_000) as info:
                    button.click()
                download = info.value
                assert download.failure() is None, (label, attempt, download.failure())
                data = Path(download.path()).read_bytes()
                assert len(data) > 100, (label, attempt, len(data))
                got.append((label, attempt, download.suggested_filename))
        assert page.locator(".stException").count() == 0
        browser.close()
    assert [g[1] for g in got] == [1, 2] * 3 and got[1][2].endswith("_card.html")
