"""An m-NLIL run: hold out labelled examples of heads without a held-out set of their own (through the
shared splits), fit on the rest, predict and explain the held-out targets."""

from __future__ import annotations

import copy
import time

import pandas as pd

from xcore.data import splits
from xcore.data.dataset import RelationalDataset
from xcore.methods.base import Explainer, Run
from xcore.methods.driver import explain, fitted_for
from xcore.methods.evaluate import Holdout, held_out_parts
from xcore.nlil.comparison import gcn_comparison
from xcore.nlil.estimator import NLILEstimator
from xcore.nlil.explainers import GCN_RULES, GNNEXPLAINER, RULES, GCNRuleExplainer, GNNExplainerExplainer, RuleExplainer
from xcore.nlil.heads import planned_heads
from xcore.nlil.linkruns import run_link_prediction
from xcore.nlil.model import one_thread, torch_device
from xcore.nlil.settings import NLILSettings
from xcore.runtime import Progress, scaled

EXPLAINERS: dict[str, Explainer] = {RULES: RuleExplainer(), GCN_RULES: GCNRuleExplainer(),
                                    GNNEXPLAINER: GNNExplainerExplainer()}

MIN_POSITIVES = 4
"""A head with fewer true labelled examples is not split: its test figures are measured in sample."""


def own_held_out(ds: RelationalDataset, head: str) -> bool:
    """Whether `head` has labelled observations to learn from and truth atoms to test on."""
    return len(ds.tables[head]["obs"]) > 0 and len(ds.tables[head]["truth"]) > 0


def held_out_units(ds: RelationalDataset, settings: NLILSettings) -> tuple[list[str], list[str], dict[str, str]]:
    """(held-out units, the heads they are split from, head -> how) for the heads without a held-out set
    of their own that have `MIN_POSITIVES` true examples: `holdout` of each head's labelled examples,
    seeded and stratified by label (`xcore.methods.evaluate.held_out_parts`)."""
    if settings.holdout <= 0:
        return [], [], {}
    heads = [h for h in planned_heads(ds, settings)[0] if h in ds.schema and not own_held_out(ds, h)]
    test: list[str] = []
    split: dict[str, str] = {}
    for h in heads:
        units = splits.units(ds, [h])
        if int((units["stratum"] >= 0.5).sum()) < MIN_POSITIVES:
            continue
        part = held_out_parts(units, Holdout(settings.holdout, seed=settings.seed))[0]
        test += units["unit"].iloc[part].astype(str).tolist()
        split[h] = (f"{len(part)} of {len(units)} labelled examples held out at random (seed {settings.seed}, "
                    f"stratified by label): there is no separate held-out set")
    return test, list(split), split


def train_test(ds: RelationalDataset, settings: NLILSettings) -> tuple[RelationalDataset, RelationalDataset,
                                                                         dict[str, str]]:
    """(training data, held-out data, head -> how it was split); heads with a held-out set of their own keep
    it, others too small to split are trained and tested on the same examples."""
    test_units, heads, split = held_out_units(ds, settings)
    if not test_units:
        return ds, ds, split
    train, test = splits.holdout(ds, test_units, heads)
    return train, test, split


def with_evaluation(est: NLILEstimator, test: RelationalDataset, split: dict[str, str],
                    comparison: pd.DataFrame | None) -> NLILEstimator:
    """A shallow copy of the fitted model carrying the held-out evaluation (`rules_`, `split_`, `in_sample_`,
    `gcn_comparison_`); the shared fitted model is left as it was."""
    out = copy.copy(est)
    out.rules_ = est.rule_frame(test)
    out.split_ = dict(split)
    out.in_sample_ = {h: h not in split and not own_held_out(test, h) for h in est.labels_}
    out.gcn_comparison_ = comparison
    return out


def gcn_metrics(comparison: pd.DataFrame, preds: pd.DataFrame) -> dict[str, float]:
    """The GCN's held-out accuracy and the rules' and GNNExplainer's fidelity figures."""
    known = preds.dropna(subset=["truth"])
    out = {"gcn_accuracy": float(((known["gcn"] >= 0.5) == (known["truth"] >= 0.5)).mean())}
    for name, key in (("m-NLIL rules", "rules"), ("GNNExplainer (top-k edges)", "gnnexplainer")):
        sub = comparison[comparison["explainer"] == name]
        out[f"{key}_fidelity+"] = float(sub["fidelity+"].mean())
        out[f"{key}_fidelity-"] = float(sub["fidelity-"].mean())
        out[f"{key}_characterization"] = float(sub["characterization"].mean())
    out["rules_agreement_with_gcn"] = float(comparison["agreement_with_gcn"].dropna().mean())
    return out


def rule_metrics(est: NLILEstimator, rules: pd.DataFrame, predictions: pd.DataFrame) -> dict[str, float]:
    """Mean over heads of the union rule's test precision/recall, and the networks' accuracy."""
    union = rules[rules["cluster"] == "union"]
    out = {"precision": float(union["test_precision"].mean()), "recall": float(union["test_recall"].mean()),
           "rules": float(len(rules) - len(union)),
           "clusters_collapsed": float(sum(bool(lr.collapse) for lr in est.labels_.values()))}
    known = predictions.dropna(subset=["truth"])
    if len(known):
        out["accuracy"] = float(((known["prediction"] >= 0.5) == (known["truth"] >= 0.5)).mean())
    return out


def run(dataset: RelationalDataset, settings: NLILSettings, progress: Progress | None = None,
        estimator: NLILEstimator | None = None) -> Run:
    """Hold out labelled examples where a head has no held-out set, fit m-NLIL per head on the rest (or reuse
    `estimator`, a cached fit of the same model), predict the held-out targets and explain the first
    `explain_targets` of them through the explain driver (or, with eval='link-prediction', path rules per
    relation with filtered MRR and Hits@k)."""
    if settings.eval == "link-prediction":
        return run_link_prediction(dataset, settings, progress)
    torch_device(settings.device)  # the same error for a missing GPU in either mode; rules mode runs on the CPU
    t0 = time.perf_counter()
    train, test, split = train_test(dataset, settings)
    with one_thread():
        est = fitted_for(settings, train, scaled(progress, 0.0, 0.85), estimator)
        t1 = time.perf_counter()
        preds = est.predict(test)
        exps = {RULES: explain(est, RULES, test, progress=scaled(progress, 0.85, 1.0), predictions=preds)}
        comparison = None
        if settings.mode == "gcn":
            exps[GCN_RULES] = explain(est, GCN_RULES, test, predictions=preds)
            exps[GNNEXPLAINER] = explain(est, GNNEXPLAINER, test, predictions=preds)
            comparison = pd.concat([gcn_comparison(est, h, test) for h in est.labels_], ignore_index=True)
        model = with_evaluation(est, test, split, comparison)
        metrics = rule_metrics(est, model.rules_, preds)
        if comparison is not None:
            metrics.update(gcn_metrics(comparison, preds))
    t2 = time.perf_counter()
    train_time = sum(lr.timings["train"] for lr in est.labels_.values())
    return Run(method="nlil", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations=exps, summary=est.summary(model.rules_), metrics=metrics,
               timings={"fit": t1 - t0, "train": train_time, "explain": t2 - t1}, dataset=dataset.name, model=model)


__all__ = ["EXPLAINERS", "run"]
