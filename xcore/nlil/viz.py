"""A rule body, or the ground subgraph that makes it fire, drawn as a graph pattern (plotly)."""

from __future__ import annotations

import re

import networkx as nx
import plotly.graph_objects as go

from xcore.viz.common import empty_figure, styled
from xcore.viz.graphs import TITLE_FONT, graph_layout, title_lines
from xcore.viz.labels import DESIGN_WIDTH, LABEL_FONT, wrap_label
from xcore.viz.spread import spread_layout

_ATOM = re.compile(r"^\s*([A-Za-z_]\w*)\(([^,()]+)(?:,\s*([^,()]+))?\)\s*$")


def pattern_graph(atoms: list[str]) -> nx.MultiDiGraph:
    """Terms as nodes (with their unary predicates as labels), binary atoms as directed labelled edges."""
    g = nx.MultiDiGraph()
    for a in atoms:
        m = _ATOM.match(a)
        if not m:
            continue
        pred, x, y = m.group(1), m.group(2).strip(), m.group(3)
        if y is None:
            g.add_node(x)
            g.nodes[x].setdefault("types", []).append(pred)
        else:
            g.add_edge(x, y.strip(), label=pred)
    return g


def pattern_figure(atoms: list[str], highlight: str | None = None, title: str | None = None,
                   width: float = DESIGN_WIDTH) -> go.Figure:
    """The atoms as a graph: nodes are terms (variables or entities) with their types, edges relations;
    `highlight` (the head's X or the explained entity) is drawn larger and in the accent colour.

    Laid out in pixels for a figure `width` px wide: each node's label goes where it meets no other
    label, marker or relation name (the figure grows taller until it does); the hover shows it in full."""
    g = pattern_graph(atoms)
    if not g.number_of_nodes():
        return empty_figure("nothing to draw", title)
    nodes = list(g.nodes)
    types = {n: ", ".join(g.nodes[n].get("types", [])) for n in nodes}
    full = {n: f"{n}<br>{types[n]}" if types[n] else str(n) for n in nodes}
    texts = {n: "<br>".join(wrap_label(t, 24, lines=1) for t in (str(n), types[n]) if t) for n in nodes}
    relations: dict[tuple, list[str]] = {}
    for u, v, d in g.edges(data=True):
        relations.setdefault((u, v), []).append(d["label"])
    edges = [(u, v, wrap_label(", ".join(labels), 24, lines=1) + " →") for (u, v), labels in relations.items()]
    size = {n: 30 if n == highlight else 20 for n in nodes}
    heading, top = title_lines(title or "", width)
    lay = spread_layout(graph_layout(nx.Graph(g), seed=0), texts, size, edges, width=width, top=top)
    pos = lay.pos
    ex, ey = [], []
    for u, v, _ in edges:
        ex += [pos[u][0], pos[v][0], None]
        ey += [pos[u][1], pos[v][1], None]
    colour = ["#d62728" if n == highlight else "#1f77b4" for n in nodes]
    fig = go.Figure([
        go.Scatter(x=ex, y=ey, mode="lines", line={"width": 2, "color": "#999"}, hoverinfo="skip", showlegend=False),
        go.Scatter(x=lay.edge_xy[:, 0].tolist(), y=lay.edge_xy[:, 1].tolist(), mode="text",
                   text=[t if pos[v][0] >= pos[u][0] else "← " + t[:-2] for u, v, t in edges],  # arrow to the target
                   textfont={"size": LABEL_FONT}, hoverinfo="skip", showlegend=False),
        go.Scatter(x=[float(pos[n][0]) for n in nodes], y=[float(pos[n][1]) for n in nodes], mode="markers+text",
                   text=[texts[n] for n in nodes], textposition=[lay.textposition[n] for n in nodes],
                   textfont={"size": LABEL_FONT}, marker={"size": [size[n] for n in nodes], "color": colour},
                   hovertext=[full[n] for n in nodes], hoverinfo="text", showlegend=False),
    ])
    canvas = lay.canvas
    fig.update_xaxes(visible=False, range=list(lay.x_range()))
    fig.update_yaxes(visible=False, range=list(lay.y_range()))
    fig.update_layout(height=round(canvas.height),
                      margin=dict(l=canvas.left, r=canvas.right, t=canvas.top, b=canvas.bottom))
    fig.update_traces(cliponaxis=False)
    styled(fig, heading or None)
    return fig.update_layout(title=dict(font=dict(size=TITLE_FONT)))
