"""ESMS page: learn an explainable PSL model, browse predictions, see their ground-rule explanations."""

from __future__ import annotations

import streamlit as st

from pages.common import get_dataset, guarded, set_dataset
from pages.components import (verify_panel, applicability_gate, derived, explanation_panel, global_panel, quality_panel, metrics_row, predictions_browser,
                              progress_bar, remember_run, run_button, run_downloads, stale_notice)
from xcore.data import RelationalDataset
from xcore.data.samples import load_sample, sample_info
from xcore.methods import Run, run_key
from xcore.psl.method import GROUND_RULES, SPEC, esms_targets, reinfer
from xcore.psl.stability import relational_stability
from xcore.data.generators.friends_smokers import friends_smokers_dataset
from xcore.psl.workflow import (DEMO_SETTINGS, ESMSSettings, all_positive, as_float_grid, binary_unary, split_sizes,
                                sweep, too_few_labels)
from xcore.viz import tradeoff_figure

METHOD = "esms"
DEMO_FLAG = "esms_demo_pending"
WIDGETS = {"esms_target": "target", "esms_gamma": "gamma", "esms_alpha": "alpha", "esms_lm": "rules_per_model",
           "esms_n": "iterations", "esms_seed": "seed", "esms_metric": "metric", "esms_counterparts": "counterparts"}


def apply_demo() -> None:
    """The demo: the LastFM sample and the demo settings written into the widgets, run on the next pass."""
    demo = guarded(load_sample, SPEC.sample)
    if demo is None:
        return
    set_dataset(demo, f"sample: {sample_info(SPEC.sample).title}")
    for widget, name in WIDGETS.items():
        st.session_state[widget] = getattr(DEMO_SETTINGS, name)
    st.session_state["esms_block"] = DEMO_SETTINGS.block or "(none)"
    st.session_state["esms_explainable"] = [p.name for p in demo.predicates if p.explainable]
    st.session_state[DEMO_FLAG] = True
    st.rerun()


