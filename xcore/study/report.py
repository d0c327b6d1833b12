"""Figures and the one-file HTML report of a study analysis (diverging stacked bars as in I-Explain's Fig. 3)."""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from xcore.study.analysis import ALL, StudyAnalysis
from xcore.viz.common import styled

LEVEL_COLOURS = {2: ["#ca0020", "#0571b0"], 3: ["#ca0020", "#bababa", "#0571b0"],
                 4: ["#ca0020", "#f4a582", "#92c5de", "#0571b0"],
                 5: ["#ca0020", "#f4a582", "#d9d9d9", "#92c5de", "#0571b0"]}


def _colours(scale: int) -> list[str]:
    """Diverging colours from disagree (red) to agree (blue), one per level of the scale."""
    if scale in LEVEL_COLOURS:
        return LEVEL_COLOURS[scale]
    return sample_colorscale("RdBu", [i / (scale - 1) for i in range(scale)])


def diverging_figure(analysis: StudyAnalysis, question_id: str) -> go.Figure:
    """Percent of answers per level and condition, low levels left of zero, high right, the middle split."""
    q = analysis.study.question(question_id)
    dist = analysis.distribution[analysis.distribution["question_id"] == question_id]
    codes = [c.code for c in analysis.study.conditions]
    labels = [f"Explanation {c}" for c in codes]
    pct = dist.pivot(index="condition", columns="level", values="percent").reindex(index=codes).fillna(0.0)
    scale, colours = q.scale, _colours(q.scale)
    mid = (scale + 1) / 2
    fig = go.Figure()
    # negative side: the middle half first, then levels towards 1, so level 1 sits farthest left
    order_neg = ([int(mid)] if scale % 2 else []) + [lv for lv in range(scale, 0, -1) if lv < mid]
    order_pos = ([int(mid)] if scale % 2 else []) + [lv for lv in range(1, scale + 1) if lv > mid]
    for side, order in (("neg", order_neg), ("pos", order_pos)):
        for lv in order:
            share = pct[lv] / 2 if lv == mid else pct[lv]
            x = -share if side == "neg" else share
            fig.add_trace(go.Bar(y=labels, x=x, orientation="h", name=f"{lv} {q.anchors[lv - 1]}",
                                 legendgroup=str(lv), showlegend=not (lv == mid and side == "neg"),
                                 marker_color=colours[lv - 1], customdata=pct[lv].to_numpy(),
                                 hovertemplate=f"{q.anchors[lv - 1]}: %{{customdata:.1f}}%<extra></extra>"))
    fig.update_layout(barmode="relative", xaxis_title="% of answers (left: low, right: high)",
                      legend=dict(traceorder="normal"), height=180 + 40 * len(codes),
                      margin=dict(l=10, r=10, t=50, b=50))
    fig.add_vline(x=0, line_width=1, line_color="#444")
    return styled(fig, q.text[:90])  # the legend below the axis title, the title below the toolbar


def means_figure(analysis: StudyAnalysis, question_id: str = ALL) -> go.Figure:
    """Mean rating per condition with its 95% Student-t interval (over participant means)."""
    m = analysis.means[analysis.means["question_id"] == question_id]
    fig = go.Figure(go.Scatter(x=m["mean"], y=[f"Explanation {c}" for c in m["condition"]], mode="markers",
                               marker=dict(size=12), error_x=dict(type="data", symmetric=False,
                                                                  array=m["ci_high"] - m["mean"],
                                                                  arrayminus=m["mean"] - m["ci_low"])))
    fig.update_layout(xaxis_title="mean rating", height=160 + 40 * len(m), margin=dict(l=10, r=10, t=50, b=10))
    # ALL is "(all ratings)": not wrapped in a second pair of parentheses
    name = question_id if question_id.startswith("(") and question_id.endswith(")") else f"({question_id})"
    return styled(fig, f"Mean rating, 95% t interval {name}")


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, float_format=lambda v: f"{v:.4g}", border=0, classes="t")


def html_report(analysis: StudyAnalysis) -> str:
    """One self-contained HTML file: the study, conditions, counts, figures, means, tests and times."""
    s = analysis.study
    conds = pd.DataFrame([{"condition": c.label, "method": c.method, "explainer": c.explainer, "run": c.source}
                          for c in s.conditions])
    parts = [f"<h1>{html.escape(s.title)}</h1>",
             f"<p>Study <code>{html.escape(s.id)}</code>, {s.design}-subject design, {len(s.items)} items, "
             f"seed {s.seed}, definition digest <code>{s.digest()[:16]}</code>. {analysis.n_participants} "
             f"participants answered; {len(analysis.excluded)} left out for failed attention checks."
             + (f" <b>{analysis.orphan_answers} answers of {analysis.orphans} participants whose enrolment row is "
                "missing (orphans) are included.</b>" if analysis.orphans else "") + "</p>",
             "<h2>Conditions (unblinded)</h2>", _table(conds), "<h2>Response counts</h2>", _table(analysis.counts)]
    first = True
    parts.append("<h2>Rating distributions</h2>")
    for q in s.questions:
        if q.rated:
            parts.append(diverging_figure(analysis, q.id).to_html(full_html=False,
                                                                   include_plotlyjs="inline" if first else False))
            first = False
    parts.append(means_figure(analysis).to_html(full_html=False, include_plotlyjs="inline" if first else False))
    parts += ["<h2>Means (participant-level, 95% Student-t intervals)</h2>", _table(analysis.means),
              "<h2>Tests between conditions (two-sided; Holm-adjusted p; difference of means with its 95% Welch "
              "or paired t interval)</h2>", _table(analysis.tests)]
    if len(analysis.parts):
        parts += ["<h2>Relational vs non-relational parts (Wilcoxon signed-rank)</h2>", _table(analysis.parts)]
    parts += ["<h2>Time per item (seconds)</h2>", _table(analysis.times)]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}"
             "table.t{border-collapse:collapse;margin:.5em 0}table.t td,table.t th{padding:2px 8px;"
             "border-bottom:1px solid #ddd;text-align:right}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(s.title)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
