"""Each ESMS prediction explained by its ground rules, ranked by the force they exert on it at the MAP
state (`xcore.psl.explain`), checked by intervention in `xcore.esms.verify`."""

from __future__ import annotations

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.esms.estimator import ESMSEstimator
from xcore.esms.verify import measure_ground_rules
from xcore.explain.types import Explanation, ExplanationSet, ScoreSpec
from xcore.methods.base import Explainer, Measurement, Run
from xcore.runtime import Progress

GROUND_RULES = "esms:ground-rules"

GROUND_RULE_SCORE = ScoreSpec(
    label="|w·∂φ/∂y|",
    measures="the force a ground rule exerts on the target at the MAP state: the rule's weight times the "
             "gradient of its (squared) hinge with respect to the target's value (the effect column is the "
             "signed force).",
    signed=False, unit="energy per unit of the target's value")


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
        """The target's MAP value with minus without each ground rule (`xcore.esms.verify`)."""
        return measure_ground_rules(run, explanation, k)

    def explain(self, model: ESMSEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        """Ground-rule explanations of the target's atoms of `data` (None: where `model.predict()` predicts)."""
        model.check_fitted()
        exps = model.applied(data).explain_all()
        wanted = set(model.predict(data)["target"]) if targets is None else None
        if targets is not None:
            missing = [t for t in targets if t not in exps]
            if missing:
                raise XcoreError(f"no target atom {missing[0]!r} in the explained data")
            exps = ExplanationSet([exps[t] for t in targets], method=exps.method, meta=exps.meta)
        else:
            exps = ExplanationSet([e for e in exps if e.target in wanted], method=exps.method, meta=exps.meta)
        return self.finish(exps)