def settings_form(ds: RelationalDataset) -> ESMSSettings | None:
    targets = esms_targets(ds)
    names = [p.name for p in ds.predicates]
    if st.session_state.get("esms_target") not in targets:
        st.session_state.pop("esms_target", None)  # a choice made on another dataset
    if any(x not in names for x in st.session_state.get("esms_explainable", [])):
        st.session_state.pop("esms_explainable", None)
    c1, c2, c3 = st.columns(3)
    target = c1.selectbox("Target predicate", targets, key="esms_target")
    closed = [p for p in names if p != target]
    if st.session_state.get("esms_block") not in ["(none)", *closed]:
        st.session_state.pop("esms_block", None)
    st.session_state.setdefault("esms_block", "rated" if "rated" in closed else "(none)")
    block = c2.selectbox("Block predicate (optional)", ["(none)", *closed], key="esms_block", help="Conjoined to every rule so only relevant pairs ground.")
    metric = c3.selectbox("Validation metric", ["mse", "mae", "rmse", "aupr", "auroc"], key="esms_metric")
    st.session_state.setdefault("esms_explainable", [p.name for p in ds.predicates if p.explainable])
    explainable = st.multiselect("Explainable predicates", names, key="esms_explainable")
    if st.session_state.get("esms_unary_for") != (ds.fingerprint(), target):
        unary = binary_unary(ds, target)  # a 0/1 target T(A): its signal is relative to the base rate
        st.session_state["esms_counterparts"] = unary
        st.session_state["esms_weights"] = "calibrated" if unary else "per_rule"
        st.session_state["esms_unary_for"] = (ds.fingerprint(), target)
    weights = st.radio("Rule weights", ["calibrated", "joint", "per_rule"], horizontal=True, key="esms_weights",
                       format_func={"calibrated": "jointly, calibrated MAP", "joint": "jointly by PPLL",
                                    "per_rule": "PPLL per rule (paper)"}.get,
                       help="Per rule (the paper, the LastFM benchmark): each rule's PPLL weight on its own. "
                            "Jointly: each candidate model's weights learned together with the priors ~T and T "
                            "(by PPLL, or so that each training atom's MAP value fits its label), so a rule's "
                            "weight is what it adds to the base rate (0/1 targets T(A) need it).")
    counterparts = st.checkbox("Add counterpart templates (¬evidence → ¬target, as HyPER does)",
                               key="esms_counterparts",
                               help="The paper's templates only push the target up; counterparts also "
                                    "pull it down when the evidence is low.")
    positive_only = all_positive(ds, target)
    if positive_only:
        st.info(f"Every truth value of **{target}** is 1.0: without negative labels a model predicting 1 "
                "everywhere is perfect. The closed-world reading counts absent atoms of its domain as 0.")
    if st.session_state.get("esms_cw_for") != (ds.fingerprint(), target):
        st.session_state["esms_closed_world"] = positive_only
        st.session_state["esms_cw_for"] = (ds.fingerprint(), target)
    closed_world = st.checkbox("Closed world: absent atoms of the target's domain are 0", key="esms_closed_world")
    project = bool(ds.rules) and st.checkbox(
        f"Use the project's rules ({len(ds.rules)}) as a starting model", key="esms_project_rules",
        help="The rules loaded with the data (a PSL project) are scored as one more candidate, with their "
             "own weights and hard rules; the search keeps them when they score best.")
    scheduler = st.text_input("Dask scheduler address", key="esms_scheduler", placeholder="tcp://host:8786",
                              help="Evaluate the candidate models on a Dask cluster; empty: on this machine.")
    c1, c2, c3, c4, c5 = st.columns(5)
    for widget, value in (("esms_gamma", 0.0), ("esms_alpha", 0.25), ("esms_lm", 15), ("esms_n", 100),
                          ("esms_seed", 0)):
        st.session_state.setdefault(widget, value)
    gamma = c1.slider("Explainability bias γ", 0.0, 1.0, step=0.05, key="esms_gamma")
    alpha = c2.slider("α (explainable share)", 0.0, 1.0, step=0.05, key="esms_alpha")
    lm = c3.number_input("Rules per model L_M", 1, 50, key="esms_lm")
    n_iter = c4.number_input("Iterations N", 1, 500, key="esms_n")
    seed = c5.number_input("Seed", 0, 10_000, key="esms_seed")
    return guarded(ESMSSettings, target=target, block=None if block == "(none)" else block,
                   explainable=tuple(explainable), gamma=float(gamma), alpha=float(alpha),
                   rules_per_model=int(lm), iterations=int(n_iter), metric=metric, seed=int(seed),
                   counterparts=bool(counterparts), closed_world=bool(closed_world), project_rules=bool(project),
                   scheduler=scheduler.strip(), weight_learning=weights)


def split_notice(ds: RelationalDataset, settings: ESMSSettings | None) -> None:
    """How many labelled atoms each split gets, said before the search; too few: say so and offer the
    generated friends/smokers data in one click."""
    if settings is None:
        return
    sizes = guarded(split_sizes, ds, settings.target, settings.valid_fraction, settings.test_fraction)
    if sizes is None:
        return
    st.caption(f"Labelled **{settings.target}** atoms: {sizes['train']:,} to train on, {sizes['validation']:,} "
               f"to choose the model (validation), {sizes['test']:,} to test it.")
    reason = too_few_labels(ds, settings.target, settings.valid_fraction, settings.test_fraction)
    if reason is None:
        return
    st.warning(f"Too few labelled targets for a split: {reason} The search will run, but it cannot "
               "teach anything here.")
    if st.button("Load generated friends/smokers data (600 people)", key="esms_load_generated"):
        set_dataset(friends_smokers_dataset(600, seed=0), "generated: friends_smokers_dataset(600)")
        st.rerun()


def show_model(ds: RelationalDataset, run: Run) -> None:
    esms = run.extras["esms"]
    if "edited_from" in run.extras:
        st.info("Showing hand-edited rules. Press **Run search** again to return to the searched model.")
    st.dataframe(esms.model.rules_frame(), hide_index=True, width="stretch")
    text = st.text_area("Edit the rules (PSL syntax; weight 0 = learn it by PPLL), then re-infer",
                        esms.model.to_text(), height=220, key="esms_rules_text")
    if st.button("Re-infer with these rules", key="esms_reinfer"):
        new = guarded(reinfer, run, text)
        if new is not None:
            remember_run(new, run_key(METHOD, ds, run.settings))
            st.rerun()


