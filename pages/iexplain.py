"""Markov-logic page: ground an MLN, run Gibbs (with R-hat) or exact inference, explain each query
by the importance of its ground formulas (M-Explain, Proposition 1 of the I-Explain paper)."""

from __future__ import annotations

import streamlit as st

from pages.common import guarded, require_dataset
from xcore.mln.model import MLNModel
from xcore.mln.synthetic import FRIENDS_SMOKERS_RULES
from xcore.psl.model import dataset_fingerprint
from xcore.viz import explanation_graph_figure, ranked_bar_figure

MODEL_KEY = "mln_model"


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_model(fingerprint: str, rules: str, method: str, options: tuple, _ds) -> MLNModel:
    """Ground and infer once per (data, rules, method, options)."""
    return MLNModel(rules).ground(_ds).infer(method, **dict(options))


def inference_options(method: str) -> tuple:
    if method == "exact":
        return ()
    c = st.columns(4)
    samples = c[0].number_input("Samples per chain", 100, 20_000, 2000, step=100, key="mln_samples")
    burn = c[1].number_input("Burn-in sweeps", 0, 5_000, 200, step=50, key="mln_burn")
    chains = c[2].number_input("Chains", 2, 64, 4, key="mln_chains")
    seed = c[3].number_input("Seed", 0, 10_000, 0, key="mln_seed")
    return (("n_samples", int(samples)), ("burn_in", int(burn)), ("n_chains", int(chains)), ("seed", int(seed)))


def show_results(model: MLNModel) -> None:
    frame = model.marginals()
    res = model.result_
    if model.method_ == "gibbs":
        d = res.diagnostics()
        c = st.columns(4)
        c[0].metric("Max R-hat", f"{d['max_rhat']:.3f}")
        c[1].metric("Atoms with R-hat > 1.1", d["atoms_above_threshold"])
        c[2].metric("Largest MC error", f"{d['max_se']:.4f}")
        c[3].metric("Atom updates / s", f"{d['updates_per_second'] / 1e6:.1f} M")
        if not d["converged"]:
            st.warning("Some chains disagree (R-hat > 1.1): draw more samples or a longer burn-in.")
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


st.title("Markov logic — formula importance")
st.caption("Al Farabi, Sarkhel, Dey & Venugopal, *Interpretable Explanations for Probabilistic Inference in "
           "Markov Logic* (2021): each query is explained by its ground formulas ranked by importance "
           "(M-Explain on the full network); Gibbs sampling over colour classes, or exact enumeration for "
           "small networks.")
ds = require_dataset()
default_rules = FRIENDS_SMOKERS_RULES if {"smokes", "cancer", "friends"} <= set(ds.schema.names) else ""
rules = st.text_area("Weighted first-order clauses (Alchemy syntax, e.g. `1.5 smokes(x) => cancer(x)`)",
                     default_rules, height=130, key="mln_rules")
method = st.radio("Inference", ["exact", "gibbs"], horizontal=True, key="mln_method",
                  help="Exact enumeration handles up to 20 query atoms.")
options = inference_options(method)
if st.button("Run inference", type="primary", key="mln_run"):
    with st.spinner("Grounding and inferring…"):
        model = guarded(cached_model, dataset_fingerprint(ds), rules, method, options, ds)
    if model is not None:
        st.session_state[MODEL_KEY] = model

model: MLNModel | None = st.session_state.get(MODEL_KEY)
if model is not None:
    show_results(model)
