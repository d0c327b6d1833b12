"""Surrogate runs: a method fitted to a user's model's predictions explains that model, and says how
faithfully it reproduces it (issue 28).

`run_method` calls `check_surrogate` before and `attach_fidelity` after any run on a dataset that carries
`user_predictions` (`xcore.data.predictions.with_predictions`), so the Python API, the command line and the
pages all report the same figures. A run's prediction rows are its held-out targets (m-NLIL's test
queries, DRM's held-out fold, the classifier's test rows, ESMS's test split), so fidelity is
measured on them: agreement of classes, and R^2 / MAE of scores where the user gave scores (or soft
truth values). Accuracy against the data's own truth sits beside it where the data has truth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xcore.data.predictions import class_text, read_predictions, with_predictions
from xcore.errors import XcoreError
from xcore.explain.model_file import load_model_file
from xcore.methods.catalog import catalog
from xcore.methods.registry import REGISTRY

LOW_AGREEMENT = 0.8
"""A surrogate whose class agreement with the user's model is below this is flagged."""
LOW_R2 = 0.5
"""A surrogate of scores whose R^2 against the user's scores is below this is flagged."""
SCORE_COLUMNS = ("probability", "mid")
"""Prediction-frame columns holding a method's probability of the positive class, in order of preference."""


def surrogate_methods() -> dict[str, str]:
    """Registry key -> what acts as the surrogate, for every method that can be one (light catalog)."""
    return {k: info.surrogate for k, info in catalog().items() if info.surrogate}


def check_surrogate(spec: Any) -> None:
    """Refuse a method that cannot be fitted to a user's predictions, naming those that can."""
    if not spec.surrogate:
        names = ", ".join(f"{k} ({v})" for k, v in surrogate_methods().items())
        raise XcoreError(f"{spec.title} cannot explain your model's predictions (it is not a surrogate method); "
                         f"methods that can: {names}")


def _positive(values: pd.Series) -> np.ndarray:
    """A method's predictions as positive / negative (relational truth values at 0.5; a binarised class)."""
    num = pd.to_numeric(values, errors="coerce")
    if num.notna().all():
        return num.to_numpy(dtype=float) >= 0.5
    return ~values.astype(str).str.startswith("not ").to_numpy()


