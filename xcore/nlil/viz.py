"""A rule body, or the ground subgraph that makes it fire, drawn as a graph pattern (plotly)."""

from __future__ import annotations

import re

import networkx as nx
import plotly.graph_objects as go

from xcore.viz.common import empty_figure, styled
from xcore.viz.graphs import graph_layout, label_room

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


def pattern_figure(atoms: list[str], highlight: str | None = None, title: str | None = None) -> go.Figure:
    """The atoms as a graph: nodes are terms (variables or entities) with their types, edges relations;
    `highlight` (the head's X or the explained entity) is drawn larger and in the accent colour."""
    g = pattern_graph(atoms)
    if not g.number_of_nodes():
        return empty_figure("nothing to draw", title)
    pos = graph_layout(nx.Graph(g), seed=0)
    ex, ey, tx, ty, tt = [], [], [], [], []
    for u, v, d in g.edges(data=True):
        (x0, y0), (x1, y1) = pos[u], pos[v]
        ex += [x0, x1, None]
        ey += [y0, y1, None]
        tx.append(x0 * 0.45 + x1 * 0.55)
        ty.append(y0 * 0.45 + y1 * 0.55)
        tt.append(f"{d['label']} →")
    nodes = list(g.nodes)
    labels = [f"{n}<br>{', '.join(g.nodes[n].get('types', []))}" for n in nodes]
    colour = ["#d62728" if n == highlight else "#1f77b4" for n in nodes]
    size = [30 if n == highlight else 20 for n in nodes]
    fig = go.Figure([
        go.Scatter(x=ex, y=ey, mode="lines", line={"width": 2, "color": "#999"}, hoverinfo="skip", showlegend=False),
        go.Scatter(x=tx, y=ty, mode="text", text=tt, textfont={"size": 12}, hoverinfo="skip", showlegend=False),
        go.Scatter(x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers+text", text=labels,
                   textposition="top center", marker={"size": size, "color": colour}, hovertext=labels,
                   hoverinfo="text", showlegend=False),
    ])
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    label_room(fig, pos, x_pad=0.15, y_pad=0.3)  # two-line labels above the nodes
    return styled(fig, title)
