"""The probabilistic-logic classifier as a registered method: settings, estimator, the decisive-feature
and Shapley explainers, and its `Run`."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.methods.base import Estimator, Explainer, Measurement, MethodSpec, Run, prediction_frame
from xcore.methods.driver import explain, fitted_for
from xcore.plkb.verify import measure_decisive, measure_shapley
from xcore.plkb.workflow import PLKBRun, PLKBSettings, identifier_columns, run_plkb, table_of
from xcore.runtime import Progress, scaled

DECISIVE = "plkb:decisive"
UNDECIDED_TOL = 1e-6
"""An interval within this of [0, 1] decides nothing."""
SHAPLEY = "plkb:shapley"
MODEL_SHAP = "plkb:your-model-shap"
MODEL_SHAP_ROWS = 20
"""Rows whose Shapley values of the user's model a run computes up front (others on demand)."""

DECISIVE_SCORE = ScoreSpec(
    label="ω(POS) midpoint − 0.5",
    measures="how far this set of the row's features alone decides the prediction: the midpoint of the LP's "
             "probability interval for POS when only these features are known, minus the undecided 0.5 "
             "(±0.5: decides it outright; 0: decides nothing); the first item is the set that decides the "
             "prediction most firmly on the predicted side.",
    signed=True, unit="probability")

SHAPLEY_SCORE = ScoreSpec(
    label="Shapley value φ",
    measures="the feature's average marginal change of the ω(POS) midpoint over coalitions of known "
             "features (exact up to 12 features, else sampled permutations).",
    signed=True, unit="probability")

MODEL_SHAP_SCORE = ScoreSpec(
    label="Shapley value φ of your model",
    measures="the feature's average marginal change of your model's probability of its positive class over "
             "coalitions of known features, the others drawn from 50 background rows (interventional; exact up to "
             "12 features), computed on your ONNX model with onnxruntime.",
    signed=True, unit="probability")

CLAUSE_SCORE = ScoreSpec(label="clause probability",
                         measures="the probability the knowledge base gives the clause.", signed=False,
                         unit="probability", directed=False)


def row_target(index: object) -> str:
    """The canonical target text of a table row."""
    return f"row {index}"


def applicable(dataset: RelationalDataset) -> str | None:
    """Why the classifier cannot run on `dataset`, or None when it can."""
    if dataset.tabular is None or dataset.label is None:
        return ("it classifies the rows of a table with a label column: load a tabular CSV (e.g. the "
                "Mushroom sample) or generate a table on this page")
    if dataset.tabular[dataset.label].dropna().astype(str).nunique() < 2:
        return f"the label column {dataset.label!r} has fewer than two classes"
    return None


def default_settings(dataset: RelationalDataset) -> PLKBSettings:
    """Tree KB on the dataset's label, identifier-like columns left out."""
    table, label = table_of(dataset)
    return PLKBSettings(label=label, drop=tuple(identifier_columns(table, label)))


