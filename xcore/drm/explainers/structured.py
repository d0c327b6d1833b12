"""The structured explainer: two-block alternatives (invented features) of the maximal-fidelity
clauses that raise their relevance at the same fidelity."""

from __future__ import annotations

from xcore.data.dataset import RelationalDataset
from xcore.drm.cross_fit import CrossFittedDRM
from xcore.drm.estimator import DRMEstimator
from xcore.drm.explain import LocalExplanation, clause_text, structured_text, unfolded
from xcore.drm.explainers.common import NeighbourhoodExplainer, definitions, explained_locals
from xcore.drm.explainers.fidelity import FIDELITY_SCORE
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.runtime import Progress

STRUCTURED = "drm:structured"


class StructuredExplainer(NeighbourhoodExplainer):
    """Structured alternatives (two invented features) of the maximal-fidelity clauses that raise relevance."""

    name = STRUCTURED
    title = "Structured explanations"
    score_spec = FIDELITY_SCORE
    def explain(self, model: DRMEstimator | CrossFittedDRM, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        exps = []
        for target, own, loc in explained_locals(model, data, targets, progress):
            exps.append(Explanation(target=target, target_text=target, method=self.name,
                                    prediction=float(loc.prediction), prediction_kind="class",
                                    truth=None if loc.truth != loc.truth else float(loc.truth),
                                    items=self._items(own, loc), ordering="given", score_spec=self.score_spec))
        return self.finish(ExplanationSet(exps, method=self.name))

    def _items(self, model: DRMEstimator, loc: LocalExplanation) -> list[ExplanationItem]:
        """Every structured alternative of every maximal-fidelity clause of one instance."""
        t, rel, feats_of = model.problem_.target, model.relevance_, model.features_
        items = []
        for j, structs in loc.structured.items():
            u = loc.clauses[j]
            for s in structs:
                feats = s.blocks[0] + s.blocks[1]
                items.append(ExplanationItem(
                    kind="rule", text=structured_text(t, loc.prediction, s, feats_of),
                    natural=unfolded(t, loc.prediction, u.features, feats_of), score=s.fidelity,
                    atoms=[feats_of[f].name for f in feats],
                    extras={"relevance": rel.show(s.relevance), "unstructured_relevance": rel.show(u.relevance),
                            "unstructured": clause_text(t, loc.prediction, u.features, feats_of),
                            "definitions": definitions(model, feats),
                            "blocks": [[feats_of[f].name for f in b] for b in s.blocks]}))
        return items
