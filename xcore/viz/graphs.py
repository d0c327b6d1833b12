"""Network figures: an explanation as a graph (target, items, their atoms) and the predicate graph."""

from __future__ import annotations

import textwrap
from typing import Any

import networkx as nx
import numpy as np
import plotly.graph_objects as go

from xcore.explain.render import hover_lines
from xcore.explain.types import Explanation
from xcore.viz import theme
from xcore.viz.common import FigureInputError, fmt, hover, styled, truncate
from xcore.viz.labels import CHAR_EM, DESIGN_WIDTH, LABEL_FONT, LINE_EM
from xcore.viz.ring_layout import RingLayout, ring_layout

TITLE_FONT = 15
"""Title size (px) of graph figures: their titles are wrapped to the figure's width."""

def target_node(explanation: Explanation) -> tuple[str, str]:
    """The node id of the explained target in `explanation_graph`."""
    return ("atom", explanation.target)


def explanation_graph(explanation: Explanation, k: int | None = None, head_atoms: bool = True) -> nx.Graph:
    """The explanation as a graph: target node, one node per item (top `k`), and each item's atoms.

    Nodes: ``("atom", target)`` (kind "target"), ``("item", rank)`` (kind "item") and
    ``("atom", text)`` (kind "atom"; shared by all items that mention it). Every item is joined to
    the target and to its other atoms (body atoms; other head atoms too unless `head_atoms` is
    False). Edges carry the item's `score`, `weight` = |score|, `rank` and `explainable`.
    """
    if not isinstance(explanation, Explanation):
        raise FigureInputError(f"explanation_graph needs an Explanation, got {type(explanation).__name__}")
    items = explanation.items if k is None else explanation.top(k)
    g = nx.Graph(target=explanation.target, method=explanation.method)
    tnode = target_node(explanation)
    g.add_node(tnode, kind="target", text=explanation.target, natural=explanation.target_text,
               prediction=explanation.prediction, truth=explanation.truth, observed=None, role="target")
    for rank, item in enumerate(items, start=1):
        inode = ("item", rank)
        g.add_node(inode, kind="item", rank=rank, item_kind=item.kind, text=item.text, natural=item.natural,
                   score=item.score, direction=item.direction, explainable=item.explainable,
                   extras=dict(item.extras), hover=hover_lines(item, explanation.score_spec))
        edge = dict(score=item.score, weight=abs(item.score), rank=rank, explainable=item.explainable,
                    direction=item.direction)
        g.add_edge(inode, tnode, **edge)
        for i, atom in enumerate(item.atoms):
            if i == item.target_index or atom == explanation.target:
                continue
            role = None if item.roles is None else item.roles[i]
            if role == "head" and not head_atoms:
                continue
            anode = ("atom", atom)
            if anode not in g:
                observed = None if item.observed is None else item.observed[i]
                g.add_node(anode, kind="atom", text=atom, natural="", observed=observed, role=role)
            g.add_edge(inode, anode, **edge)
    return g


def graph_layout(g: nx.Graph, seed: int = 0) -> dict[Any, np.ndarray]:
    """Deterministic spring layout (fixed seed, uniform edge weights)."""
    if g.number_of_nodes() == 0:
        return {}
    return nx.spring_layout(g, seed=seed, weight=None)


def radial_layout(g: nx.Graph, centre: Any, min_gap: float = 0.32) -> dict[Any, np.ndarray]:
    """Layered layout of an explanation graph: the target at the centre, items on a ring in rank order,
    atoms on an outer ring at the mean angle of their items, spread apart so neighbouring labels keep
    at least `min_gap` between them (the outer radius grows with the number of atoms)."""
    pos: dict[Any, np.ndarray] = {centre: np.zeros(2)}
    items = sorted((n for n, d in g.nodes(data=True) if d.get("kind") == "item"), key=lambda n: g.nodes[n]["rank"])
    angle = {n: 2 * np.pi * i / max(len(items), 1) + np.pi / 2 for i, n in enumerate(items)}
    for n in items:
        pos[n] = np.array([np.cos(angle[n]), np.sin(angle[n])])
    atoms = [n for n, d in g.nodes(data=True) if d.get("kind") == "atom" and n != centre]
    if atoms:
        want = []
        for n in atoms:
            nb = [angle[m] for m in g.neighbors(n) if m in angle]
            want.append(float(np.angle(np.mean(np.exp(1j * np.array(nb))))) if nb else 0.0)
        order = np.argsort(want, kind="stable")
        radius = max(2.0, len(atoms) * min_gap / (2 * np.pi))
        step = 2 * np.pi / len(atoms)
        start = want[order[0]]
        for j, i in enumerate(order):  # keep the angular order, spread evenly from the first atom
            pos[atoms[i]] = radius * np.array([np.cos(start + j * step), np.sin(start + j * step)])
    for n in g.nodes:
        pos.setdefault(n, np.zeros(2))
    return pos


