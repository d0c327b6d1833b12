"""ESMS page: learn an explainable PSL model, browse predictions, see their ground-rule explanations.

A view: the form comes from `ESMSSettings`, the layout from `ui.method_page`, every result from `xcore`."""

from __future__ import annotations

import streamlit as st

from ui.common import guarded, set_dataset
from ui.components import derived, explanation_panel, kept_result, progress_bar, replace_run
from ui.forms import FormLayout, set_form
from ui.forms import settings_form as form
from ui.method_page import PageContext, Tab, method_page, run_on_next_pass
from ui.state import keep, reset_on
from xcore.data import RelationalDataset
from xcore.data.generators.friends_smokers import friends_smokers_dataset
from xcore.data.samples import load_sample, sample_info
from xcore.esms.data_reading import all_positive
from xcore.esms.explainers.ground_rules import GROUND_RULES
from xcore.esms.runs import esms_targets, reinfer, target_defaults
from xcore.esms.settings import DEMO_SETTINGS, ESMSSettings
from xcore.esms.split_sizes import split_sizes, too_few_labels
from xcore.esms.stability import relational_stability
from xcore.esms.sweep import as_float_grid, sweep
from xcore.methods import REGISTRY, Run
from xcore.viz import tradeoff_figure

METHOD = "esms"
GAMMA_GRID = "0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1"
WEIGHT_WORDS = {"calibrated": "jointly, calibrated MAP", "joint": "jointly by PPLL",
                "per_rule": "PPLL per rule (paper)"}


def names(ds: RelationalDataset) -> list[str]:
    return [p.name for p in ds.predicates]


def form_layout(ds: RelationalDataset) -> FormLayout:
    """Where ESMS's settings go on the page (the fields themselves come from `ESMSSettings`)."""
    return FormLayout(
        rows=(("target", "block", "metric"), ("explainable",), ("weight_learning",), ("counterparts",),
              ("closed_world",), ("project_rules",) if ds.rules else (),
              ("gamma", "alpha", "rules_per_model", "iterations", "seed")),
        advanced=(("scheduler", "n_jobs"), ("valid_fraction", "test_fraction", "closed_world_limit")),
        hidden=() if ds.rules else ("project_rules",),
        widgets={"gamma": "slider", "alpha": "slider", "weight_learning": "radio"},
        steps={"gamma": 0.05, "alpha": 0.05, "valid_fraction": 0.05, "test_fraction": 0.05},
        choices={"target": lambda d, v: esms_targets(d),
                 "block": lambda d, v: [None, *(p for p in names(d) if p != v.get("target"))],
                 "explainable": lambda d, v: names(d)},
        labels={"weight_learning": WEIGHT_WORDS.get},
        follow=lambda d, v: {**target_defaults(d, v["target"]),
                             "explainable": [p.name for p in d.predicates if p.explainable]},
        follow_on=("target",),
        notes={"project_rules": lambda d, v: f"{len(d.rules)} rules came with the data." if d.rules else None})


def apply_demo() -> None:
    """The demo: the LastFM sample and the demo settings written into the form, run on the next pass."""
    demo = guarded(load_sample, REGISTRY[METHOD].sample)
    if demo is None:
        return
    set_dataset(demo, f"sample: {sample_info(REGISTRY[METHOD].sample).title}")
    set_form(REGISTRY[METHOD], DEMO_SETTINGS.replace(
        explainable=tuple(p.name for p in demo.predicates if p.explainable)))
    run_on_next_pass(METHOD)
    st.rerun()


def settings_form(ds: RelationalDataset) -> ESMSSettings | None:
    settings = form(REGISTRY[METHOD], ds, form_layout(ds))
    if settings is not None and all_positive(ds, settings.target):
        st.info(f"Every truth value of **{settings.target}** is 1.0: without negative labels a model predicting 1 "
                "everywhere is perfect. The closed-world reading counts absent atoms of its domain as 0.")
    return settings


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
    esms = run.model.held_out_model_
    if run.model.edited_:
        st.info("Showing hand-edited rules. Press **Run search** again to return to the searched model.")
    st.dataframe(esms.rules_frame(), hide_index=True, width="stretch")
    shown = esms.to_text()
    reset_on("esms_rules_text", shown, shown)  # another run (other data, the demo): its rules, not the old text
    text = st.text_area("Edit the rules (PSL syntax; weight 0 = learn it by PPLL), then re-infer", height=220,
                        key="esms_rules_text")
    keep("esms_rules_text")
    if st.button("Re-infer with these rules", key="esms_reinfer"):
        new = guarded(reinfer, run, text)
        if new is not None:
            replace_run(new, ds)
            st.rerun()


