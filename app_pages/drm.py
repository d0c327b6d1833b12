"""Deep relational machine page: modes, random first-order features, the network, and logical local
explanations chosen by fidelity and relevance (Srinivasan, Vig & Bain)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.common import guarded, set_dataset
from ui.components import derived, explanation_panel
from ui.forms import FormLayout
from ui.forms import settings_form as form
from ui.method_page import PageContext, Tab, method_page
from ui.state import keep, reset_on
from xcore.data import RelationalDataset
from xcore.drm.cross_fit import CROSS_FIT_UP_TO, cross_fits
from xcore.drm.explain import clause_text, structured_text
from xcore.drm.explainers import FidelityExplainer
from xcore.drm.folds import fold_count
from xcore.drm.mutagenesis import load_mutagenesis
from xcore.drm.problem import build_problem, language_limits
from xcore.drm.relevance import parse_relevance
from xcore.drm.settings import DRMSettings
from xcore.drm.tables import feature_table, neighbourhood_rows, network_tables
from xcore.drm.trains import generate_trains
from xcore.methods import REGISTRY, Run
from xcore.viz.drm_figures import fold_loss_figure, neighbourhood_figure, neighbourhood_frame

METHOD = "drm"


def folds_note(ds: RelationalDataset, values) -> str | None:
    """What the folds field runs when the data caps it (the result says the same)."""
    settings = guarded(DRMSettings.parse, {k: v for k, v in values.items() if k in DRMSettings.model_fields})
    if settings is None:
        return None
    k, why = fold_count(ds, settings)
    if cross_fits(ds):  # small data: every fold is held out by its own DRM
        return (f"Small data (at most {CROSS_FIT_UP_TO} examples): {k} DRMs, one per fold, each predicts the "
                f"examples of its fold" + (f" ({why})." if why else "."))
    return None if why is None else f"Holds out 1 of {k} folds: {why}."


# Where DRM's settings go (the fields come from `DRMSettings`; relevance is edited beside an explanation).
LAYOUT = FormLayout(
    rows=(("max_draws", "max_literals", "depth", "seed"), ("folds", "hamming", "min_neighbours", "max_epochs"),
          ("modes",)),
    advanced=(("fold_predicate", "inner_folds", "dropout"), ("hidden", "learning_rates", "weight_decays"),
              ("beam", "max_body", "explain_rows")),
    hidden=("relevance",),
    widgets={"modes": "text_area"},
    steps={"max_draws": 100, "max_epochs": 10, "dropout": 0.05},
    notes={"folds": folds_note},
    titles={"hidden": "Hidden layers (architectures tried)"})


def settings_form(ds: RelationalDataset) -> DRMSettings | None:
    """Feature drawing, network and neighbourhood settings; modes as editable text."""
    return form(REGISTRY[METHOD], ds, LAYOUT)


def show_language(ds: RelationalDataset, settings: DRMSettings | None) -> None:
    """The modes features are drawn from (derived from the data unless given) and what they cannot say."""
    modes = settings.modes if settings is not None else ""
    with st.expander("Modes and background predicates"):
        problem = guarded(build_problem, ds, modes)
        if problem is not None:
            st.caption(f"Target {problem.target}/1: {int(problem.labels.sum())} positive and "
                       f"{int((1 - problem.labels).sum())} negative examples. "
                       + ("Modes as given." if modes.strip() else
                          "Modes derived from the data: `#` constants, `+`/`-` objects, and a `-` variable "
                          "where a column with several values need not be fixed (e.g. any count)."))
            st.code(problem.language.text(), language="prolog", wrap_lines=True)
            depth = (settings.depth or (problem.language.depth if modes.strip() else 2)) if settings else 2
            limits = language_limits(problem.language, ds, problem.target,
                                     settings.max_literals if settings else 4, depth)
            st.markdown("**What features from these modes cannot express:**\n"
                        + "\n".join(f"- {n}" for n in limits))
        st.dataframe(ds.summary()[["predicate", "arity", "types", "observations", "targets"]], hide_index=True,
                     width="stretch")


def show_target(run: Run, target: str, ds: RelationalDataset) -> None:
    """The selected prediction: neighbourhood, maximal-fidelity clauses under editable relevance, structure."""
    model = run.model.for_target(target)  # a cross-fitted run explains each example by its fold's model
    # the run's levels until the user edits them; the edit is kept across navigation until another run
    reset_on("drm_relevance", (run.fingerprint, run.settings.key()), run.settings.relevance)
    text = st.text_area("Relevance levels (least relevant first; edit to see the choice change)",
                        key="drm_relevance", height=90)
    keep("drm_relevance")
    relevance = guarded(parse_relevance, text)
    if relevance is None:
        return
    loc = derived(run, "local", (target, text), lambda: model.local(target, ds, relevance=relevance),
                  "Explaining the prediction")
    if loc is None:
        return
    nb = loc.neighbourhood
    st.caption(f"Neighbourhood: {len(nb.members)} training instances within Hamming distance {loc.radius}. "
               f"E+ = {int(nb.positive.sum()) + 1} (the instance included), E- = {int((~nb.positive).sum())}; "
               f"{int(loc.instance.sum()) if loc.instance is not None else 0} active features of {len(model.features_)}.")
    if not loc.fidelity_defined:
        st.warning(f"Fidelity undefined: no training instance lies within Hamming distance {loc.radius} of this "
                   "one, so every clause would agree with the network on the instance alone. Raise the number "
                   "of neighbours or the radius.")
        return
    frame = neighbourhood_frame(*neighbourhood_rows(model, loc))
    st.plotly_chart(neighbourhood_figure(frame, loc.radius), width="stretch", key="drm_nb_fig")
    exp = FidelityExplainer().one(model, target, loc, relevance)
    if loc.relevance_changes_choice:
        st.success("Relevance changes the choice: the first clause is preferred over the first one by fidelity "
                   "alone.")
    explanation_panel(exp, key="drm_exp", graph=False, title="Maximal-fidelity explanations")
    rows = [{"clause": it.text, "unfolded": it.natural, "fidelity": it.score, "relevance": it.extras["relevance"],
             "chosen": it.extras["chosen_by_relevance"]} for it in exp.items]
    # sized to fit 1400 px beside the sidebar (both clause texts at their natural width took 994 px of 938)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="drm_clauses", column_config={
        "clause": st.column_config.TextColumn(width="medium", help="The clause over drawn features."),
        "unfolded": st.column_config.TextColumn(width="large", help="The clause with each feature's definition "
                                                                     "unfolded (in full in the list above)."),
        "chosen": st.column_config.CheckboxColumn(help="Chosen by fidelity, then relevance.")})
    if exp.items:
        with st.expander("Feature definitions of the chosen clause", expanded=True):
            st.code("\n".join(exp.items[0].extras["definitions"].values()), language="prolog")
    st.subheader("Structured alternatives")
    shown = 0
    for j, structs in loc.structured.items():
        u = loc.clauses[j]
        for s in structs:
            shown += 1
            st.markdown(f"From `{clause_text(model.problem_.target, loc.prediction, u.features, model.features_)}` "
                        f"— relevance {relevance.show(u.relevance)} → {relevance.show(s.relevance)}, "
                        f"fidelity {s.fidelity:.3f} (unchanged)")
            st.code(structured_text(model.problem_.target, loc.prediction, s, model.features_), language="prolog")
    if not shown:
        st.info("No 2-partition of a maximal-fidelity clause raises its relevance.")


def show_features(run: Run) -> None:
    model = run.model.fold_models()[0]
    frame = feature_table(model, [it.extras["relevance"] for it in run.summary.items])
    query = st.text_input("Filter features", "", key="drm_feat_filter", placeholder="e.g. closed")
    if query:
        frame = frame[frame["definition"].str.contains(query, regex=False)]
    folds = len(run.model.fold_models())
    of = f" of fold 1 (each of the {folds} fold models draws its own)" if folds > 1 else ""
    st.caption(f"{len(frame):,} of {len(model.features_):,} features{of} (coverage: share of all examples).")
    st.dataframe(frame, hide_index=True, width="stretch", height=360, key="drm_features")


def show_network(run: Run) -> None:
    nets, curves = network_tables(run.model.fold_models())
    st.dataframe(nets, hide_index=True, width="stretch", key="drm_nets")
    st.plotly_chart(fold_loss_figure(curves), width="stretch", key="drm_loss")


def other_data() -> None:
    """Bundled Mutagenesis 188 (with its folds) and random trains with a planted rule."""
    with st.expander("Other data: Mutagenesis 188 (bundled) or random trains with a hidden rule"):
        c = st.columns(3)
        if c[0].button("Load Mutagenesis 188", key="drm_load_mut"):
            ds = guarded(load_mutagenesis)
            if ds is not None:
                set_dataset(ds, "sample: Mutagenesis 188")
                st.rerun()
        n = c[1].number_input("Random trains", 10, 2000, 100, step=10, key="drm_gen_n")
        seed = c[2].number_input("Generator seed", 0, 10_000, 0, key="drm_gen_seed")
        if st.button("Generate trains (eastbound :- has_car(A,B), short(B), closed(B))", key="drm_generate"):
            ds = guarded(generate_trains, int(n), int(seed))
            if ds is not None:
                set_dataset(ds, f"generated: {ds.name}")
                st.rerun()


def run_caption(ctx: PageContext) -> None:
    run = ctx.run
    folds = int(run.metrics["folds"])
    held = (f"all {int(run.metrics['test_examples'])} examples, each predicted by the one of {folds} fold "
            f"networks that did not see it (small data: one DRM per fold)" if run.metrics.get("cross_fitted")
            else f"the {int(run.metrics['test_examples'])} held-out examples (fold 1 of {folds})")
    st.caption(f"{int(run.metrics['features']):,} features drawn from {int(run.metrics['examples'])} training "
               f"examples; accuracy on {held}; linear accuracy: L2 logistic regression on the same features and "
               f"split; fidelity, neighbourhood size and relevance over the first "
               f"{len(run.explanations['drm:fidelity'])} explained predictions (neighbourhoods widened from "
               f"Hamming {run.settings.hamming} until {run.settings.min_neighbours} training instances).")


def features_download(ctx: PageContext) -> None:
    st.download_button("Feature definitions (Prolog)", "\n".join(f.definition() for f in ctx.run.model.fold_models()[0].features_),
                       "drm_features.pl", key="drm_dl_feats", on_click="ignore")


method_page(
    REGISTRY[METHOD],
    [Tab("Features", lambda ctx: show_features(ctx.run)), Tab("Network", lambda ctx: show_network(ctx.run))],
    title="Deep relational machine",
    intro="Srinivasan, Vig & Bain, *Logical Explanations for Deep Relational Machines Using Relevance Information*: "
          "random first-order features from a mode language, a neural network on them, and local logical "
          "explanations chosen by fidelity, then relevance.",
    form=settings_form, run_label="Draw features and train", button_key="drm_train",
    explain=lambda ctx, target: show_target(ctx.run, target, ctx.dataset),
    metrics=["accuracy", "linear_accuracy", "mean_fidelity", "mean_neighbours", "fidelity_undefined",
             "relevance_changes_choice"],
    data_tools=other_data, data_caption=lambda ds: f"Data: **{ds.name}**", before_run=show_language,
    summary=run_caption, downloads=features_download)
