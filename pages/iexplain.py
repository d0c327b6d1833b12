"""I-Explain page: Markov-logic inference explained by formula importance — on the full network
(M-Explain), on embedding coalitions merged by rank aggregation (I-Explain), on random coalitions
(R-Explain), and by LIME / SHAP on the words — side by side, with coalitions and evaluation."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.common import guarded, require_dataset
from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.mln.learning import learn_weights
from xcore.mln.model import MLNModel
from xcore.data.generators.reviews import ReviewAnnotation, annotation_from_json
from xcore.mln.workflow import (
    ExplainerRun,
    ExplainSettings,
    TextSetting,
    available_methods,
    detect_setting,
    evaluation_table,
    find_annotation,
    normalised,
    query_frame,
    query_object,
    query_predicates,
    run_explainers,
    split_by_kind,
    starting_rules,
    sweep_coalitions,
    sweep_curves,
)
from xcore.psl.model import dataset_fingerprint
from xcore.viz import embedding_scatter_figure, explanation_graph_figure, ranked_bar_figure, tradeoff_figure

MODEL_KEY = "mln_model"
RUN_KEY = "mln_run_result"
SWEEP_KEY = "mln_sweep"
EXACT_LIMIT = 20


# ---------------------------------------------------------------------- cached work
@st.cache_resource(show_spinner=False, max_entries=8)
def cached_model(fingerprint: str, rules: str, method: str, options: tuple, _ds) -> MLNModel:
    """Ground and infer once per (data, rules, method, options)."""
    return MLNModel(rules).ground(_ds).infer(method, **dict(options))


@st.cache_resource(show_spinner=False, max_entries=4)
def cached_weights(fingerprint: str, rules: str, method: str, target: str, word_predicate: str,
                   _ds) -> str:
    """Learned rule text once per (data, rules, learning method)."""
    learned = learn_weights(rules, _ds, method=method, target=target, word_predicate=word_predicate)
    return "\n".join(r.text("mln") for r in learned) + "\n"


@st.cache_resource(show_spinner=False, max_entries=4)
def cached_explainers(fingerprint: str, rules: str, method: str, options: tuple, settings: ExplainSettings,
                      setting: TextSetting, _model: MLNModel, _ds, _progress=None) -> ExplainerRun:
    """Every method's explanations once per (data, model, explainer settings)."""
    return run_explainers(_model, _ds, setting, settings, progress=_progress)


@st.cache_resource(show_spinner=False, max_entries=4)
def cached_sweep(fingerprint: str, rules: str, method: str, options: tuple, settings: ExplainSettings,
                 setting: TextSetting, Cs: tuple, Ss: tuple, _annotation, _model, _ds, _progress=None) -> pd.DataFrame:
    return sweep_coalitions(_model, _ds, setting, _annotation, Cs, Ss, settings, progress=_progress)


def bar(fraction: float, message: str, widget) -> None:
    widget.progress(min(max(fraction, 0.0), 1.0), text=message)


# ---------------------------------------------------------------------- model tab
def inference_options(method: str) -> tuple:
    if method == "exact":
        return ()
    c = st.columns(4)
    samples = c[0].number_input("Samples per chain", 100, 20_000, 1000, step=100, key="mln_samples")
    burn = c[1].number_input("Burn-in sweeps", 0, 5_000, 200, step=50, key="mln_burn")
    chains = c[2].number_input("Chains", 2, 64, 4, key="mln_chains")
    seed = c[3].number_input("Seed", 0, 10_000, 0, key="mln_seed")
    return (("n_samples", int(samples)), ("burn_in", int(burn)), ("n_chains", int(chains)), ("seed", int(seed)))


def learn_section(ds: RelationalDataset, setting: TextSetting | None) -> None:
    """Learn the weights of the rules in the editor (the paper's recipe or plain PLL)."""
    if setting is None:
        return
    c = st.columns([2, 1])
    how = c[0].radio("Weight learning", ["linear+pll", "pll"], horizontal=True, key="mln_learn_method",
                     help="linear+pll: word formulas from a logistic regression on the words (the paper uses an "
                          "SVM), relational formulas by pseudo-likelihood. pll: every weight by pseudo-likelihood.")
    if c[1].button("Learn weights", key="mln_learn"):
        with st.spinner("Learning weights by pseudo-likelihood…"):
            text = guarded(cached_weights, dataset_fingerprint(ds), st.session_state["mln_rules"], how,
                           setting.target, setting.word_predicate or "has_word", ds)
        if text is not None:
            st.session_state["mln_rules_next"] = text
            st.rerun()


