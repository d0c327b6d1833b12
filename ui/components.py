"""Page parts every method page shares: the applicability gate, the run button (`ui.run_control`:
background run with progress and Cancel, runs kept per browser session), the predictions browser, the
explanation panel and downloads.

Views only: every result comes from `xcore.methods` (registry, `run_method`, `Run`); the only keys
used are the run keys xcore computes.
"""

from __future__ import annotations

import json
from typing import Any, Callable, TypeVar

import pandas as pd
import streamlit as st

from ui.common import set_dataset
from ui.run_control import (  # noqa: F401 (shared)
    SESSION_RUNS,
    current_run,
    last_run,
    remember_run,
    replace_run,
    run_button,
    session_runs,
    show_error,
)
from ui.state import keep, remembered
from xcore.data import RelationalDataset
from xcore.data.samples import load_sample, sample_info
from xcore.errors import XcoreError
from xcore.explain.global_view import global_importance
from xcore.explain.render import item_table, prediction_text
from xcore.explain.text import explanation_markdown, markdown_escape
from xcore.explain.types import Explanation
from xcore.methods import REGISTRY, Run, Settings
from xcore.methods.baselines import BASELINE_PREFIX, BASELINE_WHAT, LOWER_IS_BETTER
from xcore.methods.verify import verify_run
from xcore.report import card_html, report_html
from xcore.viz import (
    explanation_graph_figure,
    global_importance_figure,
    is_additive,
    quality_figures,
    ranked_bar_figure,
    waterfall_figure,
)
from xcore.viz.common import sort_frame
from xcore.viz.views import baseline_table, global_table, model_table

T = TypeVar("T")

GRAPH_KINDS = {"ground_rule", "ground_formula"}
PLOT_CONFIG = {"toImageButtonOptions": {"format": "svg", "scale": 1}, "displaylogo": False}
"""Every figure offers a download (SVG from the toolbar's camera; PNG via the browser)."""
METRIC_LABELS = {"mse": "Test MSE", "mae": "Test MAE", "rmse": "Test RMSE", "f1": "F1", "roc_auc": "ROC AUC",
                 "mep@1": "MEP@1", "mep@2": "MEP@2", "mep@3": "MEP@3", "max_rhat": "Max R-hat",
                 "max_se": "Largest MC error", "brier": "Brier score", "n_test": "Test atoms"}


# ---------------------------------------------------------------------- runs of this session
def stale_notice(method: str, dataset: RelationalDataset, settings: Settings | None, run: Run | None) -> None:
    """Say so when this data has an earlier run under other settings (its results are not shown).

    Drawn in one container on every pass, so the results below keep their place in the page."""
    with st.container():
        if run is None and last_run(method, dataset) is not None:
            st.info("The settings changed since the last run: press the run button to see results for these "
                    "settings.")


# ---------------------------------------------------------------------- applicability
def applicability_gate(method: str, dataset: RelationalDataset | None) -> RelationalDataset:
    """The dataset if `method` can run on it; else say why, offer the method's sample, and stop the page."""
    spec = REGISTRY[method]
    reason = "no dataset is loaded" if dataset is None else spec.applicable(dataset)
    if reason is None:
        return dataset  # type: ignore[return-value]
    name = "this page" if dataset is None else f"**{dataset.name}**"
    st.warning(f"{spec.title} cannot run on {name}: {reason}.")
    info = sample_info(spec.sample)
    if st.button(f"Load the {info.title} sample", key=f"{method}_load_sample", type="primary"):
        try:
            set_dataset(load_sample(spec.sample), f"sample: {info.title}")
        except XcoreError as e:
            st.error(str(e))
        else:
            st.rerun()
    st.stop()
    raise AssertionError("unreachable")  # st.stop() raises


