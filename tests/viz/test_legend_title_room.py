"""Legends never sit beside or above a plot (where plotly's toolbar appears and long titles run), titles
sit below the toolbar band, and no title doubles its parentheses.

Found in the browser: the ranked bars' legend was drawn at the top right, on the toolbar and over the
title of a half-width chart; Compare's overlap scatter hid under its legend at the side; the study's
means figure was titled "((all ratings))".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from xcore.compare import compare_runs
from xcore.study import StudyStore, analyse, simulate
from xcore.study.analysis import ALL
from xcore.study.report import diverging_figure, means_figure
from xcore.viz import ranked_bar_figure
from xcore.viz.agreement import agreement_figures
from xcore.viz.common import TITLE_PAD, legend_shown

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))
from study_helpers import make_run, make_study  # noqa: E402


def assert_legend_below_and_title_clear(fig):
    """The legend (when drawn) is horizontal and below the plot; the title is padded below the toolbar."""
    if legend_shown(fig):
        lg = fig.layout.legend
        assert lg.orientation == "h", lg
        at_bottom = lg.yref == "container" and lg.y <= 0.05 and lg.yanchor == "bottom"
        assert at_bottom or (lg.y is not None and lg.y < 0), lg
        margin_b = fig.layout.margin.b
        assert margin_b is not None and margin_b >= 60, "no room below the plot for the legend"
    if fig.layout.title.text:
        assert fig.layout.title.pad.t >= TITLE_PAD and fig.layout.title.yanchor == "top"
        lines = fig.layout.title.text.count("<br>") + 1
        top = fig.layout.margin.t if fig.layout.margin.t is not None else 100
        assert top >= TITLE_PAD + 20 * lines, "the title does not fit between the toolbar band and the plot"


def test_ranked_bars_put_their_legend_below():
    exp = make_run().explanations["lime"][0]  # items pushing up and down: a two-entry legend
    fig = ranked_bar_figure(exp, k=4, title="Why r00 is predicted positive, a long title that runs far right")
    assert legend_shown(fig)
    assert_legend_below_and_title_clear(fig)


def test_compare_figures_put_their_legend_below():
    run = make_run(explainers=("a", "b", "c"))
    _, agreement = compare_runs([run], k=3)
    figs = agreement_figures(agreement)
    assert len(figs) == 3 and legend_shown(figs[1])  # the scatter: one entry per pair
    for fig in figs:
        assert_legend_below_and_title_clear(fig)


@pytest.fixture
def analysis(tmp_path):
    store = StudyStore(f"sqlite:///{tmp_path / 's.sqlite'}")
    study = make_study(n_items=6)
    store.publish(study)
    simulate(store, "s1", 8, {"A": [0, 0, 0.1, 0.4, 0.5], "B": [0.5, 0.4, 0.1, 0, 0]}, seed=1)
    yield analyse(study, store.responses("s1"))
    store.dispose()


def test_study_figures_have_single_parentheses_and_room(analysis):
    title = means_figure(analysis).layout.title.text
    assert ALL in title and "((" not in title and "))" not in title
    qid = next(q.id for q in analysis.study.questions if q.rated)
    assert "((" not in means_figure(analysis, qid).layout.title.text
    assert f"({qid})" in means_figure(analysis, qid).layout.title.text
    for fig in (means_figure(analysis), diverging_figure(analysis, qid)):
        assert_legend_below_and_title_clear(fig)
