"""I-Explain page: Markov-logic inference explained by formula importance — on the full network
(M-Explain), on embedding coalitions merged by rank aggregation (I-Explain), on random coalitions
(R-Explain), and by LIME / SHAP on the words — side by side, with coalitions and evaluation."""

from __future__ import annotations

import streamlit as st

from ui.common import guarded
from ui.components import derived, explanation_panel, kept_result, predictions_browser, progress_bar
from ui.forms import widget_key
from ui.method_page import PageContext, Tab, method_page
from ui.mln_form import annotation_upload, rules_editor, settings_form
from xcore.data.dataset import RelationalDataset
from xcore.data.generators.reviews import ReviewAnnotation
from xcore.explain.render import prediction_text
from xcore.methods import REGISTRY, Run
from xcore.mln.explainer_names import LEGACY
from xcore.mln.run_evaluation import evaluation_table, sweep_coalitions, sweep_curves
from xcore.mln.settings import MLNSettings
from xcore.mln.targets import (
    text_setting,
)
from xcore.mln.workflow import (
    normalised,
    query_object,
    split_by_kind,
)
from xcore.viz import embedding_scatter_figure, explanation_graph_figure, ranked_bar_figure, tradeoff_figure

METHOD = "mln"
PART_TITLES = {"word": "Top word formulas", "relational": "Top relational formulas", "other": "Other formulas"}


# ---------------------------------------------------------------------- explanations tab
def inference_diagnostics(run: Run) -> None:
    model = run.model.model_
    if model.method_ == "exact":
        st.caption("Exact enumeration: marginals are exact (no Monte Carlo error).")
        return
    st.caption(f"Sampled by {'MC-SAT' if model.method_ == 'mcsat' else 'Gibbs sampling'}.")
    d = model.result_.diagnostics()
    c = st.columns(4)
    c[0].metric("Max R-hat", f"{d['max_rhat']:.3f}")
    c[1].metric("Atoms with R-hat > 1.1", d["atoms_above_threshold"])
    c[2].metric("Largest MC error", f"{d['max_se']:.4f}")
    c[3].metric("Atom updates / s", f"{d['updates_per_second'] / 1e6:.1f} M")
    if not d["converged"]:
        st.warning("Some chains disagree (R-hat > 1.1): draw more samples or a longer burn-in.")


def method_panel(run: Run, name: str, target: str, k: int, key: str) -> None:
    """One explainer's explanation of `target`: word, relational and other formulas, and the support graph."""
    exps = run.explanations[name]
    if target not in exps:
        st.info(f"{LEGACY[name]} has no explanation of {target}.")
        return
    exp = exps[target]
    pred = "" if exp.prediction is None else f" — predicted {prediction_text(exp)}"
    coalition = exp.meta.get("coalition_estimate")
    if isinstance(coalition, (int, float)):  # I-/R-Explain only: the explained prediction stays the model's
        pred += f" (the full-network marginal; coalition estimate {float(coalition):.3f})"
    st.markdown(f"**{LEGACY[name]}**{pred}")
    meta, seconds = exps.meta, run.timings.get(f"explain.{name}")
    work = []
    if "atom_updates" in meta:
        if meta.get("inference") == "exact":
            work.append("exact inference (no sampling)")
        elif "coalition_samples" in meta:
            cs = meta["coalition_samples"]
            work.append(f"sampling work {meta['atom_updates']:,} atom updates over {len(cs)} coalitions "
                        f"({min(cs)}–{max(cs)} samples each; {'equal to M-Explain' if meta.get('work') == 'equal' else 'each coalition the full options'})")
        else:
            work.append(f"sampling work {meta['atom_updates']:,} atom updates ({meta['n_samples']} samples × "
                        f"{meta['n_chains']} chains on the full network)")
    if seconds is not None:
        work.append(f"{seconds:.1f} s")
    if meta.get("queries_in_no_coalition"):
        work.append(f"{meta['queries_in_no_coalition']} queries in no coalition (full-model prediction)")
    if work:
        st.caption(" · ".join(work))
    if exp.meta.get("coalitions_with_query") == 0:
        st.warning("This query was in no coalition: its prediction is the full model's marginal and its "
                   "formulas are borrowed from similar queries.")
    if exp.score_spec is not None:
        st.caption(exp.score_spec.caption())
    if not exp.items:
        st.info(f"{LEGACY[name]} has no formula for this query (it appeared in no coalition).")
        return
    parts = split_by_kind(exp, k, getattr(run.model, "setting_", None))
    for kind, title in PART_TITLES.items():
        if parts[kind].items:
            st.plotly_chart(ranked_bar_figure(parts[kind], k=k, label_width=50, title=title), width="stretch",
                            key=f"{key}_{kind}")
    if parts["relational"].items:
        st.plotly_chart(explanation_graph_figure(normalised(parts["relational"], absolute=True), k=k,
                                                 title="Relational support (|score| scaled to [0, 1])"),
                        width="stretch", key=f"{key}_graph")