def _class_of(values: pd.Series, user_classes: pd.Series, positive: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(method's class, user's class) as comparable arrays."""
    num = pd.to_numeric(values, errors="coerce")
    if num.notna().all() and pd.to_numeric(user_classes, errors="coerce").notna().all() and positive is None:
        return (num.to_numpy(dtype=float) >= 0.5), (pd.to_numeric(user_classes).to_numpy(dtype=float) >= 0.5)
    ours = values.map(class_text).to_numpy(dtype=object)
    theirs = user_classes.map(class_text).to_numpy(dtype=object)
    if positive is not None and any(str(v).startswith("not ") for v in ours):  # one class against the rest
        return ours == positive, theirs == positive
    return ours, theirs


def _score_of(predictions: pd.DataFrame) -> np.ndarray | None:
    """The method's probability (or soft value) per prediction row, or None when it has none."""
    for c in SCORE_COLUMNS:
        if c in predictions.columns:
            return pd.to_numeric(predictions[c], errors="coerce").to_numpy(dtype=float)
    num = pd.to_numeric(predictions["prediction"], errors="coerce")
    return num.to_numpy(dtype=float) if num.notna().all() else None


def r2_mae(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float]:
    """R^2 of `ours` as a prediction of `theirs` (1 - SSE / SST; NaN when `theirs` is constant) and MAE."""
    err = ours - theirs
    sst = float(((theirs - theirs.mean()) ** 2).sum())
    r2 = float(1.0 - (err ** 2).sum() / sst) if sst > 0 else float("nan")
    return r2, float(np.abs(err).mean())


def _positive_class(run: Any, predictions: Any) -> str | None:
    """The class the surrogate explains against the rest, for a table (None: both classes as they are)."""
    if not predictions.tabular:
        return None
    fitted = getattr(run.model, "classifier_", None)
    positive = None if fitted is None else str(getattr(fitted, "positive_class_", None))
    if positive is None and run.settings_dict.get("positive_class") is not None:
        positive = str(run.settings_dict["positive_class"])
    return positive


def _truth_accuracies(rows: pd.DataFrame, theirs: pd.DataFrame, ours_c: np.ndarray, positive: str | None,
                      tabular: bool) -> dict[str, float]:
    """``truth_accuracy`` (the surrogate's) and ``your_model_truth_accuracy`` (the user's model's) against the
    data's truth on the compared targets that have one (empty when none has)."""
    truth = theirs["truth"]
    known = truth.notna().to_numpy()
    if not known.any():
        return {}
    _, truth_c = _class_of(rows["prediction"].reset_index(drop=True)[known], truth.reset_index(drop=True)[known],
                           positive)
    out = {"truth_accuracy": float(np.mean(ours_c[known] == truth_c))}
    if tabular:
        user_c = theirs["prediction"].map(str).to_numpy(dtype=object)[known]
        truth_t = truth.map(str).to_numpy(dtype=object)[known]
        if positive is not None and any(str(v).startswith("not ") for v in rows["prediction"]):
            user_c, truth_t = user_c == positive, truth_t == positive
        out["your_model_truth_accuracy"] = float(np.mean(user_c == truth_t))
    else:
        out["your_model_truth_accuracy"] = float(np.mean(
            (theirs["prediction"].to_numpy(dtype=float)[known] >= 0.5) == (truth.to_numpy(dtype=float)[known] >= 0.5)))
    return out


def fidelity_metrics(run: Any, predictions: Any) -> tuple[dict[str, float], pd.DataFrame]:
    """(metrics, prediction frame with the user's model's columns) of a surrogate run.

    Metrics: ``fidelity`` (class agreement with the user's model on the run's held-out targets; not for
    soft truth values, which are scores), ``fidelity_r2`` / ``fidelity_mae`` (scores: the method's probability
    against the user's score, or against the soft predictions), ``fidelity_targets`` (how many held-out
    targets were compared), ``fidelity_low`` (1 when flagged), ``truth_accuracy`` and
    ``your_model_truth_accuracy`` (the surrogate's and the user's model's accuracy against the data's truth
    on the same targets, where it has truth).
    """
    frame = run.predictions.copy()
    user = predictions.frame.set_index("target")
    on = frame["target"].astype(str).isin(user.index).to_numpy()
    if not on.any():
        raise XcoreError("none of the run's held-out targets is in your predictions file: give predictions for the "
                         "targets the method holds out (the data's targets / test rows)")
    rows = frame.loc[on]
    theirs = user.loc[rows["target"].astype(str)]
    positive = _positive_class(run, predictions)
    out: dict[str, float] = {"fidelity_targets": float(on.sum())}
    ours_c, theirs_c = _class_of(rows["prediction"].reset_index(drop=True),
                                 theirs["prediction"].reset_index(drop=True), positive)
    if predictions.kind == "class":  # soft truth values are compared as scores (R^2, MAE) only
        out["fidelity"] = float(np.mean(ours_c == theirs_c))
    score = _score_of(rows)
    if predictions.kind == "score" or predictions.has_score:
        target_score = theirs["score"].to_numpy(dtype=float) if predictions.has_score \
            else theirs["prediction"].to_numpy(dtype=float)
        if score is not None:
            ok = np.isfinite(target_score) & np.isfinite(score)
            if ok.sum() >= 2:
                out["fidelity_r2"], out["fidelity_mae"] = r2_mae(score[ok], target_score[ok])
    out |= _truth_accuracies(rows, theirs, ours_c, positive, predictions.tabular)
    out["fidelity_low"] = float(is_low(out))
    held_in = getattr(run.model, "in_sample_", None)
    if isinstance(held_in, dict) and any(held_in.values()):
        out["fidelity_in_sample"] = 1.0
    _restore_truth(run, frame, user, on)
    frame["your_model"] = frame["target"].astype(str).map(user["prediction"])
    if predictions.has_score:
        frame["your_score"] = frame["target"].astype(str).map(user["score"])
    return out, frame


def _restore_truth(run: Any, frame: pd.DataFrame, user: pd.DataFrame, on: np.ndarray) -> None:
    """The data's own truth back in the run's ``truth`` column and explanations (the method was fitted to
    the user's predictions, so it saw those as truth); NaN where the data has none."""
    truth = frame["target"].astype(str).map(user["truth"])
    numeric = pd.to_numeric(truth, errors="coerce")
    frame["truth"] = numeric if numeric.notna().sum() == truth.notna().sum() else truth
    of = dict(zip(frame["target"].astype(str), frame["truth"]))
    for exps in run.explanations.values():
        for e in exps:
            if e.target in of:
                v = of[e.target]
                e.truth = None if v is None or (isinstance(v, float) and np.isnan(v)) else \
                    (float(v) if isinstance(v, (int, float, np.number)) else e.truth)


def is_low(metrics: dict[str, float]) -> bool:
    """True when a surrogate reproduces the user's model poorly: class agreement < 0.8, or, for a model of
    scores (no class agreement), R^2 < 0.5."""
    if "fidelity" in metrics:
        return metrics["fidelity"] < LOW_AGREEMENT
    r2 = metrics.get("fidelity_r2")
    return r2 is not None and np.isfinite(r2) and r2 < LOW_R2


def attach_fidelity(run: Any, predictions: Any) -> Any:
    """The run with its fidelity to the user's model in `metrics` and the user's outputs beside its
    predictions (``your_model``, ``your_score``); `extras['surrogate']` holds the file name."""
    metrics, frame = fidelity_metrics(run, predictions)
    run.predictions = frame
    run.metrics = {**metrics, **{k: v for k, v in run.metrics.items() if k not in metrics}}
    said = fidelity_sentence(run.metrics)
    if said is not None:  # every explanation of the surrogate says what it explains, and how faithfully
        explainers = REGISTRY[run.method].explainer_objects()
        for name, exps in run.explanations.items():
            if name in explainers and explainers[name].prediction_column is None:
                continue  # it explains the user's model itself (e.g. its Shapley values), not the surrogate
            for e in exps:
                e.meta = {**e.meta, "surrogate_fidelity": said[0], "surrogate_low": said[1]}
    run.extras["surrogate"] = {"file": predictions.file, "kind": predictions.kind, "targets": len(predictions)}
    return run


def fidelity_sentence(metrics: dict[str, Any]) -> tuple[str, bool] | None:
    """("this explains your model's prediction, which the surrogate reproduces with fidelity X ...", low)
    for a surrogate run's metrics; None for a run that explains its own model."""
    if "fidelity" not in metrics and "fidelity_r2" not in metrics:
        return None
    n = int(metrics.get("fidelity_targets", 0))
    parts = []
    if "fidelity" in metrics:
        parts.append(f"{metrics['fidelity']:.2f} (agreement on {n} held-out targets)")
    if "fidelity_r2" in metrics and np.isfinite(metrics["fidelity_r2"]):
        parts.append(f"score R² {metrics['fidelity_r2']:.2f}, MAE {metrics.get('fidelity_mae', float('nan')):.3f}")
    text = ("This explains your model's prediction, which the surrogate reproduces with fidelity "
            + "; ".join(parts) + ".")
    if "truth_accuracy" in metrics:
        text += (f" Against the data's truth: surrogate accuracy {metrics['truth_accuracy']:.2f}, your model's "
                 f"{metrics.get('your_model_truth_accuracy', float('nan')):.2f}.")
    if metrics.get("fidelity_in_sample"):
        text += " (Measured in sample: the data has no held-out labelled targets for some heads.)"
    low = bool(metrics.get("fidelity_low", 0.0)) or is_low(metrics)
    if low:
        text += (" Warning: low fidelity — the surrogate does not reproduce your model well, so its explanation "
                 "may not be why your model decided.")
    return text, low


def attach_user_model(dataset: Any, name: str, data: bytes) -> Any:
    """`dataset` with a user's model attached from an uploaded file: a predictions CSV (``.csv``, ``.tsv``,
    ``.txt``) or, for a table, an ONNX model (``.onnx``; its predictions of every row). Other model files
    (pickles, checkpoints) are refused with a `DataError`; nothing is unpickled."""
    if getattr(dataset, "user_predictions", None) is not None:
        raise XcoreError("a model's predictions are already attached to this dataset: detach them first")
    if Path(name).suffix.lower() in (".csv", ".tsv", ".txt"):
        return with_predictions(dataset, read_predictions((name, data), dataset))
    model = load_model_file((name, data), dataset)
    return with_predictions(dataset, model.user_predictions(dataset))


def attached_summary(dataset: Any) -> str | None:
    """One line on the user's model attached to `dataset` (None when there is none)."""
    user = getattr(dataset, "user_predictions", None)
    if user is None:
        return None
    what = f"the ONNX model {user.model.file}" if user.model is not None else f"the predictions in {user.file}"
    names = ", ".join(f"{k} ({v})" for k, v in surrogate_methods().items())
    return (f"Explaining your model: {len(user):,} {'classes' if user.kind == 'class' else 'scores'} from {what} "
            f"are this dataset's labels. Surrogate methods fit to them and report their fidelity: {names}.")