class PLKBEstimator(Estimator):
    """Fits the KB classifier on a seeded split of the dataset's table and predicts the test rows."""

    def __init__(self, settings: PLKBSettings) -> None:
        self.settings = settings

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "PLKBEstimator":
        table, _ = table_of(data)
        self.run_: PLKBRun = run_plkb(table, self.settings, progress=progress)
        self.classifier_ = self.run_.clf
        user = getattr(data, "user_predictions", None)
        self.user_model_ = getattr(user, "model", None)
        """The user's own model (an ONNX file) this classifier is a surrogate of, if it came as a file."""
        self.user_table_ = table if self.user_model_ is not None else None
        return self

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """The test rows (`data` None) or every row of `data`'s table, one frame shape."""
        self.check_fitted()
        if data is None:
            p = self.run_.predictions
        else:
            table, label = table_of(data)
            X = table.drop(columns=[label, *self.settings.drop], errors="ignore")
            p = self.classifier_.predictions_frame(X, table[label].astype(str) if label in table else None)
        truth = p["truth"] if "truth" in p.columns else None
        extra = {c: p[c] for c in ("lo", "hi", "mid", "correct", "n_clauses") if c in p.columns}
        return prediction_frame(p["row"].map(row_target), p["prediction"].astype(str),
                                None if truth is None else truth.astype(str), **extra)

    def row(self, target: str) -> pd.DataFrame:
        """The test row named by a target text (``row 17``) as a one-row frame."""
        self.check_fitted()
        index = target[4:] if target.startswith("row ") else target
        X = self.run_.X_test
        hits = [i for i, ix in enumerate(X.index) if str(ix) == index]
        if not hits:
            raise XcoreError(f"{target!r} is not a test row of this run")
        return X.iloc[[hits[0]]]

    def feature_options(self) -> dict[str, list]:
        """Each feature column with the values seen in training (numeric columns: their sorted unique values)."""
        self.check_fitted()
        X = self.run_.X_train
        return {str(c): sorted(pd.unique(X[c].dropna()).tolist(), key=lambda v: (str(type(v)), v)) for c in X.columns}

    def what_if(self, values: dict[str, object], k: int | None = None) -> Explanation:
        """The decisive-feature explanation of a row built from `values` (feature -> value; a missing or
        None value leaves that feature unknown), with omega(POS)'s interval for the whole row in meta."""
        self.check_fitted()
        columns = list(self.run_.X_train.columns)
        unknown = sorted(set(values) - set(map(str, columns)))
        if unknown:
            raise XcoreError(f"unknown feature {unknown[0]!r}; the model's features are: {', '.join(map(str, columns))}")
        row = pd.DataFrame([{c: values.get(str(c)) for c in columns}], index=["what-if"])
        for c in columns:  # keep the training dtypes so numeric bins apply
            if pd.api.types.is_numeric_dtype(self.run_.X_train[c]):
                row[c] = pd.to_numeric(row[c], errors="coerce")
        k = min(k or self.settings.k, len(columns))
        exp = self.classifier_.explain(row, k).to_explanation()
        iv = self.classifier_.predict_interval(row).iloc[0]
        items = exp.items
        meta = {**exp.meta, **undecided_note(items, k), "omega_lo": float(iv["lo"]), "omega_hi": float(iv["hi"]),
                "row": {str(c): values.get(str(c)) for c in columns}}
        if getattr(self, "user_model_", None) is not None:
            meta.update(self.user_model_what_if(values))
        return replace(exp, items=items, target="row what-if", prediction=float(iv["mid"]), meta=meta,
                       method=DECISIVE, score_spec=DECISIVE_SCORE)

    def user_model_what_if(self, values: dict[str, object]) -> dict[str, object]:
        """The user's model's prediction of the edited row (columns it reads but `values` lacks: unknown)."""
        model, table = self.user_model_, self.user_table_
        row = pd.DataFrame([{c: values.get(c) for c in model.columns}])
        for c in model.columns:
            if pd.api.types.is_numeric_dtype(table[c]):
                row[c] = pd.to_numeric(row[c], errors="coerce")
        said = model.what_if(row, {})
        probs = ", ".join(f"P({k}) = {v:.3f}" for k, v in said["probabilities"].items())
        return {"your_model": said["prediction"], "your_model_probabilities": said["probabilities"],
                "note": f"Your model predicts {said['prediction']} for this row" + (f" ({probs})" if probs else "")
                        + "; the decisive features below are the surrogate's."}

    def kb_summary(self) -> Explanation:
        """The knowledge base as one explanation: each clause with its probability."""
        self.check_fitted()
        kb = self.classifier_.kb_.to_frame()
        items = [ExplanationItem(kind="feature_clause", text=str(r.clause), natural=str(r.clause), score=float(r.p),
                                 extras={"support": int(r.support)})
                 for r in kb.itertuples(index=False)]
        return Explanation(target="model", target_text=f"{self.settings.kb} KB for {self.settings.label}",
                           method="plkb", items=items, ordering="given", score_spec=CLAUSE_SCORE)


