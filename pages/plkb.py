"""Probabilistic-logic classifier page: a KB of probabilistic clauses, LP inference, decisive features."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.common import get_dataset, guarded, set_dataset
from pages.components import (verify_panel, PLOT_CONFIG, applicability_gate, derived, explanation_panel, global_panel, quality_panel, metrics_row, predictions_browser,
                              progress_bar, run_button, run_downloads, stale_notice)
from xcore.data import RelationalDataset
from xcore.methods import Run
from xcore.plkb.experiments import (compare_baselines, knowledge_curve, random_pollution_curve, shap_agreement_by_k,
                                    suggest_kb)
from xcore.plkb.method import DECISIVE, DecisiveExplainer, ShapleyExplainer
from xcore.plkb.workflow import GENERATED, PLKBSettings, generated_dataset, identifier_columns
from xcore.viz import ranked_bar_figure
from xcore.viz.plkb_figures import feature_choice_figure, kb_curve_figure, shap_agreement_figure

METHOD = "plkb"


def generator() -> None:
    """Generate the paper's synthetic strings or Titanic-like rows and make them the current dataset."""
    with st.expander("Generate a table (the paper's synthetic strings, or Titanic-like passengers)"):
        kind = st.radio("Generated data", list(GENERATED), horizontal=True, key="plkb_gen_kind")
        c = st.columns(4)
        n = c[0].number_input("Rows", 100, 5000, 1000, step=100, key="plkb_gen_n")
        seed = c[3].number_input("Seed", 0, 10_000, 0, key="plkb_gen_seed")
        length = alphabet = 0
        if kind == GENERATED[0]:
            length = c[1].selectbox("Length L", [8, 10, 12], index=1, key="plkb_gen_len")
            alphabet = c[2].selectbox("Alphabet size A", [3, 4, 8], index=1, key="plkb_gen_alpha")
        if st.button("Generate and load", key="plkb_generate"):
            ds = guarded(generated_dataset, kind, int(length) or 10, int(alphabet) or 4, int(n), int(seed))
            if ds is not None:
                set_dataset(ds, f"generated: {ds.name}")
                st.rerun()


def settings_form(ds: RelationalDataset) -> PLKBSettings | None:
    table, default_label = ds.tabular, ds.label
    columns = [str(c) for c in table.columns]
    if st.session_state.get("plkb_label") not in columns:
        st.session_state.pop("plkb_label", None)  # a choice made on another table
    c = st.columns(4)
    label = c[0].selectbox("Label column", columns, index=columns.index(default_label), key="plkb_label")
    classes = sorted(table[label].dropna().astype(str).unique())
    options = classes if len(classes) > 2 else ["(default)", *classes]  # several classes: no default
    if st.session_state.get("plkb_pos") not in options:
        st.session_state.pop("plkb_pos", None)
    positive = c[1].selectbox("Positive class (one-vs-rest)", options, key="plkb_pos",
                              index=None if len(classes) > 2 else 0, placeholder="choose the class to explain")
    if positive is None:
        st.info(f"Label **{label}** has {len(classes)} classes. The classifier explains one class against the "
                "rest: choose which class to explain above (nothing is picked for you).")
    choice = guarded(suggested_kb, table, label, tuple(identifier_columns(table, label)))
    if choice is not None and st.session_state.get("plkb_kb_for") != (ds.fingerprint(), label):
        st.session_state["plkb_kb"] = choice[0]  # default to the KB that suits the loaded data
        st.session_state["plkb_kb_for"] = (ds.fingerprint(), label)
    kb = c[2].radio("Knowledge base", ["tree", "direct"], horizontal=True, key="plkb_kb",
                    help=None if choice is None else choice[1])
    bins = c[3].slider("Bins for numeric columns", 2, 10, 4, key="plkb_bins")
    c = st.columns(5)
    max_k = c[0].number_input("Direct: max k", 1, 4, 2, key="plkb_maxk", disabled=kb != "direct")
    support = c[1].number_input("Direct: min support", 1, 1000, 1, key="plkb_support", disabled=kb != "direct")
    trees = c[2].number_input("Tree: trees (forest)", 1, 25, 1, key="plkb_trees", disabled=kb != "tree")
    all_nodes = c[3].checkbox("Tree: clause per node", key="plkb_allnodes", disabled=kb != "tree")
    k = c[4].number_input("k (features per explanation)", 1, 6, 2, key="plkb_k")
    others = [x for x in columns if x != label]
    if any(x not in others for x in st.session_state.get("plkb_drop", [])):
        st.session_state.pop("plkb_drop", None)
    drop = st.multiselect("Leave out these columns", others, default=identifier_columns(table, label),
                          key="plkb_drop", help="Identifier-like columns are left out by default.")
    if choice is not None:
        st.caption(f"Suggested: {choice[1]}.")
    knowledge = st.text_area("Domain knowledge (one clause per line, e.g. `0.9: POS | ~sex_female`)", "",
                             key="plkb_knowledge", height=80)
    if positive is None:
        return None
    return guarded(PLKBSettings, label=label, positive_class=None if positive == "(default)" else positive, kb=kb,
                   max_k=int(max_k), min_support=int(support), all_nodes=bool(all_nodes), n_trees=int(trees),
                   n_bins=int(bins), knowledge=knowledge, drop=tuple(drop), k=int(k))


