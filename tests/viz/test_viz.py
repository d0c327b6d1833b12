"""Tests of the plotly figure builders, checked on the figure data (traces, counts, colours, order)."""

from __future__ import annotations

import subprocess
import sys

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.errors import XcoreError
from xcore.explain import Explanation, ExplanationItem
from xcore.viz import (
    FigureInputError,
    edge_width,
    explanation_graph,
    explanation_graph_figure,
    graph_layout,
    item_labels,
    predicate_graph_figure,
    predicate_size,
    radial_layout,
    ranked_bar_figure,
    target_node,
    theme,
    tradeoff_figure,
    truncate,
    value_histogram_figure,
)

T = "friends('ann', 'bob')"


def ground_rules() -> Explanation:
    """Three ground rules for T; atom smokes('ann') is shared by two of them."""
    return Explanation(T, "Ann and Bob are friends", "psl", prediction=0.8, truth=1.0, items=[
        ExplanationItem("ground_rule", "1.0: smokes('ann') & smokes('bob') -> friends('ann', 'bob')",
                        "Ann and Bob both smoke", 0.4,
                        atoms=["smokes('ann')", "smokes('bob')", T], target_index=2,
                        roles=["body", "body", "head"], observed=[True, False, False],
                        extras={"weight": 1.0}, direction=1),
        ExplanationItem("ground_rule", "2.0: smokes('ann') & knows('ann', 'bob') -> friends('ann', 'bob') | foes('ann', 'bob')",
                        "Ann smokes and knows Bob <so> they are friends or foes", -0.8,
                        atoms=["smokes('ann')", "knows('ann', 'bob')", T, "foes('ann', 'bob')"], target_index=2,
                        roles=["body", "body", "head", "head"], observed=[True, True, False, False],
                        explainable=False),
        ExplanationItem("ground_rule", "0.5: ~friends('ann', 'bob')", "friendship is rare", 0.2,
                        atoms=[T], target_index=0, roles=["head"], observed=[False]),
    ])


def feature_sets() -> Explanation:
    return Explanation("row 17", items=[
        ExplanationItem("feature_set", "{age>30}", "older than 30", 1.0, atoms=["age>30"]),
        ExplanationItem("feature_set", "{income=high, owns_home}", "rich home owner", 0.5,
                        atoms=["income=high", "owns_home"], explainable=False),
    ])


def trace(fig: go.Figure, name: str):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, f"expected one trace {name!r}, got {[t.name for t in fig.data]}"
    return found[0]


# ---------------------------------------------------------------------- explanation graph
def test_explanation_graph_nodes_and_edges():
    e = ground_rules()
    g = explanation_graph(e)
    kinds = nx.get_node_attributes(g, "kind")
    assert sum(k == "target" for k in kinds.values()) == 1
    assert sorted(n for n, k in kinds.items() if k == "item") == [("item", 1), ("item", 2), ("item", 3)]
    # smokes('ann') is shared, the target is never duplicated, foes(...) is a non-target head atom
    assert sorted(n[1] for n, k in kinds.items() if k == "atom") == sorted(
        ["smokes('ann')", "smokes('bob')", "knows('ann', 'bob')", "foes('ann', 'bob')"])
    assert g.number_of_nodes() == 1 + 3 + 4
    # edges: every item to target (3) + item 1 (score -0.8): 3 atoms + item 2 (0.4): 2 atoms
    assert g.number_of_edges() == 3 + 3 + 2
    t = target_node(e)
    assert g.nodes[t]["kind"] == "target" and g.nodes[t]["prediction"] == 0.8
    assert {g.edges[t, ("item", r)]["score"] for r in (1, 2, 3)} == {-0.8, 0.4, 0.2}
    assert g.edges[("item", 1), ("atom", "smokes('ann')")]["weight"] == 0.8
    assert g.nodes[("item", 1)]["explainable"] is False
    assert g.nodes[("atom", "smokes('ann')")]["observed"] is True
    assert g.nodes[("atom", "foes('ann', 'bob')")]["role"] == "head"
    assert set(g.neighbors(("atom", "smokes('ann')"))) == {("item", 1), ("item", 2)}


