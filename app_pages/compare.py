"""Compare runs: the explainers of runs on the same data side by side (top-k overlap, rank correlation,
where they disagree most, each explainer's top items per target)."""

from __future__ import annotations

import streamlit as st

from ui.components import session_runs as kept_runs
from ui.components import show_error
from xcore.compare import compare_runs, disagreements, pair_summary, top_items_table
from xcore.errors import XcoreError
from xcore.methods import Run
from xcore.methods.session_runs import run_label
from xcore.report import compare_html
from xcore.viz.agreement import agreement_figures


def session_runs() -> dict[str, Run]:
    """This session's runs from the method pages, labelled by method, data and settings; the store's bound
    and the runs it dropped are said above the list."""
    runs = kept_runs()
    st.caption(runs.limit_text())
    notice = runs.dropped_notice()
    if notice:
        st.warning(notice, icon=":material/delete_sweep:")
    return {run_label(k, run): run for k, run in runs.items()}


def uploaded_runs() -> dict[str, Run]:
    """Run bundles uploaded here (run.json from a page download or `xcore run`); bad files are named."""
    files = st.file_uploader("Run bundles (run.json from a page's downloads or from `xcore run`)", type=["json"],
                             accept_multiple_files=True, key="compare_upload")
    out: dict[str, Run] = {}
    for f in files or []:
        try:
            out[f"{f.name} (uploaded)"] = Run.from_bundle(f.getvalue())
        except XcoreError as e:
            st.error(f"{f.name}: {e}")
    return out


def short_names(labels: list[str]) -> list[str]:
    """Short run names for explainer labels (the method and settings key, or the file name); run<i> if they clash."""
    names = [label.split(" (")[0].replace(".json", "") if label.endswith("(uploaded)")
             else f"{label.split(' on ')[0]} {label.rsplit('settings ', 1)[-1].rstrip(')')}" for label in labels]
    return names if len(set(names)) == len(names) else [f"run{i + 1}" for i in range(len(labels))]


st.title("Compare runs")
st.caption("Runs on the same data — any methods, or one method with two settings — side by side. Items are "
           "matched by their canonical text; agreement is the top-k overlap and Spearman's rank correlation "
           "over the items both explainers rank.")
available = {**session_runs(), **uploaded_runs()}
if not available:
    st.info("No runs yet: run a method on its page (its runs appear here), or upload run bundles above.")
    st.stop()
chosen = st.multiselect("Runs to compare", list(available), default=list(available)[-2:], key="compare_runs")
k = st.slider("k (top items compared)", 1, 20, 5, key="compare_k")
if not chosen:
    st.info("Choose at least one run (with two explainers) or two runs.")
    st.stop()
try:
    columns, agreement = compare_runs([available[c] for c in chosen], k=k, names=short_names(chosen))
except XcoreError as e:
    show_error(e, "The comparison")
    st.stop()

pairs = pair_summary(agreement)
worst = disagreements(agreement)
st.subheader("Agreement per pair of explainers")
st.dataframe(pairs.round(3), hide_index=True, width="stretch", key="compare_pairs")
figs = agreement_figures(agreement)
if figs:
    cols = st.columns(len(figs))
    for i, fig in enumerate(figs):
        cols[i].plotly_chart(fig, width="stretch", key=f"compare_fig_{i}")
st.subheader("Where they disagree most")
st.caption(f"{len(worst):,} targets explained by at least two explainers, least agreement first.")
st.dataframe(worst.round(3), hide_index=True, width="stretch", height=260, key="compare_worst")
if not worst.empty:
    target = st.selectbox("Target", list(worst["target"]), key="compare_target")
    st.markdown(f"**Top {k} items for {target}**")
    st.dataframe(top_items_table(columns, target, k=k), hide_index=True, width="stretch", key="compare_items")


def _compare_html() -> str:
    return compare_html(columns, agreement, k=k)


c = st.columns(2)
c[0].download_button("Comparison (HTML)", _compare_html, "xcore_compare.html", key="compare_dl_html",
                     mime="text/html", on_click="ignore")
c[1].download_button("Agreement per target (CSV)", agreement.to_csv(index=False), "xcore_agreement.csv",
                     key="compare_dl_csv", mime="text/csv", on_click="ignore")
