"""m-NLIL page: several lifted rules per label from graph-structured data, each with precision, recall,
support and the examples it covers; the rule drawn as a graph pattern and the subgraph that fires it."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from xcore.viz.common import natural_sorted

from pages.common import get_dataset, guarded, set_dataset
from pages.components import (verify_panel, 
    applicability_gate,
    global_panel,
    quality_panel,
    derived,
    explanation_panel,
    metrics_row,
    predictions_browser,
    run_button,
    run_downloads,
    stale_notice,
)
from xcore.data import RelationalDataset
from xcore.data.generators.scenes import make_scenes, planted_rules
from xcore.methods import Run
from xcore.nlil.method import RULES, NLILSettings, RuleExplainer, candidate_heads, is_knowledge_graph, planned_heads
from xcore.nlil.rules import groundings
from xcore.nlil.viz import pattern_figure
from xcore.viz.common import styled

METHOD = "nlil"


def generator() -> None:
    """Generate GQA-like scene graphs with planted rules and make them the current dataset."""
    with st.expander("Generate scene graphs (GQA object and relation frequencies, planted rules per label)"):
        c = st.columns(4)
        n = c[0].number_input("Scenes", 10, 500, 60, step=10, key="nlil_gen_n")
        k = c[1].number_input("Objects per scene", 3, 30, 8, key="nlil_gen_k")
        noise = c[2].slider("Label noise", 0.0, 0.3, 0.05, 0.01, key="nlil_gen_noise")
        seed = c[3].number_input("Seed", 0, 10_000, 0, key="nlil_gen_seed")
        st.caption("Planted rules: " + "; ".join(r for rs in planted_rules().values() for r in rs))
        if st.button("Generate and load", key="nlil_generate"):
            ds = guarded(make_scenes, n_scenes=int(n), objects_per_scene=int(k), noise=float(noise), seed=int(seed))
            if ds is not None:
                set_dataset(ds, f"generated: {ds.name}")
                st.rerun()


def link_prediction_form(ds: RelationalDataset) -> NLILSettings | None:
    """Settings of a link-prediction run: path length, rules per relation, epochs; every relation is trained."""
    c = st.columns(5)
    T = c[0].slider("Path length T", 1, 4, 2, key="nlil_kg_T")
    rank = c[1].number_input("Rules per relation", 1, 16, 3, key="nlil_kg_rank")
    epochs = c[2].number_input("Epochs", 1, 200, 8, key="nlil_kg_epochs")
    per = c[3].number_input("Triples per epoch", 100, 1_000_000, 8000, step=1000, key="nlil_kg_queries")
    seed = c[4].number_input("Seed", 0, 10_000, 0, key="nlil_kg_seed")
    rels = [p.name for p in ds.schema if p.arity == 2]
    st.caption(f"Will train every relation and its inverse ({len(rels)} relations, {2 * len(rels)} query "
               "relations) and rank the held-out triples both ways: filtered MRR and Hits@1/3/10, ties counted half.")
    return guarded(NLILSettings, eval="link-prediction", path_length=int(T), rank=int(rank), kg_epochs=int(epochs),
                   kg_queries=int(per), seed=int(seed))


def settings_form(ds: RelationalDataset) -> NLILSettings | None:
    kg = is_knowledge_graph(ds)
    mode = st.radio("Evaluation", ["link-prediction", "rules"] if kg else ["rules"], horizontal=True, key="nlil_eval",
                    help="link-prediction: Neural-LP-style path rules for every relation, ranked as in the "
                         "literature; rules: m-NLIL's several rules per label with precision and recall.")
    if mode == "link-prediction":
        return link_prediction_form(ds)
    heads = candidate_heads(ds)
    if any(h not in heads for h in st.session_state.get("nlil_heads", [])):
        st.session_state.pop("nlil_heads", None)  # a choice made on other data
    default, dropped = planned_heads(ds, NLILSettings())
    chosen = st.multiselect("Target labels (head predicates)", heads, default=default, key="nlil_heads")
    if dropped:
        st.caption(f"By default the first {len(default)} of {len(heads)} labels are chosen (max_heads); left out: "
                   + ", ".join(dropped) + ". Add them above to train them too.")
    st.caption("Will train: " + (", ".join(chosen) if chosen else "nothing"))
    c = st.columns(5)
    T = c[0].slider("Path length T", 1, 4, 2, key="nlil_T")
    depth = c[1].slider("Formula depth", 1, 3, 2, key="nlil_depth")
    clusters = c[2].slider("Clusters (rules per label)", 1, 6, 3, key="nlil_k")
    lam = c[3].number_input("λ (distance to centre)", 0.0, 100.0, 0.1, step=0.05, key="nlil_lam")
    init = c[4].radio("Initialise by", ["kmeans", "frequency"], key="nlil_init",
                      help="k-means on node embeddings, or by the most frequent neighbour class (the paper's GQA choice)")
    c = st.columns(5)
    statements = c[0].number_input("Primitive statements", 1, 32, 6, key="nlil_S")
    width = c[1].number_input("Formulas per level", 1, 16, 4, key="nlil_W")
    epochs = c[2].number_input("Epochs per round", 10, 2000, 100, step=10, key="nlil_epochs")
    rounds = c[3].number_input("Rounds (Algorithm 1)", 1, 20, 4, key="nlil_rounds")
    seed = c[4].number_input("Seed", 0, 10_000, 0, key="nlil_seed")
    unary = all(ds.schema[h].arity == 1 for h in chosen)
    gcn = st.toggle("GCN mode: train a 2-layer GCN, learn rules for its predictions, compare with GNNExplainer",
                    key="nlil_gcn", disabled=not unary,
                    help="Node classification only (unary labels).")
    if not chosen:
        st.info("Choose at least one target label.")
        return None
    return guarded(NLILSettings, heads=tuple(chosen), path_length=int(T), depth=int(depth), clusters=int(clusters),
                   lam=float(lam), init=init, statements=int(statements), width=int(width), epochs=int(epochs),
                   rounds=int(rounds), seed=int(seed), mode="gcn" if gcn and unary else "truth")


def show_link_prediction(run: Run) -> None:
    """Filtered MRR and Hits@k per relation (both directions), the learned rules with confidence, the loss."""
    st.caption(f"{int(run.metrics.get('queries', 0))} queries: every held-out triple as a tail and as a head query; "
               f"{run.extras['ties']}.")
    st.dataframe(run.extras["link_prediction"].round(3), hide_index=True, width="stretch", key="nlil_lp_table")
    st.markdown("**Rules per relation** (argmax of each rule's attentions, with the product of those attentions)")
    st.dataframe(run.extras["path_rules"].round(4), hide_index=True, width="stretch", key="nlil_lp_rules")
    fig = go.Figure()
    fig.add_scatter(y=run.extras["loss_curve"], mode="lines+markers", name="loss")
    fig.update_layout(xaxis_title="epoch", yaxis_title="-log share of the true object")
    st.plotly_chart(styled(fig, "Training loss"), width="stretch", key="nlil_lp_loss")
    st.caption(f"Training {run.timings.get('train', 0):.1f} s, fit {run.timings.get('fit', 0):.1f} s.")


def show_rules(run: Run) -> None:
    """Rules per label and cluster, collapse reports, the chosen rule's pattern and covered examples."""
    rules: pd.DataFrame = run.extras["rules"]
    if run.extras.get("heads_dropped"):
        st.warning("Not trained (more candidate labels than max_heads): " + ", ".join(run.extras["heads_dropped"]))
    for h, notes in run.extras["collapse"].items():
        for note in notes:
            st.warning(f"{h}: {note}")
    for h, note in run.extras.get("split", {}).items():
        st.caption(f"{h}: test_* columns on a held-out split — {note}.")
    for h, flag in run.extras["in_sample"].items():
        if flag:
            st.caption(f"{h} has no held-out targets with known truth: its test_* columns are measured on the "
                       "training examples (in-sample), not on held-out data.")
    st.dataframe(rules.round(3), hide_index=True, width="stretch", key="nlil_rule_table")
    st.caption("Precision, recall and support: the rule executed with DuckDB joins on the training queries; "
               "test_*: on the held-out targets. members: training positives assigned to the cluster.")
    options = [f"{r.head} · cluster {r.cluster}" for r in rules.itertuples() if r.cluster != "union"]
    pick = st.selectbox("Rule", options, key="nlil_rule_pick")
    if pick is None:
        return
    head, cluster = pick.split(" · cluster ")
    rule = run.model.labels_[head].rules[int(cluster)]
    left, right = st.columns([3, 2])
    left.plotly_chart(pattern_figure(rule.atoms(), highlight="X", title=rule.text), width="stretch",
                      key="nlil_pattern")
    covered = run.model.covered(head, int(cluster))
    right.markdown(f"**Examples in this cluster** ({len(covered)})")
    right.dataframe(pd.DataFrame({"example": covered}), hide_index=True, height=300, key="nlil_covered")