def undecided_note(items: list[ExplanationItem], k: int) -> dict[str, object]:
    """A note when no k-feature set decides the row (the best sub-query leaves ω(POS) anywhere in [0, 1])."""
    if items and items[0].extras.get("omega_lo", 1.0) <= UNDECIDED_TOL \
            and items[0].extras.get("omega_hi", 0.0) >= 1.0 - UNDECIDED_TOL:
        return {"undecided": True, "note": f"No set of {k} features decides this prediction: every {k}-feature "
                                           "sub-query leaves ω(POS) anywhere in [0, 1]. Try a larger k."}
    return {}


def decides(items: list[ExplanationItem]) -> bool:
    """True when the best set's ω(POS) interval lies on one side of 0.5: those features alone decide."""
    if not items:
        return False
    lo, hi = items[0].extras.get("omega_lo", 0.0), items[0].extras.get("omega_hi", 1.0)
    return bool(lo >= 0.5 or hi <= 0.5) and not (lo <= UNDECIDED_TOL and hi >= 1.0 - UNDECIDED_TOL)


def decisive_for_row(model: PLKBEstimator, x: pd.DataFrame, k: int) -> tuple[Explanation, int]:
    """The row's decisive-feature explanation with k features, or (with `k_auto`) with the smallest k
    from `k` up to `k_max` whose best set decides the prediction; returns it and the k used."""
    s = model.settings
    n = x.shape[1]
    used = min(k, n)
    exp = model.classifier_.explain(x, used).to_explanation()
    while s.k_auto and not decides(exp.items) and used < min(s.k_max, n):
        used += 1
        exp = model.classifier_.explain(x, used).to_explanation()
    return exp, used


def _targets_of(model: PLKBEstimator, targets: list[str] | None) -> list[str]:
    if targets is not None:
        return list(targets)
    rows = model.run_.X_test.index[: model.settings.explain_rows]
    return [row_target(i) for i in rows]