def show_row(run: Run, target: str) -> None:
    """The selected test row: its decisive features (computed on demand for rows beyond the first ones)."""
    exps = run.explanations[DECISIVE]
    if target in exps:
        exp = exps[target]
    else:
        found = derived(run, "decisive", (target,), lambda: DecisiveExplainer().explain(run.model, targets=[target]),
                        "Explaining the row")
        if found is None:
            return
        exp = found[target]
    explanation_panel(exp, key="plkb_exp", graph=False, title="Decisive features")
    x = guarded(run.model.row, target)
    if x is None:
        return
    with st.expander("The LP behind it: clauses in this row's query and their values on the optimal face"):
        clauses = guarded(run.model.classifier_.driving_clauses, x)
        if clauses is not None:
            st.dataframe(clauses, hide_index=True, width="stretch", height=260)
    if st.button("Shapley values (exact up to 12 features)", key="plkb_shap_btn"):
        sh = derived(run, "shapley", (target,), lambda: ShapleyExplainer().explain(run.model, targets=[target]),
                     "Shapley values")
        if sh is not None:
            explanation_panel(sh[target], key="plkb_shapley", graph=False, title="Shapley values")
            compare = derived(run, "shap_compare", (target,), lambda: _shap_compare(run, x),
                              "The comparison with SHAP")
            if compare is not None:
                frame, summary = compare
                st.caption(f"Top-{run.settings.k} agreement with SHAP on gradient boosting: {summary['agreement']:.2f}")
                st.dataframe(frame, hide_index=True, width="stretch")


def what_if(run: Run, target: str | None) -> None:
    """Edit a row's feature values and see ω(POS), its interval and the decisive features update live."""
    est = run.model
    base = est.row(target).iloc[0].to_dict() if target is not None and target in set(run.predictions["target"]) else {}
    st.caption(f"Starting from **{target or 'an empty row'}** (select another row in the predictions tab). Each "
               "change re-runs the LP (milliseconds). '(unknown)' leaves the feature out of the query.")
    values: dict[str, object] = {}
    options = est.feature_options()
    cols = st.columns(4)
    for i, (name, seen) in enumerate(options.items()):
        col = cols[i % 4]
        current = base.get(name)
        numeric = pd.api.types.is_numeric_dtype(run.extras["plkb"].X_train[name]) and len(seen) > 12
        if numeric:
            v = col.number_input(name, value=None if current is None or pd.isna(current) else float(current),
                                 key=f"plkb_wi_{target}_{name}", placeholder="(unknown)")
        else:
            choices = ["(unknown)", *seen]
            index = choices.index(current) if current in choices else 0
            v = col.selectbox(name, choices, index=index, key=f"plkb_wi_{target}_{name}")
            v = None if v == "(unknown)" else v
        values[name] = v
    exp = guarded(est.what_if, values)
    if exp is None:
        return
    c = st.columns(3)
    c[0].metric("ω(POS) midpoint", f"{exp.prediction:.3f}")
    c[1].metric("interval", f"[{exp.meta['omega_lo']:.3f}, {exp.meta['omega_hi']:.3f}]",
                help="The LP's lowest and highest probability of POS consistent with the KB and the known features.")
    c[2].metric("prediction", str(est.classifier_.classes_[1] if exp.prediction > 0.5 else est.classifier_.classes_[0]))
    explanation_panel(exp, key="plkb_whatif", graph=False, title="Decisive features of the edited row")


def _shap_compare(run: Run, x: pd.DataFrame):
    from xcore.plkb.shap_compare import compare_with_shap, shap_for

    p = run.extras["plkb"]
    return compare_with_shap(p.clf, shap_for(p.clf, p.X_train, p.y_train), x, k=run.settings.k)