def explanations_tab(run: Run) -> str | None:
    inference_diagnostics(run)
    target = predictions_browser(run.predictions, key="mln_pred", height=240)
    if target is None:
        return None
    st.session_state["mln_selected"] = target
    names = list(run.explanations)
    if not names:
        st.info("No explainer applies to this data.")
        return target
    c = st.columns(2)
    left = c[0].selectbox("Left", names, 0, format_func=LEGACY.get, key="mln_left")
    right = c[1].selectbox("Right", names, min(1, len(names) - 1), format_func=LEGACY.get, key="mln_right")
    k = run.settings.top_k
    with c[0]:
        method_panel(run, left, target, k, "left")
    with c[1]:
        method_panel(run, right, target, k, "right")
    with st.expander(f"{LEGACY[left]}: every formula of this query, ranked"):
        if target in run.explanations[left]:
            explanation_panel(run.explanations[left][target], key="mln_full", k=max(k, 10))
    return target


# ---------------------------------------------------------------------- model tab
def model_tab(run: Run) -> None:
    st.dataframe(run.summary.to_frame()[["rank", "text", "score"]].rename(columns={"score": "weight"}),
                 hide_index=True, width="stretch")
    if run.settings.learn != "none":
        st.caption(f"Weights learned by {run.settings.learn}.")
        if st.button("Put the learned weights in the editor", key="mln_use_learned"):
            st.session_state["mln_rules_next"] = run.model.rules_text_
            st.rerun()


# ---------------------------------------------------------------------- coalitions tab
def coalitions_tab(run: Run) -> None:
    workflow = getattr(run.model, "explainer_run_", None)
    if workflow is None or workflow.iexplainer is None:
        st.info("Run with I-Explain selected to see its coalitions.")
        return
    ix = workflow.iexplainer
    frame = ix.coalition_frame()
    atom = st.session_state.get("mln_selected", "")
    obj = guarded(query_object, workflow.setting, atom) if atom else ""
    st.markdown(f"{len(frame)} {workflow.setting.domain_type} objects embedded by skip-gram over co-occurrence in "
                f"ground formulas, clustered by k-means into {frame['cluster'].nunique()} clusters (C = "
                f"{ix.C:g}); each of the {ix.T} coalitions samples S = {ix.S:g} of every cluster. The selected "
                "query's object is starred; marker size = how many coalitions sampled the object.")
    st.plotly_chart(embedding_scatter_figure(frame, size="n_coalitions", highlight=[obj] if obj else []),
                    width="stretch", key="mln_embedding")
    st.dataframe(ix.coalition_summary().round(4), hide_index=True, width="stretch")
    st.caption("beta: the coalition's weight when the coalitions' ranked lists are merged, 1 − z / Σz with z the "
               "Frobenius norm of its importance matrix (a coalition whose importances stand out less counts more). "
               "Symmetric formulas merged: approximately symmetric ground formulas dropped into one representative.")