def test_explanation_graph_options():
    e = ground_rules()
    g = explanation_graph(e, head_atoms=False)
    assert ("atom", "foes('ann', 'bob')") not in g
    g1 = explanation_graph(e, k=1)
    assert sorted(g1.nodes) == sorted([target_node(e), ("item", 1), ("atom", "smokes('ann')"),
                                       ("atom", "knows('ann', 'bob')"), ("atom", "foes('ann', 'bob')")])
    f = explanation_graph(feature_sets())
    assert f.number_of_nodes() == 1 + 2 + 3 and f.number_of_edges() == 2 + 3
    assert all(f.nodes[n]["observed"] is None for n, k in f.nodes(data="kind") if k == "atom")
    empty = explanation_graph(Explanation("x"))
    assert list(empty.nodes) == [("atom", "x")]


def test_graph_layout_is_deterministic():
    g = explanation_graph(ground_rules())
    a, b = graph_layout(g, seed=3), graph_layout(explanation_graph(ground_rules()), seed=3)
    assert a.keys() == b.keys() and all(np.array_equal(a[n], b[n]) for n in a)


def test_explanation_graph_figure_traces():
    e = ground_rules()
    fig = explanation_graph_figure(e)
    names = [t.name for t in fig.data]
    assert names == ["item 1", "item 2", "item 3", "observed atoms", "open atoms",
                     "explainable items", "non-explainable items", "target"]
    # one edge trace per item: (1 + its non-target atoms) segments of 3 points (x0, x1, None)
    assert [len(trace(fig, f"item {r}").x) for r in (1, 2, 3)] == [3 * 4, 3 * 3, 3 * 1]
    # width linear in |score|: max item -> max width; |0.4| -> halfway+min
    w = {r: trace(fig, f"item {r}").line.width for r in (1, 2, 3)}
    assert w[1] == pytest.approx(theme.EDGE_WIDTH_MAX)
    assert w[2] == pytest.approx(theme.EDGE_WIDTH_MIN + (theme.EDGE_WIDTH_MAX - theme.EDGE_WIDTH_MIN) * 0.5)
    assert w[1] > w[2] > w[3]
    # edges by the item's direction field; dotted when not explainable (rank 1 is the -0.8 item)
    assert trace(fig, "item 1").line.color == theme.UNKNOWN and trace(fig, "item 1").line.dash == "dot"
    assert trace(fig, "item 2").line.color == theme.UP and trace(fig, "item 2").line.dash == "solid"
    assert trace(fig, "explainable items").marker.color == theme.EXPLAINABLE
    assert trace(fig, "non-explainable items").marker.color == theme.NOT_EXPLAINABLE
    assert trace(fig, "target").marker.color == theme.TARGET
    assert trace(fig, "observed atoms").marker.color == theme.OBSERVED
    assert trace(fig, "open atoms").marker.color == theme.OPEN
    assert len(trace(fig, "observed atoms").x) == 2  # smokes('ann'), knows('ann','bob')
    assert len(trace(fig, "open atoms").x) == 2      # smokes('bob'), foes('ann','bob')
    assert trace(fig, "explainable items").text == ("#2", "#3")
    # hover: canonical and natural-language text, HTML-escaped
    bad = trace(fig, "non-explainable items").hovertext[0]
    assert "smokes('ann') &amp; knows('ann', 'bob')" in bad
    assert "&lt;so&gt;" in bad and "<so>" not in bad
    good = " ".join(trace(fig, "explainable items").hovertext)
    assert "Ann and Bob both smoke" in good and "pushes up" in good
    assert "weight" not in good and "ground_rule" not in good  # method-neutral: no kind, no extras
    assert "Ann and Bob are friends" in trace(fig, "target").hovertext[0]
    # node positions are the radial layers of explanation_graph (target at the centre)
    pos = radial_layout(explanation_graph(e), target_node(e))
    tgt = trace(fig, "target")
    assert (tgt.x[0], tgt.y[0]) == pytest.approx(tuple(pos[target_node(e)]))
    again = explanation_graph_figure(e)
    assert again.to_plotly_json()["data"] == fig.to_plotly_json()["data"]


