"""m-NLIL as an estimator: one Algorithm 1 (several lifted rules, one per cluster) per head predicate,
learned from all the head's labelled atoms of the data it is fitted on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ScoreSpec
from xcore.methods.base import Estimator, prediction_frame
from xcore.nlil.gnn import GCN, GraphTensors, gcn_proba, graph_tensors, train_gcn
from xcore.nlil.graph import KB, Queries, kb_from_dataset, queries
from xcore.nlil.heads import planned_heads
from xcore.nlil.mnlil import LabelRules, fit_label
from xcore.nlil.rules import quality
from xcore.nlil.settings import NLILSettings
from xcore.nlil.transfer import aligned_kb, rules_on, same_facts
from xcore.runtime import Progress, scaled

RULE_SCORE = ScoreSpec(
    label="rule precision",
    measures="the share of the training queries the lifted rule fires for that are true, measured by "
             "executing the rule with DuckDB joins on the facts (not by the network); extras give its "
             "recall, support, cluster and whether it fires for this target.",
    signed=False, unit="fraction", directed=False)


class NLILEstimator(Estimator):
    """One m-NLIL per head predicate: learns from every labelled atom of the head in the data (its labelled
    observations, its truth when it has none), predicts the head's target atoms of any data.

    Parameters
    ----------
    settings : NLILSettings
        Heads, Algorithm 1's sizes and rounds, the GCN mode.

    Attributes
    ----------
    labels_ : dict of str to LabelRules
        Head -> its cluster networks, lifted rules, members, rounds and loss curves.
    kbs_ : dict of str to KB
        Head -> the facts its rules are learned from and executed on (the head itself left out).
    train_ : dict of str to Queries
        Head -> the labelled queries it learned from (random negatives added where needed).
    targets_ : dict of str to tuple of (Queries, numpy.ndarray)
        Head -> the target atoms of the fitted data and their truth (NaN where unknown): what
        `predict()` without data predicts.
    gcn_ : dict of str to tuple
        Head -> (GCN, graph tensors, P(true) of every node) in GCN mode; empty otherwise.
    heads_dropped_ : list of str
        Candidate heads left out by `max_heads`.
    history_ : dict of str to list of dict
        Head -> Algorithm 1's rounds (clusters, examples moved, mean loss).
    collapse_ : dict of str to list of str
        Head -> notes on clusters that collapsed or learned the same rule, with the reason.
    loss_curves_ : dict of str to list of list of float
        Head -> the training loss per epoch of each cluster network.

    Set by `run` on the run's copy (the held-out evaluation, not the fit): ``rules_`` (`rule_frame` of
    the held-out targets), ``split_`` (head -> how its examples were held out), ``in_sample_`` (head ->
    True where its test figures are measured on the training examples) and ``gcn_comparison_`` (GCN mode).
    """

    def __init__(self, settings: NLILSettings) -> None:
        self.settings = settings

    def split_predicates(self, data: RelationalDataset) -> list[str] | None:
        """m-NLIL's units are the labelled target atoms of the heads it trains."""
        return planned_heads(data, self.settings)[0] or None

    def _heads(self, ds: RelationalDataset) -> list[str]:
        heads, self.heads_dropped_ = planned_heads(ds, self.settings)
        for h in heads:
            if h not in ds.schema:
                raise XcoreError(f"head predicate {h!r} is not in the dataset")
            if ds.schema[h].arity not in (1, 2):
                raise XcoreError(f"head predicate {h!r} has arity {ds.schema[h].arity}; m-NLIL learns unary or binary heads")
        return heads

    def _queries(self, data: RelationalDataset, kb: KB, h: str) -> Queries:
        """The head's labelled atoms (observations, else truth) as queries, random negatives added where needed."""
        s = self.settings
        part = "obs" if len(data.tables[h]["obs"]) else "truth"
        q = queries(data, kb, h, part, negatives=0, seed=s.seed)
        need_neg = data.schema[h].arity == 2 or not (q.label < 0.5).any()
        if need_neg and s.negatives:
            q = queries(data, kb, h, part, negatives=s.negatives, seed=s.seed)
        if not (q.label > 0.5).any():
            raise XcoreError(f"{h} has no true labelled atom to learn from")
        return q

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> NLILEstimator:
        """Algorithm 1 for every head on all its labelled atoms of `data` (in GCN mode on a GCN's predictions)."""
        heads = self._heads(data)
        self.labels_: dict[str, LabelRules] = {}
        self.kbs_: dict[str, KB] = {}
        self.train_: dict[str, Queries] = {}
        self.targets_: dict[str, tuple[Queries, np.ndarray]] = {}
        self.gcn_: dict[str, tuple[GCN, GraphTensors, np.ndarray]] = {}
        for i, h in enumerate(heads):
            kb = kb_from_dataset(data, exclude=(h,))
            q = self._queries(data, kb, h)
            self.kbs_[h], self.train_[h] = kb, q
            self.targets_[h] = self.targets_of(h, data)
            learn_from = self._fit_gcn(h, kb, q) if self.settings.mode == "gcn" else q
            self.labels_[h] = fit_label(kb, kb.operators(), learn_from, self.settings.config(),
                                        scaled(progress, i / len(heads), (i + 1) / len(heads)))
        return self

    def _fit_gcn(self, h: str, kb: KB, q: Queries) -> Queries:
        """Train the GCN on the head's labels; the queries relabelled with its predictions."""
        if q.arity != 1:
            raise XcoreError(f"the GCN mode explains node classification: {h} is binary")
        g = graph_tensors(kb)
        model = train_gcn(g, q, epochs=self.settings.gcn_epochs, seed=self.settings.seed)
        p = gcn_proba(model, g)
        self.gcn_[h] = (model, g, p)
        return Queries(h, 1, q.x, None, (p[q.x] >= 0.5).astype(np.float32))

    @property
    def history_(self) -> dict[str, list[dict]]:
        return {h: lr.history for h, lr in self.labels_.items()}

    @property
    def collapse_(self) -> dict[str, list[str]]:
        return {h: lr.collapse_notes() for h, lr in self.labels_.items()}

    @property
    def loss_curves_(self) -> dict[str, list[list[float]]]:
        return {h: lr.loss_curves for h, lr in self.labels_.items()}

    # ------------------------------------------------------------------ predictions
    def targets_of(self, h: str, ds: RelationalDataset | None, kb: KB | None = None) -> tuple[Queries, np.ndarray]:
        """The target atoms of head `h` in `ds` (entities of `kb`, default the fitted one) as queries, with
        truth labels where known (NaN otherwise); None: those of the data the model was fitted on."""
        kb = self.kbs_[h] if kb is None else kb
        if ds is None:
            return self.targets_[h]
        t = ds.tables[h]["targets"]
        q = Queries(h, ds.schema[h].arity, kb.index_of(t["a0"].astype(str).to_numpy()),
                    kb.index_of(t["a1"].astype(str).to_numpy()) if ds.schema[h].arity == 2 else None,
                    np.zeros(len(t), np.float32))
        truth = ds.tables[h]["truth"]
        cols = ["a0"] if q.y is None else ["a0", "a1"]
        merged = t[cols].astype(str).merge(truth[cols + ["value"]].astype({c: str for c in cols}), on=cols, how="left")
        return q, merged["value"].to_numpy(dtype=float)

    def on_data(self, h: str, data: RelationalDataset | None) -> tuple[KB, LabelRules]:
        """(the facts head `h` is predicted on, its networks over them): the fitted ones for the fitted data
        or data with the same facts; else `data`'s own facts, with new entities (`transfer`)."""
        kb, rules = self.kbs_[h], self.labels_[h]
        if data is None:
            return kb, rules
        new = aligned_kb(data, kb, h)
        return (kb, rules) if same_facts(new, kb) else (new, rules_on(rules, new))

    def one(self, head: str, target: str) -> Queries:
        """The query of one target atom text."""
        kb = self.kbs_[head]
        inner = target[len(head) + 1:-1]
        args = [a.strip() for a in inner.split(",")] if self.labels_[head].arity == 2 else [inner]
        x = kb.index_of(np.array(args[:1], dtype=object))
        y = kb.index_of(np.array(args[1:2], dtype=object)) if len(args) == 2 else None
        return Queries(head, len(args), x, y, np.zeros(1, np.float32))

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """Every target atom of every head in `data` (None: the fitted data's): the soft-OR probability
        of the cluster networks, the label's truth, whether the union rule fires (by DuckDB) and the first
        cluster rule that fires. Data with other facts or entities is predicted on its own facts (the
        networks weigh relations, not entities); the GCN column is NaN there."""
        self.check_fitted()
        frames = []
        for h in self.labels_:
            kb, lr = self.on_data(h, data)
            q, truth = self.targets_of(h, data, kb)
            fired = kb.store().fires(lr.rules, q.frame(kb))
            first = np.where(fired.any(1), fired.argmax(1), -1)
            extra = {"gcn": self.gcn_[h][2][q.x] if kb is self.kbs_[h] else np.full(len(q.x), np.nan)} \
                if h in self.gcn_ else {}
            frames.append(prediction_frame(q.atoms(kb), lr.proba(q.x, q.y), truth, head=h, rule_fires=fired.any(1),
                                           cluster=first, **extra))
        return pd.concat(frames, ignore_index=True).drop_duplicates("target", ignore_index=True)

    def predict_atoms(self, targets: list[str]) -> pd.DataFrame:
        """Predictions (as `predict`, truth NaN) of target atom texts of trained heads, in any data of the
        schema whose entities the facts know."""
        self.check_fitted()
        frames = []
        for t in targets:
            h = t.split("(", 1)[0]
            if h not in self.labels_ or not t.endswith(")"):
                raise XcoreError(f"{t!r} is not a target of this run (heads: {', '.join(self.labels_)})")
            try:
                q = self.one(h, t)
            except XcoreError as e:
                raise XcoreError(f"{t!r} is not a target of this run ({e})") from None
            kb, lr = self.kbs_[h], self.labels_[h]
            fired = kb.store().fires(lr.rules, q.frame(kb))
            extra = {"gcn": self.gcn_[h][2][q.x]} if h in self.gcn_ else {}
            frames.append(prediction_frame([t], lr.proba(q.x, q.y), np.array([np.nan]), head=h,
                                           rule_fires=fired.any(1), cluster=np.where(fired.any(1), fired.argmax(1), -1),
                                           **extra))
        return pd.concat(frames, ignore_index=True) if frames else self.predict().iloc[:0]

    def rule_frame(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """Every cluster rule and each label's union: precision/recall/support on the training queries and
        (test_*) on the labelled targets of `data` (None: of the fitted data; the training queries again, in
        sample, where there is no labelled target of the head)."""
        self.check_fitted()
        rows = []
        for h, lr in self.labels_.items():
            kb, train = self.kbs_[h], self.train_[h]
            test_kb, _ = self.on_data(h, data)
            test, truth = self.targets_of(h, data, test_kb)
            known = ~np.isnan(truth)
            if not known.any():  # no labelled target in `data`: in sample, as `run` reports
                test, truth, known, test_kb = train, train.label.astype(float), np.ones(len(train), dtype=bool), kb
            test = test.subset(known)
            test_label = truth[known].astype(np.float32)
            every = [*lr.rules, lr.union]  # all rules of the label in one DuckDB query per partition
            ftr, fte = kb.store().fires(every, train.frame(kb)), test_kb.store().fires(every, test.frame(test_kb))
            for c, r in enumerate(every):
                is_union = c == len(lr.rules)
                a, b = quality(ftr[:, c], train.label), quality(fte[:, c], test_label)
                extra = {}
                if h in self.gcn_ and test_kb is kb:
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