def label_room(fig: go.Figure, pos: dict[Any, np.ndarray], x_pad: float = 0.4, y_pad: float = 0.15) -> go.Figure:
    """Axis ranges with room for node labels around the layout, and labels never clipped at the plot edge.

    Without this a label beside (or above) an outermost node was cut at the plot's border.
    `x_pad`/`y_pad` are fractions of the layout's width/height added on each side.
    """
    xy = np.array([np.asarray(p, dtype=float) for p in pos.values()]).reshape(-1, 2)
    if len(xy):
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        span = np.maximum(hi - lo, 1.0)
        fig.update_xaxes(range=[float(lo[0] - x_pad * span[0]), float(hi[0] + x_pad * span[0])])
        fig.update_yaxes(range=[float(lo[1] - y_pad * span[1]), float(hi[1] + y_pad * span[1])])
    fig.update_traces(cliponaxis=False, selector=dict(type="scatter"))
    return fig


def edge_width(abs_score: float, max_abs: float) -> float:
    """Line width for an edge: linear in |score| from `EDGE_WIDTH_MIN` to `EDGE_WIDTH_MAX`."""
    if max_abs <= 0:
        return theme.EDGE_WIDTH_MIN
    return theme.EDGE_WIDTH_MIN + (theme.EDGE_WIDTH_MAX - theme.EDGE_WIDTH_MIN) * abs_score / max_abs