# ---------------------------------------------------------------------- predictions
COLUMN_HELP = {
    "target": "The predicted atom or row (canonical text).",
    "prediction": "The model's prediction for the target.",
    "truth": "The true value or class, where the data has one.",
    "error": "prediction − truth.",
    "lo": "ω(POS) low: the smallest probability of the positive class the LP allows for this row.",
    "hi": "ω(POS) high: the largest probability of the positive class the LP allows for this row.",
    "mid": "ω(POS) midpoint: (low + high) / 2, compared with 0.5 to predict.",
    "n_clauses": "Clauses of the knowledge base that bear on this row's query.",
    "correct": "Whether the prediction equals the truth.",
    "se": "Monte Carlo standard error of the marginal (batch means); 0 for exact inference.",
    "rhat": "Split-chain R-hat: near 1 when the Gibbs chains agree (above 1.1: sample more).",
}
"""Tooltips for the prediction columns a new user may not know."""


def predictions_browser(frame: pd.DataFrame, key: str, height: int = 300) -> str | None:
    """Filter, sort and select predictions; returns the selected row's target (the first row by default).
    The filter and the sort are kept while the user visits other pages.

    Column headers carry tooltips (`COLUMN_HELP`) for numbers such as ω(POS) low/high or R-hat."""
    if frame.empty:
        st.info("This run made no predictions.")
        return None
    c1, c2, c3 = st.columns([3, 2, 1])
    columns = list(frame.columns)
    keys = (f"{key}_filter", f"{key}_sort", f"{key}_desc")
    for name, default, allowed in zip(keys, ("", columns[0], False), (None, columns, None)):
        remembered(name, default, allowed)  # kept across navigation (issue 24)
    query = c1.text_input("Filter targets", key=keys[0], placeholder="part of a target, e.g. u01")
    sort = c2.selectbox("Sort by", columns, key=keys[1])
    descending = c3.toggle("Descending", key=keys[2])
    for name in keys:
        keep(name)
    view = frame
    if query:
        view = view[view["target"].astype(str).str.contains(query, regex=False, case=False)]
    view = sort_frame(view, sort, ascending=not descending)  # "row 2" before "row 10"
    if view.empty:
        st.info(f"No target contains {query!r}.")
        return None
    # the target stays in view when a narrow window scrolls the table sideways
    config = {c: st.column_config.Column(help=COLUMN_HELP[c], pinned=c == "target" or None)
              for c in view.columns if c in COLUMN_HELP}
    event = st.dataframe(view.round(4), hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key=f"{key}_table", height=height, column_config=config)
    rows = event.selection.rows if event is not None else []
    st.caption(f"{len(view):,} of {len(frame):,} predictions. Select a row to explain it.")
    return str(view["target"].iloc[rows[0] if rows and rows[0] < len(view) else 0])


# ---------------------------------------------------------------------- explanations
def explanation_panel(exp: Explanation, key: str, k: int = 10, graph: bool = True, title: str | None = None) -> None:
    """One explanation: target, prediction, the score's meaning, ranked bars, graph, table and text."""
    head = f"**{title}** — " if title else ""
    pred = "" if exp.prediction is None else f" — predicted {prediction_text(exp)}"
    truth = "" if exp.truth is None else f", true {exp.truth:.3f}"
    st.markdown(f"{head}**{markdown_escape(exp.target)}**{pred}{truth}")
    if exp.score_spec is not None:
        st.caption(exp.score_spec.caption())
    fidelity = exp.meta.get("surrogate_fidelity")  # a surrogate of the user's model: how faithful it is
    if isinstance(fidelity, str) and fidelity:
        (st.warning if exp.meta.get("surrogate_low") else st.info)(fidelity)
    note = exp.meta.get("note")
    if isinstance(note, str) and note:
        st.info(note)
    if not exp.items:
        st.info("Nothing explains this prediction: no item exerts any influence on it.")
        return
    draw_graph = graph and any(it.kind in GRAPH_KINDS and len(it.atoms) > 1 for it in exp.items)
    side = (explanation_graph_figure(exp, k=min(12, k + 2)) if draw_graph
            else waterfall_figure(exp, k=k) if is_additive(exp) else None)
    # full width: long rule texts need the room; the graph or waterfall follows below
    st.plotly_chart(ranked_bar_figure(exp, k=k, label_width=90), width="stretch", key=f"{key}_bars",
                    config=PLOT_CONFIG)
    if side is not None:
        st.plotly_chart(side, width="stretch", key=f"{key}_side", config=PLOT_CONFIG)
    st.dataframe(item_table(exp, max(k, 20)), hide_index=True, width="stretch", key=f"{key}_items", column_config={
        "natural": st.column_config.TextColumn(width="medium", help="Cut when long: the list below has the full text."),
        "direction": st.column_config.TextColumn(help="Which way the reason pushes the prediction (none when the "
                                                      "score has no direction)."),
        "effect": st.column_config.NumberColumn(help="The signed change of the prediction the reason stands for, "
                                                     "where the method states one."),
        "text": st.column_config.TextColumn(width="medium")})
    # the table cuts long cells: the top-k reasons in full, as a numbered list that wraps
    st.markdown(explanation_markdown(exp, k=k))
    explanation_card_download(exp, key)