def inference_diagnostics(model: MLNModel) -> None:
    if model.method_ != "gibbs":
        return
    d = model.result_.diagnostics()
    c = st.columns(4)
    c[0].metric("Max R-hat", f"{d['max_rhat']:.3f}")
    c[1].metric("Atoms with R-hat > 1.1", d["atoms_above_threshold"])
    c[2].metric("Largest MC error", f"{d['max_se']:.4f}")
    c[3].metric("Atom updates / s", f"{d['updates_per_second'] / 1e6:.1f} M")
    if not d["converged"]:
        st.warning("Some chains disagree (R-hat > 1.1): draw more samples or a longer burn-in.")


def m_explain_browser(model: MLNModel) -> None:
    """Every query atom with its marginal; the selected one explained by M-Explain."""
    frame = model.marginals()
    event = st.dataframe(frame.round(4), hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="mln_table", height=280)
    rows = event.selection.rows if event is not None else []
    atom = frame["atom"].iloc[rows[0] if rows else 0]
    exp = guarded(model.explain, atom)
    if exp is None:
        return
    st.markdown(f"**{atom}** — P = {exp.prediction:.3f}. Importance I(f, Q) = E_Q[n_f] − E[n_f] "
                "= ∂ log P(Q | E) / ∂ w_f: how much each ground formula raises the query's probability.")
    if exp.items:
        left, right = st.columns(2)
        left.plotly_chart(ranked_bar_figure(exp, k=10), width="stretch")
        right.plotly_chart(explanation_graph_figure(exp, k=12), width="stretch")
        st.dataframe(exp.to_frame()[["rank", "natural", "text", "score", "explainable"]], hide_index=True,
                     width="stretch")
    st.download_button("Marginals (CSV)", frame.to_csv(index=False), "mln_marginals.csv", key="mln_dl_m")
    st.download_button("Explanations (JSON)", model.explain_all().to_json(), "mln_explanations.json",
                       key="mln_dl_e")


# ---------------------------------------------------------------------- explanations tab
def explainer_settings(setting: TextSetting) -> ExplainSettings:
    available = available_methods(setting)
    methods = st.multiselect("Methods", available, available, key="mln_methods",
                             help="LIME and SHAP explain a bag-of-words classifier and need word evidence.")
    c = st.columns(6)
    C = c[0].slider("C (clusters per object)", 0.05, 1.0, 0.2, 0.05, key="mln_C")
    S = c[1].slider("S (share sampled per cluster)", 0.05, 1.0, 0.5, 0.05, key="mln_S")
    T = c[2].number_input("T (coalitions)", 1, 50, 10, key="mln_T")
    k = c[3].number_input("Top-k per query", 3, 30, 10, key="mln_topk")
    seed = c[4].number_input("Explainer seed", 0, 10_000, 0, key="mln_xseed")
    agg = c[5].selectbox("Rank aggregation", ["cemc", "exact_footrule"], key="mln_agg",
                         help="How the coalitions' ranked lists are merged: Cross-Entropy Monte Carlo (the paper), "
                              "or the same weighted-footrule objective solved exactly (much faster).")
    return ExplainSettings(methods=tuple(methods), C=float(C), S=float(S), T=int(T), top_k=int(k), seed=int(seed),
                           aggregation=agg)


def method_panel(run: ExplainerRun, method: str, atom: str, k: int, key: str) -> None:
    """One method's explanation of `atom`: top word and relational formulas, and the support graph."""
    exp = guarded(run.explanation, method, atom)
    if exp is None:
        return
    st.markdown(f"**{method}** — prediction {exp.prediction:.3f}" if exp.prediction is not None else f"**{method}**")
    parts = split_by_kind(exp, k)
    if method in ("LIME", "SHAP"):
        st.caption("Score: the word's contribution to the classifier's log-odds of the class (positive = for).")
    else:
        st.caption("Score: importance I(f, Q) = ∂ log P(Q) / ∂ w_f. Positive: the formula is more often true "
                   "when Q is true; whether it pushes Q up or down is the sign of its weight (hover a bar).")
    if not exp.items:
        st.info(f"{method} has no formula for this query (it appeared in no coalition).")
        return
    for kind, title in (("word", "Top word formulas"), ("relational", "Top relational formulas")):
        if parts[kind].items:
            st.plotly_chart(ranked_bar_figure(parts[kind], k=k, label_width=50, title=title), width="stretch",
                            key=f"{key}_{kind}")
    if parts["relational"].items:
        st.plotly_chart(explanation_graph_figure(normalised(parts["relational"], absolute=True), k=k,
                                                 title="Relational support (|score| scaled to [0, 1])"),
                        width="stretch", key=f"{key}_graph")