def segments(pos: dict, edges: list[tuple[Any, Any]]) -> tuple[list, list]:
    """x and y coordinates of line segments separated by None (one trace draws many edges)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for u, v in edges:
        xs += [float(pos[u][0]), float(pos[v][0]), None]
        ys += [float(pos[u][1]), float(pos[v][1]), None]
    return xs, ys


def _node_trace(g: nx.Graph, lay: RingLayout, nodes: list, name: str, colour: str, symbol: str,
                hovers: list[str]) -> go.Scatter:
    """Markers with their labels as `ring_layout` placed them (the full text is in the hover)."""
    return go.Scatter(
        x=[float(lay.pos[n][0]) for n in nodes], y=[float(lay.pos[n][1]) for n in nodes],
        mode="markers+text", name=name, text=[lay.labels.get(n, "") for n in nodes],
        textposition=[lay.textposition.get(n, "top center") for n in nodes],
        textfont=dict(size=[lay.font.get(n, LABEL_FONT) for n in nodes],
                      color="white" if symbol == "square" else theme.OUTLINE),
        hovertext=hovers, hoverinfo="text", customdata=[g.nodes[n]["text"] for n in nodes],
        marker=dict(color=colour, size=[lay.marker[n] for n in nodes], symbol=symbol,
                    line=dict(color=theme.OUTLINE, width=1)),
    )


def _item_hover(d: dict) -> str:
    """Method-neutral hover of an item node (`xcore.explain.render.hover_lines`: no kind, no extras)."""
    return hover(f"#{d['rank']}", *d["hover"])


def _atom_hover(d: dict) -> str:
    status = {None: "", True: "observed", False: "open"}[d["observed"]]
    where = f"{d['role']} atom" if d["role"] else "atom"
    return hover(d["text"], f"{where}, {status}" if status else where)


def _item_edges(g: nx.Graph, pos: dict, items: list) -> list[go.Scatter]:
    """One line trace per item (``item <rank>``): its edges, coloured by direction, dotted when not
    explainable, width linear in |score|."""
    max_abs = max((abs(g.nodes[n]["score"]) for n in items), default=0.0)
    traces = []
    for n in items:
        d = g.nodes[n]
        xs, ys = segments(pos, [(n, m) for m in g.neighbors(n)])
        traces.append(go.Scatter(
            x=xs, y=ys, mode="lines", name=f"item {d['rank']}", showlegend=False, hoverinfo="skip",
            opacity=0.7, line=dict(color=theme.direction_colour(d["direction"]),
                                   dash="solid" if d["explainable"] else "dot",
                                   width=edge_width(abs(d["score"]), max_abs))))
    return traces


def explanation_graph_figure(explanation: Explanation, k: int | None = 20, seed: int = 0,
                             head_atoms: bool = True, label_width: int = 28,
                             title: str | None = None, width: float = DESIGN_WIDTH) -> go.Figure:
    """Plotly network of `explanation_graph`: one edge trace per item, then node traces.

    Edge traces (named ``item <rank>``) are coloured by the item's direction (up, down, none; dotted
    when the item is not explainable) with width linear in |score|. Node traces, in order and only when non-empty: "observed atoms",
    "open atoms", "atoms" (status unknown), "explainable items", "non-explainable items", "target".
    Hover text shows each item's canonical and natural-language text. Laid out in pixels by
    `ring_layout` for a figure `width` px wide (labels wrapped to fit, none overlapping; the height
    grows with the number of atoms); a wider column only adds room around it.
    """
    g = explanation_graph(explanation, k=k, head_atoms=head_atoms)
    title = title if title is not None else f"Explanation of {truncate(explanation.target, 80)}"
    t = target_node(explanation)
    items = [n for n, d in g.nodes(data=True) if d["kind"] == "item"]
    atoms = [(n, d) for n, d in g.nodes(data=True) if d["kind"] == "atom"]
    groups = [
        ("observed atoms", [n for n, d in atoms if d["observed"] is True], theme.OBSERVED),
        ("open atoms", [n for n, d in atoms if d["observed"] is False], theme.OPEN),
        ("atoms", [n for n, d in atoms if d["observed"] is None], theme.UNKNOWN),
    ]
    item_groups = [(name, [n for n in items if g.nodes[n]["explainable"] is flag], flag)
                   for name, flag in (("explainable items", True), ("non-explainable items", False))]
    legend = [name for name, nodes, _ in groups + item_groups if nodes] + ["target"]
    heading, top = title_lines(title, width)
    texts = {n: d["text"] for n, d in atoms} | {n: f"#{g.nodes[n]['rank']}" for n in items}
    lay = ring_layout(g, t, texts, width=width, label_width=label_width, top=top,
                      bottom=legend_height(legend, width))
    pos = lay.pos
    fig = go.Figure(_item_edges(g, pos, items))
    for name, nodes, colour in groups:
        if nodes:
            fig.add_trace(_node_trace(g, lay, nodes, name, colour, "circle",
                                      [_atom_hover(g.nodes[n]) for n in nodes]))
    for name, nodes, flag in item_groups:
        if nodes:
            fig.add_trace(_node_trace(g, lay, nodes, name, theme.explainable_colour(flag), "square",
                                      [_item_hover(g.nodes[n]) for n in nodes]))
    td = g.nodes[t]
    values = [f"prediction {fmt(td['prediction'])}" if td["prediction"] is not None else "",
              f"truth {fmt(td['truth'])}" if td["truth"] is not None else ""]
    # the target at the centre, where every edge meets: the title names it, no label
    fig.add_trace(_node_trace(g, lay, [t], "target", theme.TARGET, "star",
                              [hover(td["text"], td["natural"], ", ".join(v for v in values if v))]))
    return finish_network_figure(fig, lay, heading, equal_axes=True)


def title_lines(title: str, width: float, font: float = 0.0) -> tuple[str, float]:
    """`title` wrapped to the figure width (up to three lines) and the top margin it needs (px)."""
    font = font or TITLE_FONT
    chars = max(10, int((width - 20) // (CHAR_EM * font)))
    lines_ = textwrap.wrap(" ".join(title.split()), chars, break_on_hyphens=False) if title else []
    if len(lines_) > 3:
        lines_ = lines_[:2] + [truncate(" ".join(lines_[2:]), chars)]
    text = "<br>".join(lines_)  # as given (plotly shows "<-" as text), one line per <br>
    lines = text.count("<br>") + 1 if text else 0
    return text, 16 + lines * LINE_EM * font


def legend_height(names: list[str], width: float, font: float = LABEL_FONT) -> float:
    """Bottom margin (px) for a horizontal legend of `names` below a plot `width` px wide."""
    entries = [len(n) * CHAR_EM * font + 45 for n in names]
    rows, used = 1, 0.0
    for w in entries:
        if used and used + w > width - 20:
            rows, used = rows + 1, 0.0
        used += w
    return 14 + rows * 1.9 * font


def finish_network_figure(fig: go.Figure, lay: Any, heading: str | None, equal_axes: bool = False) -> go.Figure:
    """Axes, size and margins of a network figure laid out in pixels (`lay`: a ring or spread layout), the
    legend below the graph (so a graph in a narrow column keeps its width for the labels), the title."""
    canvas = lay.canvas
    fig.update_xaxes(visible=False, range=list(lay.x_range()))
    fig.update_yaxes(visible=False, range=list(lay.y_range()), **(dict(scaleanchor="x", scaleratio=1) if equal_axes else {}))
    fig.update_layout(hovermode="closest", showlegend=True, height=round(canvas.height),
                      margin=dict(l=canvas.left, r=canvas.right, t=canvas.top, b=canvas.bottom),
                      legend=dict(orientation="h", yanchor="top", y=-0.01, xanchor="center", x=0.5))
    fig.update_traces(cliponaxis=False, selector=dict(type="scatter"))
    styled(fig, heading)
    return fig.update_layout(title=dict(font=dict(size=TITLE_FONT)))
