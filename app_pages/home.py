"""Home page: pick a bundled sample or upload data, see its summary, edit predicate flags."""

from __future__ import annotations

import streamlit as st

from ui.common import cached_upload, dataset_source, get_dataset, guarded, set_dataset
from ui.state import keep
from xcore.data import RelationalDataset
from xcore.data.samples import list_samples, load_sample
from xcore.methods.surrogate import attach_user_model, attached_summary
from xcore.viz import predicate_graph_figure, value_histogram_figure

UPLOAD_TYPES = ["zip", "csv", "tsv", "txt", "pl", "b", "f", "n", "json", "yaml", "yml", "data", "psl"]


@st.cache_data(show_spinner="Loading sample…", max_entries=16)
def cached_sample(name: str) -> RelationalDataset:
    """Bundled samples are loaded once per server process."""
    return load_sample(name)


def choose_data() -> None:
    samples = list_samples()
    keep("data_source_kind", "Bundled sample")  # the choices stay when the user comes back from another page
    source = st.radio("Data source", ["Bundled sample", "Upload"], horizontal=True,
                      key="data_source_kind")
    keep("data_source_kind")
    if source == "Bundled sample":
        titles = {s.name: s.title for s in samples}
        keep("sample_name", samples[0].name)
        name = st.selectbox("Sample dataset", list(titles), format_func=titles.get,
                            key="sample_name")
        keep("sample_name")
        info = next(s for s in samples if s.name == name)
        st.caption(info.description)
        if info.citation:
            st.caption(f"Source: {info.citation}")
        if st.button("Load sample", type="primary", key="load_sample"):
            ds = guarded(cached_sample, name)
            if ds is not None:
                set_dataset(ds, f"sample: {info.title}")
                st.toast(f"Loaded {info.title}")
    else:
        st.caption("A PSL folder (zip with a manifest), a PSL project (zip with a PSL config .json, or a "
                   ".data file and its .psl rules: the rules come along as a starting model), long CSV of "
                   "facts, Prolog facts (.b/.f/.n, or a zip of them), triples TSV, or a tabular CSV with a "
                   "label column.")
        up = st.file_uploader("Upload a dataset", type=UPLOAD_TYPES, key="upload")
        if up is not None:
            data = up.getvalue()
            if st.session_state.get("_last_upload") != up.file_id:
                ds = guarded(cached_upload, up.name, data)
                if ds is not None:
                    st.session_state["_last_upload"] = up.file_id
                    set_dataset(ds, f"upload: {up.name}")
                    st.success(f"Loaded {up.name}")


def your_model(ds: RelationalDataset) -> None:
    """Explain your own model: attach its predictions (CSV) or, for a table, its ONNX file (issue 28)."""
    with st.expander("Explain your own model (its predictions, or an ONNX model of a table)",
                     expanded=ds.user_predictions is not None):
        said = attached_summary(ds)
        if said is not None:
            st.info(said)
            if st.button("Detach your model", key="detach_user_model"):
                set_dataset(st.session_state.pop("_dataset_before_user_model", ds), dataset_source())
                st.rerun()
            return
        st.caption("A CSV `target,prediction[,score]` (target: a ground atom such as `street(s3_t1)`, or a row id "
                   "such as `row 17`), or an `.onnx` model of this table. Pickles are never loaded.")
        up = st.file_uploader("Your model's predictions or ONNX model", key="user_model_upload")
        if up is not None and st.button("Attach", key="attach_user_model", type="primary"):
            swapped = guarded(attach_user_model, ds, up.name, up.getvalue())
            if swapped is not None:
                st.session_state["_dataset_before_user_model"] = ds
                set_dataset(swapped, dataset_source())
                st.rerun()


def show_summary(ds: RelationalDataset) -> None:
    summary = ds.summary()
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Predicates", len(summary))
    c2.metric("Observed atoms", f"{int(summary['observations'].sum()):,}")
    c3.metric("Target atoms", f"{int(summary['targets'].sum()):,}")
    c4.metric("Truth labels", f"{int(summary['truth'].sum()):,}")

    st.subheader("Predicates")
    st.caption("Tick **closed** for fully observed predicates and **explainable** for predicates "
               "a person can understand; every page uses these flags.")
    edited = st.data_editor(
        summary, hide_index=True, width="stretch", key="flags_editor",
        disabled=[c for c in summary.columns if c not in ("closed", "explainable")],
    )
    changed = edited[(edited["closed"] != summary["closed"])
                     | (edited["explainable"] != summary["explainable"])]
    if len(changed):
        for row in changed.itertuples():
            ds = ds.with_flags(row.predicate, closed=bool(row.closed),
                               explainable=bool(row.explainable))
        set_dataset(ds, dataset_source())

    structure, preview = st.tabs(["Relational structure", "Preview"])
    with structure:
        st.plotly_chart(predicate_graph_figure(ds.predicate_graph()), width="stretch")
    with preview:
        pred = st.selectbox("Predicate", [p.name for p in ds.predicates], key="preview_pred")
        left, right = st.columns([3, 2])
        left.dataframe(ds.preview(pred, 50), hide_index=True, width="stretch")
        part = right.radio("Values of", ["obs", "truth"], horizontal=True, key="hist_part")
        right.plotly_chart(value_histogram_figure(ds.value_histogram(pred, part)),
                           width="stretch")
        if ds.tabular is not None:
            st.caption(f"Tabular view (label column: {ds.label})")
            st.dataframe(ds.tabular.head(50), width="stretch")


st.title("xcore — relational explanation inspector")
st.write("Load relational data, train a model on a method page, and see **why** it predicted "
         "what it did: ranked ground rules, formulas, feature clauses and feature sets.")

if get_dataset() is None:  # start on the first bundled sample
    first = list_samples()[0]
    ds0 = guarded(cached_sample, first.name)
    if ds0 is not None:
        set_dataset(ds0, f"sample: {first.title}")

with st.container(border=True):
    choose_data()

current = get_dataset()
if current is not None:
    st.header(f"Dataset: {current.name}")
    st.caption(dataset_source())
    if current.description:
        st.write(current.description)
    if current.rules:
        with st.expander(f"Rules of the project ({len(current.rules)}): a starting model for ESMS"):
            st.code("\n".join(current.rules), language=None)
    your_model(current)
    show_summary(current)