class DecisiveExplainer(Explainer):
    """The k features of a row whose sub-query decides its prediction most firmly (the paper's explanation)."""

    name = DECISIVE
    title = "Decisive features"
    score_spec = DECISIVE_SCORE
    settings_fields = ("k", "k_auto", "k_max", "explain_rows")
    prediction_column = "mid"  # the ω(POS) midpoint behind the predicted class

    def measure(self, run: Run, data: RelationalDataset | None, explanation: Explanation,
                k: int) -> Measurement | None:
        """ω(POS) knowing only each set's features minus knowing none (`xcore.plkb.verify`)."""
        return measure_decisive(run, explanation, k)

    def __init__(self, k: int | None = None) -> None:
        self.k = k

    def supports(self, model: object) -> str | None:
        if not isinstance(model, PLKBEstimator):
            return "explains the probabilistic-logic classifier only"
        return None if model.is_fitted() else "the model is not fitted"

    def explain(self, model: PLKBEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        model.check_fitted()
        k = self.k or model.settings.k
        wanted = _targets_of(model, targets)
        report = scaled(progress, 0.0, 1.0)
        exps = []
        for i, target in enumerate(wanted):  # one LP search per row: the unit of work is a row, not an atom
            x = model.row(target)
            exp, used = decisive_for_row(model, x, k)
            items = exp.items
            meta = {**exp.meta, "k": used, "k_asked": k, **undecided_note(items, used)}
            if used > k and decides(items):
                meta["note"] = f"No set of {k} features decides this row; the smallest that does has {used}."
            exps.append(replace(exp, items=items, meta=meta, target=target,
                                target_text=f"{target}: {model.settings.label} predicted "
                                            f"{exp.meta.get('prediction', '')}"))
            report((i + 1) / max(len(wanted), 1), f"decisive features of {target}")
        return self.finish(ExplanationSet(exps, method=self.name, meta={"k": k}))


def per_row(model: "PLKBEstimator", targets: list[str] | None, progress: Progress | None,
            one: Callable[[str], Explanation], what: str) -> list[Explanation]:
    """`one(target)` for each requested row (one LP or Shapley computation per row), progress after each."""
    model.check_fitted()
    wanted = _targets_of(model, targets)
    report = scaled(progress, 0.0, 1.0)
    exps = []
    for i, target in enumerate(wanted):
        exps.append(one(target))
        report((i + 1) / max(len(wanted), 1), f"{what} {target}")
    return exps


class ShapleyExplainer(Explainer):
    """Each feature's Shapley value for the row's ω(POS) midpoint (the paper's comparison with SHAP)."""

    name = SHAPLEY
    title = "Shapley values"
    score_spec = SHAPLEY_SCORE
    settings_fields = ("explain_rows",)
    prediction_column = "mid"

    def measure(self, run: Run, data: RelationalDataset | None, explanation: Explanation,
                k: int) -> Measurement | None:
        """ω(POS) of the full row minus the row without each feature (`xcore.plkb.verify`)."""
        return measure_shapley(run, explanation, k)

    def supports(self, model: object) -> str | None:
        return DecisiveExplainer().supports(model)

    def explain(self, model: PLKBEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        def one(target: str) -> Explanation:
            exp = model.classifier_.shapley(model.row(target)).to_explanation(target=target)
            return replace(exp, items=[replace(it, kind="feature") for it in exp.items])

        exps = per_row(model, targets, progress, one, "Shapley values of")
        return self.finish(ExplanationSet(exps, method=self.name))


class YourModelShapExplainer(Explainer):
    """Shapley values of the user's own model (an ONNX file) for a row: exact interventional values of its
    probability over its function, computed with onnxruntime (`xcore.explain.model_file`)."""

    name = MODEL_SHAP
    title = "Shapley values of your model"
    score_spec = MODEL_SHAP_SCORE
    settings_fields = ("explain_rows",)
    prediction_column = None  # it explains the user's model, not the classifier

    def supports(self, model: object) -> str | None:
        reason = DecisiveExplainer().supports(model)
        if reason is None and getattr(model, "user_model_", None) is None:
            return "no model file of yours is attached to the data (load an ONNX model on the Data page or --model)"
        return reason

    def explain(self, model: PLKBEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        exps = per_row(model, targets, progress,
                       lambda t: model.user_model_.shap_explanation(model.user_table_, t, seed=model.settings.seed),
                       "Shapley values of your model for")
        return self.finish(ExplanationSet(exps, method=self.name))


EXPLAINERS: dict[str, Explainer] = {DECISIVE: DecisiveExplainer(), SHAPLEY: ShapleyExplainer(),
                                    MODEL_SHAP: YourModelShapExplainer()}


def run(dataset: RelationalDataset, settings: PLKBSettings, progress: Progress | None = None,
        estimator: PLKBEstimator | None = None) -> Run:
    """Train on the seeded split (or reuse `estimator`, a cached fit of the same model), predict the
    test rows, explain the first `explain_rows` of them through the explain driver."""
    t0 = time.perf_counter()
    est = fitted_for(settings, dataset, scaled(progress, 0.0, 0.6), estimator)
    t1 = time.perf_counter()
    preds = est.predict()
    exps = explain(est, EXPLAINERS[DECISIVE], dataset, progress=scaled(progress, 0.6, 0.9), predictions=preds)
    explanations = {DECISIVE: exps}
    if est.user_model_ is not None:  # the user's own model: its Shapley values for the first test rows
        rows = _targets_of(est, None)[:MODEL_SHAP_ROWS]
        explanations[MODEL_SHAP] = explain(est, EXPLAINERS[MODEL_SHAP], dataset, targets=rows,
                                           progress=scaled(progress, 0.9, 1.0), predictions=preds)
    t2 = time.perf_counter()
    return Run(method="plkb", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations=explanations, summary=est.kb_summary(), metrics=est.run_.metrics(),
               timings={"fit": t1 - t0, "explain": t2 - t1}, dataset=dataset.name, model=est,
               extras={"plkb": est.run_})


SPEC = MethodSpec(
    key="plkb", title="Probabilistic-logic classifier", settings_type=PLKBSettings, explainers=(DECISIVE, SHAPLEY, MODEL_SHAP),
    run=run, applicable=applicable, default_settings=default_settings, sample="titanic_like",
    estimator_type=PLKBEstimator, explainer_map=EXPLAINERS, surrogate="the classifier's knowledge base", page="app_pages/plkb.py", icon=":material/table_chart:",
    paper="Fan, Liu & Henderson, Explainable AI for Classification using Probabilistic Logic Inference")
