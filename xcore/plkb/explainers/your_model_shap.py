"""Shapley values of the user's own model (an ONNX file) for a row, beside the classifier that is its surrogate."""

from __future__ import annotations

from xcore.data.dataset import RelationalDataset
from xcore.explain.types import ExplanationSet
from xcore.methods.base import Explainer
from xcore.plkb.estimator import PLKBEstimator
from xcore.plkb.explainers.rows import fitted_reason, per_row
from xcore.plkb.scores import MODEL_SHAP, MODEL_SHAP_SCORE
from xcore.runtime import Progress


class YourModelShapExplainer(Explainer):
    """Shapley values of the user's own model (an ONNX file) for a row: exact interventional values of its
    probability over its function, computed with onnxruntime (`xcore.explain.model_file`)."""

    name = MODEL_SHAP
    title = "Shapley values of your model"
    score_spec = MODEL_SHAP_SCORE
    settings_fields = ("explain_rows",)
    prediction_column = None  # it explains the user's model, not the classifier

    def supports(self, model: object) -> str | None:
        reason = fitted_reason(model)
        if reason is None and getattr(model, "user_model_", None) is None:
            return "no model file of yours is attached to the data (load an ONNX model on the Data page or --model)"
        return reason

    def explain(self, model: PLKBEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        exps = per_row(model, data, targets, progress,
                       lambda t: model.user_model_.shap_explanation(model.user_table_, t, seed=model.settings.seed),
                       "Shapley values of your model for")
        return self.finish(ExplanationSet(exps, method=self.name))