def explanation_card_download(exp: Explanation, key: str) -> None:
    """This explanation as a standalone HTML card (text, bars, graph; opens offline), built on click."""
    name = "".join(ch if ch.isalnum() else "_" for ch in exp.target).strip("_")[:40] or "explanation"
    st.download_button("Explanation card (HTML)", lambda: card_html(exp), f"{name}_card.html",
                       key=f"{key}_card", mime="text/html", on_click="ignore")


# ---------------------------------------------------------------------- run-wide views
def global_panel(run: Run, key: str, k: int = 5) -> None:
    """Which rules / formulas / clauses explain most predictions, per explainer, beside the model summary."""
    if not run.explanations:
        st.info("This run has no explanations to summarise.")
        return
    names = list(run.explanations)
    name = names[0] if len(names) == 1 else st.selectbox("Explainer", names, key=f"{key}_explainer")
    frame = global_importance(run.explanations[name], k=k)
    st.plotly_chart(global_importance_figure(frame, k=k, label_width=90), width="stretch", key=f"{key}_chart",
                    config=PLOT_CONFIG)
    st.caption(f"Ground items are grouped by the rule they instantiate. Share: how many explanations have the "
               f"group among their top {k}; colour: green when its items mostly push predictions up, "
               "vermillion when mostly down, grey when mixed or when the score has no direction.")
    # full width, numbers first (xcore.viz.views): in a 3:2 column the long rule text cut them off
    st.dataframe(global_table(frame), hide_index=True, width="stretch", key=f"{key}_table",
                 column_config={"group": st.column_config.TextColumn("rule / clause", width="large")})
    if run.summary is not None:
        st.markdown("**The model**")
        if run.summary.score_spec is not None:
            st.caption(run.summary.score_spec.caption())
        st.dataframe(model_table(run.summary), hide_index=True, width="stretch", key=f"{key}_model",
                     column_config={"text": st.column_config.TextColumn("rule / clause", width="large")})


def verify_panel(run: Run, dataset: RelationalDataset, key: str) -> None:
    """Check the run's explanations against its model by intervention (`xcore.methods.verify`): each of
    the top-k items of every explained prediction is taken away and the prediction re-inferred."""
    st.caption("Each reason is a claim about the model. Verification takes each of the top-k reasons away the "
               "way the method defines it (removes the ground rule, sets the formula's weight to 0, masks the "
               "features or the word), infers again, and checks that the prediction moves the way the reason "
               "says. Scores with no direction (fidelity, coverage, precision) are listed as not directional.")
    k = int(st.number_input("Reasons checked per prediction (k)", 1, 20, 3, key=f"{key}_k"))
    if not st.button("Verify by intervention", key=f"{key}_go") and ("verify", (k,)) not in \
            run.extras.get("derived", {}):
        return
    result = derived(run, "verify", (k,), lambda: verify_run(run, dataset, k=k), "verifying the explanations")
    if result is None:
        return
    (st.success if result.ok else st.error)(
        "Every directed reason moved its prediction the way it says." if result.ok else
        f"{int((result.items['verdict'] == 'opposite').sum())} reason(s) moved the prediction against their "
        "stated direction: see the rows marked opposite.")
    st.dataframe(result.summary, hide_index=True, width="stretch", key=f"{key}_summary")
    st.dataframe(result.items, hide_index=True, width="stretch", key=f"{key}_items",
                 column_config={"text": st.column_config.TextColumn(width="large")})