def test_explanation_graph_figure_limits_and_unknown_status():
    fig = explanation_graph_figure(feature_sets(), k=1)
    assert [t.name for t in fig.data] == ["item 1", "atoms", "explainable items", "target"]
    assert trace(fig, "atoms").marker.color == theme.UNKNOWN
    fig = explanation_graph_figure(Explanation("x"))
    assert [t.name for t in fig.data] == ["target"]
    with pytest.raises(FigureInputError):
        explanation_graph_figure("x")  # type: ignore[arg-type]


def test_edge_width_and_sizes():
    assert edge_width(0.0, 0.0) == theme.EDGE_WIDTH_MIN
    assert edge_width(2.0, 2.0) == theme.EDGE_WIDTH_MAX
    assert predicate_size(0, 100) < predicate_size(25, 100) < predicate_size(100, 100)
    assert predicate_size(25, 100) == pytest.approx(14 + 30 * 0.5)


# ---------------------------------------------------------------------- ranked bars
def test_ranked_bar_figure_order_colours_and_hover():
    e = ground_rules()
    fig = ranked_bar_figure(e, k=10, label_width=30, colour_by="explainable")
    assert [t.name for t in fig.data] == ["explainable", "not explainable"]
    labels = item_labels(e, 10, 30)
    assert list(fig.layout.yaxis.categoryarray) == labels
    assert fig.layout.yaxis.autorange == "reversed"
    assert labels[0].startswith("1. 2.0: smokes") and labels[0].endswith("…") and len(labels[0]) == 3 + 30
    assert labels[2] == "3. 0.5: ~friends('ann', 'bob')"
    ex, nex = trace(fig, "explainable"), trace(fig, "not explainable")
    assert list(nex.x) == [-0.8] and list(nex.y) == [labels[0]]
    assert list(ex.x) == [0.4, 0.2] and list(ex.y) == labels[1:]
    assert ex.marker.color == theme.EXPLAINABLE and nex.marker.color == theme.NOT_EXPLAINABLE
    assert ex.orientation == "h" and fig.layout.title.text.startswith("Top 3 reasons")
    assert "foes(" in nex.hovertext[0] and "friends or foes" in nex.hovertext[0]  # full text, not truncated
    assert list(nex.customdata) == [e.items[0].text]


@pytest.mark.slow
def test_ranked_bar_figure_top_k_and_empty():
    fig = ranked_bar_figure(feature_sets(), k=1, colour_by="explainable")
    assert [t.name for t in fig.data] == ["explainable"] and list(fig.data[0].x) == [1.0]
    fig = ranked_bar_figure(Explanation("x"))
    assert len(fig.data) == 0 and "no items" in fig.layout.annotations[0].text


def test_truncate():
    assert truncate("short") == "short"
    assert truncate("a  b\n c", 10) == "a b c"
    assert truncate("abcdefghij", 5) == "abcd…" and len(truncate("x" * 100, 20)) == 20
    with pytest.raises(FigureInputError):
        truncate("abc", 1)


# ---------------------------------------------------------------------- trade-off
def tradeoff_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "gamma": [0.0, 0.1, 1.0, 0.0, 0.1, 1.0],
        "mse": [0.10, 0.12, 0.20, 0.11, 0.15, 0.30],
        "mep@1": [0.2, 0.6, 0.9, 0.1, 0.5, 0.95],
        "series": ["psl", "psl", "psl", "mln", "mln", "mln"],
    })


def test_tradeoff_figure_series_and_labels():
    fig = tradeoff_figure(tradeoff_frame(), "mse", "mep@1", label="gamma", title="MEP@1 vs MSE")
    assert [t.name for t in fig.data] == ["psl", "mln"]
    psl, mln = fig.data
    assert list(psl.x) == [0.10, 0.12, 0.20] and list(psl.y) == [0.2, 0.6, 0.9]
    assert list(mln.text) == ["0", "0.1", "1"]
    assert psl.mode == "lines+markers+text"
    assert psl.line.color == theme.SERIES[0] and mln.line.color == theme.SERIES[1]
    assert "gamma: 0.1" in psl.hovertext[1] and "series: psl" in psl.hovertext[1]
    assert fig.layout.xaxis.title.text == "mse" and fig.layout.title.text == "MEP@1 vs MSE"