def show_target(run: Run, target: str) -> None:
    """The selected prediction: its label's rules (which fire), and the subgraph that fires the first."""
    exps = run.explanations[RULES]
    if target in exps:
        exp = exps[target]
    else:
        found = derived(run, "rules", (target,), lambda: RuleExplainer().explain(run.model, targets=[target]),
                        "Explaining the target")
        if found is None:
            return
        exp = found[target]
    explanation_panel(exp, key="nlil_exp", graph=False, title="Rules of this label")
    firing = [it for it in exp.items if it.extras.get("fires")]
    if not firing:
        st.info("No cluster rule fires for this target.")
        return
    head = str(run.predictions.set_index("target").loc[target, "head"])
    lr = run.model.labels_[head]
    if lr.arity != 1:
        st.caption("The matching subgraph is drawn for unary labels (node classification) only.")
        return
    rule = lr.rules[int(firing[0].extras["cluster"])]
    entity = target[len(head) + 1:-1]
    ground = derived(run, "ground", (target,), lambda: groundings(rule, run.model.kbs_[head].facts(), entity),
                     "Finding the matching subgraph")
    if ground:
        atoms = [a for g in ground for a in g]
        st.plotly_chart(pattern_figure(atoms, highlight=entity, title=f"Why {target}: {rule.text}"),
                        width="stretch", key="nlil_ground")
        st.caption("Matching facts: " + "; ".join(", ".join(g) for g in ground))


