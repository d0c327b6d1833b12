"""Self-contained HTML: the run report and single explanation cards (plotly inlined once, no server).

A report holds the data summary, settings, metrics, the model summary, a sortable predictions
table and, for chosen targets, explanation cards (text, ranked bars, graph). Every text is
escaped; the file opens offline in any browser.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import pandas as pd
import plotly.io as pio
from plotly.offline import get_plotlyjs

from xcore.errors import XcoreError
from xcore.explain.render import item_table, prediction_text
from xcore.explain.text import explanation_text
from xcore.explain.types import Explanation
from xcore.methods.surrogate import fidelity_sentence
from xcore.viz import explanation_graph_figure, ranked_bar_figure

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

    from xcore.methods.base import Run

GRAPH_KINDS = {"ground_rule", "ground_formula"}
"""Item kinds drawn as an explanation graph (atoms linked through ground rules/formulas)."""
DEFAULT_CARDS = 5
MAX_TABLE_ROWS = 5000

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1200px;
padding:1.5rem;color:#1f2430;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{border-bottom:1px solid #dde;padding-bottom:.2rem;margin-top:2rem}
.muted{color:#667;font-size:.9rem}
table{border-collapse:collapse;font-size:.88rem;margin:.5rem 0}
th,td{border-bottom:1px solid #e5e7ef;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f4f5fa}table.sortable th{cursor:pointer;user-select:none}
table.sortable th:after{content:" \\2195";color:#99a}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{max-height:480px;overflow:auto;border:1px solid #e5e7ef}
.card{border:1px solid #dde;border-radius:8px;padding:1rem;margin:1rem 0;background:#fff}
.card h3{margin:.1rem 0 .3rem 0;font-size:1.05rem}
.figs{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem}
.figs.two{grid-template-columns:repeat(2,minmax(0,1fr))}
@media (max-width:900px){.figs.two{grid-template-columns:minmax(0,1fr)}}
pre.text{white-space:pre-wrap;background:#f7f7fb;padding:.6rem;border-radius:6px}
"""

SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){th.addEventListener('click',function(){
    var body=t.tBodies[0],rows=Array.from(body.rows),asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
    rows.sort(function(a,b){var x=a.cells[i].dataset.v??a.cells[i].textContent,y=b.cells[i].dataset.v??b.cells[i].textContent;
      var nx=parseFloat(x),ny=parseFloat(y);var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?c:-c;});
    rows.forEach(function(r){body.appendChild(r);});});});});
window.addEventListener('load',function(){if(window.Plotly){document.querySelectorAll('.js-plotly-plot')
  .forEach(function(p){Plotly.Plots.resize(p);});}});
"""


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js itself (inlined once per file so reports open without a network)."""
    return get_plotlyjs()


def esc(value: Any) -> str:
    """`value` as escaped HTML text (quotes too, so it is safe inside attributes)."""
    return html.escape(str(value), quote=True)


def figure_div(fig: "go.Figure", div_id: str) -> str:
    """A figure as a div plus its script; plotly.js must already be on the page."""
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=div_id,
                       config={"displaylogo": False, "responsive": True})


def _cell(value: Any) -> str:
    """One table cell; numbers carry their exact value in data-v so the table sorts them as numbers."""
    if value is None or (isinstance(value, float) and value != value):
        return '<td class="num" data-v=""></td>'
    if isinstance(value, bool):
        return f"<td>{esc(value)}</td>"
    if isinstance(value, (int, float)):
        shown = f"{value:.4g}" if isinstance(value, float) else f"{value:,}"
        return f'<td class="num" data-v="{value!r}">{esc(shown)}</td>'
    if isinstance(value, (list, tuple, dict)):
        value = json.dumps(value)
    return f"<td>{esc(value)}</td>"


def table_html(frame: pd.DataFrame, sortable: bool = False, max_rows: int = MAX_TABLE_ROWS, table_id: str = "") -> str:
    """An HTML table of `frame` (escaped; numbers right-aligned and sorted as numbers)."""
    shown = frame.head(max_rows)
    cls = ' class="sortable"' if sortable else ""
    tid = f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(f"<th>{esc(c)}</th>" for c in shown.columns)
    body = "\n".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>"
                     for row in shown.astype(object).itertuples(index=False, name=None))
    note = "" if len(frame) <= max_rows else f'<p class="muted">First {max_rows:,} of {len(frame):,} rows.</p>'
    return f"<table{cls}{tid}><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>{note}"