def explanations_tab(ds: RelationalDataset, model: MLNModel, setting: TextSetting, model_key: tuple,
                     annotation: ReviewAnnotation | None) -> None:
    settings = explainer_settings(setting)
    if st.button("Explain every query", type="primary", key="mln_explain"):
        with st.status("Explaining every query…", expanded=True) as status:
            widget = st.progress(0.0)
            run = guarded(cached_explainers, *model_key, settings, setting, model, ds,
                          lambda f, m: bar(f, m, widget))
            status.update(label="Explanations ready" if run is not None else "Explaining failed",
                          state="complete" if run is not None else "error", expanded=False)
        if run is not None:
            st.session_state[RUN_KEY] = run
    run: ExplainerRun | None = st.session_state.get(RUN_KEY)
    if run is None or run.model is not model:
        st.info("Choose the methods and coalition sizes, then press **Explain every query**.")
        return
    st.caption("Time per method: " + ", ".join(f"{m} {s:.1f} s" for m, s in run.seconds.items()))
    queries = query_frame(run, annotation)
    event = st.dataframe(queries.round(4), hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="mln_queries", height=240)
    rows = event.selection.rows if event is not None else []
    atom = queries["atom"].iloc[rows[0] if rows else 0]
    st.session_state["mln_selected"] = atom
    methods = list(run.explanations)
    c = st.columns(2)
    left = c[0].selectbox("Left", methods, 0, key="mln_left")
    right = c[1].selectbox("Right", methods, min(1, len(methods) - 1), key="mln_right")
    k = 5
    with c[0]:
        method_panel(run, left, atom, k, "left")
    with c[1]:
        method_panel(run, right, atom, k, "right")
    st.download_button("Marginals (CSV)", queries.to_csv(index=False), "mln_marginals.csv", key="mln_dl_q")
    for m in methods:
        st.download_button(f"{m} explanations (JSON)", run.explanations[m].to_json(),
                           f"{m.lower().replace('-', '_')}_explanations.json", key=f"mln_dl_{m}")


# ---------------------------------------------------------------------- coalitions tab
def coalitions_tab(run: ExplainerRun | None) -> None:
    if run is None or run.iexplainer is None:
        st.info("Run the explanations with I-Explain selected to see its coalitions.")
        return
    ix = run.iexplainer
    frame = ix.coalition_frame()
    atom = st.session_state.get("mln_selected", "")
    obj = query_object(run.setting, atom) if atom else ""
    st.markdown(f"{len(frame)} {run.setting.domain_type} objects embedded by skip-gram over co-occurrence in "
                f"ground formulas, clustered by k-means into {frame['cluster'].nunique()} clusters (C = "
                f"{ix.C:g}); each of the {ix.T} coalitions samples S = {ix.S:g} of every cluster. The selected "
                "query's object is starred; marker size = how many coalitions sampled the object.")
    st.plotly_chart(embedding_scatter_figure(frame, size="n_coalitions", highlight=[obj] if obj else []),
                    width="stretch", key="mln_embedding")
    st.dataframe(ix.coalition_summary().round(4), hide_index=True, width="stretch")


# ---------------------------------------------------------------------- evaluation tab
def evaluation_tab(ds, model, setting, model_key, run: ExplainerRun | None, annotation: ReviewAnnotation | None) -> None:
    if annotation is None:
        st.info("No annotation for this dataset: the bundled *Restaurant reviews* sample has one, or upload an "
                "annotation.json (planted_words, true_links, labels) in the sidebar.")
        return
    if run is None:
        st.info("Run the explanations first (Explanations tab).")
        return
    st.markdown("Precision@5 of the top-5 word formulas (planted word, right direction) and of the top-5 "
                "relational formulas (a link that truly carries homophily); a wrong prediction counts 0. "
                "Top-Exp-Acc: F1 when each query is predicted from its explanation alone; Peak-Acc: the best "
                "F1 as formulas are added in ranked order (paper Table I).")
    table = evaluation_table(run, annotation, k=5)
    st.dataframe(table.round(3), hide_index=True, width="stretch")
    st.download_button("Evaluation (CSV)", table.to_csv(index=False), "mln_evaluation.csv", key="mln_dl_eval")
    st.subheader("Accuracy vs C and S (paper Fig. 2)")
    c = st.columns(2)
    Cs = c[0].multiselect("C values", [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0], [0.1, 0.2, 0.5], key="mln_Cs")
    Ss = c[1].multiselect("S values", [0.1, 0.25, 0.5, 0.75, 1.0], [0.25, 0.5, 1.0], key="mln_Ss")
    if st.button("Run the sweep", key="mln_sweep_run"):
        with st.status("Running I-Explain over the grid…", expanded=True) as status:
            widget = st.progress(0.0)
            frame = guarded(cached_sweep, *model_key, run.settings, setting, tuple(sorted(Cs)), tuple(sorted(Ss)),
                            annotation, model, ds, lambda f, m: bar(f, m, widget))
            status.update(label="Sweep done", state="complete", expanded=False)
        if frame is not None:
            st.session_state[SWEEP_KEY] = frame
    frame = st.session_state.get(SWEEP_KEY)
    if frame is not None and len(frame):
        cols = st.columns(2)
        for col, param in zip(cols, ("C", "S")):
            pts = sweep_curves(frame, param)
            if len(pts):
                col.plotly_chart(tradeoff_figure(pts, x="value", y="score", series="series",
                                                 title=f"I-Explain accuracy vs {param}", x_title=param,
                                                 y_title="precision@5 / F1"), width="stretch", key=f"mln_sweep_{param}")
        st.dataframe(frame.round(3), hide_index=True, width="stretch")


