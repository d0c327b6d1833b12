"""What the ESMS registry entry runs: whether ESMS applies to a dataset, its default settings, and a
run: hold out labelled targets (the shared `xcore.methods.evaluate` split), fit on the rest, predict
and explain the held-out targets; `reinfer` applies hand-edited rules to the same held-out part."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.esms.data_reading import all_positive, binary_unary, candidate_targets
from xcore.esms.estimator import ESMSEstimator
from xcore.esms.explainers.ground_rules import GROUND_RULES, GroundRuleExplainer
from xcore.esms.settings import DEMO_SETTINGS, ESMSSettings
from xcore.explain.metrics import mep_at_k
from xcore.logic.ast import Rule
from xcore.logic.parser import parse_rules
from xcore.logic.rule_identity import rule_key
from xcore.methods.base import Explainer, Run
from xcore.methods.driver import with_settings
from xcore.methods.evaluate import Holdout, held_out_parts
from xcore.psl.model import PSLModel
from xcore.psl.scores import prediction_metrics
from xcore.runtime import Progress, scaled

EXPLAINERS: dict[str, Explainer] = {GROUND_RULES: GroundRuleExplainer()}
"""ESMS's explainers by registry name (the spec's `explainer_map`)."""


def esms_targets(dataset: RelationalDataset) -> list[str]:
    """Predicates ESMS can learn: labelled target atoms with one or two arguments (the meta-templates'
    T(A) and T(A, B))."""
    return [p for p in candidate_targets(dataset) if dataset.predicate(p).arity in (1, 2)]


def applicable(dataset: RelationalDataset) -> str | None:
    """Why ESMS cannot run on `dataset`, or None when it can."""
    if not candidate_targets(dataset):
        return "no predicate has target atoms with truth labels to learn from"
    if not esms_targets(dataset):
        names = ", ".join(candidate_targets(dataset))
        return (f"the meta-templates need a target T(A) or T(A, B) with truth labels; the labelled "
                f"targets here ({names}) have other arities")
    return None


def target_defaults(dataset: RelationalDataset, target: str) -> dict:
    """The settings whose defaults depend on the chosen target: its block predicate (LastFM's rated),
    the closed-world reading when every label is 1, and on a 0/1 unary target T(A) (a base-rate-relative
    signal) calibrated joint weights with counterparts."""
    unary = binary_unary(dataset, target)
    return {"block": "rated" if "rated" in dataset.schema.names and target == "rating" else None,
            "closed_world": all_positive(dataset, target),
            "weight_learning": "calibrated" if unary else "per_rule", "counterparts": unary}


def default_settings(dataset: RelationalDataset) -> ESMSSettings:
    """Settings suited to `dataset`: the demo's on the LastFM sample, else its first binary target."""
    targets = esms_targets(dataset)
    if not targets:
        return DEMO_SETTINGS
    target = "rating" if "rating" in targets else targets[0]
    return ESMSSettings(target=target, rules_per_model=10, iterations=20, gamma=DEMO_SETTINGS.gamma,
                        **target_defaults(dataset, target))


def held_out_split(dataset: RelationalDataset, settings: ESMSSettings
                   ) -> tuple[ESMSEstimator, RelationalDataset, RelationalDataset]:
    """An unfitted estimator and the (training, test) parts of a run: `test_fraction` of the labelled
    targets held out by the shared split (`held_out_parts`, seeded by the settings)."""
    est = settings.estimator()
    assert isinstance(est, ESMSEstimator)
    units = est.units(dataset)
    if len(units) < 3:
        raise XcoreError(f"{settings.target} has {len(units)} labelled target atoms; training, validation and "
                         "test parts need at least 3")
    test = held_out_parts(units, Holdout(settings.test_fraction, settings.seed))[0]
    train, held = est.holdout(dataset, units["unit"].iloc[test].astype(str).tolist())
    return est, train, held


def run(dataset: RelationalDataset, settings: ESMSSettings, progress: Progress | None = None,
        estimator: ESMSEstimator | None = None) -> Run:
    """Hold out `test_fraction` of the labelled targets, search on the rest (or reuse `estimator`, a cached
    fit of the same parts), apply the model to the held-out part and explain every held-out prediction."""
    t0 = time.perf_counter()
    est, train, test = held_out_split(dataset, settings)
    fitted = est.fit(train, progress=scaled(progress, 0.0, 0.9)) if estimator is None \
        else with_settings(estimator, settings)
    assert isinstance(fitted, ESMSEstimator)
    if progress is not None:
        progress(0.92, "applying the best model to the test part")
    applied = fitted.apply_held_out(test)
    return as_run(applied, dataset.fingerprint(), dataset.name, {"fit": time.perf_counter() - t0})


def as_run(est: ESMSEstimator, fingerprint: str, dataset_name: str, timings: dict[str, float]) -> Run:
    """The `Run` of an estimator applied to a held-out part: predictions, ground-rule explanations,
    quality and MEP@K, the parts' sizes and stage times."""
    t1 = time.perf_counter()
    predictions = est.predict()
    exps = EXPLAINERS[GROUND_RULES].explain(est)
    metrics = {k: float(v) for k, v in prediction_metrics(predictions["prediction"].to_numpy(),
                                                          predictions["truth"].to_numpy(dtype=float)).items()
               if np.isfinite(v)}  # AUPR: 0/1 truth only
    metrics["n_test"] = metrics.pop("n", float(len(predictions)))
    metrics["n_train"], metrics["n_valid"] = float(est.n_train_), float(est.n_valid_)  # the page says how many
    metrics.update({f"mep@{k}": float(mep_at_k(exps, k)) for k in (1, 2, 3)})
    timings = {**timings, "explain": time.perf_counter() - t1}
    for stage in ("ground", "ppll", "map", "score"):
        col = f"{stage}_seconds"
        if col in est.history_.columns:
            timings[f"search.{stage}"] = float(np.nansum(est.history_[col]))
    return Run(method="esms", settings=est.settings, fingerprint=fingerprint, predictions=predictions,
               explanations={GROUND_RULES: exps}, summary=est.rules_summary(), metrics=metrics,
               timings=timings, dataset=dataset_name, model=est)


def reinfer(run: Run, text: str, learn_missing_weights: bool = True) -> Run:
    """The run with hand-edited rules applied to the same held-out part (weights as written).

    A rule written without a weight is an error unless it ends in `.` (hard); with
    `learn_missing_weights`, rules whose weight is written as 0 get a PPLL weight on the training part.
    """
    est = run.model
    if not isinstance(est, ESMSEstimator) or est.held_out_model_ is None:
        raise XcoreError("this run has no ESMS model applied to held-out data to re-infer from "
                         "(was it read from a bundle?)")
    t0 = time.perf_counter()
    rules = parse_rules(text, dialect="psl", source="edited rules")
    if not rules:
        raise XcoreError("the edited model has no rules")
    rules = _keep_template_names(rules, est.rules_)
    if learn_missing_weights and any(r.weight == 0 for r in rules):
        learned = PSLModel([r for r in rules if r.weight == 0], alpha=est.settings.alpha, block=est.settings.block)
        learned.fit_weights(est.train_, cache=est.search_.cache_.ppll, target=est.settings.target)
        it = iter(learned.rules)
        rules = [next(it) if r.weight == 0 else r for r in rules]
    edited = est.with_rules(rules)
    edited.held_out_model_ = edited.apply(est.held_out_model_.store_)  # the same held-out atoms
    return as_run(edited, run.fingerprint, run.dataset, {"reinfer": time.perf_counter() - t0})


def _keep_template_names(rules: list[Rule], before: list[Rule]) -> list[Rule]:
    """Edited rules keep the template name of the searched rule they equal (up to weight and renaming)."""
    names = {rule_key(r): r.name for r in before if r.name}
    return [r if r.name or rule_key(r) not in names else replace(r, name=names[rule_key(r)]) for r in rules]