def quality_panel(run: Run, key: str, positive: str | None = None) -> None:
    """How good the model is: the figures that fit its predictions, with the run's metrics."""
    metrics_row(run.metrics)
    table = baseline_table(run.metrics)
    if not table.empty:
        st.caption("Each metric beside a trivial predictor on the same rows (the majority class for "
                   "classification, the mean for errors, chance for ranking): a model below it teaches nothing.")
        st.dataframe(table, hide_index=True, width="stretch", key=f"{key}_baselines")
    figures = quality_figures(run.predictions, positive=positive)
    if not figures:
        st.info("No truth labels among the predictions: model quality cannot be judged on this data.")
        return
    for name, fig in figures:
        st.plotly_chart(fig, width="stretch", key=f"{key}_{name}", config=PLOT_CONFIG)


# ---------------------------------------------------------------------- downloads
def run_downloads(run: Run, key: str) -> None:
    """Run bundle (JSON), predictions (CSV), explanations (JSON) and the HTML report of a run."""
    c = st.columns(4)
    c[0].download_button("Run bundle (JSON)", run.to_json(), f"{run.method}_run.json", key=f"{key}_bundle",
                         mime="application/json", on_click="ignore")
    c[1].download_button("Predictions (CSV)", run.predictions.to_csv(index=False), f"{run.method}_predictions.csv",
                         key=f"{key}_pred", mime="text/csv", on_click="ignore")
    exps = {name: s.to_dict() for name, s in run.explanations.items()}
    c[2].download_button("Explanations (JSON)", json.dumps(exps, allow_nan=False), f"{run.method}_explanations.json",
                         key=f"{key}_exp", mime="application/json", on_click="ignore")
    c[3].download_button("Report (HTML)", lambda: report_html(run), f"{run.method}_report.html", key=f"{key}_report",
                         mime="text/html", help="One self-contained page (opens offline): settings, metrics, "
                                                "model, predictions and explanation cards.", on_click="ignore")


def metrics_row(metrics: dict[str, float], names: list[str] | None = None) -> None:
    """The run's metrics as a row of st.metric tiles, each with its trivial baseline as the delta."""
    shown = [(k, v) for k, v in metrics.items()
             if (names is None or k in names) and not k.startswith(BASELINE_PREFIX)]
    if not shown:
        return
    cols = st.columns(min(len(shown), 6))
    for i, (k, v) in enumerate(shown[:6]):
        base = metrics.get(BASELINE_PREFIX + k)
        delta = None if base is None else f"{v - base:+.4f} vs {BASELINE_WHAT.get(k, 'baseline')} {base:.4f}"
        cols[i].metric(METRIC_LABELS.get(k, k.replace("_", " ").capitalize()),
                       f"{v:,.0f}" if float(v).is_integer() or abs(v) >= 1000 else f"{v:.4f}", delta=delta,
                       delta_color="inverse" if k in LOWER_IS_BETTER else "normal")


# ---------------------------------------------------------------------- derived results
def derived(run: Run, name: str, args: tuple, compute: Callable[[], T], what: str) -> T | None:
    """A result derived from `run` (a sweep, a comparison), computed once per (name, args) and kept on
    the run itself; errors are shown in words and not kept."""
    store: dict[Any, Any] = run.extras.setdefault("derived", {})
    if (name, args) in store:
        return store[(name, args)]
    try:
        value = compute()
    except Exception as e:  # noqa: BLE001 - the page boundary
        show_error(e, what)
        return None
    store[(name, args)] = value
    return value


def kept_result(run: Run, name: str, args: tuple) -> Any:
    """A result `derived` computed earlier for this run and these arguments, or None."""
    return run.extras.get("derived", {}).get((name, args))


def progress_bar(text: str = "working") -> Callable[[float, str], None]:
    """A fresh progress bar and its callback (drawn only while computing)."""
    bar = st.progress(0.0, text=text)
    return lambda f, m: bar.progress(min(max(float(f), 0.0), 1.0), text=m)
