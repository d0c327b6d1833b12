"""The explain driver (PyG's `Explainer` is the model): one place that runs any registered explainer
on a fitted model, checks what it returns and stamps it, and the key under which a run's model and
its explanations are reused.

- `explain(model, explainer, data, targets, settings)` checks `supports`, runs the algorithm on a copy
  of the model carrying the explainer's settings (shared models are never mutated), validates the
  result (`validate`) and returns a stamped set.
- `validate(explanations, explainer, predictions)` is what every run's explanations pass: finite
  scores (by construction of the types), directions consistent with the score's meaning, and the
  prediction each explanation explains equal to the model's prediction for that target.
- A method's `Settings` marks which of its fields belong to its explainers (`explainer_fields`);
  `Settings.model_key()` hashes the rest, so changing an explainer setting re-explains a cached fitted
  model instead of refitting it (`fit_cached`).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import ExplanationSet
from xcore.methods.base import Estimator, Explainer, Settings
from xcore.methods.cache import RunCache
from xcore.methods.registry import REGISTRY
from xcore.runtime import Progress

PREDICTION_TOLERANCE = 1e-6
"""How far an explanation's prediction may be from the model's prediction for its target."""

FITS: RunCache[Estimator] = RunCache(max_entries=8)
"""Fitted estimators keyed by (method, data fingerprint, model key): re-explaining reuses them."""


class ExplainerOutputError(XcoreError):
    """An explainer returned something its own contract forbids (a wrong direction, another prediction)."""


def explainer_named(name: str) -> Explainer:
    """The registered explainer with registry name `name` (from the method that lists it)."""
    for key in REGISTRY:
        spec = REGISTRY[key]
        if name in spec.explainers:
            table = spec.explainer_objects()
            if name in table:
                return table[name]
    known = [n for k in REGISTRY for n in REGISTRY[k].explainers]
    raise XcoreError(f"unknown explainer {name!r}; registered: {', '.join(known)}")


def with_settings(model: Estimator, settings: Settings | None) -> Estimator:
    """`model` as a shallow copy carrying `settings` (same learned attributes): explainers read their
    knobs from `model.settings`, and the shared fitted model is left as it was."""
    if settings is None or getattr(model, "settings", None) == settings:
        return model
    current = getattr(model, "settings", None)
    if current is not None and type(current) is type(settings) and current.model_key() != settings.model_key():
        raise XcoreError("these settings describe another model (a model setting differs); refit instead")
    clone = copy.copy(model)
    clone.settings = settings  # type: ignore[attr-defined]
    return clone


def explain(model: Estimator, explainer: str | Explainer, data: RelationalDataset | None = None,
            targets: list[str] | None = None, settings: Settings | None = None,
            progress: Progress | None = None, predictions: pd.DataFrame | None = None) -> ExplanationSet:
    """Explain `model`'s predictions (all, or `targets`) with one explainer; validated and stamped.

    `settings` (the method's settings with other explainer fields) changes only how it explains; a
    changed model setting is refused. `predictions` (default: `model.predict()`) is what each
    explanation's prediction is checked against.
    """
    algo = explainer_named(explainer) if isinstance(explainer, str) else explainer
    reason = algo.supports(model)
    if reason is not None:
        raise XcoreError(f"{algo.title or algo.name} cannot explain this model: {reason}")
    model = with_settings(model, settings)
    out = algo.explain(model, data, targets, progress)
    if not isinstance(out, ExplanationSet):
        raise ExplainerOutputError(f"{algo.name} returned a {type(out).__name__}, not an ExplanationSet")
    stamped = algo.finish(ExplanationSet([copy.deepcopy(e) for e in out], method=out.method, meta=out.meta))
    if predictions is None and getattr(algo, "prediction_column", "prediction") is not None:
        predictions = model.predict()
    validate(stamped, algo, predictions)
    return stamped


def _column_of(explainer: Explainer) -> str | None:
    return getattr(explainer, "prediction_column", "prediction")


def validate(explanations: ExplanationSet, explainer: Explainer, predictions: pd.DataFrame | None) -> None:
    """Raise `ExplainerOutputError` unless every explanation keeps its explainer's contract:
    directions in line with the score spec (a signed score's sign is its direction, an undirected score
    has none), a non-zero effect's sign equal to its direction (checked by the item type), and the
    prediction it explains equal to the model's prediction for its target (in `prediction_column`)."""
    spec = explainer.score_spec
    for exp in explanations:
        for rank, it in enumerate(exp.items, start=1):
            where = f"{explainer.name}, {exp.target}, item {rank} ({it.text[:60]!r})"
            if not spec.directed and it.direction != 0:
                raise ExplainerOutputError(f"{where}: its score {spec.label!r} has no direction, but the item "
                                           f"says {it.direction:+d}")
            if spec.signed and it.score != 0 and it.direction != (1 if it.score > 0 else -1):
                raise ExplainerOutputError(f"{where}: the signed score {it.score:+.3g} and its direction "
                                           f"{it.direction:+d} disagree")
    column = _column_of(explainer)
    if predictions is None or column is None or column not in predictions.columns or not len(explanations):
        return
    model_pred = pd.Series(predictions[column].to_numpy(), index=predictions["target"].astype(str))
    model_pred = model_pred[~model_pred.index.duplicated()]
    for exp in explanations:
        if exp.target not in model_pred.index or exp.prediction is None:
            continue
        value = model_pred[exp.target]
        try:
            value = float(value)
        except (TypeError, ValueError):
            continue
        if math.isfinite(value) and abs(value - exp.prediction) > PREDICTION_TOLERANCE:
            raise ExplainerOutputError(f"{explainer.name} explains {exp.target} as if the model predicted "
                                       f"{exp.prediction:.6g}, but the model predicts {value:.6g}")


def validate_run(run: Any, explainers: dict[str, Explainer]) -> None:
    """`validate` every explanation set of a run against the run's own predictions."""
    for name, exps in run.explanations.items():
        algo = explainers.get(name)
        if algo is not None:
            validate(exps, algo, run.predictions)


def fit_cached(method: str, dataset: RelationalDataset, settings: Settings, progress: Progress | None = None,
               cache: RunCache | None = FITS) -> Estimator:
    """The estimator `settings` describe, fitted on `dataset`; reused from `cache` when only explainer
    settings changed since it was fitted (keyed by method, data fingerprint, `settings.model_key()`)."""
    def fit() -> Estimator:
        return settings.estimator().fit(dataset, progress=progress)

    if cache is None:
        return fit()
    return cache.get_or_run((method, dataset.fingerprint(), settings.model_key()), fit)


def agreement(directions: np.ndarray, measured: np.ndarray, tolerance: float) -> np.ndarray:
    """Per item: +1 the measured change has the stated direction, -1 it has the opposite one, 0 it did
    not move beyond `tolerance` (NaN measurements count as not moved)."""
    m = np.nan_to_num(np.asarray(measured, dtype=np.float64), nan=0.0)
    moved = np.abs(m) > tolerance
    return np.where(~moved, 0, np.where(np.sign(m) == np.asarray(directions), 1, -1))


def fitted_for(settings: Settings, dataset: RelationalDataset, progress: Progress | None = None,
               estimator: Estimator | None = None) -> Estimator:
    """The fitted estimator a method's `run` explains: `estimator` (a cached fit of the same model,
    carrying these settings) when given, else a new fit of `settings` on `dataset`."""
    if estimator is not None:
        return with_settings(estimator, settings)
    return settings.estimator().fit(dataset, progress=progress)
