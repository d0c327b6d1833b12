"""The maximal-fidelity explainer: unstructured feature clauses agreeing with the network on the
instance's Hamming neighbourhood, the relevance choice first (Srinivasan, Vig & Bain)."""

from __future__ import annotations

from xcore.data.dataset import RelationalDataset
from xcore.drm.cross_fit import CrossFittedDRM
from xcore.drm.estimator import DRMEstimator
from xcore.drm.explain import LocalExplanation, clause_text, unfolded
from xcore.drm.explainers.common import NeighbourhoodExplainer, definitions, explained_locals
from xcore.drm.relevance import Relevance
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.runtime import Progress

FIDELITY = "drm:fidelity"

FIDELITY_SCORE = ScoreSpec(
    label="fidelity",
    measures="the share of the instance's Hamming neighbourhood (training instances within radius k, widened "
             "until it holds the settings' number of neighbours; the instance itself included) on which the "
             "clause agrees with the network: covered neighbours the network puts in the same class plus "
             "uncovered ones it "
             "puts in the other class. Items are the maximal-fidelity clauses, the relevance choice first.",
    signed=False, unit="fraction of neighbours", directed=False)


class FidelityExplainer(NeighbourhoodExplainer):
    """The maximal-fidelity unstructured feature clauses for a prediction, relevance choice first."""

    name = FIDELITY
    title = "Maximal-fidelity clauses"
    score_spec = FIDELITY_SCORE
    def explain(self, model: DRMEstimator | CrossFittedDRM, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        exps = [self.one(own, target, loc) for target, own, loc in explained_locals(model, data, targets, progress)]
        return self.finish(ExplanationSet(exps, method=self.name, meta={"hamming": model.settings.hamming}))

    def one(self, model: DRMEstimator, target: str, loc: LocalExplanation,
            relevance: Relevance | None = None) -> Explanation:
        """The explanation of one instance from its `LocalExplanation` (relevance labels from `relevance`)."""
        order = list(range(len(loc.clauses)))
        if loc.chosen >= 0:
            order.remove(loc.chosen)
            order.insert(0, loc.chosen)
        items = [self._item(model, loc, j, relevance or model.relevance_) for j in order]
        nb = loc.neighbourhood
        note = ("" if loc.fidelity_defined else
                f"fidelity undefined: no training instance within Hamming distance {loc.radius}")
        active = int(loc.instance.sum()) if loc.instance is not None else 0
        return Explanation(
            target=target, target_text=target, method=self.name,
            prediction=float(loc.prediction), prediction_kind="class",
            truth=None if loc.truth != loc.truth else float(loc.truth), items=items, ordering="given",
            score_spec=self.score_spec,
            meta={"hamming": int(loc.radius), "neighbours": int(len(nb.members)), "e_plus": int(nb.positive.sum()) + 1,
                  "e_minus": int((~nb.positive).sum()), "active_features": active,
                  "relevance_changes_choice": loc.relevance_changes_choice,
                  "fidelity_defined": loc.fidelity_defined, "note": note})

    def _item(self, model: DRMEstimator, loc: LocalExplanation, j: int, rel: Relevance) -> ExplanationItem:
        """One maximal-fidelity clause as an explanation item."""
        t, u = model.problem_.target, loc.clauses[j]
        return ExplanationItem(
            kind="feature_clause", text=clause_text(t, loc.prediction, u.features, model.features_),
            natural=unfolded(t, loc.prediction, u.features, model.features_), score=u.fidelity,
            atoms=[model.features_[f].name for f in u.features],
            extras={"relevance": rel.show(u.relevance) if u.relevance else "",
                    "relevance_intervals": [list(iv) for iv in u.relevance],
                    "definitions": definitions(model, u.features), "chosen_by_relevance": j == loc.chosen,
                    "chosen_by_fidelity_alone": j == loc.plain, "structured": len(loc.structured.get(j, []))})