def show_experiments(run: Run) -> None:
    p = run.extras["plkb"]
    if st.button("Compare with CART, random forest, SVM and MLP", key="plkb_baselines"):
        derived(run, "baselines", (), lambda: compare_baselines(p.clf, p.X_train, p.y_train, p.X_test, p.y_test),
                "The baseline comparison")
    frame = run.extras.get("derived", {}).get(("baselines", ()))
    if frame is not None:
        st.dataframe(frame, hide_index=True, width="stretch", key="plkb_baselines_table")

    st.subheader("Agreement with SHAP (paper Fig. 3)")
    st.caption("For k = 1..5: the share of test rows whose k decisive features share at least j features with "
               "SHAP's top k on gradient boosting, and how often each feature is chosen by each method.")
    rows = st.number_input("Test rows to compare", 10, 500, 60, step=10, key="plkb_agree_rows")
    if st.button("Compare with SHAP", key="plkb_agree_btn"):
        report = progress_bar("explaining rows by both methods")
        derived(run, "agreement", (int(rows),), lambda: shap_agreement_by_k(
            p.clf, p.X_train, p.y_train, p.X_test.head(int(rows)), progress=report), "The SHAP comparison")
    found = run.extras.get("derived", {}).get(("agreement", (int(rows),)))
    if found is not None:
        agreement, frequency = found
        left, right = st.columns(2)
        left.plotly_chart(shap_agreement_figure(agreement), width="stretch", key="plkb_agree_fig",
                          config=PLOT_CONFIG)
        k = right.slider("k for the feature counts", 1, int(frequency["k"].max()), 2, key="plkb_agree_k")
        right.plotly_chart(feature_choice_figure(frequency, k), width="stretch", key="plkb_choice_fig",
                           config=PLOT_CONFIG)

    st.subheader("Knowledge and pollution (paper Fig. 4)")
    st.caption("F1 on the test rows as the clauses written under *Domain knowledge* are added one by one, and as "
               "random clauses (probability uniform in [0, 1]) pollute the KB; the KB is restored afterwards.")
    if st.button("Draw the curves", key="plkb_curves_btn"):
        report = progress_bar("adding clauses")

        def curves() -> dict:
            out = {"random clauses": random_pollution_curve(p.clf, p.X_test, p.y_test, seed=run.settings.seed,
                                                            progress=report)}
            if run.settings.knowledge.strip():
                n = len([x for x in run.settings.knowledge.splitlines() if x.strip()])
                out["domain knowledge"] = knowledge_curve(p.clf, p.X_test, p.y_test, clauses=run.settings.knowledge,
                                                          counts=tuple(range(n + 1)))
            return out

        derived(run, "curves", (), curves, "The knowledge and pollution curves")
    found = run.extras.get("derived", {}).get(("curves", ()))
    if found is not None:
        st.plotly_chart(kb_curve_figure(found), width="stretch", key="plkb_curves_fig", config=PLOT_CONFIG)
        st.dataframe(pd.concat(found, names=["curve"]).reset_index(level=0), hide_index=True, width="stretch",
                     key="plkb_curves_table")


@st.cache_data(show_spinner="Checking which knowledge base suits this table…", max_entries=16)
def suggested_kb(table: pd.DataFrame, label: str, drop: tuple[str, ...]) -> tuple[str, str]:
    """The KB that fits this table better on a quick balanced split (xcore's `suggest_kb`)."""
    return suggest_kb(table.drop(columns=list(drop), errors="ignore"), label)


st.title("Probabilistic-logic classifier")
st.caption("Fan, Liu & Henderson, *Explainable AI for Classification using Probabilistic Logic Inference*: "
           "a KB of probabilistic clauses, inference by linear programming, the k most decisive features.")
generator()
ds = applicability_gate(METHOD, get_dataset())
st.caption(f"Data: **{ds.name}** ({len(ds.tabular):,} rows)")
settings = settings_form(ds)
run = run_button(METHOD, ds, settings, label="Train", key="plkb_train")
stale_notice(METHOD, ds, settings, run)

if run is not None:
    metrics_row(run.metrics, ["accuracy", "f1", "precision", "recall", "roc_auc"])
    tabs = st.tabs(["Predictions & explanations", "What-if", "Global view", "Model quality", "Knowledge base",
                    "Experiments", "Downloads", "Verify"])
    with tabs[0]:
        target = predictions_browser(run.predictions, key="plkb_pred")
        if target is not None:
            show_row(run, target)
    with tabs[1]:
        what_if(run, target)
    with tabs[2]:
        global_panel(run, key="plkb_global")
    with tabs[3]:
        quality_panel(run, key="plkb_quality", positive=str(run.model.classifier_.classes_[1]))
    with tabs[4]:
        kb = run.model.classifier_.kb_summary()
        st.caption(f"{kb.get('clauses', len(run.summary.items)):,} clauses; positive class "
                   f"{run.model.classifier_.positive_class_!r}.")
        st.dataframe(run.model.classifier_.kb_.to_frame(), hide_index=True, width="stretch", height=400)
        if run.summary is not None and run.summary.items:
            st.plotly_chart(ranked_bar_figure(run.summary, k=15, title="Clauses by probability"), width="stretch")
    with tabs[5]:
        show_experiments(run)
    with tabs[6]:
        run_downloads(run, key="plkb_dl")
        st.download_button("Knowledge base (text)", run.model.classifier_.kb_text(), "plkb_kb.txt", key="plkb_dl_kb",
                           on_click="ignore")
    with tabs[-1]:
        verify_panel(run, ds, key="plkb_verify")