def annotation_upload(ds: RelationalDataset) -> ReviewAnnotation | None:
    """The dataset's own annotation (bundled sample) or one uploaded in the sidebar."""
    found = guarded(find_annotation, ds)
    up = st.sidebar.file_uploader("Annotation (annotation.json)", type=["json"], key="mln_annotation_file",
                                  help="Planted explanations: planted_words, true_links, labels.")
    if up is not None:
        try:
            text = up.getvalue().decode("utf-8")
        except UnicodeDecodeError:
            st.sidebar.error(f"{up.name}: not UTF-8 text")
            return found
        ann = guarded(annotation_from_json, text, up.name)
        if ann is not None:
            return ann
    return found


# ---------------------------------------------------------------------- page
st.title("Markov logic — I-Explain")
st.caption("Al Farabi, Sarkhel, Dey & Venugopal, *Interpretable Explanations for Probabilistic Inference in "
           "Markov Logic* (2021). A query is explained by the ground formulas that raise its probability most "
           "(importance I(f, Q) = E_Q[n_f] − E[n_f]): on the full network (M-Explain), or on small coalitions of "
           "similar objects merged by weighted rank aggregation (I-Explain).")
ds = require_dataset()
candidates = query_predicates(ds)
target = (st.selectbox("Query predicate to explain", candidates, key="mln_target",
                       help="I-Explain explains the atoms of one open unary predicate, e.g. positive(review).")
          if len(candidates) > 1 else None)
try:
    setting: TextSetting | None = detect_setting(ds, target)
except XcoreError:  # no open unary query predicate: the page still offers M-Explain on any atom
    setting = None
annotation = annotation_upload(ds)

if "mln_rules_next" in st.session_state:  # learned weights replace the editor's text before it is drawn
    st.session_state["mln_rules"] = st.session_state.pop("mln_rules_next")
if st.session_state.get("mln_rules_for") != ds.name:
    st.session_state["mln_rules"] = guarded(starting_rules, ds, setting) or ""
    st.session_state["mln_rules_for"] = ds.name

tab_model, tab_explain, tab_coal, tab_eval = st.tabs(["Model and inference", "Explanations", "Coalitions",
                                                      "Evaluation"])
with tab_model:
    rules = st.text_area("Weighted first-order clauses (Alchemy syntax, e.g. `1.5 smokes(x) => cancer(x)`)",
                         height=180, key="mln_rules")
    learn_section(ds, setting)
    n_targets = sum(len(ds.targets(p.name)) for p in ds.predicates)
    method = st.radio("Inference", ["exact", "gibbs"], index=0 if n_targets <= EXACT_LIMIT else 1,
                      horizontal=True, key="mln_method",
                      help=f"Exact enumeration handles up to {EXACT_LIMIT} query atoms.")
    options = inference_options(method)
    model_key = (dataset_fingerprint(ds), rules, method, options)
    if st.button("Run inference", type="primary", key="mln_run"):
        with st.spinner("Grounding and inferring…"):
            model = guarded(cached_model, *model_key, ds)
        if model is not None:
            st.session_state[MODEL_KEY] = model
            st.session_state["mln_model_key"] = model_key
    model: MLNModel | None = st.session_state.get(MODEL_KEY)
    if model is not None:
        inference_diagnostics(model)
        with st.expander("Every query atom, explained by M-Explain", expanded=setting is None):
            m_explain_browser(model)

model = st.session_state.get(MODEL_KEY)
key = st.session_state.get("mln_model_key", model_key)
run = st.session_state.get(RUN_KEY)
run = run if run is not None and model is not None and run.model is model else None
with tab_explain:
    if model is None:
        st.info("Run inference first (Model and inference tab).")
    elif setting is None:
        st.info("I-Explain explains queries of an open unary predicate (e.g. positive(review)); this dataset "
                "has none, so only M-Explain is available (Model and inference tab).")
    else:
        explanations_tab(ds, model, setting, key, annotation)
        run = st.session_state.get(RUN_KEY)
        run = run if run is not None and run.model is model else None
with tab_coal:
    coalitions_tab(run)
with tab_eval:
    if setting is not None and model is not None:
        evaluation_tab(ds, model, setting, key, run, annotation)
    else:
        st.info("Run inference and the explanations first.")
