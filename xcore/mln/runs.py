"""The Markov-logic method's run: split the labelled query atoms, learn on the training part, infer
and explain the held-out part (with the training labels as evidence); plus what the spec names."""

from __future__ import annotations

import copy
import time

import pandas as pd
from sklearn.metrics import accuracy_score, brier_score_loss

from xcore.data.dataset import RelationalDataset
from xcore.errors import ConfigError
from xcore.explain.types import ExplanationSet
from xcore.methods.base import Run
from xcore.methods.driver import explain, with_settings
from xcore.methods.evaluate import Holdout, held_out_parts
from xcore.mln.estimator import MLNEstimator
from xcore.mln.explainer_names import NAMES
from xcore.mln.explainers import EXPLAINERS
from xcore.mln.queries import matching_atoms, parse_query, split_atom_texts
from xcore.mln.settings import MLNSettings
from xcore.mln.targets import declared_query, default_explainers, text_setting
from xcore.mln.workflow import run_explainers
from xcore.runtime import Progress, scaled

__all__ = ["EXPLAINERS", "applicable", "default_settings", "run", "select_query"]


def applicable(dataset: RelationalDataset) -> str | None:
    """Why Markov-logic explanation cannot run on `dataset`, or None when it can."""
    if not any(len(dataset.targets(p.name)) for p in dataset.predicates):
        return "no predicate has query (target) atoms to infer"
    return None


def default_settings(dataset: RelationalDataset) -> MLNSettings:
    """The data's first query predicate, its sample model or generated rules, every explainer it supports."""
    setting = text_setting(dataset, None)
    if setting is None:
        return MLNSettings(target=declared_query(dataset), explainers=("mln:m-explain",))
    return MLNSettings(target=setting.target, explainers=default_explainers(dataset, setting.target))


def held_out_fit(dataset: RelationalDataset, settings: MLNSettings,
                 progress: Progress | None = None) -> MLNEstimator:
    """The model learned on the training part of `dataset` and grounded on its held-out part (the
    training labels as evidence; its `split_sizes_` counts both parts' labelled atoms); without a held-out part
    (``test_size`` 0 or fewer than two labelled atoms), the model fitted on all of `dataset`."""
    est = settings.estimator()
    units = est.units(dataset)
    if settings.test_size <= 0 or len(units) < 2:
        est.fit(dataset, progress=progress)
        est.split_sizes_ = (len(units), 0)
        return est
    test = held_out_parts(units, Holdout(settings.test_size, seed=settings.seed))[0]
    train_data, test_data = est.holdout(dataset, units["unit"].iloc[test].astype(str).tolist())
    est.fit(train_data, progress=scaled(progress, 0.0, 0.5))
    held = est.ground_on(test_data, progress=scaled(progress, 0.5, 1.0))
    held.split_sizes_ = (len(units) - len(test), len(test))
    return held


def run(dataset: RelationalDataset, settings: MLNSettings, progress: Progress | None = None,
        estimator: MLNEstimator | None = None) -> Run:
    """Learn on the training part and infer the held-out part (`held_out_fit`), or reuse `estimator`
    (a cached fit of the same model), then explain every query of that part with each chosen
    explainer that applies (I- and R-Explain share their coalitions)."""
    t0 = time.perf_counter()
    if estimator is not None:
        est = copy.copy(with_settings(estimator, settings))  # the run's own copy: the cached fit stays as it was
    else:
        est = held_out_fit(dataset, settings, scaled(progress, 0.0, 0.3))
    data = est.data_
    t1 = time.perf_counter()
    explanations, timings = _explain_all(est, data, settings, t1 - t0, progress)
    predictions = est.predict()
    if settings.query is not None:
        predictions, explanations = select_query(settings.query, data, predictions, explanations)
    return Run(method="mln", settings=settings, fingerprint=dataset.fingerprint(), predictions=predictions,
               explanations=explanations, summary=est.rules_summary(), metrics=_metrics(est, predictions),
               timings=timings, dataset=dataset.name, model=est)


def _explain_all(est: MLNEstimator, data: RelationalDataset, settings: MLNSettings, fit_seconds: float,
                 progress: Progress | None) -> tuple[dict[str, ExplanationSet], dict[str, float]]:
    """Every chosen explainer that applies, run once through the workflow (sets `est.explainer_run_`)."""
    explanations: dict[str, ExplanationSet] = {}
    timings = {"fit": fit_seconds}
    t1 = time.perf_counter()
    if est.setting_ is not None:
        wanted = tuple(e for e in settings.explainers if EXPLAINERS[e].supports(est) is None)
        workflow = run_explainers(est.model_, data, est.setting_, settings.explain_settings(wanted),
                                  progress=scaled(progress, 0.3, 1.0))
        est.explainer_run_ = workflow
        for label, exps in workflow.explanations.items():
            explanations[NAMES[label]] = EXPLAINERS[NAMES[label]].finish(exps)
        timings.update({f"explain.{NAMES[k]}": v for k, v in workflow.seconds.items()})
    elif "mln:m-explain" in settings.explainers:
        explanations["mln:m-explain"] = explain(est, "mln:m-explain", data)
        timings["explain.mln:m-explain"] = time.perf_counter() - t1
    return explanations, timings


def _metrics(est: MLNEstimator, predictions: pd.DataFrame) -> dict[str, float]:
    """Accuracy and Brier score over the labelled (held-out) query atoms; Gibbs convergence figures."""
    metrics: dict[str, float] = {}
    labelled = predictions.dropna(subset=["truth"])
    if len(labelled) and set(labelled["truth"].unique()) <= {0.0, 1.0}:
        truth = labelled["truth"].astype(int).to_numpy()
        metrics["accuracy"] = float(accuracy_score(truth, (labelled["prediction"] >= 0.5).astype(int)))
        metrics["brier"] = float(brier_score_loss(truth, labelled["prediction"].clip(0, 1)))
    if est.model_.method_ in ("gibbs", "mcsat"):
        d = est.model_.result_.diagnostics()
        metrics.update({"max_rhat": float(d["max_rhat"]), "max_se": float(d["max_se"]),
                        "rhat_above_1.1": float(d["atoms_above_threshold"]), "converged": float(bool(d["converged"]))})
    return metrics


def select_query(query: str, dataset: RelationalDataset, predictions: pd.DataFrame,
                 explanations: dict[str, ExplanationSet]) -> tuple[pd.DataFrame, dict[str, ExplanationSet]]:
    """The predictions and explanations of the atoms the query selects (`xcore.mln.queries`);
    `ConfigError` when a pattern has the wrong arity or nothing matches."""
    patterns = parse_query(query)
    arity = dataset.predicate(patterns[0].predicate).arity
    bad = next((p for p in patterns if p.args is not None and len(p.args) != arity), None)
    if bad is not None:
        raise ConfigError(f"{bad.predicate} takes {arity} argument(s), the query gives {len(bad.args or ())}",
                          field="query")
    constants = {str(c) for t in dataset.types() for c in dataset.constants(t)}
    keep = matching_atoms(split_atom_texts(predictions["target"].tolist()), patterns, constants)
    if not keep.any():
        raise ConfigError(f"the query {query!r} matches none of the {len(predictions)} query atoms", field="query")
    chosen = predictions["target"][keep].tolist()
    predictions = predictions[keep].reset_index(drop=True)
    picked = {k: ExplanationSet([e[t] for t in chosen if t in e], method=e.method, meta={**e.meta, "query": query})
              for k, e in explanations.items()}
    return predictions, picked
