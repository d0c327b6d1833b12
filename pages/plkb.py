"""Probabilistic-logic classifier page: a KB of probabilistic clauses, LP inference, decisive features."""

from __future__ import annotations

import json

import streamlit as st

from pages.common import get_dataset, guarded
from xcore.plkb.experiments import compare_baselines, pollution_curve
from xcore.plkb.workflow import (GENERATED, PLKBRun, PLKBSettings, generated_table, identifier_columns,
                                 run_plkb, table_of)
from xcore.viz import ranked_bar_figure, tradeoff_figure

RUN_KEY = "plkb_run"


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_run(data_key: str, settings: PLKBSettings, _table, _progress=None) -> PLKBRun:
    """One training per (data, settings)."""
    return run_plkb(_table, settings, progress=_progress)


@st.cache_data(show_spinner=False, max_entries=8)
def cached_generated(kind: str, length: int, alphabet: int, n: int, seed: int):
    return generated_table(kind, length, alphabet, n, seed)


def choose_table():
    ds = get_dataset()
    options = (["Current dataset"] if ds is not None and ds.tabular is not None else []) + list(GENERATED)
    source = st.radio("Data", options, horizontal=True, key="plkb_source")
    if source == "Current dataset":
        table, label = table_of(ds)
        return table, label, f"dataset:{ds.name}:{len(table)}"
    c = st.columns(4)
    n = c[0].number_input("Rows", 100, 5000, 1000, step=100, key="plkb_gen_n")
    seed = c[3].number_input("Seed", 0, 10_000, 0, key="plkb_gen_seed")
    length = alphabet = 0
    if source == GENERATED[0]:
        length = c[1].selectbox("Length L", [10, 12], key="plkb_gen_len")
        alphabet = c[2].selectbox("Alphabet size A", [4, 8], key="plkb_gen_alpha")
    table, label = cached_generated(source, int(length) or 10, int(alphabet) or 4, int(n), int(seed))
    return table, label, f"{source}:{length}:{alphabet}:{n}:{seed}"


def settings_form(table, label: str) -> PLKBSettings:
    c = st.columns(4)
    label = c[0].selectbox("Label column", list(table.columns), index=list(table.columns).index(label),
                           key="plkb_label")
    classes = sorted(table[label].dropna().astype(str).unique())
    positive = c[1].selectbox("Positive class (one-vs-rest)", ["(default)", *classes], key="plkb_pos")
    kb = c[2].radio("Knowledge base", ["tree", "direct"], horizontal=True, key="plkb_kb")
    bins = c[3].slider("Bins for numeric columns", 2, 10, 4, key="plkb_bins")
    c = st.columns(4)
    max_k = c[0].number_input("Direct: max k", 1, 4, 2, key="plkb_maxk", disabled=kb != "direct")
    support = c[1].number_input("Direct: min support", 1, 1000, 1, key="plkb_support", disabled=kb != "direct")
    trees = c[2].number_input("Tree: trees (forest)", 1, 25, 1, key="plkb_trees", disabled=kb != "tree")
    all_nodes = c[3].checkbox("Tree: clause per node", key="plkb_allnodes", disabled=kb != "tree")
    ids = identifier_columns(table, label)
    drop = st.multiselect("Leave out these columns", [c for c in table.columns if c != label], default=ids,
                          key="plkb_drop", help="Identifier-like columns are left out by default.")
    knowledge = st.text_area("Domain knowledge (one clause per line, e.g. `0.9: POS | ~Sex_female`)", "",
                             key="plkb_knowledge", height=80)
    return PLKBSettings(label=label, positive_class=None if positive == "(default)" else positive, kb=kb,
                        max_k=int(max_k), min_support=int(support), all_nodes=bool(all_nodes),
                        n_trees=int(trees), n_bins=int(bins), knowledge=knowledge, drop=tuple(drop))


def show_overview(run: PLKBRun) -> None:
    m = run.metrics()
    kb = run.clf.kb_summary()
    c = st.columns(5)
    c[0].metric("Accuracy", f"{m['accuracy']:.3f}")
    c[1].metric("F1", f"{m['f1']:.3f}")
    c[2].metric("KB clauses", f"{kb.get('clauses', len(run.clf.kb_)):,}")
    lp = kb["full_lp"]
    c[3].metric("Full-KB LP", f"{lp.get('rows', 0):,} rows",
                help=f"{lp.get('cols', 0):,} columns, {lp.get('nonzeros', 0):,} non-zeros")
    c[4].metric("Positive class", str(run.clf.positive_class_))