def show_search(run: Run) -> None:
    h = run.model.history_
    long = h[["iteration", "score", "best_score"]].melt(id_vars="iteration", var_name="series", value_name="validation")
    st.plotly_chart(tradeoff_figure(long, x="iteration", y="validation", y_title=run.settings.metric,
                                    title="Validation score per iteration"), width="stretch")
    st.caption("Time spent: " + ", ".join(f"{k.split('.')[-1]} {v:.2f} s" for k, v in run.timings.items()
                                           if k.startswith("search.")))
    st.dataframe(h[["iteration", "score", "n_rules", "n_explainable", "mep1", "rules"]], hide_index=True,
                 width="stretch", height=260)


def show_sweep(ds: RelationalDataset, run: Run) -> None:
    keep("esms_grid", GAMMA_GRID)  # the user's grid, kept across navigation
    grid_text = st.text_input("γ grid", key="esms_grid")
    keep("esms_grid")
    grid = guarded(as_float_grid, grid_text)
    if grid is None:
        return
    if st.button("Run γ sweep", key="esms_sweep"):
        report = progress_bar("γ sweep")
        derived(run, "sweep", tuple(grid), lambda: sweep(ds, run.settings, grid, progress=report), "The γ sweep")
    frame = kept_result(run, "sweep", tuple(grid))  # this grid's sweep of this run, once computed
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
        rep = guarded(relational_stability, run.model.held_out_model_, None, float(eps))
        if rep is not None:
            c = st.columns(3)
            c[0].metric("Largest score change", f"{rep.max_change:.4f}")
            c[1].metric("Bound 2R(ε + B)", f"{rep.bound:.4f}" if rep.applicable else "n/a")
            c[2].metric("Perturbed atom", rep.atom)
            if rep.note:
                st.caption(rep.note)
            st.dataframe(rep.changes, hide_index=True, width="stretch")


def demo_button() -> None:
    if st.button("Demo (LastFM sample, small search)", key="esms_demo"):
        apply_demo()


def split_caption(ctx: PageContext) -> None:
    m = ctx.run.metrics
    st.caption(f"Splits: {m.get('n_train', 0):,.0f} training, {m.get('n_valid', 0):,.0f} validation and "
               f"{m.get('n_test', 0):,.0f} test atoms of {ctx.run.settings.target}.")


def model_download(ctx: PageContext) -> None:
    st.download_button("Model (PSL rules)", ctx.run.model.held_out_model_.to_text(), "esms_model.psl",
                       key="esms_dl_model", on_click="ignore")


method_page(
    REGISTRY[METHOD],
    [Tab("Model", lambda ctx: show_model(ctx.dataset, ctx.run)), Tab("Search", lambda ctx: show_search(ctx.run)),
     Tab("γ sweep", lambda ctx: show_sweep(ctx.dataset, ctx.run)),
     Tab("Stability", lambda ctx: show_stability(ctx.run))],
    title="ESMS — explainable PSL models",
    intro="Embar, Srinivasan & Getoor, *Learning Explainable Templated Graphical Models* (UAI 2022): rules from "
          "meta-templates, PPLL weights, an explainability bias γ; each prediction is explained by its ground rules "
          "ranked by |w·∂φ/∂y|.",
    form=settings_form, run_label="Run search", button_key="esms_run_btn",
    explain=lambda ctx, target: explanation_panel(ctx.run.explanation(GROUND_RULES, target), key="esms_exp"),
    metrics=["mse", "mae", "mep@1", "mep@2", "mep@3"], data_tools=demo_button, before_run=split_notice,
    summary=split_caption, downloads=model_download)
