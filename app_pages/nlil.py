"""m-NLIL page: several lifted rules per label from graph-structured data, each with precision, recall,
support and the examples it covers; the rule drawn as a graph pattern and the subgraph that fires it.

A view: the form comes from `NLILSettings`, the layout from `ui.method_page`, every result from `xcore`."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.common import guarded, set_dataset
from ui.components import derived, explanation_panel
from ui.forms import FormLayout
from ui.forms import settings_form as form
from ui.method_page import Tab, method_page
from xcore.data import RelationalDataset
from xcore.data.generators.scenes import make_scenes, planted_rules
from xcore.methods import REGISTRY, Run
from xcore.nlil.explainers import RULES, RuleExplainer
from xcore.nlil.heads import candidate_heads, is_knowledge_graph, planned_heads
from xcore.nlil.rules import groundings
from xcore.nlil.settings import NLILSettings
from xcore.nlil.viz import pattern_figure
from xcore.viz.common import natural_sorted
from xcore.viz.nlil_figures import loss_curves_figure

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


def rules_mode(values) -> bool:
    return values["eval"] == "rules"


def heads_note(ds: RelationalDataset, values) -> str | None:
    """Which labels will be trained, and which the default leaves out (max_heads)."""
    if not rules_mode(values):
        rels = [p.name for p in ds.schema if p.arity == 2]
        return (f"Will train every relation and its inverse ({len(rels)} relations, {2 * len(rels)} query relations) "
                "and rank the held-out triples both ways: filtered MRR and Hits@1/3/10, ties counted half.")
    default, dropped = planned_heads(ds, NLILSettings())
    left = (f"By default the first {len(default)} of {len(default) + len(dropped)} labels are chosen (max_heads); "
            "left out: " + ", ".join(dropped) + ". Add them above to train them too. ") if dropped else ""
    return left + "Will train: " + (", ".join(values["heads"]) if values["heads"] else "nothing")


def form_layout(ds: RelationalDataset) -> FormLayout:
    """Where m-NLIL's settings go (the fields come from `NLILSettings`)."""
    unary = lambda v: all(ds.schema[h].arity == 1 for h in v["heads"] or ())  # noqa: E731
    return FormLayout(
        rows=(("eval",), ("heads",), ("path_length", "depth", "clusters", "lam", "init"),
              ("rank", "kg_epochs", "kg_queries"), ("statements", "width", "epochs", "rounds", "seed"), ("mode",)),
        widgets={"eval": "radio", "init": "radio", "mode": "radio", "path_length": "slider", "depth": "slider",
                 "clusters": "slider"},
        steps={"lam": 0.05, "epochs": 10, "kg_queries": 1000},
        choices={"eval": lambda d, v: ["link-prediction", "rules"] if is_knowledge_graph(d) else ["rules"],
                 "heads": lambda d, v: candidate_heads(d)},
        labels={"mode": {"truth": "the labels", "gcn": "a 2-layer GCN's predictions (compared with GNNExplainer)"}.get},
        # link prediction trains every binary relation: no heads chosen (a hidden rules-mode pick would narrow it)
        follow=lambda d, v: {"heads": planned_heads(d, NLILSettings())[0] if rules_mode(v) else []},
        follow_on=("eval",),
        show_if={**{f: rules_mode for f in ("heads", "depth", "clusters", "lam", "init", "statements", "width",
                                            "epochs", "rounds", "mode")},
                 **{f: lambda v: not rules_mode(v) for f in ("rank", "kg_epochs", "kg_queries")}},
        disable_if={"mode": lambda v: not unary(v)},
        notes={"eval": heads_note})


def settings_form(ds: RelationalDataset) -> NLILSettings | None:
    settings = form(REGISTRY[METHOD], ds, form_layout(ds))
    if settings is not None and settings.eval == "rules" and not settings.heads:
        st.info("Choose at least one target label.")
        return None
    if settings is not None and settings.mode == "gcn" and any(ds.schema[h].arity != 1 for h in settings.heads):
        return guarded(settings.replace, mode="truth")  # GCN mode: node classification (unary labels) only
    return settings


