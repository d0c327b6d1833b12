"""Each feature's Shapley value for a row's ω(POS) midpoint (the paper's comparison with SHAP)."""

from __future__ import annotations

from dataclasses import replace

from xcore.data.dataset import RelationalDataset
from xcore.explain.types import Explanation, ExplanationSet
from xcore.methods.base import Explainer, Measurement, Run
from xcore.plkb.estimator import PLKBEstimator
from xcore.plkb.explainers.rows import fitted_reason, per_row
from xcore.plkb.scores import SHAPLEY, SHAPLEY_SCORE
from xcore.plkb.verify import measure_shapley
from xcore.runtime import Progress


class ShapleyExplainer(Explainer):
    """Each feature's Shapley value for the row's ω(POS) midpoint, exact up to 12 features."""

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
        return fitted_reason(model)

    def explain(self, model: PLKBEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        def one(target: str) -> Explanation:
            exp = model.classifier_.shapley(model.row(target, data)).to_explanation(target=target)
            return replace(exp, items=[replace(it, kind="feature") for it in exp.items])

        exps = per_row(model, data, targets, progress, one, "Shapley values of")
        return self.finish(ExplanationSet(exps, method=self.name))
