"""Real-browser test of page state (issue 24): m-NLIL's target labels follow the scene graphs generated on
the page at once (they showed "eastbound" from the trains until the page was left), and a setting survives
leaving the page through the sidebar and coming back. The sidebar lists page titles only."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_kit import CHROMIUM, CHROMIUM_ARGS, click_when_ready
from test_browser_cancel import keep_evidence, set_number, wait_idle, wait_until

from xcore.data.generators.scenes import make_scenes
from xcore.nlil.heads import planned_heads
from xcore.nlil.settings import NLILSettings

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
NAME = "scenes_10"


def labels_box(page):
    """The text of m-NLIL's target-label multiselect."""
    box = page.locator("[data-testid=stMultiSelect]").filter(has_text="Target labels").first
    box.wait_for(timeout=120_000)
    return box


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium missing (make test installs it)")
def test_m_nlil_labels_follow_generated_scenes_and_settings_survive_navigation(shared_app_url):
    app_url = shared_app_url
    from playwright.sync_api import sync_playwright

    scenes = make_scenes(n_scenes=10, objects_per_scene=8, noise=0.05, seed=0)  # what the page generates
    heads = planned_heads(scenes, NLILSettings())[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        try:
            # the trains (label eastbound) from the Data page: m-NLIL's own sample is generated scenes now
            page.goto(app_url, wait_until="domcontentloaded")
            box = page.locator("[data-testid=stSelectbox]").first
            box.wait_for(state="visible", timeout=120_000)
            box.click(timeout=60_000)
            page.keyboard.type("Michalski")
            page.keyboard.press("Enter")
            click_when_ready(page.get_by_role("button", name="Load sample").first)
            page.get_by_text("sample: Michalski").first.wait_for(timeout=120_000)
            wait_idle(page)
            # through the sidebar (a new URL load would start a new session without the data)
            page.locator(f'[data-testid=stSidebarNav] a[data-testid=stSidebarNavLink][href="{app_url}/nlil"]').click()
            wait_idle(page)
            wait_until(lambda: "eastbound" in labels_box(page).inner_text(), "the trains' label")
            nav = page.locator("[data-testid=stSidebarNav]")
            for internal in ("components", "common", "forms", "method page", "run control", "state"):
                assert nav.get_by_text(internal, exact=True).count() == 0, internal
            for _ in range(2):  # generate twice: the labels follow each time
                generate = page.get_by_role("button", name="Generate and load").first
                if not generate.is_visible():
                    page.get_by_text("Generate scene graphs").first.click()
                set_number(page, "Scenes", 10)
                click_when_ready(generate)
                wait_until(lambda: NAME in page.inner_text("body"), "the scenes to load")
                wait_idle(page)
                text = labels_box(page).inner_text()
                assert "eastbound" not in text and all(h in text for h in heads), text
            set_number(page, "Formulas per level", 3)
            for _ in range(2):  # away through the sidebar and back, twice
                nav.locator(f'a[data-testid=stSidebarNavLink][href="{app_url}/"]').click()  # the Data page
                page.get_by_text("Load sample").first.wait_for(timeout=120_000)
                wait_idle(page)
                nav.locator(f'a[data-testid=stSidebarNavLink][href="{app_url}/nlil"]').click()
                wait_idle(page)
                width = page.get_by_label("Formulas per level").first
                width.wait_for(timeout=120_000)
                assert width.input_value() == "3"
                text = labels_box(page).inner_text()
                assert "eastbound" not in text and all(h in text for h in heads), text
        except Exception:
            keep_evidence(page, "nlil_state")
            raise
        finally:
            browser.close()
