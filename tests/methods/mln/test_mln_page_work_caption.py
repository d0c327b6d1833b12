"""Issue 20 on the Markov-logic page: each method's sampling work and time beside its explanation."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "app"))
from pagetest import click, errors, page  # noqa: E402

from xcore.data.samples import load_sample  # noqa: E402

pytestmark = pytest.mark.xdist_group("app")


def test_each_panel_shows_its_sampling_work_and_time():
    at = page("mln", load_sample("reviews_demo"))
    at.multiselect(key="mln_explainers").set_value(["mln:i-explain", "mln:m-explain"])
    at.number_input(key="mln_T").set_value(3)
    at.number_input(key="mln_n_samples").set_value(200)
    at.run()
    for _ in range(2):  # clicking twice keeps a consistent display
        click(at, "mln_run")
        assert not errors(at) and not at.exception
        run = list(at.session_state["_runs"].values())[-1]
        m = run.explanations["mln:m-explain"].meta
        i = run.explanations["mln:i-explain"].meta
        captions = [c.value for c in at.caption]
        shown_m = [c for c in captions if f"{m['atom_updates']:,} atom updates (200 samples" in c]
        shown_i = [c for c in captions if f"{i['atom_updates']:,} atom updates over 3 coalitions" in c]
        assert shown_m and shown_i and "equal to M-Explain" in shown_i[0]
        assert f"{run.timings['explain.mln:i-explain']:.1f} s" in shown_i[0]
        assert abs(i["atom_updates"] / m["atom_updates"] - 1) < 0.05