def test_tradeoff_figure_single_series_and_explicit_column():
    f = tradeoff_frame().rename(columns={"series": "method"})
    one = tradeoff_figure(f, "mse", "mep@1")
    assert len(one.data) == 1 and one.data[0].mode == "lines+markers" and one.data[0].text is None
    assert len(one.data[0].x) == 6
    two = tradeoff_figure(f, "mse", "mep@1", series="method", lines=False, x_title="MSE")
    assert [t.name for t in two.data] == ["psl", "mln"] and two.data[0].mode == "markers"
    assert two.layout.xaxis.title.text == "MSE"


def test_tradeoff_figure_bad_input():
    f = tradeoff_frame()
    with pytest.raises(FigureInputError, match="'accuracy'"):
        tradeoff_figure(f, "mse", "accuracy")
    with pytest.raises(FigureInputError, match="numeric"):
        tradeoff_figure(f, "series", "mse")
    with pytest.raises(FigureInputError, match="'method'"):
        tradeoff_figure(f, "mse", "mep@1", series="method")
    with pytest.raises(XcoreError):
        tradeoff_figure([1, 2], "a", "b")  # type: ignore[arg-type]
    empty = tradeoff_figure(f.iloc[:0], "mse", "mep@1")
    assert len(empty.data) == 0


# ---------------------------------------------------------------------- dataset figures
def small_dataset() -> RelationalDataset:
    preds = [
        Predicate("friends", 2, ("person", "person"), closed=False),
        Predicate("smokes", 1, ("person",), closed=True),
        Predicate("likes", 2, ("person", "item"), closed=True, explainable=False),
        Predicate("cheap", 1, ("item",), closed=True),
    ]
    tables = {
        "friends": {"obs": pd.DataFrame({"a0": ["a", "b"], "a1": ["b", "c"], "value": [1.0, 0.5]}),
                    "targets": pd.DataFrame({"a0": ["a"], "a1": ["c"]})},
        "smokes": {"obs": pd.DataFrame({"a0": ["a", "b", "c", "d", "e", "f", "g", "h"],
                                        "value": [1.0, 0.0, 0.05, 0.95, 0.5, 0.55, 0.7, 1.0]})},
        "likes": {"obs": pd.DataFrame({"a0": ["a", "b", "c", "d"], "a1": ["x", "x", "y", "y"]})},
    }
    return RelationalDataset(preds, tables)


def test_predicate_graph_figure():
    ds = small_dataset()
    g = ds.predicate_graph()
    fig = predicate_graph_figure(g)
    assert [t.name for t in fig.data] == ["shared types", "edge info", "closed predicates", "open predicates"]
    edges, info, closed, open_ = fig.data
    assert len(edges.x) == 3 * g.number_of_edges()
    assert len(info.x) == g.number_of_edges() == 4  # person: friends, smokes, likes (3 pairs); item: likes-cheap
    hover = dict(zip([tuple(sorted(e)) for e in g.edges()], info.hovertext))
    assert set(hover) == {("friends", "smokes"), ("friends", "likes"), ("likes", "smokes"), ("cheap", "likes")}
    assert "shared types: person" in hover[("friends", "likes")]
    assert "shared types: item" in hover[("cheap", "likes")]
    assert "shared types: person" in hover[("friends", "smokes")]
    assert list(closed.text) == ["smokes", "likes", "cheap"] and list(open_.text) == ["friends"]
    assert closed.marker.color == theme.OBSERVED and open_.marker.color == theme.OPEN
    sizes = dict(zip(closed.text, closed.marker.size)) | dict(zip(open_.text, open_.marker.size))
    assert sizes["smokes"] == pytest.approx(44.0)  # most atoms (8)
    assert sizes["cheap"] == pytest.approx(14.0)   # no atoms
    assert sizes["smokes"] > sizes["likes"] > sizes["friends"] > sizes["cheap"]  # 8 > 4 > 3 > 0
    widths = dict(zip(closed.text, closed.marker.line.width))
    assert widths["smokes"] > widths["likes"]  # explainable predicates get a thick outline
    assert "not explainable" in closed.hovertext[1] and "4 atoms" in closed.hovertext[1]
    pos = graph_layout(g, seed=0)  # the spring layout, mapped onto pixels (each axis scaled and shifted)
    drawn = {n: (x, y) for t in (closed, open_) for n, x, y in zip(t.text, t.x, t.y)}
    names = sorted(drawn)
    for axis in (0, 1):
        a = np.array([pos[n][axis] for n in names])
        b = np.array([drawn[n][axis] for n in names])
        assert np.corrcoef(a, b)[0, 1] == pytest.approx(1.0)