# ---------------------------------------------------------------------- evaluation tab
def evaluation_tab(ds: RelationalDataset, run: Run, annotation: ReviewAnnotation | None) -> None:
    workflow = getattr(run.model, "explainer_run_", None)
    if annotation is None or workflow is None:
        st.info("No annotation for this dataset: the bundled *Restaurant reviews* sample has one, or upload an "
                "annotation.json (planted_words, true_links, labels) in the sidebar.")
        return
    st.markdown("Precision@5 of the top-5 word formulas (planted word, right direction) and of the top-5 "
                "relational formulas (a link that truly carries homophily); a wrong prediction counts 0. "
                "Top-Exp-Acc: F1 when each query is predicted from its explanation alone; Peak-Acc: the best "
                "F1 as formulas are added in ranked order (paper Table I).")
    table = guarded(evaluation_table, workflow, annotation, 5)
    if table is None:
        return
    st.dataframe(table.round(3), hide_index=True, width="stretch")
    st.download_button("Evaluation (CSV)", table.to_csv(index=False), "mln_evaluation.csv", key="mln_dl_eval",
                       on_click="ignore")
    st.subheader("Accuracy vs C and S (paper Fig. 2)")
    c = st.columns(2)
    Cs = c[0].multiselect("C values", [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0], [0.1, 0.2, 0.5], key="mln_Cs")
    Ss = c[1].multiselect("S values", [0.1, 0.25, 0.5, 0.75, 1.0], [0.25, 0.5, 1.0], key="mln_Ss")
    grid = (tuple(sorted(Cs)), tuple(sorted(Ss)))
    frame = kept_result(run, "sweep", grid)
    if st.button("Run the sweep", key="mln_sweep_run"):
        report = progress_bar("I-Explain over the grid")
        frame = derived(run, "sweep", grid, lambda: sweep_coalitions(
            run.model.model_, ds, workflow.setting, annotation, grid[0], grid[1], workflow.settings,
            progress=report), "The sweep")
    if frame is not None and len(frame):
        cols = st.columns(2)
        for col, param in zip(cols, ("C", "S")):
            pts = sweep_curves(frame, param)
            if len(pts):
                col.plotly_chart(tradeoff_figure(pts, x="value", y="score", series="series",
                                                 title=f"I-Explain accuracy vs {param}", x_title=param,
                                                 y_title="precision@5 / F1"), width="stretch", key=f"mln_sweep_{param}")
        st.dataframe(frame.round(3), hide_index=True, width="stretch")


# ---------------------------------------------------------------------- page
def form_with_rules(ds: RelationalDataset) -> MLNSettings | None:
    """The generated settings, the sidebar's annotation upload, then the rules editor (its text is the
    settings' `rules`)."""
    settings = settings_form(ds)
    target = settings.target if settings is not None else st.session_state.get(widget_key(METHOD, "target"))
    setting = guarded(text_setting, ds, target)
    DRAWN["annotation"] = annotation_upload(ds)
    rules = rules_editor(ds, setting)
    if not rules.strip():
        st.error("The rule editor is empty: write at least one weighted clause, e.g. `1.5 smokes(x) => cancer(x)`.")
        return None
    return None if settings is None else guarded(settings.replace, rules=rules)


def time_caption(ctx: PageContext) -> None:
    st.caption("Time: " + ", ".join(f"{LEGACY.get(k.split('.', 1)[-1], k)} {v:.1f} s"
                                    for k, v in ctx.run.timings.items()))


# What this pass's form drew that a tab reads (the annotation).
DRAWN: dict = {}

method_page(
    REGISTRY[METHOD],
    [Tab("Model", lambda ctx: model_tab(ctx.run)), Tab("Coalitions", lambda ctx: coalitions_tab(ctx.run)),
     Tab("Evaluation", lambda ctx: evaluation_tab(ctx.dataset, ctx.run, DRAWN.get("annotation")))],
    title="Markov logic — I-Explain",
    intro="Al Farabi, Sarkhel, Dey & Venugopal, *Interpretable Explanations for Probabilistic Inference in Markov "
          "Logic* (2021). A query is explained by the ground formulas that raise its probability most (importance "
          "I(f, Q) = E_Q[n_f] − E[n_f]): on the full network (M-Explain), or on small coalitions of similar objects "
          "merged by weighted rank aggregation (I-Explain).",
    form=form_with_rules, run_label="Infer and explain every query", button_key="mln_run",
    predictions_tab=lambda ctx: explanations_tab(ctx.run), summary=time_caption)