def mapping_table(values: dict[str, Any]) -> str:
    """A name/value table of a mapping (settings, metrics)."""
    if not values:
        return '<p class="muted">none</p>'
    return table_html(pd.DataFrame({"name": list(values), "value": [_plain(v) for v in values.values()]}))


def _plain(v: Any) -> Any:
    """Lists, mappings and None as JSON text; other values unchanged."""
    return json.dumps(v) if isinstance(v, (list, tuple, dict)) or v is None else v


def page(title: str, body: str) -> str:
    """A complete HTML document: plotly.js inlined once, the styles, `body`, the table-sorting script."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style>\n<script type=\"text/javascript\">{plotly_js()}</script>\n</head>\n"
            f"<body>\n{body}\n<script>{SORT_JS}</script>\n</body></html>\n")


# ---------------------------------------------------------------------- explanation cards
def _slug(text: str) -> str:
    """A short id-safe version of `text` (for figure div ids)."""
    return "".join(ch if ch.isalnum() else "-" for ch in text)[:60]


def card_body(exp: Explanation, k: int = 10, title: str | None = None, uid: str = "card") -> str:
    """One explanation as an HTML block: target, prediction, score meaning, text, bars, graph, table."""
    head = f"{esc(title)} — " if title else ""
    pred = "" if exp.prediction is None else f" — predicted {prediction_text(exp)}"
    truth = "" if exp.truth is None else f", true {exp.truth:.3f}"
    parts = [f'<div class="card" data-target="{esc(exp.target)}">',
             f"<h3>{head}{esc(exp.target_text or exp.target)}</h3>",
             f'<p class="muted">{esc(exp.target)}{esc(pred)}{esc(truth)}</p>']
    if exp.score_spec is not None:
        parts.append(f'<p class="muted">{esc(exp.score_spec.caption())}</p>')
    parts.append(f'<pre class="text">{esc(explanation_text(exp, k=min(3, k)))}</pre>')
    if exp.items:
        figs = [figure_div(ranked_bar_figure(exp, k=k), f"{uid}-bars")]
        if any(it.kind in GRAPH_KINDS and len(it.atoms) > 1 for it in exp.items):
            figs.append(f'<div class="graph">{figure_div(explanation_graph_figure(exp, k=min(12, k + 2)), f"{uid}-graph")}</div>')
        two = " two" if len(figs) == 2 else ""
        parts.append(f'<div class="figs{two}">' + "".join(f"<div>{f}</div>" for f in figs) + "</div>")
        parts.append(table_html(item_table(exp, max(k, 20))))
    parts.append("</div>")
    return "\n".join(parts)


def card_html(exp: Explanation, k: int = 10, title: str | None = None) -> str:
    """One explanation card as a standalone HTML file (opens offline)."""
    name = title or exp.method or "explanation"
    body = (f"<h1>{esc(exp.target_text or exp.target)}</h1><p class=\"muted\">Explanation by {esc(name)}</p>"
            + card_body(exp, k=k, title=title, uid=f"card-{_slug(exp.target)}"))
    return page(f"{name}: {exp.target}", body)


# ---------------------------------------------------------------------- run report
def report_targets(run: "Run", targets: Sequence[str] | None = None, n: int = DEFAULT_CARDS) -> list[str]:
    """The targets given cards: `targets` (each must be explained by some explainer), else the first
    `n` predictions that have an explanation."""
    explained: dict[str, None] = {}
    for exps in run.explanations.values():
        explained.update(dict.fromkeys(exps.targets))
    if targets is not None:
        missing = [t for t in targets if t not in explained]
        if missing:
            raise XcoreError(f"no explanation of target {missing[0]!r} in this {run.method} run; explained "
                             f"targets include {', '.join(list(explained)[:5]) or 'none'}")
        return list(targets)
    order = [str(t) for t in run.predictions["target"]] if "target" in run.predictions else []
    picked = [t for t in dict.fromkeys(order) if t in explained][:n]
    return picked or list(explained)[:n]


def _section(title: str, anchor: str, inner: str) -> str:
    """A titled report section with an anchor id."""
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>\n{inner}\n</section>'


def report_html(run: "Run", targets: Iterable[str] | None = None, n_cards: int = DEFAULT_CARDS, k: int = 10,
                data_summary: pd.DataFrame | None = None, title: str | None = None) -> str:
    """The run report as one self-contained HTML document (see the module docstring)."""
    chosen = report_targets(run, None if targets is None else list(targets), n_cards)
    title = title or f"xcore report: {run.method} on {run.dataset or 'data'}"
    body = [f"<h1>{esc(title)}</h1>",
            f'<p class="muted">method <b>{esc(run.method)}</b> · data <b>{esc(run.dataset or "?")}</b> · '
            f"fingerprint <code>{esc(run.fingerprint)}</code> · {len(run.predictions):,} predictions · "
            f"explainers: {esc(', '.join(run.explanations) or 'none')}</p>"]
    data = (table_html(data_summary) if data_summary is not None else
            f"<p>Dataset <b>{esc(run.dataset or '?')}</b> (content fingerprint <code>{esc(run.fingerprint)}</code>).</p>")
    body.append(_section("Data", "data", data))
    body.append(_section("Settings", "settings", mapping_table(run.settings_dict)))
    metrics = mapping_table(run.metrics)

    said = fidelity_sentence(run.metrics)
    if said is not None:
        metrics = (f'<p class="{"warning" if said[1] else "muted"}" id="surrogate-fidelity"><b>{esc(said[0])}</b></p>'
                   + metrics)
    if run.timings:
        metrics += "<h3>Timings (seconds)</h3>" + mapping_table({k_: round(v, 3) for k_, v in run.timings.items()})
    body.append(_section("Metrics", "metrics", metrics))
    if run.summary is not None:
        s = run.summary
        inner = [f'<p class="muted">{esc(s.target_text or s.target)}: {s.n_items:,} items'
                 + (f" · {esc(s.score_spec.caption())}" if s.score_spec is not None else "") + "</p>"]
        if s.items:
            inner.append(figure_div(ranked_bar_figure(s, k=15, title="Model summary"), "summary-bars"))
            inner.append('<div class="scroll">' + table_html(s.to_frame()[["rank", "kind", "text", "score",
                                                                            "explainable"]], sortable=True) + "</div>")
        body.append(_section("Model", "model", "\n".join(inner)))
    preds = ('<p class="muted">Click a column header to sort.</p><div class="scroll">'
             + table_html(run.predictions, sortable=True, table_id="predictions") + "</div>")
    body.append(_section("Predictions", "predictions", preds))
    cards = []
    for target in chosen:
        for name, exps in run.explanations.items():
            if target in exps:
                uid = f"card{len(cards) + 1}-{_slug(name)}-{_slug(target)}"
                cards.append(card_body(exps[target], k=k, title=name, uid=uid))
    body.append(_section("Explanations", "explanations",
                         "\n".join(cards) if cards else '<p class="muted">No explanations in this run.</p>'))
    return page(title, "\n".join(body))


# ---------------------------------------------------------------------- comparison
def compare_html(columns: dict, agreement: pd.DataFrame, k: int = 5, n_targets: int = 10) -> str:
    """The comparison of explainers as one self-contained HTML document: agreement per pair, the
    plots over all targets, and the targets where they disagree most with their top items side by side."""
    # the comparison's Spearman figures import scipy.stats: only for a comparison report
    from xcore.compare import disagreements, pair_summary, top_items_table
    from xcore.viz.agreement import agreement_figures  # it reads xcore.compare too (scipy.stats)

    worst = disagreements(agreement)
    body = ["<h1>xcore: explainers compared</h1>",
            f'<p class="muted">{len(columns)} explainers: {esc(", ".join(columns))} · top-{k} overlap and '
            f"Spearman's rank correlation over the items both rank; items matched by their canonical text.</p>"]
    body.append(_section("Agreement per pair", "pairs", table_html(pair_summary(agreement).round(4))))
    figs = agreement_figures(agreement)
    if figs:
        body.append(_section("Agreement over all targets", "plots", '<div class="figs two">' + "".join(
            f"<div>{figure_div(f, f'agreement-{i}')}</div>" for i, f in enumerate(figs)) + "</div>"))
    tables = []
    for target in worst["target"].head(n_targets):
        tables.append(f"<h3>{esc(target)}</h3>" + table_html(top_items_table(columns, target, k=k)))
    body.append(_section("Where they disagree most", "disagreements",
                         '<div class="scroll">' + table_html(worst.round(4), sortable=True) + "</div>"
                         + "\n".join(tables)))
    return page("xcore: explainers compared", "\n".join(body))