def test_predicate_graph_figure_edge_cases():
    fig = predicate_graph_figure(nx.Graph())
    assert len(fig.data) == 0 and "no predicates" in fig.layout.annotations[0].text
    g = nx.Graph()
    g.add_node("p", arity=1, closed=True, explainable=True, atoms=0)
    fig = predicate_graph_figure(g)
    assert len(fig.data[0].x) == 0 and [t.name for t in fig.data][-1] == "closed predicates"
    g.add_node("q")
    with pytest.raises(FigureInputError, match="'q'"):
        predicate_graph_figure(g)
    with pytest.raises(FigureInputError):
        predicate_graph_figure({"p": 1})  # type: ignore[arg-type]


def test_value_histogram_figure():
    hist = small_dataset().value_histogram("smokes", bins=4)
    fig = value_histogram_figure(hist)
    bar = fig.data[0]
    assert len(fig.data) == 1 and bar.type == "bar"
    assert list(bar.x) == pytest.approx([0.125, 0.375, 0.625, 0.875])
    assert list(bar.width) == pytest.approx([0.25] * 4)
    assert list(bar.y) == [2, 0, 3, 3] == hist["count"].tolist()
    assert bar.hovertext[0] == "[0, 0.25): 2" and bar.hovertext[-1] == "[0.75, 1]: 3"
    assert bar.marker.color == theme.HISTOGRAM
    assert tuple(fig.layout.xaxis.range) == (0.0, 1.0)
    with pytest.raises(FigureInputError, match="'count'"):
        value_histogram_figure(hist.drop(columns="count"))
    assert len(value_histogram_figure(hist.iloc[:0]).data) == 0


def test_theme_helpers():
    assert theme.explainable_colour(True) == theme.EXPLAINABLE != theme.explainable_colour(False)
    assert [theme.atom_colour(v) for v in (True, False, None)] == [theme.OBSERVED, theme.OPEN, theme.UNKNOWN]
    assert theme.series_colour(len(theme.SERIES)) == theme.SERIES[0]


@pytest.mark.slow
def test_no_streamlit_import():
    code = "import sys, xcore.explain, xcore.viz; assert 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_embedding_scatter_one_trace_per_cluster_and_highlight():
    from xcore.viz import embedding_scatter_figure

    frame = pd.DataFrame({"object": ["a", "b", "c", "d"], "x": [0.0, 1.0, 2.0, 3.0], "y": [1.0, 0.0, 1.0, 0.0],
                          "cluster": [0, 1, 0, 2], "n_coalitions": [1, 3, 3, 5]})
    fig = embedding_scatter_figure(frame, size="n_coalitions", highlight=["c"])
    names = [t.name for t in fig.data]
    assert names == ["cluster 0", "cluster 1", "cluster 2", "selected"]
    assert list(fig.data[0].customdata) == ["a", "c"] and list(fig.data[0].x) == [0.0, 2.0]
    assert fig.data[0].marker.size[0] == 6 and fig.data[2].marker.size[0] == 16  # scaled by n_coalitions
    assert list(fig.data[3].text) == ["c"]
    assert "n_coalitions: 3" in fig.data[1].hovertext[0]
    with pytest.raises(FigureInputError, match="cluster"):
        embedding_scatter_figure(frame.drop(columns="cluster"))
    assert len(embedding_scatter_figure(frame.iloc[:0]).data) == 0
