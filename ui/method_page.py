"""`method_page(spec, extra_tabs, ...)`: the one layout every method page has.

Title and paper, data tools (generators, a demo), the applicability gate, the settings form, notes before
the run, the run button (background run, progress, Cancel), the metrics, then tabs: predictions and
explanations, the global view, model quality, the method's own tabs, downloads and verification. A page
file passes its form, its tabs and a few hooks; it draws nothing outside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import streamlit as st

from ui.common import get_dataset
from ui.components import (
    applicability_gate,
    explanation_panel,
    global_panel,
    metrics_row,
    predictions_browser,
    quality_panel,
    run_button,
    run_downloads,
    stale_notice,
    verify_panel,
)
from xcore.data import RelationalDataset
from xcore.methods import MethodSpec, Run, Settings

RUN_NOW = "_run_now"
"""Session key: methods whose run button runs on the next pass without a click (a demo that set data and
settings)."""


@dataclass
class PageContext:
    """What a tab draws from: the method, the data, the run and the prediction selected in the first tab."""

    spec: MethodSpec
    dataset: RelationalDataset
    run: Run
    target: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tab:
    """One of a page's own tabs: its title and what it draws."""

    title: str
    draw: Callable[[PageContext], None]


def run_on_next_pass(method: str) -> None:
    """Press the method's run button on the next pass (a demo that has just set data and settings)."""
    st.session_state.setdefault(RUN_NOW, set()).add(method)


def default_explain(ctx: PageContext, target: str) -> None:
    """The selected prediction explained by the run's first explainer."""
    name = next(iter(ctx.run.explanations), None)
    if name is None or target not in ctx.run.explanations[name]:
        st.info("No explanation of this prediction in this run.")
        return
    explanation_panel(ctx.run.explanations[name][target], key=f"{ctx.spec.key}_exp")


def method_page(spec: MethodSpec, extra_tabs: Sequence[Tab] | Callable[[Run], Sequence[Tab]] = (), *,
                title: str, intro: str, form: Callable[[RelationalDataset], Settings | None],
                run_label: str = "Run", button_key: str | None = None,
                explain: Callable[[PageContext, str], None] = default_explain,
                predictions_tab: Callable[[PageContext], str | None] | None = None,
                metrics: Sequence[str] | Callable[[Run], Sequence[str] | None] | None = None,
                data_tools: Callable[[], None] | None = None,
                data_caption: Callable[[RelationalDataset], str] | None = None,
                before_run: Callable[[RelationalDataset, Settings | None], None] | None = None,
                summary: Callable[[PageContext], None] | None = None,
                downloads: Callable[[PageContext], None] | None = None,
                standard_views: Callable[[Run], bool] = lambda run: True,
                quality_positive: Callable[[Run], str | None] = lambda run: None) -> None:
    """Draw a method page: header, data tools, gate, form, run button, metrics and tabs.

    `extra_tabs` (or a function of the run giving them) come after the model-quality tab; with
    `standard_views(run)` False only they and Downloads are shown (a run of another kind, such as
    m-NLIL's link prediction)."""
    key = spec.key
    st.title(title)
    st.caption(intro)
    if data_tools is not None:
        data_tools()
    ds = applicability_gate(key, get_dataset())
    if data_caption is not None:
        st.caption(data_caption(ds))
    settings = form(ds)
    if before_run is not None:
        before_run(ds, settings)
    force = key in st.session_state.get(RUN_NOW, set())
    st.session_state.get(RUN_NOW, set()).discard(key)
    run = run_button(key, ds, settings, label=run_label, key=button_key or f"{key}_run", force=force)
    stale_notice(key, ds, settings, run)
    if run is None:
        return
    ctx = PageContext(spec, ds, run)
    shown = metrics(run) if callable(metrics) else metrics
    metrics_row(run.metrics, list(shown) if shown is not None else None)
    if summary is not None:
        summary(ctx)
    own = list(extra_tabs(run) if callable(extra_tabs) else extra_tabs)
    _draw_tabs(ctx, own, standard_views(run), explain, predictions_tab, quality_positive(run), downloads)


def _draw_tabs(ctx: PageContext, own: list[Tab], standard: bool, explain: Callable[[PageContext, str], None],
               predictions_tab: Callable[[PageContext], str | None] | None, positive: str | None,
               downloads: Callable[[PageContext], None] | None) -> None:
    """The run's tabs: predictions with their explanations, global view, model quality (when `standard`),
    the page's own tabs, downloads and verify."""
    run, ds, key = ctx.run, ctx.dataset, ctx.spec.key
    titles = (["Predictions & explanations", "Global view", "Model quality"] if standard else []) + \
        [t.title for t in own] + ["Downloads"] + (["Verify"] if standard else [])
    tabs = iter(st.tabs(titles))
    if standard:
        with next(tabs):
            if predictions_tab is not None:
                ctx.target = predictions_tab(ctx)
            else:
                ctx.target = predictions_browser(run.predictions, key=f"{key}_pred")
                if ctx.target is not None:
                    explain(ctx, ctx.target)
        with next(tabs):
            global_panel(run, key=f"{key}_global")
        with next(tabs):
            quality_panel(run, key=f"{key}_quality", positive=positive)
    for tab in own:
        with next(tabs):
            tab.draw(ctx)
    with next(tabs):
        run_downloads(run, key=f"{key}_dl")
        if downloads is not None:
            downloads(ctx)
    if standard:
        with next(tabs):
            verify_panel(run, ds, key=f"{key}_verify")
