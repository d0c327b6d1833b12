"""Deep relational machine page: modes, random first-order features, the network, and logical local
explanations chosen by fidelity and relevance (Srinivasan, Vig & Bain)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import streamlit as st

from pages.common import get_dataset, guarded, set_dataset
from pages.components import (verify_panel, applicability_gate, derived, explanation_panel, global_panel, metrics_row,
                              quality_panel, predictions_browser,
                              run_button, run_downloads, stale_notice)
from xcore.data import RelationalDataset
from xcore.drm.method import DRMSettings, FidelityExplainer, default_settings
from xcore.drm.mutagenesis import load_mutagenesis
from xcore.drm.trains import generate_trains
from xcore.drm.problem import build_problem, language_limits
from xcore.drm.relevance import parse_relevance
from xcore.methods import Run

METHOD = "drm"


def settings_form(ds: RelationalDataset) -> DRMSettings | None:
    """Feature drawing, network and neighbourhood settings; modes and relevance as editable text."""
    base = default_settings(ds)
    c = st.columns(4)
    draws = c[0].number_input("Draws (MaxDraws)", 10, 20_000, 2000, step=100, key="drm_draws")
    length = c[1].number_input("Longest feature body", 1, 8, 4, key="drm_len")
    depth = c[2].number_input("Depth i (0: the modes' set(i))", 0, 4, 0, key="drm_depth")
    seed = c[3].number_input("Seed", 0, 10_000, 0, key="drm_seed")
    c = st.columns(4)
    folds = c[0].number_input("Cross-validation folds", 2, 20, 10, key="drm_folds")
    hamming = c[1].number_input("Neighbourhood radius k (Hamming)", 0, 5000, 5, key="drm_hamming")
    min_nb = c[2].number_input("Neighbours: widen k until n training instances (0: fixed k)", 0, 1000,
                               base.min_neighbours, key="drm_min_nb",
                               help="With hundreds of features almost no training instance lies within Hamming "
                                    "5 or 10; an empty neighbourhood leaves fidelity undefined.")
    epochs = c[3].number_input("Max epochs", 10, 2000, 150, step=10, key="drm_epochs")
    modes = st.text_area("Mode declarations (Aleph syntax; empty: derived from the data)", "", key="drm_modes",
                         height=90)
    return guarded(DRMSettings, max_draws=int(draws), max_literals=int(length), depth=int(depth), seed=int(seed),
                   folds=int(folds), hamming=int(hamming), min_neighbours=int(min_nb), max_epochs=int(epochs),
                   modes=modes, relevance=base.relevance)


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


def neighbourhood_figure(run: Run, loc) -> None:
    """The neighbours and the instance projected to 2-D (PCA of feature vectors), coloured by prediction."""
    model = run.model
    idx = np.concatenate([[loc.index], loc.neighbourhood.members]).astype(int)
    X = model.X_[idx].astype(float)
    Xc = X - X.mean(axis=0)
    if len(idx) > 1 and np.abs(Xc).sum() > 0:
        u, s, _ = np.linalg.svd(Xc, full_matrices=False)
        xy = u[:, :2] * s[:2]
        if xy.shape[1] == 1:
            xy = np.hstack([xy, np.zeros((len(xy), 1))])
    else:
        xy = np.zeros((len(idx), 2))
    k = int(model.folds_[loc.index])
    frame = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "example": [model.target_of(i) for i in idx],
                          "predicted class": [str(int(model.fold_predictions_[k, i])) for i in idx],
                          "role": ["instance"] + ["neighbour"] * (len(idx) - 1)})
    fig = px.scatter(frame, x="x", y="y", color="predicted class", symbol="role", hover_name="example",
                     title=f"Neighbourhood (Hamming ≤ {loc.radius}): {len(idx) - 1} training instances")
    st.plotly_chart(fig, width="stretch", key="drm_nb_fig")


def show_target(run: Run, target: str) -> None:
    """The selected prediction: neighbourhood, maximal-fidelity clauses under editable relevance, structure."""
    model = run.model
    text = st.text_area("Relevance levels (least relevant first; edit to see the choice change)",
                        run.settings.relevance, key="drm_relevance", height=90)
    relevance = guarded(parse_relevance, text)
    if relevance is None:
        return
    loc = derived(run, "local", (target, text), lambda: model.local(target, relevance=relevance),
                  "Explaining the prediction")
    if loc is None:
        return
    nb = loc.neighbourhood
    st.caption(f"Neighbourhood: {len(nb.members)} training instances within Hamming distance {loc.radius}. "
               f"E+ = {int(nb.positive.sum()) + 1} (the instance included), E- = {int((~nb.positive).sum())}; "
               f"{int(model.X_[loc.index].sum())} active features of {len(model.features_)}.")
    if not loc.fidelity_defined:
        st.warning(f"Fidelity undefined: no training instance lies within Hamming distance {loc.radius} of this "
                   "one, so every clause would agree with the network on the instance alone. Raise the number "
                   "of neighbours or the radius.")
        return
    neighbourhood_figure(run, loc)
    exp = FidelityExplainer().one(model, target, loc, relevance)
    if loc.relevance_changes_choice:
        st.success("Relevance changes the choice: the first clause is preferred over the first one by fidelity "
                   "alone.")
    explanation_panel(exp, key="drm_exp", graph=False, title="Maximal-fidelity explanations")
    rows = [{"clause": it.text, "unfolded": it.natural, "fidelity": it.score, "relevance": it.extras["relevance"],
             "chosen (fidelity, relevance)": it.extras["chosen_by_relevance"]} for it in exp.items]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="drm_clauses")
    if exp.items:
        with st.expander("Feature definitions of the chosen clause", expanded=True):
            st.code("\n".join(exp.items[0].extras["definitions"].values()), language="prolog")
    st.subheader("Structured alternatives")
    from xcore.drm.explain import clause_text, structured_text
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
    model = run.model
    cov = model.X_.mean(axis=0)
    frame = pd.DataFrame({"feature": [f.name for f in model.features_],
                          "definition": [f.definition() for f in model.features_],
                          "coverage": np.round(cov, 4), "literals": [len(f.clause.body) for f in model.features_],
                          "relevance": [it.extras["relevance"] for it in run.summary.items]})
    query = st.text_input("Filter features", "", key="drm_feat_filter", placeholder="e.g. closed")
    if query:
        frame = frame[frame["definition"].str.contains(query, regex=False)]
    st.caption(f"{len(frame):,} of {len(model.features_):,} features (coverage: share of all examples).")
    st.dataframe(frame, hide_index=True, width="stretch", height=360, key="drm_features")


def show_network(run: Run) -> None:
    rows, curves = [], []
    for k, net in enumerate(run.model.nets_):
        rows.append({"fold": k + 1, "hidden": str(net.hidden), "learning rate": net.lr,
                     "weight decay": net.weight_decay, "epochs": net.epochs,
                     "validation-time training loss": round(net.target_loss, 4),
                     "final training loss": round(net.train_loss[-1], 4) if net.train_loss else None})
        curves += [{"fold": str(k + 1), "epoch": e + 1, "training loss": v} for e, v in enumerate(net.train_loss)]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="drm_nets")
    fig = px.line(pd.DataFrame(curves), x="epoch", y="training loss", color="fold",
                  title="Training loss of each fold's network (retrained on all its training data until it "
                        "reaches the validation-time loss)")
    st.plotly_chart(fig, width="stretch", key="drm_loss")


st.title("Deep relational machine")
st.caption("Srinivasan, Vig & Bain, *Logical Explanations for Deep Relational Machines Using Relevance "
           "Information*: random first-order features from a mode language, a neural network on them, and "
           "local logical explanations chosen by fidelity, then relevance.")
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


other_data()
ds = applicability_gate(METHOD, get_dataset())
st.caption(f"Data: **{ds.name}**")
settings = settings_form(ds)
show_language(ds, settings)
run = run_button(METHOD, ds, settings, label="Draw features and train", key="drm_train")
stale_notice(METHOD, ds, settings, run)

if run is not None:
    metrics_row(run.metrics, ["accuracy", "linear_accuracy", "mean_fidelity", "mean_neighbours",
                              "fidelity_undefined", "relevance_changes_choice"])
    st.caption(f"{len(run.model.features_):,} features, {int(run.metrics['folds'])}-fold cross-validation "
               f"(accuracy of out-of-fold predictions; linear accuracy: L2 logistic regression on the same "
               f"features and folds); fidelity, neighbourhood size and relevance over the first "
               f"{len(run.explanations['drm:fidelity'])} explained predictions (neighbourhoods widened from "
               f"Hamming {run.settings.hamming} until {run.settings.min_neighbours} training instances).")
    tabs = st.tabs(["Predictions & explanations", "Global view", "Model quality", "Features", "Network",
                    "Downloads", "Verify"])
    with tabs[0]:
        target = predictions_browser(run.predictions, key="drm_pred")
        if target is not None:
            show_target(run, target)
    with tabs[1]:
        global_panel(run, key="drm_global")
    with tabs[2]:
        quality_panel(run, key="drm_quality")
    with tabs[3]:
        show_features(run)
    with tabs[4]:
        show_network(run)
    with tabs[5]:
        run_downloads(run, key="drm_dl")
        st.download_button("Feature definitions (Prolog)", "\n".join(f.definition() for f in run.model.features_),
                           "drm_features.pl", key="drm_dl_feats", on_click="ignore")
    with tabs[-1]:
        verify_panel(run, ds, key="drm_verify")