def show_gcn(run: Run) -> None:
    """The GCN explained: rules' agreement with it, and rules against GNNExplainer on the same nodes."""
    cmp = run.extras.get("gcn_comparison")
    if cmp is None:
        st.info("Switch on GCN mode above and train to explain a GCN with rules and compare with GNNExplainer.")
        return
    st.caption(f"GCN accuracy on the held-out targets: {run.metrics.get('gcn_accuracy', float('nan')):.3f}. "
               "Rules were learned from the GCN's predictions; fidelity+ (prediction flips when the explanation's "
               "edges are removed, higher is better), fidelity- (flips when only they are kept, lower is better), "
               "characterisation (their harmonic mean). GNNExplainer keeps as many top edges as the rule's subgraph.")
    st.dataframe(cmp.round(3), hide_index=True, width="stretch", key="nlil_gcn_cmp")
    target = st.selectbox("Node", natural_sorted(run.explanations["nlil:gnnexplainer"].targets),
                          key="nlil_gcn_node")
    if target is not None:
        left, right = st.columns(2)
        with left:
            explanation_panel(run.explanations["nlil:gcn-rules"][target], key="nlil_gcn_rules", graph=False,
                              title="m-NLIL rules (fidelity to the GCN)")
        with right:
            explanation_panel(run.explanations["nlil:gnnexplainer"][target], key="nlil_gnnexp", graph=False,
                              title="GNNExplainer edges")


def show_training(run: Run) -> None:
    """Loss per epoch of every cluster network, and Algorithm 1's rounds."""
    fig = go.Figure()
    for h, curves in run.extras["loss_curves"].items():
        for c, curve in enumerate(curves):
            fig.add_scatter(y=curve, mode="lines", name=f"{h} · cluster {c}")
    fig.update_layout(xaxis_title="epoch (all rounds)", yaxis_title="binary cross-entropy")
    st.plotly_chart(styled(fig, "Training loss"), width="stretch", key="nlil_loss")
    rows = [{"head": h, **r} for h, hist in run.extras["history"].items() for r in hist]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="nlil_history")
    st.caption(f"Training {run.timings.get('train', 0):.1f} s, whole fit {run.timings.get('fit', 0):.1f} s.")


st.title("m-NLIL: several rules per label")
st.caption("m-NLIL (*Inducing Multiple Interpretable Rules from Graph-Structured Data*) on Neural Logic Inductive "
           "Learning (Yang & Song, ICLR 2020): differentiable rule learning with TensorLog operators, one network "
           "per cluster of examples, rules read from the attentions and checked by executing them on the facts.")
generator()
ds = applicability_gate(METHOD, get_dataset())
st.caption(f"Data: **{ds.name}** — {len(ds.schema)} predicates")
settings = settings_form(ds)
run = run_button(METHOD, ds, settings, label="Train", key="nlil_train")
stale_notice(METHOD, ds, settings, run)

if run is not None and run.extras.get("eval") == "link-prediction":
    metrics_row(run.metrics, ["mrr", "hits@1", "hits@3", "hits@10"])
    tabs = st.tabs(["Link prediction", "Predictions", "Downloads"])
    with tabs[0]:
        show_link_prediction(run)
    with tabs[1]:
        st.dataframe(run.predictions, hide_index=True, width="stretch", key="nlil_lp_preds")
    with tabs[2]:
        run_downloads(run, key="nlil_dl")
elif run is not None:
    metrics_row(run.metrics, ["precision", "recall", "accuracy", "rules", "clusters_collapsed"])
    tabs = st.tabs(["Rules", "Predictions & explanations", "Global view", "Model quality", "Training",
                    "GCN explainer", "Downloads", "Verify"])
    with tabs[0]:
        show_rules(run)
    with tabs[1]:
        target = predictions_browser(run.predictions, key="nlil_pred")
        if target is not None:
            show_target(run, target)
    with tabs[2]:
        global_panel(run, key="nlil_global")
    with tabs[3]:
        quality_panel(run, key="nlil_quality")
    with tabs[4]:
        show_training(run)
    with tabs[5]:
        show_gcn(run)
    with tabs[6]:
        run_downloads(run, key="nlil_dl")
    with tabs[-1]:
        verify_panel(run, ds, key="nlil_verify")
