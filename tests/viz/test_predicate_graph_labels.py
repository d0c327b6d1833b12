"""No two labels of the predicate graph overlap and none leaves the plot, on every bundled sample.

Found in the browser: the data page's predicate graph drew labels over each other on the trains and
Last.fm samples (a spring layout scaled to the axes, labels in fixed pixels). Label boxes are
estimated independently of the layout code, as in `test_graph_labels_apart`.
"""

from __future__ import annotations

import pytest
from test_graph_labels_apart import WIDTHS, assert_legible

from xcore.data.samples import list_samples, load_sample
from xcore.viz import predicate_graph_figure

SAMPLES = [s.name for s in list_samples()]


@pytest.mark.parametrize("name", ["trains_michalski10", "lastfm_demo"])
def test_trains_and_lastfm_predicate_graph_labels_are_apart(name):
    fig = predicate_graph_figure(load_sample(name).predicate_graph())
    for width in WIDTHS:
        assert_legible(fig, width)


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_every_bundled_predicate_graph_has_its_labels_apart(name):
    ds = load_sample(name)
    fig = predicate_graph_figure(ds.predicate_graph())
    labelled = sum(len(t.text) for t in fig.data if t.text is not None)
    assert labelled == ds.predicate_graph().number_of_nodes()  # every node labelled
    for width in WIDTHS:
        assert_legible(fig, width)