def show_search(run: Run) -> None:
    h = run.extras["esms"].history
    long = h[["iteration", "score", "best_score"]].melt(id_vars="iteration", var_name="series", value_name="validation")
    st.plotly_chart(tradeoff_figure(long, x="iteration", y="validation", y_title=run.settings.metric,
                                    title="Validation score per iteration"), width="stretch")
    st.caption("Time spent: " + ", ".join(f"{k.split('.')[-1]} {v:.2f} s" for k, v in run.timings.items()
                                           if k.startswith("search.")))
    st.dataframe(h[["iteration", "score", "n_rules", "n_explainable", "mep1", "rules"]], hide_index=True,
                 width="stretch", height=260)


def show_sweep(ds: RelationalDataset, run: Run) -> None:
    grid_text = st.text_input("γ grid", "0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1", key="esms_grid")
    frame = None
    if st.button("Run γ sweep", key="esms_sweep"):
        grid = guarded(as_float_grid, grid_text)
        if grid is not None:
            report = progress_bar("γ sweep")
            frame = derived(run, "sweep", tuple(grid), lambda: sweep(ds, run.settings, grid, progress=report),
                            "The γ sweep")
            if frame is not None:
                st.session_state["esms_sweep_of"] = (run_key(METHOD, ds, run.settings), tuple(grid))
    of = st.session_state.get("esms_sweep_of")
    if frame is None and of is not None and of[0] == run_key(METHOD, ds, run.settings):
        frame = run.extras.get("derived", {}).get(("sweep", of[1]))
    if frame is None:
        st.caption("Runs the search once per γ (PPLL weights are shared, so later γ are faster).")
        return
    left, right = st.columns(2)
    left.plotly_chart(tradeoff_figure(frame, x="mse", y="mep1", label="gamma", title="MEP@1 against MSE (Fig. 1)"),
                      width="stretch")
    long = frame.melt(id_vars="gamma", value_vars=["mep1", "mep2", "mep3"], var_name="series", value_name="MEP")
    right.plotly_chart(tradeoff_figure(long, x="gamma", y="MEP", title="MEP@K against γ (Fig. 2)"), width="stretch")
    st.dataframe(frame.drop(columns=["model_text"], errors="ignore"), hide_index=True, width="stretch")


def show_stability(run: Run) -> None:
    eps = st.number_input("ε (perturbation of one observed atom)", 0.001, 0.5, 0.05, key="esms_eps")
    if st.button("Check stability", key="esms_stab"):
        rep = guarded(relational_stability, run.extras["esms"].model, None, float(eps))
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
if st.button("Demo (LastFM sample, small search)", key="esms_demo"):
    apply_demo()
ds = applicability_gate(METHOD, get_dataset())
settings = settings_form(ds)
split_notice(ds, settings)
run = run_button(METHOD, ds, settings, label="Run search", key="esms_run_btn",
                 force=bool(st.session_state.pop(DEMO_FLAG, False)))
stale_notice(METHOD, ds, settings, run)

if run is not None:
    tabs = st.tabs(["Predictions & explanations", "Global view", "Model quality", "Model", "Search", "γ sweep",
                    "Stability", "Downloads", "Verify"])
    with tabs[0]:
        metrics_row(run.metrics, ["mse", "mae", "mep@1", "mep@2", "mep@3"])
        st.caption(f"Splits: {run.metrics.get('n_train', 0):,.0f} training, {run.metrics.get('n_valid', 0):,.0f} "
                   f"validation and {run.metrics.get('n_test', 0):,.0f} test atoms of {run.settings.target}.")
        target = predictions_browser(run.predictions, key="esms_pred")
        if target is not None:
            explanation_panel(run.explanation(GROUND_RULES, target), key="esms_exp")
    with tabs[1]:
        global_panel(run, key="esms_global")
    with tabs[2]:
        quality_panel(run, key="esms_quality")
    with tabs[3]:
        show_model(ds, run)
    with tabs[4]:
        show_search(run)
    with tabs[5]:
        show_sweep(ds, run)
    with tabs[6]:
        show_stability(run)
    with tabs[7]:
        run_downloads(run, key="esms_dl")
        st.download_button("Model (PSL rules)", run.extras["esms"].model.to_text(), "esms_model.psl",
                           key="esms_dl_model", on_click="ignore")
    with tabs[-1]:
        verify_panel(run, ds, key="esms_verify")