def show_predictions(run: PLKBRun) -> int:
    frame = run.predictions.rename(columns={"lo": "omega_lo", "hi": "omega_hi", "mid": "omega_mid"}).round(4)
    event = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="plkb_pred_table", height=300)
    rows = event.selection.rows if event is not None else []
    return int(rows[0]) if rows else 0


def show_explanation(run: PLKBRun, index: int) -> None:
    x = run.row(index)
    k = st.slider("k (features in the explanation)", 1, max(1, min(6, x.shape[1])), 2, key="plkb_k")
    exp = guarded(run.clf.explain, x, k)
    if exp is None:
        return
    st.markdown(f"**Row {run.predictions['row'].iloc[index]}** — {exp.text()}")
    left, right = st.columns(2)
    with left:
        st.caption("Candidate sub-queries (best first)")
        st.dataframe(exp.candidates, hide_index=True, width="stretch", height=260)
    with right:
        st.caption("Clauses in this row's LP and their values on the optimal face")
        st.dataframe(run.clf.driving_clauses(x), hide_index=True, width="stretch", height=260)
    if st.button("Shapley values (exact up to 12 features)", key="plkb_shap_btn"):
        sh = guarded(run.clf.shapley, x)
        if sh is not None:
            st.plotly_chart(ranked_bar_figure(sh.to_explanation(target=f"row {index}"), k=12), width="stretch")
            compare = guarded(_shap_compare, run, x, k)
            if compare is not None:
                frame, summary = compare
                st.caption(f"Top-{k} agreement with SHAP on gradient boosting: {summary['agreement']:.2f}")
                st.dataframe(frame, hide_index=True, width="stretch")
    st.download_button("Explanation (JSON)", json.dumps(exp.to_dict(), default=str, indent=1),
                       f"plkb_explanation_row{index}.json", key="plkb_dl_exp")


def _shap_compare(run: PLKBRun, x, k: int):
    from xcore.plkb.shap_compare import compare_with_shap, shap_for

    return compare_with_shap(run.clf, shap_for(run.clf, run.X_train, run.y_train), x, k=k)


def show_experiments(run: PLKBRun) -> None:
    if st.button("Compare with CART, random forest, SVM and MLP", key="plkb_baselines"):
        frame = guarded(compare_baselines, run.clf, run.X_train, run.y_train, run.X_test, run.y_test)
        if frame is not None:
            st.dataframe(frame, hide_index=True, width="stretch")
    if st.button("Pollution experiment (add random clauses)", key="plkb_pollution"):
        bar = st.progress(0.0)
        curve = guarded(pollution_curve, run.clf, run.X_test, run.y_test,
                        progress=lambda f, m: bar.progress(min(max(f, 0.0), 1.0), text=m))
        if curve is not None:
            x = "fraction" if "fraction" in curve.columns else curve.columns[0]
            y = "accuracy" if "accuracy" in curve.columns else curve.columns[-1]
            st.plotly_chart(tradeoff_figure(curve, x=x, y=y, title="Accuracy as random clauses are added"),
                            width="stretch")
            st.dataframe(curve, hide_index=True, width="stretch")


st.title("Probabilistic-logic classifier")
st.caption("Fan, Liu & Henderson, *Explainable AI for Classification using Probabilistic Logic Inference*: "
           "a KB of probabilistic clauses, inference by linear programming, the k most decisive features.")
picked = guarded(choose_table)
if picked is not None:
    table, label, data_key = picked
    settings = settings_form(table, label)
    if st.button("Train", type="primary", key="plkb_train"):
        with st.status("Learning the knowledge base…", expanded=True) as status:
            bar = st.progress(0.0)
            run = guarded(cached_run, data_key, settings, table,
                          lambda f, m: bar.progress(min(max(f, 0.0), 1.0), text=m))
            if run is not None:
                st.session_state[RUN_KEY] = run
                status.update(label="Trained", state="complete", expanded=False)
            else:
                status.update(label="Training failed", state="error")

run: PLKBRun | None = st.session_state.get(RUN_KEY)
if run is not None:
    show_overview(run)
    tabs = st.tabs(["Predictions & explanations", "Knowledge base", "Experiments", "Downloads"])
    with tabs[0]:
        show_explanation(run, show_predictions(run))
    with tabs[1]:
        st.dataframe(run.clf.kb_.to_frame(), hide_index=True, width="stretch", height=400)
    with tabs[2]:
        show_experiments(run)
    with tabs[3]:
        st.download_button("Knowledge base (text)", run.clf.kb_text(), "plkb_kb.txt", key="plkb_dl_kb")
        st.download_button("Predictions (CSV)", run.predictions.to_csv(index=False), "plkb_predictions.csv",
                           key="plkb_dl_pred")
