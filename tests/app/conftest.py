"""Fixtures of the real-browser tests: app servers and the one run of every method page per session.

In conftest (not imported into test modules) so that a session-scoped fixture is one fixture: imported
into two modules it would be two, each run once."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_kit import CHROMIUM, PageRun, app_server, run_method_pages


@pytest.fixture(scope="module")
def app_url():
    """A fresh app server for one test module (its first request is a test's, its caches are empty)."""
    with app_server() as url:
        yield url


@pytest.fixture(scope="session")
def shared_app_url():
    """One app server for the tests that need no fresh one (each browser page is its own session)."""
    with app_server() as url:
        yield url


@pytest.fixture(scope="session")
def method_page_runs(shared_app_url) -> dict[str, PageRun]:
    """Every method page run once in the browser (`browser_kit.run_method_pages`); tests read the record."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium missing (make test installs it)")
    return run_method_pages(shared_app_url)
