"""The predicate graph of a dataset as a figure: predicates sized by their atoms, coloured open or closed,
joined where they share an argument type."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import plotly.graph_objects as go

from xcore.viz import theme
from xcore.viz.common import FigureInputError, empty_figure, hover
from xcore.viz.graphs import finish_network_figure, graph_layout, legend_height, segments, title_lines
from xcore.viz.labels import DESIGN_WIDTH, LABEL_FONT, wrap_label
from xcore.viz.spread import spread_layout


def _check_nodes(graph: nx.Graph) -> None:
    """Every predicate node carries arity, closed, explainable and atoms."""
    for n, d in graph.nodes(data=True):
        missing = [a for a in ("arity", "closed", "explainable", "atoms") if a not in d]
        if missing:
            raise FigureInputError(f"predicate node {n!r} lacks attribute(s) {', '.join(missing)}")


def _edge_traces(graph: nx.Graph, pos: dict) -> list[go.Scatter]:
    """"shared types" (every edge as a line) and "edge info" (invisible midpoints whose hover lists the
    shared types)."""
    edges = list(graph.edges())
    xs, ys = segments(pos, edges)
    mid = np.array([(pos[u] + pos[v]) / 2 for u, v in edges]).reshape(-1, 2)
    return [go.Scatter(x=xs, y=ys, mode="lines", name="shared types", hoverinfo="skip",
                       showlegend=False, line=dict(color=theme.EDGE, width=1.5)),
            go.Scatter(x=mid[:, 0].tolist(), y=mid[:, 1].tolist(), mode="markers", name="edge info",
                       showlegend=False, marker=dict(size=10, color=theme.EDGE, opacity=0.0), hoverinfo="text",
                       hovertext=[hover(f"{u} — {v}", "shared types: "
                                        + ", ".join(map(str, graph.edges[u, v].get("types", [])))) for u, v in edges])]


def predicate_graph_figure(graph: nx.Graph, seed: int = 0, title: str | None = "Predicates",
                           width: float = DESIGN_WIDTH) -> go.Figure:
    """Draw `RelationalDataset.predicate_graph()`: size by atom count, colour by open/closed.

    Traces: "shared types" (all edges as lines), "edge info" (invisible midpoint markers whose
    hover lists the shared types), then "argument types" (hubs), "closed predicates" and "open
    predicates" (when non-empty). Explainable predicates get a thick outline. Laid out in pixels for a
    figure `width` px wide (`spread_layout`): each label goes where it meets no other label or marker,
    the figure growing taller until it does (found overlapping on the trains and Last.fm samples).
    """
    if not isinstance(graph, nx.Graph):
        raise FigureInputError(f"predicate_graph_figure needs a networkx Graph, got {type(graph).__name__}")
    if graph.number_of_nodes() == 0:
        return empty_figure("no predicates", title)
    _check_nodes(graph)
    max_atoms = max(int(d["atoms"]) for _, d in graph.nodes(data=True))
    hubs = [n for n, d in graph.nodes(data=True) if d.get("kind") == "type"]
    markers = {n: 18.0 if n in hubs else predicate_size(int(d["atoms"]), max_atoms) for n, d in graph.nodes(data=True)}
    texts = {n: wrap_label(str(n), 22, lines=2) for n in graph.nodes}
    names = (["argument types"] if hubs else []) + [
        name for name, closed in (("closed predicates", True), ("open predicates", False))
        if any(bool(d["closed"]) is closed and d.get("kind") != "type" for _, d in graph.nodes(data=True))]
    heading, top = title_lines(title or "", width)
    lay = spread_layout(graph_layout(graph, seed=seed), texts, markers, width=width, top=top,
                        bottom=legend_height(names, width))
    pos = lay.pos
    fig = go.Figure(_edge_traces(graph, pos))
    if hubs:
        fig.add_trace(go.Scatter(
            x=[float(pos[n][0]) for n in hubs], y=[float(pos[n][1]) for n in hubs], mode="markers+text",
            name="argument types", text=[texts[n] for n in hubs], textposition=[lay.textposition[n] for n in hubs],
            textfont=dict(size=LABEL_FONT), hoverinfo="text",
            hovertext=[hover(str(n), f"shared by {graph.degree[n]} predicates") for n in hubs],
            marker=dict(symbol="diamond", size=18, color=theme.EDGE, line=dict(color=theme.OUTLINE, width=1))))
    for name, closed, colour in (("closed predicates", True, theme.OBSERVED), ("open predicates", False, theme.OPEN)):
        nodes = [n for n, d in graph.nodes(data=True) if bool(d["closed"]) is closed and d.get("kind") != "type"]
        if not nodes:
            continue
        data = [graph.nodes[n] for n in nodes]
        fig.add_trace(go.Scatter(
            x=[float(pos[n][0]) for n in nodes], y=[float(pos[n][1]) for n in nodes],
            mode="markers+text", name=name, text=[texts[n] for n in nodes],
            textposition=[lay.textposition[n] for n in nodes], textfont=dict(size=LABEL_FONT),
            customdata=[str(n) for n in nodes], hoverinfo="text",
            hovertext=[hover(f"{n}/{d['arity']}", "closed (observed)" if d["closed"] else "open (inferred)",
                             "explainable" if d["explainable"] else "not explainable", f"{int(d['atoms']):,} atoms")
                       for n, d in zip(nodes, data)],
            marker=dict(color=colour, size=[markers[n] for n in nodes],
                        line=dict(color=theme.OUTLINE, width=[3 if d["explainable"] else 0.5 for d in data]))))
    return finish_network_figure(fig, lay, heading or None)


def predicate_size(atoms: int, max_atoms: int, low: float = 14.0, high: float = 44.0) -> float:
    """Marker size for a predicate: grows with the square root of its atom count (area ~ count)."""
    if max_atoms <= 0:
        return low
    return low + (high - low) * math.sqrt(max(atoms, 0) / max_atoms)
