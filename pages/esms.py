"""ESMS page: learn an explainable PSL model, browse predictions, see their ground-rule explanations."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.common import guarded, require_dataset, set_dataset
from xcore.data import RelationalDataset
from xcore.data.samples import load_sample
from xcore.psl.model import dataset_fingerprint
from xcore.psl.stability import relational_stability
from xcore.psl.workflow import (DEMO_SETTINGS, ESMSRun, ESMSSettings, apply_rules, as_float_grid,
                                candidate_targets, run_esms, sweep)
from xcore.viz import explanation_graph_figure, ranked_bar_figure, tradeoff_figure

RUN_KEY = "esms_run"


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_run(fingerprint: str, settings: ESMSSettings, _ds: RelationalDataset, _progress=None) -> ESMSRun:
    """One search per (data, settings): revisiting a setting is instant."""
    return run_esms(_ds, settings, progress=_progress)


@st.cache_resource(show_spinner=False, max_entries=4)
def cached_sweep(fingerprint: str, settings: ESMSSettings, grid: tuple[float, ...],
                 _ds: RelationalDataset, _progress=None) -> pd.DataFrame:
    return sweep(_ds, settings, grid, progress=_progress)


def settings_form(ds: RelationalDataset) -> ESMSSettings | None:
    targets = candidate_targets(ds)
    if not targets:
        st.warning("This dataset has no predicate with labelled target atoms. Load the LastFM "
                   "sample (or press **Demo**) to try ESMS.")
        return None
    c1, c2, c3 = st.columns(3)
    target = c1.selectbox("Target predicate", targets, key="esms_target")
    closed = [p.name for p in ds.predicates if p.name != target]
    block_default = closed.index("rated") + 1 if "rated" in closed else 0
    block = c2.selectbox("Block predicate (optional)", ["(none)", *closed], index=block_default,
                         key="esms_block", help="Conjoined to every rule so only relevant pairs ground.")
    metric = c3.selectbox("Validation metric", ["mse", "mae", "rmse", "aupr", "auroc"], key="esms_metric")
    explainable = st.multiselect("Explainable predicates", [p.name for p in ds.predicates],
                                 default=[p.name for p in ds.predicates if p.explainable],
                                 key="esms_explainable")
    counterparts = st.checkbox("Add counterpart templates (¬evidence → ¬target, as HyPER does)",
                               key="esms_counterparts",
                               help="The paper's templates only push the target up; counterparts also "
                                    "pull it down when the evidence is low.")
    c1, c2, c3, c4, c5 = st.columns(5)
    gamma = c1.slider("Explainability bias γ", 0.0, 1.0, 0.0, 0.05, key="esms_gamma")
    alpha = c2.slider("α (explainable share)", 0.0, 1.0, 0.25, 0.05, key="esms_alpha")
    lm = c3.number_input("Rules per model L_M", 1, 50, 15, key="esms_lm")
    n_iter = c4.number_input("Iterations N", 1, 500, 100, key="esms_n")
    seed = c5.number_input("Seed", 0, 10_000, 0, key="esms_seed")
    return ESMSSettings(target=target, block=None if block == "(none)" else block,
                        explainable=tuple(explainable), gamma=float(gamma), alpha=float(alpha),
                        rules_per_model=int(lm), iterations=int(n_iter), metric=metric, seed=int(seed),
                        counterparts=bool(counterparts))


def execute(ds: RelationalDataset, settings: ESMSSettings) -> None:
    with st.status("Searching for the best explainable model…", expanded=True) as status:
        bar = st.progress(0.0)
        run = guarded(cached_run, dataset_fingerprint(ds), settings, ds,
                      lambda f, m: bar.progress(min(max(f, 0.0), 1.0), text=m))
        if run is None:
            status.update(label="Search failed", state="error")
            return
        st.session_state[RUN_KEY] = run
        status.update(label=f"Done: {len(run.model.rules)} rules, test MSE {run.metrics['mse']:.4f}",
                      state="complete", expanded=False)


def show_model(run: ESMSRun) -> None:
    st.dataframe(run.model.rules_frame(), hide_index=True, width="stretch")
    text = st.text_area("Edit the rules (PSL syntax; weight 0 = learn it by PPLL), then re-infer",
                        run.model.to_text(), height=220, key="esms_rules_text")
    if st.button("Re-infer with these rules", key="esms_reinfer"):
        new = guarded(apply_rules, run, text)
        if new is not None:
            st.session_state[RUN_KEY] = new
            st.rerun()


def show_predictions(run: ESMSRun) -> str | None:
    m = run.metrics
    mep = run.mep()
    cols = st.columns(5)
    cols[0].metric("Test MSE", f"{m['mse']:.4f}")
    cols[1].metric("Test MAE", f"{m['mae']:.4f}")
    for k in (1, 2, 3):
        cols[1 + k].metric(f"MEP@{k}", f"{mep[k]:.2f}")
    query = st.text_input("Filter atoms", "", key="esms_filter", placeholder="e.g. u01")
    frame = run.predictions[["atom", "prediction", "truth", "error"]]
    if query:
        frame = frame[frame["atom"].str.contains(query, regex=False)]
    frame = frame.assign(abs_error=frame["error"].abs())
    event = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="esms_pred_table", height=320)
    rows = event.selection.rows if event is not None else []
    return frame["atom"].iloc[rows[0]] if rows else (frame["atom"].iloc[0] if len(frame) else None)


def show_explanation(run: ESMSRun, atom: str) -> None:
    exp = run.explanations[atom]
    st.markdown(f"**{atom}** — predicted {exp.prediction:.3f}"
                + (f", true {exp.truth:.3f}" if exp.truth is not None else ""))
    if not exp.items:
        st.info("No ground rule exerts force on this prediction (all are satisfied).")
        return
    left, right = st.columns(2)
    left.plotly_chart(ranked_bar_figure(exp, k=10), width="stretch")
    right.plotly_chart(explanation_graph_figure(exp, k=12), width="stretch")
    table = exp.to_frame()[["rank", "natural", "text", "score", "explainable"]]
    st.dataframe(table, hide_index=True, width="stretch")


def show_search(run: ESMSRun) -> None:
    h = run.history
    long = h[["iteration", "score", "best_score"]].melt(
        id_vars="iteration", var_name="series", value_name="validation")
    st.plotly_chart(tradeoff_figure(long, x="iteration", y="validation", y_title=run.settings.metric,
                                    title="Validation score per iteration"), width="stretch")
    shares = h[["ground_seconds", "ppll_seconds", "map_seconds", "score_seconds"]].sum()
    st.caption("Time spent: " + ", ".join(f"{k.replace('_seconds', '')} {v:.2f} s" for k, v in shares.items()))
    st.dataframe(h[["iteration", "score", "n_rules", "n_explainable", "mep1", "rules"]], hide_index=True,
                 width="stretch", height=260)


def show_sweep(ds: RelationalDataset, run: ESMSRun) -> None:
    grid_text = st.text_input("γ grid", "0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1", key="esms_grid")
    if st.button("Run γ sweep", key="esms_sweep"):
        grid = guarded(as_float_grid, grid_text)
        if grid is not None:
            bar = st.progress(0.0)
            frame = guarded(cached_sweep, dataset_fingerprint(ds), run.settings, tuple(grid), ds,
                            lambda f, m: bar.progress(min(max(f, 0.0), 1.0), text=m))
            if frame is not None:
                st.session_state["esms_sweep_frame"] = frame
    frame = st.session_state.get("esms_sweep_frame")
    if frame is None:
        st.caption("Runs the search once per γ (PPLL weights are shared, so later γ are faster).")
        return
    left, right = st.columns(2)
    left.plotly_chart(tradeoff_figure(frame, x="mse", y="mep1", label="gamma", title="MEP@1 against MSE (Fig. 1)"),
                      width="stretch")
    long = frame.melt(id_vars="gamma", value_vars=["mep1", "mep2", "mep3"], var_name="series", value_name="MEP")
    right.plotly_chart(tradeoff_figure(long, x="gamma", y="MEP", title="MEP@K against γ (Fig. 2)"), width="stretch")
    st.dataframe(frame.drop(columns=["model_text"], errors="ignore"), hide_index=True, width="stretch")


def show_stability(run: ESMSRun) -> None:
    eps = st.number_input("ε (perturbation of one observed atom)", 0.001, 0.5, 0.05, key="esms_eps")
    if st.button("Check stability", key="esms_stab"):
        rep = guarded(relational_stability, run.model, None, float(eps))
        if rep is not None:
            c = st.columns(3)
            c[0].metric("Largest score change", f"{rep.max_change:.4f}")
            c[1].metric("Bound 2R(ε + B)", f"{rep.bound:.4f}" if rep.applicable else "n/a")
            c[2].metric("Perturbed atom", rep.atom)
            if rep.note:
                st.caption(rep.note)
            st.dataframe(rep.changes, hide_index=True, width="stretch")


st.title("ESMS — explainable PSL models")
st.caption("Embar, Srinivasan & Getoor, *Learning Explainable Templated Graphical Models* (UAI 2022): "
           "rules from meta-templates, PPLL weights, an explainability bias γ; each prediction is "
           "explained by its ground rules ranked by |w·∂φ/∂y|.")
ds = require_dataset()
settings = settings_form(ds)
b1, b2 = st.columns([1, 5])
if b1.button("Run search", type="primary", disabled=settings is None, key="esms_run_btn"):
    execute(ds, settings)
if b2.button("Demo (LastFM sample, small search)", key="esms_demo"):
    demo = guarded(load_sample, "lastfm_demo")
    if demo is not None:
        set_dataset(demo, "sample: Last.fm-shaped recommendation (synthetic)")
        execute(demo, DEMO_SETTINGS)
        ds = demo

run: ESMSRun | None = st.session_state.get(RUN_KEY)
if run is not None:
    tabs = st.tabs(["Predictions & explanations", "Model", "Search", "γ sweep", "Stability", "Downloads"])
    with tabs[0]:
        atom = show_predictions(run)
        if atom is not None:
            show_explanation(run, atom)
    with tabs[1]:
        show_model(run)
    with tabs[2]:
        show_search(run)
    with tabs[3]:
        show_sweep(ds, run)
    with tabs[4]:
        show_stability(run)
    with tabs[5]:
        st.download_button("Model (PSL rules)", run.model.to_text(), "esms_model.psl", key="dl_model")
        st.download_button("Predictions (CSV)", run.predictions_csv(), "esms_predictions.csv", key="dl_pred")
        st.download_button("Explanations (JSON)", run.explanations.to_json(), "esms_explanations.json",
                           key="dl_exp")