def show_link_prediction(run: Run) -> None:
    """Filtered MRR and Hits@k per relation (both directions), the learned rules with confidence, the loss."""
    st.caption(f"{int(run.metrics.get('queries', 0))} queries: every held-out triple as a tail and as a head query; "
               f"{run.model.ties_}.")
    st.dataframe(run.model.link_prediction_.round(3), hide_index=True, width="stretch", key="nlil_lp_table")
    st.markdown("**Rules per relation** (argmax of each rule's attentions, with the product of those attentions)")
    st.dataframe(run.model.path_rules_.round(4), hide_index=True, width="stretch", key="nlil_lp_rules")
    st.plotly_chart(loss_curves_figure({"loss": run.model.loss_curve_}, "-log share of the true object",
                                       mode="lines+markers"), width="stretch", key="nlil_lp_loss")
    st.caption(f"Training {run.timings.get('train', 0):.1f} s, fit {run.timings.get('fit', 0):.1f} s.")


def show_rules(run: Run) -> None:
    """Rules per label and cluster, collapse reports, the chosen rule's pattern and covered examples."""
    rules: pd.DataFrame = run.model.rules_
    if run.model.heads_dropped_:
        st.warning("Not trained (more candidate labels than max_heads): " + ", ".join(run.model.heads_dropped_))
    for h, notes in run.model.collapse_.items():
        for note in notes:
            st.warning(f"{h}: {note}")
    for h, note in run.model.split_.items():
        st.caption(f"{h}: test_* columns on a held-out split — {note}.")
    for h, flag in run.model.in_sample_.items():
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
    cmp = run.model.gcn_comparison_
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
    curves = {f"{h} · cluster {c}": curve for h, per in run.model.loss_curves_.items()
              for c, curve in enumerate(per)}
    st.plotly_chart(loss_curves_figure(curves, "binary cross-entropy", x_title="epoch (all rounds)"),
                    width="stretch", key="nlil_loss")
    rows = [{"head": h, **r} for h, hist in run.model.history_.items() for r in hist]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="nlil_history")
    st.caption(f"Training {run.timings.get('train', 0):.1f} s, whole fit {run.timings.get('fit', 0):.1f} s.")


def link_prediction(run: Run) -> bool:
    return hasattr(run.model, "link_prediction_")


def tabs_of(run: Run) -> list[Tab]:
    """m-NLIL's own tabs: link prediction's table and predictions, or the rules, training and GCN views."""
    if link_prediction(run):
        return [Tab("Link prediction", lambda ctx: show_link_prediction(ctx.run)),
                Tab("Predictions", lambda ctx: st.dataframe(ctx.run.predictions, hide_index=True, width="stretch",
                                                            key="nlil_lp_preds"))]
    return [Tab("Rules", lambda ctx: show_rules(ctx.run)), Tab("Training", lambda ctx: show_training(ctx.run)),
            Tab("GCN explainer", lambda ctx: show_gcn(ctx.run))]


method_page(
    REGISTRY[METHOD], tabs_of,
    title="m-NLIL: several rules per label",
    intro="m-NLIL (*Inducing Multiple Interpretable Rules from Graph-Structured Data*) on Neural Logic Inductive "
          "Learning (Yang & Song, ICLR 2020): differentiable rule learning with TensorLog operators, one network per "
          "cluster of examples, rules read from the attentions and checked by executing them on the facts.",
    form=settings_form, run_label="Train", button_key="nlil_train",
    explain=lambda ctx, target: show_target(ctx.run, target),
    metrics=lambda run: (["mrr", "hits@1", "hits@3", "hits@10"] if link_prediction(run)
                         else ["precision", "recall", "accuracy", "rules", "clusters_collapsed"]),
    data_tools=generator, data_caption=lambda ds: f"Data: **{ds.name}** — {len(ds.schema)} predicates",
    standard_views=lambda run: not link_prediction(run))
