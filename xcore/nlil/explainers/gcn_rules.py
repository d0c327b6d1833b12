"""The GCN-rule explainer: the rules m-NLIL learned from a GCN's predictions, scored by their agreement
with the GCN on the explained data."""

from __future__ import annotations

from xcore.data.dataset import RelationalDataset
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.nlil.estimator import NLILEstimator
from xcore.nlil.explainers.rules import RuleExplainer, prediction_rows
from xcore.runtime import Progress

GCN_RULES = "nlil:gcn-rules"

GCN_RULE_SCORE = ScoreSpec(
    label="fidelity to the GCN",
    measures="the share of held-out nodes on which the lifted rule (executed with DuckDB) agrees with the GCN's "
             "prediction; the rules were learned from the GCN's predictions, not from the truth.",
    signed=False, unit="fraction", directed=False)


class GCNRuleExplainer(RuleExplainer):
    """The rules m-NLIL learned from the GCN's predictions, scored by their agreement with the GCN."""

    name = GCN_RULES
    title = "Rules explaining the GCN (m-NLIL)"
    score_spec = GCN_RULE_SCORE
    prediction_column = "gcn"

    def supports(self, model: object) -> str | None:
        reason = super().supports(model)
        if reason is None and not model.gcn_:  # type: ignore[attr-defined]
            return "the model has no GCN: train with mode='gcn'"
        return reason

    def explain(self, model: NLILEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        base = RuleExplainer.explain(self, model, data, targets, progress)
        table = model.rule_frame(data).set_index(["head", "cluster"])
        _, preds = prediction_rows(model, data, [e.target for e in base], len(base))
        exps = []
        for e in base:
            h = preds.loc[e.target, "head"]
            items = [ExplanationItem(kind="rule", text=it.text, natural=it.natural, direction=it.direction,
                                     score=float(table.loc[(h, str(it.extras["cluster"])), "fidelity"]),
                                     extras={**it.extras, "precision": it.score}) for it in e.items]
            exps.append(Explanation(target=e.target, target_text=e.target_text,
                                    prediction=float(preds.loc[e.target, "gcn"]), truth=e.truth, items=items))
        return self.finish(ExplanationSet(exps, method=self.name))
