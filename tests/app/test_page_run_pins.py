"""AppTests of the session's run bound: Compare names the runs dropped, a method page pins its run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pagetest import ROOT, click, page
from streamlit.testing.v1 import AppTest

from xcore.data.samples import load_sample
from xcore.methods.session_runs import SessionRuns

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))
from study_helpers import make_run  # noqa: E402

pytestmark = pytest.mark.xdist_group("app")


def test_compare_shows_the_bound_and_names_the_dropped_run():
    runs = SessionRuns(max_unpinned=2)
    for i in range(3):
        runs.put(("mln", f"{i:016d}", f"set{i}abcdef"), make_run())
    at = AppTest.from_file(str(ROOT / "app_pages" / "compare.py"), default_timeout=120)
    at.session_state["_runs"] = runs
    at.run()
    assert not at.exception, at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "mln on reviews_toy (settings set0ab)" in warnings and "Dropped" in warnings
    assert any("2 most recent unpinned runs" in c.value for c in at.caption)
    assert len(at.multiselect(key="compare_runs").options) == 2


@pytest.mark.slow
def test_a_method_page_pins_its_run_and_the_pinned_run_stays():
    at = page("plkb", load_sample("mushroom"))
    click(at, "plkb_train")
    box = next(c for c in at.checkbox if c.label.startswith("Pin this run"))
    assert box.value is False
    box.check()
    at.run()
    store = at.session_state["_runs"]
    (key,) = list(store)
    assert store.is_pinned(key)
    for i in range(store.max_unpinned + 2):  # more unpinned runs than the bound: the pinned one stays
        store.put(("x", f"{i:016d}", f"k{i}"), store[key])
    assert key in store and store.unpinned_count() == store.max_unpinned
