"""ESMS as a registered method: settings, estimator, the ground-rule explainer and its `Run`."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.global_view import item_group
from xcore.explain.metrics import mep_at_k
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.methods.base import Estimator, Explainer, Measurement, MethodSpec, Run, prediction_frame
from xcore.methods.driver import fitted_for
from xcore.psl.model import PSLModel
from xcore.psl.verify import measure_ground_rules
from xcore.psl.workflow import (
    DEMO_SETTINGS,
    ESMSRun,
    ESMSSettings,
    all_positive,
    apply_rules,
    binary_unary,
    candidate_targets,
    run_esms,
)
from xcore.runtime import Progress

GROUND_RULES = "esms:ground-rules"

GROUND_RULE_SCORE = ScoreSpec(
    label="|w·∂φ/∂y|",
    measures="the force a ground rule exerts on the target at the MAP state: the rule's weight times the "
             "gradient of its (squared) hinge with respect to the target's value (the effect column is the "
             "signed force).",
    signed=False, unit="energy per unit of the target's value")

RULE_WEIGHT_SCORE = ScoreSpec(
    label="weight", measures="the rule's learned weight (PPLL); larger weights cost more when violated.",
    signed=False, unit="", directed=False)


def rule_without_weight(text: str) -> str:
    """A PSL rule's text without its leading weight (the weight is the item's score)."""
    return item_group("", {"rule": text})


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


class ESMSEstimator(Estimator):
    """Learns an explainable PSL model by the ESMS search, then applies it to the held-out split."""

    def __init__(self, settings: ESMSSettings) -> None:
        self.settings = settings

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "ESMSEstimator":
        self.run_: ESMSRun = run_esms(data, self.settings, progress=progress)
        self.model_: PSLModel = self.run_.model
        return self

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """Predictions of the held-out split (`data` None) or of `data`'s targets, one frame shape."""
        self.check_fitted()
        if data is None:
            frame = self.run_.predictions
        else:
            frame = self._applied(data).predict()
            frame = frame[frame["predicate"] == self.settings.target]
        return prediction_frame(frame["atom"], frame["prediction"], frame["truth"], error=frame["error"])

    def _applied(self, data: RelationalDataset) -> PSLModel:
        model = PSLModel(list(self.model_.rules), alpha=self.settings.alpha, block=self.settings.block)
        model.ground(data)
        model.infer()
        return model

    def rules_summary(self) -> Explanation:
        """The learned model as one explanation: each lifted rule with its weight."""
        self.check_fitted()
        frame = self.model_.rules_frame()
        items = [ExplanationItem(kind="rule", text=rule_without_weight(str(r.rule)),
                                 natural=rule_without_weight(str(r.rule)), score=float(r.weight),
                                 explainable=bool(r.explainable),
                                 extras={"template": str(r.template), "squared": bool(r.squared), "hard": bool(r.hard)})
                 for r in frame.itertuples(index=False)]
        return Explanation(target="model", target_text=f"ESMS model for {self.settings.target}", method="esms",
                           items=items, score_spec=RULE_WEIGHT_SCORE)


class GroundRuleExplainer(Explainer):
    """Each prediction explained by its ground rules, ranked by the force they exert on it."""

    name = GROUND_RULES
    title = "Ground rules"
    score_spec = GROUND_RULE_SCORE

    def supports(self, model: object) -> str | None:
        if not isinstance(model, ESMSEstimator):
            return "explains ESMS models only"
        return None if model.is_fitted() else "the model is not fitted"

    def measure(self, run: Run, data: RelationalDataset | None, explanation: Explanation,
                k: int) -> Measurement | None:
        """The target's MAP value with minus without each ground rule (`xcore.psl.verify`)."""
        return measure_ground_rules(run, explanation, k)

    def explain(self, model: ESMSEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        model.check_fitted()
        psl = model.model_ if data is None else model._applied(data)
        exps = psl.explain_all()
        if targets is not None:
            missing = [t for t in targets if t not in exps]
            if missing:
                raise XcoreError(f"no target atom {missing[0]!r} in the explained data")
            exps = ExplanationSet([exps[t] for t in targets], method=exps.method, meta=exps.meta)
        return self.finish(exps)


EXPLAINERS: dict[str, Explainer] = {GROUND_RULES: GroundRuleExplainer()}


def run(dataset: RelationalDataset, settings: ESMSSettings, progress: Progress | None = None,
        estimator: ESMSEstimator | None = None) -> Run:
    """Search (or reuse `estimator`, a cached fit), apply to the held-out split, explain every held-out
    prediction."""
    t0 = time.perf_counter()
    est = fitted_for(settings, dataset, progress, estimator)
    return _as_run(est, dataset.fingerprint(), dataset.name, {"fit": time.perf_counter() - t0})


def _as_run(est: ESMSEstimator, fingerprint: str, dataset_name: str, timings: dict[str, float]) -> Run:
    """The `Run` of a fitted estimator: held-out predictions, ground-rule explanations, MEP@K, stage times."""
    t1 = time.perf_counter()
    exps = EXPLAINERS[GROUND_RULES].finish(est.run_.explanations)
    est.run_.explanations = exps
    metrics = {k: float(v) for k, v in est.run_.metrics.items() if np.isfinite(v)}  # AUPR: 0/1 truth only
    metrics["n_test"] = metrics.pop("n", float(len(est.run_.predictions)))
    for split in ("train", "valid"):  # labelled target atoms each split had (the page says how many)
        data = getattr(est.run_, split)
        metrics[f"n_{split}"] = float(len(data.truth(est.settings.target)))
    metrics.update({f"mep@{k}": float(mep_at_k(exps, k)) for k in (1, 2, 3)})
    history = est.run_.history
    timings = {**timings, "explain": time.perf_counter() - t1}
    for stage in ("ground", "ppll", "map", "score"):
        col = f"{stage}_seconds"
        if col in history.columns:
            timings[f"search.{stage}"] = float(np.nansum(history[col]))
    return Run(method="esms", settings=est.settings, fingerprint=fingerprint, predictions=est.predict(),
               explanations={GROUND_RULES: exps}, summary=est.rules_summary(), metrics=metrics,
               timings=timings, dataset=dataset_name, model=est, extras={"esms": est.run_})


def reinfer(run: Run, text: str) -> Run:
    """The run with hand-edited rules applied to the same held-out split (weight 0: learned by PPLL)."""
    if "esms" not in run.extras:
        raise XcoreError("this run has no ESMS search to re-infer from (was it read from a bundle?)")
    t0 = time.perf_counter()
    est = ESMSEstimator(run.model.settings)
    est.run_ = apply_rules(run.extras["esms"], text)
    est.model_ = est.run_.model
    edited = _as_run(est, run.fingerprint, run.dataset, {"reinfer": time.perf_counter() - t0})
    edited.extras["edited_from"] = run
    return edited


SPEC = MethodSpec(
    key="esms", title="ESMS — explainable PSL", settings_type=ESMSSettings, explainers=(GROUND_RULES,),
    run=run, applicable=applicable, default_settings=default_settings, sample="lastfm_demo",
    estimator_type=ESMSEstimator, explainer_map=EXPLAINERS, surrogate="ESMS rules", page="app_pages/esms.py", icon=":material/account_tree:",
    paper="Embar, Srinivasan & Getoor, Learning Explainable Templated Graphical Models (UAI 2022)")
