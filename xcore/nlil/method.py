"""m-NLIL as a registered method: settings, estimator (one m-NLIL per head predicate), the lifted-rule
explainer, and its `Run`."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.methods.base import (
    Estimator,
    Explainer,
    MethodSpec,
    Run,
    Settings,
    prediction_frame,
)
from xcore.methods.driver import explain, fitted_for
from xcore.nlil.graph import KB, Queries, kb_from_dataset, queries
from xcore.nlil.mnlil import Config, LabelRules, fit_label
from xcore.nlil.model import one_thread, torch_device
from xcore.nlil.rules import quality
from xcore.runtime import Progress, scaled

RULES = "nlil:rules"

GCN_RULES = "nlil:gcn-rules"
GNNEXPLAINER = "nlil:gnnexplainer"

GCN_RULE_SCORE = ScoreSpec(
    label="fidelity to the GCN",
    measures="the share of held-out nodes on which the lifted rule (executed with DuckDB) agrees with the GCN's "
             "prediction; the rules were learned from the GCN's predictions, not from the truth.",
    signed=False, unit="fraction", directed=False)

EDGE_SCORE = ScoreSpec(
    label="GNNExplainer edge mask",
    measures="the importance GNNExplainer (torch_geometric.explain) gives the edge for the GCN's prediction of "
             "this node (a learned soft mask in [0, 1]).",
    signed=False, unit="mask value", directed=False)

PATH_RULE_SCORE = ScoreSpec(
    label="rule confidence",
    measures="the product of the rule's operator attentions (its weight in the learned mixture, as Neural LP "
             "prints rules); the relation's filtered MRR and Hits@k are in the run metrics and per-relation table.",
    signed=False, unit="attention product", directed=False)

RULE_SCORE = ScoreSpec(
    label="rule precision",
    measures="the share of the training queries the lifted rule fires for that are true, measured by "
             "executing the rule with DuckDB joins on the facts (not by the network); extras give its "
             "recall, support, cluster and whether it fires for this target.",
    signed=False, unit="fraction", directed=False)


class NLILSettings(Settings):
    """Everything that decides an m-NLIL run."""

    heads: tuple[str, ...] = Field((), title='Target labels (head predicates)')
    """Head predicates to learn (empty: every unary or binary predicate with targets, at most `max_heads`)."""
    max_heads: int = Field(4, ge=1, le=64, title='Most labels trained')
    path_length: int = Field(2, ge=1, le=4, title='Path length T')
    depth: int = Field(2, ge=1, le=4, title='Formula depth')
    statements: int = Field(6, ge=1, le=32, title='Primitive statements')
    width: int = Field(4, ge=1, le=16, title='Formulas per level')
    clusters: int = Field(3, ge=1, le=10, title='Clusters (rules per label)')
    init: Literal["kmeans", "frequency"] = Field("kmeans", title='Initialise by')
    """k-means on node embeddings, or by the most frequent neighbour class (the paper's GQA choice)."""
    lam: float = Field(0.1, ge=0.0, le=100.0, title='λ (distance to centre)')
    rounds: int = Field(4, ge=1, le=50, title='Rounds (Algorithm 1)')
    epochs: int = Field(100, ge=1, le=5000, title='Epochs per round')
    lr: float = Field(0.05, gt=0.0, le=1.0, title='Learning rate')
    holdout: float = Field(0.25, ge=0.0, lt=1.0, title='Held-out share')
    """Share of the labelled examples held out (by example, seeded, stratified) for heads without a held-out
    set of their own; 0 trains and evaluates on all of them (in-sample)."""
    negatives: int = Field(2, ge=0, le=20, title='Negatives per positive')
    """Random negatives per positive (always for binary heads; for unary heads only without labelled negatives)."""
    eval: Literal["rules", "link-prediction"] = Field("rules", title='Evaluation')
    """rules: m-NLIL per head, rule precision/recall; link-prediction: path rules for every binary relation
    and its inverse (Neural LP style), filtered MRR and Hits@1/3/10 on the held-out triples, both directions."""
    rank: int = Field(3, ge=1, le=16, title='Rules per relation')
    """link-prediction: rules (soft chains of `path_length` steps) per query relation"""
    kg_epochs: int = Field(8, ge=1, le=500, title='Epochs')
    """link-prediction: epochs, each over at most `kg_queries` observed triples (both directions)"""
    kg_queries: int = Field(8000, ge=100, le=10_000_000, title='Triples per epoch')
    kg_lr: float = Field(0.1, gt=0.0, le=1.0, title='Learning rate (link prediction)')
    attention: Literal["table"] = Field("table", title='Attention generator')
    """Attention generator: learned attention tables (NLIL's Transformer generators are not built)."""
    mode: Literal["truth", "gcn"] = Field("truth", title='Rules for')
    """truth: learn rules for the labels; gcn: train a 2-layer GCN on the labels, learn rules for its predictions."""
    gcn_epochs: int = Field(200, ge=1, le=5000, title='GCN epochs')
    explainer_epochs: int = Field(100, ge=1, le=2000, title='GNNExplainer epochs')
    compare_nodes: int = Field(20, ge=1, le=500, title='Nodes compared with GNNExplainer')
    """GCN mode: how many test nodes the rules and GNNExplainer are compared on."""
    n_jobs: int = Field(1, ge=1, le=8, title='Parallel workers')
    device: Literal["cpu", "cuda", "auto"] = Field("auto", title="Device")
    """torch device of link-prediction training and ranking: cpu (the tested path), cuda (a ConfigError when
    torch finds no CUDA GPU) or auto (CUDA when available); rules mode always runs on the CPU."""
    explain_targets: int = Field(50, ge=1, le=10_000, title='Predictions explained up front')
    seed: int = Field(0, ge=0, title='Seed')

    def config(self) -> Config:
        return Config(statements=self.statements, path_length=self.path_length, depth=self.depth, width=self.width,
                      clusters=self.clusters, init=self.init, lam=self.lam, rounds=self.rounds, epochs=self.epochs,
                      lr=self.lr, n_jobs=self.n_jobs, seed=self.seed)

    explainer_fields: ClassVar[frozenset[str]] = frozenset({"explainer_epochs", "compare_nodes", "explain_targets"})

    def estimator(self) -> NLILEstimator:
        return NLILEstimator(self)


def candidate_heads(ds: RelationalDataset) -> list[str]:
    """Unary or binary predicates with target atoms (and labels to learn from)."""
    return [p for p in ds.target_predicates if ds.schema[p].arity in (1, 2)]


def applicable(ds: RelationalDataset) -> str | None:
    """Why m-NLIL cannot run on `ds`, or None."""
    if ds.tabular is not None:
        return ("it learns rules from graph-structured data (entities and relations), not from the rows of a "
                "table: load a graph (e.g. the trains or family samples) or generate scene graphs here")
    heads = candidate_heads(ds)
    if not heads:
        return ("it learns rules for a unary or binary predicate with target atoms: load a graph with "
                "labelled nodes or links (e.g. the trains or family samples) or generate scene graphs here")
    if not any(p.arity == 2 and len(ds.tables[p.name]["obs"]) for p in ds.schema):
        return "it needs at least one observed binary relation to build rule bodies from"
    for h in heads:
        t = pd.concat([ds.tables[h]["obs"], ds.tables[h]["truth"]])
        if (t["value"] >= 0.5).any():
            return None
    return "no target predicate has a true labelled atom (in its observations or truth) to learn from"


def is_knowledge_graph(ds: RelationalDataset) -> bool:
    """Only binary relations, some with held-out true triples: link prediction is the standard evaluation."""
    return all(p.arity == 2 for p in ds.schema) and any(
        (ds.tables[p.name]["truth"]["value"] >= 0.5).any() for p in ds.schema if len(ds.tables[p.name]["truth"]))


def default_settings(ds: RelationalDataset) -> NLILSettings:
    """Heads are left empty (every candidate up to `max_heads`, so `max_heads` and `heads` keep their meaning);
    knowledge graphs (binary relations only, held-out triples) are evaluated by link prediction."""
    return NLILSettings(eval="link-prediction" if is_knowledge_graph(ds) else "rules")


def planned_heads(ds: RelationalDataset, settings: NLILSettings) -> tuple[list[str], list[str]]:
    """(heads that will be trained, candidate heads left out by `max_heads`), as the run will choose them."""
    if settings.heads:
        return list(settings.heads), []
    if settings.eval == "link-prediction":
        return [p.name for p in ds.schema if p.arity == 2], []
    cands = candidate_heads(ds)
    return cands[: settings.max_heads], cands[settings.max_heads:]


def split_by_example(q: Queries, holdout: float, seed: int) -> tuple[Queries, Queries, str | None]:
    """(train, test, note): a seeded split of the labelled examples, stratified by label, when there is no
    held-out set; with too few examples (under 4 positives or no negative) or holdout 0, train = test, note None."""
    pos, neg = np.flatnonzero(q.label > 0.5), np.flatnonzero(q.label <= 0.5)
    if holdout <= 0 or len(pos) < 4 or not len(neg):
        return q, q, None
    rng = np.random.default_rng(seed)
    test = np.zeros(len(q), dtype=bool)
    for part in (pos, neg):
        test[rng.choice(part, max(1, int(round(holdout * len(part)))), replace=False)] = True
    note = (f"{int(test.sum())} of {len(q)} labelled examples held out at random (seed {seed}, stratified by "
            f"label): there is no separate held-out set")
    return q.subset(~test), q.subset(test), note


class NLILEstimator(Estimator):
    """One m-NLIL per head predicate: trains on the head's labelled observations (its truth when it has
    none), predicts its target atoms."""

    def __init__(self, settings: NLILSettings) -> None:
        self.settings = settings

    def _heads(self, ds: RelationalDataset) -> list[str]:
        heads, self.dropped_heads_ = planned_heads(ds, self.settings)
        for h in heads:
            if h not in ds.schema:
                raise XcoreError(f"head predicate {h!r} is not in the dataset")
            if ds.schema[h].arity not in (1, 2):
                raise XcoreError(f"head predicate {h!r} has arity {ds.schema[h].arity}; m-NLIL learns unary or binary heads")
        return heads

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> NLILEstimator:
        s = self.settings
        heads = self._heads(data)
        self.labels_: dict[str, LabelRules] = {}
        self.kbs_: dict[str, KB] = {}
        self.train_: dict[str, Queries] = {}
        self.test_: dict[str, Queries] = {}
        self.in_sample_: dict[str, bool] = {}
        self.split_: dict[str, str | None] = {}
        self.gcn_: dict[str, tuple] = {}
        for i, h in enumerate(heads):
            kb = kb_from_dataset(data, exclude=(h,))
            has_obs = len(data.tables[h]["obs"]) > 0
            part = "obs" if has_obs else "truth"
            q = queries(data, kb, h, part, negatives=0, seed=s.seed)
            need_neg = data.schema[h].arity == 2 or not (q.label < 0.5).any()
            if need_neg and s.negatives:
                q = queries(data, kb, h, part, negatives=s.negatives, seed=s.seed)
            if not (q.label > 0.5).any():
                raise XcoreError(f"{h} has no true labelled atom to learn from")
            self.kbs_[h] = kb
            if has_obs and len(data.tables[h]["truth"]):  # a held-out set of its own
                self.train_[h], self.test_[h], self.in_sample_[h] = q, queries(data, kb, h, "truth"), False
            else:
                q, self.test_[h], self.split_[h] = split_by_example(q, s.holdout, s.seed)
                self.train_[h], self.in_sample_[h] = q, self.split_[h] is None
            learn_from = q
            if s.mode == "gcn":
                learn_from = self._fit_gcn(h, kb, q)
            self.labels_[h] = fit_label(kb, kb.operators(), learn_from, s.config(),
                                        scaled(progress, i / len(heads), (i + 1) / len(heads)))
        self.fitted_ = True
        return self

    def _fit_gcn(self, h: str, kb: KB, q: Queries) -> Queries:
        """Train the GCN on the head's labels; the queries relabelled with its predictions."""
        from xcore.nlil.gnn import gcn_proba, graph_tensors, train_gcn

        if q.arity != 1:
            raise XcoreError(f"the GCN mode explains node classification: {h} is binary")
        g = graph_tensors(kb)
        model = train_gcn(g, q, epochs=self.settings.gcn_epochs, seed=self.settings.seed)
        p = gcn_proba(model, g)
        self.gcn_[h] = (model, g, p)
        return Queries(h, 1, q.x, None, (p[q.x] >= 0.5).astype(np.float32))

    def gcn_comparison(self, h: str) -> pd.DataFrame:
        """m-NLIL rules against GNNExplainer on the same held-out nodes (those a rule fires for): fidelity+,
        fidelity-, characterisation; and the rules' agreement with the GCN on all held-out nodes."""
        from xcore.nlil.gnn import edge_mask_of, fidelity, gnnexplainer_masks
        from xcore.nlil.rules import groundings

        self.check_fitted()
        if h not in self.gcn_:
            raise XcoreError("this run has no GCN: train with mode='gcn'")
        model, g, p = self.gcn_[h]
        kb, lr, test = self.kbs_[h], self.labels_[h], self.test_[h]
        facts, frame = kb.facts(), test.frame(kb)
        fired = kb.store().fires(lr.rules, frame)
        agree = float((fired.any(1) == (p[test.x] >= 0.5)).mean()) if len(test) else 0.0
        pick = np.flatnonzero(fired.any(1))[: self.settings.compare_nodes]
        nodes = test.x[pick]
        masks = [edge_mask_of(g, kb, groundings(lr.rules[int(fired[i].argmax())], facts, kb.entities[test.x[i]]))
                 for i in pick]
        ours = fidelity(model, g, nodes, masks)
        theirs = fidelity(model, g, nodes, gnnexplainer_masks(model, g, nodes, [int(m.sum()) for m in masks],
                                                                 epochs=self.settings.explainer_epochs,
                                                                 seed=self.settings.seed))
        return pd.DataFrame([{"head": h, "explainer": "m-NLIL rules", "nodes": len(nodes), **ours,
                              "agreement_with_gcn": agree},
                             {"head": h, "explainer": "GNNExplainer (top-k edges)", "nodes": len(nodes), **theirs,
                              "agreement_with_gcn": float("nan")}])

    def _targets(self, h: str, ds: RelationalDataset | None) -> tuple[Queries, np.ndarray | None]:
        """The target atoms of head `h` as queries, with truth labels where known (NaN otherwise)."""
        kb = self.kbs_[h]
        if ds is None:
            q = self.test_[h]
            return q, q.label.astype(float)
        t = ds.tables[h]["targets"]
        q = Queries(h, ds.schema[h].arity, kb.index_of(t["a0"].astype(str).to_numpy()),
                    kb.index_of(t["a1"].astype(str).to_numpy()) if ds.schema[h].arity == 2 else None,
                    np.zeros(len(t), np.float32))
        truth = ds.tables[h]["truth"]
        cols = ["a0"] if q.y is None else ["a0", "a1"]
        merged = t[cols].astype(str).merge(truth[cols + ["value"]].astype({c: str for c in cols}), on=cols, how="left")
        return q, merged["value"].to_numpy(dtype=float)

    def _one(self, head: str, target: str) -> Queries:
        """The query of one target atom text."""
        kb = self.kbs_[head]
        inner = target[len(head) + 1:-1]
        args = [a.strip() for a in inner.split(",")] if self.labels_[head].arity == 2 else [inner]
        x = kb.index_of(np.array(args[:1], dtype=object))
        y = kb.index_of(np.array(args[1:2], dtype=object)) if len(args) == 2 else None
        return Queries(head, len(args), x, y, np.zeros(1, np.float32))


    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """Every target atom of every head: the soft-OR probability of the cluster networks, the label's
        truth, whether the union rule fires (by DuckDB) and the first cluster rule that fires."""
        self.check_fitted()
        frames = []
        for h, lr in self.labels_.items():
            q, truth = self._targets(h, data)
            kb = self.kbs_[h]
            p = lr.proba(q.x, q.y)
            frame = q.frame(kb)
            fired = kb.store().fires(lr.rules, frame)
            first = np.where(fired.any(1), fired.argmax(1), -1)
            extra = {"gcn": self.gcn_[h][2][q.x]} if h in self.gcn_ else {}
            frames.append(prediction_frame(q.atoms(kb), p, truth, head=h, rule_fires=fired.any(1),
                                           cluster=first, **extra))
        out = pd.concat(frames, ignore_index=True)
        return out.drop_duplicates("target", ignore_index=True)

    def rule_frame(self) -> pd.DataFrame:
        """Every cluster rule and each label's union: precision/recall/support on training and test queries."""
        self.check_fitted()
        rows = []
        for h, lr in self.labels_.items():
            kb = self.kbs_[h]
            train, test = self.train_[h], self.test_[h]
            every = [*lr.rules, lr.union]  # all rules of the label in one DuckDB query per partition
            ftr, fte = kb.store().fires(every, train.frame(kb)), kb.store().fires(every, test.frame(kb))
            for c, r in enumerate(every):
                is_union = c == len(lr.rules)
                a = quality(ftr[:, c], train.label)
                b = quality(fte[:, c], test.label)
                extra = {}
                if h in self.gcn_:
                    extra["fidelity"] = float((fte[:, c] == (self.gcn_[h][2][test.x] >= 0.5)).mean())
                rows.append({"head": h, "cluster": "union" if is_union else str(c), "rule": r.text, **extra,
                             "precision": a["precision"], "recall": a["recall"], "support": a["support"],
                             "members": int(sum(len(m) for m in lr.members)) if is_union else len(lr.members[c]),
                             "test_precision": b["precision"], "test_recall": b["recall"],
                             "test_support": b["support"]})
        return pd.DataFrame(rows)

    def covered(self, head: str, cluster: int) -> list[str]:
        """The training examples (atom texts) assigned to one cluster of a head."""
        self.check_fitted()
        q = self.train_[head]
        return [q.atoms(self.kbs_[head])[i] for i in self.labels_[head].members[cluster]]

    def summary(self, rules: pd.DataFrame | None = None) -> Explanation:
        """Every lifted rule per head and cluster, and each head's union, as one explanation."""
        rules = self.rule_frame() if rules is None else rules
        items = [ExplanationItem(kind="rule", text=r.rule, natural=f"{r.head}, cluster {r.cluster}: {r.rule}",
                                 score=float(r.precision),
                                 extras={"head": r.head, "cluster": r.cluster, "recall": float(r.recall),
                                         "support": int(r.support), "members": int(r.members),
                                         "test_precision": float(r.test_precision),
                                         "test_recall": float(r.test_recall)})
                 for r in rules.itertuples(index=False)]
        return Explanation(target="model", target_text="m-NLIL rules per label and cluster", method="nlil",
                           items=items, ordering="given", score_spec=RULE_SCORE)

    def metrics(self, rules: pd.DataFrame, predictions: pd.DataFrame) -> dict[str, float]:
        """Mean over heads of the union rule's test precision/recall, and the networks' accuracy."""
        union = rules[rules["cluster"] == "union"]
        out = {"precision": float(union["test_precision"].mean()), "recall": float(union["test_recall"].mean()),
               "rules": float(len(rules) - len(union)),
               "clusters_collapsed": float(sum(bool(lr.collapse) for lr in self.labels_.values()))}
        known = predictions.dropna(subset=["truth"])
        if len(known):
            out["accuracy"] = float(((known["prediction"] >= 0.5) == (known["truth"] >= 0.5)).mean())
        return out


class RuleExplainer(Explainer):
    """A target's label rules (one per cluster), ranked by precision, each saying whether it fires for it."""

    name = RULES
    title = "Lifted rules per label (m-NLIL)"
    score_spec = RULE_SCORE
    settings_fields = ("explain_targets",)

    def supports(self, model: object) -> str | None:
        if not isinstance(model, NLILEstimator):
            return "explains m-NLIL models only"
        return None if model.is_fitted() else "the model is not fitted"

    def explain(self, model: NLILEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        model.check_fitted()
        preds = model.predict()
        wanted = list(preds["target"][: model.settings.explain_targets]) if targets is None else list(targets)
        rows = preds.set_index("target")
        missing = [t for t in wanted if t not in rows.index]
        if missing:
            raise XcoreError(f"{missing[0]!r} is not a target of this run")
        table = model.rule_frame().set_index(["head", "cluster"])
        heads = rows.loc[wanted, "head"].to_numpy() if wanted else np.array([], dtype=object)
        fired: dict[str, np.ndarray] = {}
        for h in dict.fromkeys(heads):  # one DuckDB execution per rule over all wanted targets of a head
            mine = [t for t, hh in zip(wanted, heads) if hh == h]
            kb, lr = model.kbs_[h], model.labels_[h]
            frame = pd.concat([model._one(h, t).frame(kb) for t in mine], ignore_index=True)
            flags = kb.store().fires(lr.rules, frame)
            fired.update({t: flags[i] for i, t in enumerate(mine)})
        exps = []
        for t, h in zip(wanted, heads):
            lr, f = model.labels_[h], fired[t]
            items = []
            for c, rule in enumerate(lr.rules):
                row = table.loc[(h, str(c))]
                items.append(ExplanationItem(
                    kind="rule", text=rule.text, score=float(row["precision"]),
                    natural=f"{'fires' if f[c] else 'does not fire'}: {rule.text}",
                    extras={"cluster": c, "fires": bool(f[c]), "recall": float(row["recall"]),
                            "support": int(row["support"]), "members": int(row["members"])}))
            which = np.flatnonzero(f)
            text = f"{t}: rule of cluster {which[0]} fires" if len(which) else f"{t}: no rule fires"
            truth = rows.loc[t, "truth"]
            exps.append(Explanation(target=t, target_text=text, prediction=float(rows.loc[t, "prediction"]),
                                    prediction_kind="probability",
                                    truth=None if pd.isna(truth) else float(truth), items=items))
        return self.finish(ExplanationSet(exps, method=self.name))


class GCNRuleExplainer(RuleExplainer):
    """The rules m-NLIL learned from the GCN's predictions, scored by their agreement with the GCN."""

    name = GCN_RULES
    title = "Rules explaining the GCN (m-NLIL)"
    score_spec = GCN_RULE_SCORE
    prediction_column = "gcn"

    def supports(self, model: object) -> str | None:
        reason = super().supports(model)
        if reason is None and not model.gcn_:  # type: ignore[union-attr]
            return "the model has no GCN: train with mode='gcn'"
        return reason

    def explain(self, model: NLILEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        base = RuleExplainer.explain(self, model, data, targets, progress)
        table = model.rule_frame().set_index(["head", "cluster"])
        preds = model.predict().set_index("target")
        exps = []
        for e in base:
            h = preds.loc[e.target, "head"]
            items = [ExplanationItem(kind="rule", text=it.text, natural=it.natural, direction=it.direction,
                                     score=float(table.loc[(h, str(it.extras["cluster"])), "fidelity"]),
                                     extras={**it.extras, "precision": it.score}) for it in e.items]
            exps.append(Explanation(target=e.target, target_text=e.target_text,
                                    prediction=float(preds.loc[e.target, "gcn"]), truth=e.truth, items=items))
        return self.finish(ExplanationSet(exps, method=self.name))


class GNNExplainerExplainer(Explainer):
    """GNNExplainer's most important edges for the GCN's prediction of a node (the comparison baseline)."""

    name = GNNEXPLAINER
    title = "GNNExplainer (torch_geometric.explain)"
    score_spec = EDGE_SCORE
    settings_fields = ("explainer_epochs", "compare_nodes")
    prediction_column = "gcn"

    def __init__(self, k: int = 8) -> None:
        self.k = k

    def supports(self, model: object) -> str | None:
        return GCNRuleExplainer().supports(model)

    def explain(self, model: NLILEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        from xcore.nlil.gnn import gnnexplainer_soft

        model.check_fitted()
        preds = model.predict()
        wanted = list(preds["target"][: model.settings.compare_nodes]) if targets is None else list(targets)
        rows = preds.set_index("target")
        exps = []
        for t in wanted:
            if t not in rows.index:
                raise XcoreError(f"{t!r} is not a target of this run")
            h = rows.loc[t, "head"]
            gcn, g, _ = model.gcn_[h]
            kb = model.kbs_[h]
            v = model._one(h, t).x[0]
            mask = gnnexplainer_soft(gcn, g, np.array([v]), epochs=model.settings.explainer_epochs,
                                     seed=model.settings.seed)[0].numpy()
            order = np.argsort(-mask, kind="stable")[: self.k]
            items = []
            for e in order:
                if mask[e] <= 0:
                    continue
                a, b = kb.entities[g.pairs[e, 0]], kb.entities[g.pairs[e, 1]]
                items.append(ExplanationItem(kind="ground_formula", text=f"edge({a}, {b})",
                                             natural=f"the edge between {a} and {b}", score=float(mask[e]),
                                             atoms=[f"edge({a}, {b})"]))
            truth = rows.loc[t, "truth"]
            exps.append(Explanation(target=t, target_text=f"{t}: GCN predicts {rows.loc[t, 'gcn']:.3f}",
                                    prediction=float(rows.loc[t, "gcn"]),
                                    truth=None if pd.isna(truth) else float(truth), items=items))
        return self.finish(ExplanationSet(exps, method=self.name))


EXPLAINERS: dict[str, Explainer] = {RULES: RuleExplainer(), GCN_RULES: GCNRuleExplainer(),
                                    GNNEXPLAINER: GNNExplainerExplainer()}


def run_link_prediction(dataset: RelationalDataset, settings: NLILSettings, progress: Progress | None = None) -> Run:
    """Path rules for every relation and its inverse; filtered MRR/Hits@k over the held-out triples both ways."""
    from xcore.nlil.linkpred import evaluate, fit_link_predictor, triple_kb

    t0, c0 = time.perf_counter(), time.process_time()
    kb = triple_kb(dataset)
    heads = planned_heads(dataset, settings)[0]
    unknown = [h for h in heads if h not in kb.relations]
    if unknown:
        raise XcoreError(f"head {unknown[0]!r} is not a binary relation of the dataset")
    if not len(kb.held_out):
        raise XcoreError("link prediction needs held-out true triples (a test file, or atoms with truth 1)")
    device = torch_device(settings.device)
    with one_thread():
        lp = fit_link_predictor(kb, rank=settings.rank, path_length=settings.path_length, epochs=settings.kg_epochs,
                                lr=settings.kg_lr, per_epoch=settings.kg_queries, seed=settings.seed,
                                progress=scaled(progress, 0.0, 0.85), device=device)
        t1, c1 = time.perf_counter(), time.process_time()
        wanted = np.isin(kb.held_out[:, 1], [kb.relations.index(h) for h in heads])
        test = kb.held_out[wanted]
        overall, per_rel, ranks, scores = evaluate(lp, test, progress=scaled(progress, 0.85, 1.0), with_ranks=True)
        tail = scores[: len(test)] / settings.rank  # the true object's share of the rules' mass, in [0, 1]
    atoms = [f"{kb.relations[r]}({kb.entities[h]}, {kb.entities[t]})" for h, r, t in test]
    preds = prediction_frame(atoms, tail, np.ones(len(test)), head=[kb.relations[r] for r in test[:, 1]],
                             tail_rank=ranks[: len(test)], head_rank=ranks[len(test):])
    rules = lp.rule_frame()
    rules = rules[rules["relation"].str.replace("^-1", "", regex=False).isin(heads)].reset_index(drop=True)
    items = [ExplanationItem(kind="rule", text=r.rule, natural=f"{r.relation}: {r.rule}", score=float(r.confidence),
                             extras={"head": r.relation}) for r in rules.itertuples(index=False)]
    summary = Explanation(target="model", target_text="path rules per relation (and its inverse)", method="nlil",
                          items=items, ordering="given", score_spec=PATH_RULE_SCORE)
    t2, c2 = time.perf_counter(), time.process_time()
    return Run(method="nlil", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations={}, summary=summary, metrics={**overall, "queries": float(2 * len(test))},
               timings={"fit": t1 - t0, "train": lp.seconds, "explain": t2 - t1}, dataset=dataset.name, model=lp,
               extras={"eval": "link-prediction", "link_prediction": per_rel, "path_rules": rules,
                       "heads": heads, "heads_dropped": [], "loss_curve": lp.losses, "device": str(device),
                       "cpu_seconds": {"fit": c1 - c0, "evaluate": c2 - c1},
                       "ties": "filtered ranks; ties count half (1 + #higher + #equal / 2)"})


def run(dataset: RelationalDataset, settings: NLILSettings, progress: Progress | None = None,
        estimator: NLILEstimator | None = None) -> Run:
    """Fit m-NLIL per head (or reuse `estimator`, a cached fit of the same model), predict the targets,
    explain the first `explain_targets` of them through the explain driver (or, with
    eval='link-prediction', path rules per relation with filtered MRR and Hits@k)."""
    if settings.eval == "link-prediction":
        return run_link_prediction(dataset, settings, progress)
    torch_device(settings.device)  # the same error for a missing GPU in either mode; rules mode runs on the CPU
    t0 = time.perf_counter()
    with one_thread():
        est = fitted_for(settings, dataset, scaled(progress, 0.0, 0.85), estimator)
        t1 = time.perf_counter()
        preds = est.predict()
        rules = est.rule_frame()
        exps = {RULES: explain(est, RULES, dataset, progress=scaled(progress, 0.85, 1.0), predictions=preds)}
        metrics = est.metrics(rules, preds)
        comparison = None
        if settings.mode == "gcn":
            exps[GCN_RULES] = explain(est, GCN_RULES, dataset, predictions=preds)
            exps[GNNEXPLAINER] = explain(est, GNNEXPLAINER, dataset, predictions=preds)
            comparison = pd.concat([est.gcn_comparison(h) for h in est.labels_], ignore_index=True)
            known = preds.dropna(subset=["truth"])
            metrics["gcn_accuracy"] = float(((known["gcn"] >= 0.5) == (known["truth"] >= 0.5)).mean())
            for name, key in (("m-NLIL rules", "rules"), ("GNNExplainer (top-k edges)", "gnnexplainer")):
                sub = comparison[comparison["explainer"] == name]
                metrics[f"{key}_fidelity+"] = float(sub["fidelity+"].mean())
                metrics[f"{key}_fidelity-"] = float(sub["fidelity-"].mean())
                metrics[f"{key}_characterization"] = float(sub["characterization"].mean())
            metrics["rules_agreement_with_gcn"] = float(comparison["agreement_with_gcn"].dropna().mean())
    t2 = time.perf_counter()
    train_time = sum(lr.timings["train"] for lr in est.labels_.values())
    return Run(method="nlil", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations=exps, summary=est.summary(rules), metrics=metrics,
               timings={"fit": t1 - t0, "train": train_time, "explain": t2 - t1}, dataset=dataset.name, model=est,
               extras={"rules": rules, "history": {h: lr.history for h, lr in est.labels_.items()},
                       "collapse": {h: lr.collapse_notes() for h, lr in est.labels_.items()},
                       "loss_curves": {h: lr.loss_curves for h, lr in est.labels_.items()},
                       "in_sample": dict(est.in_sample_), "config": asdict(settings.config()),
                       "heads": list(est.labels_), "heads_dropped": list(est.dropped_heads_),
                       "split": {h: n for h, n in est.split_.items() if n},
                       "gcn_comparison": comparison})


SPEC = MethodSpec(
    key="nlil", title="m-NLIL rules from graphs", settings_type=NLILSettings, explainers=(RULES, GCN_RULES, GNNEXPLAINER),
    run=run, applicable=applicable, default_settings=default_settings, sample="scenes_demo",
    page="app_pages/nlil.py", icon=":material/hub:", estimator_type=NLILEstimator, explainer_map=EXPLAINERS, surrogate="m-NLIL rules",
    paper="m-NLIL: Inducing Multiple Interpretable Rules from Graph-Structured Data (on NLIL, Yang & Song, ICLR 2020)")
