"""GNNExplainer (torch_geometric.explain) on the GCN: the comparison baseline of m-NLIL's GCN rules."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.methods.base import Explainer
from xcore.nlil.estimator import NLILEstimator
from xcore.nlil.explainers.gcn_rules import GCNRuleExplainer
from xcore.nlil.explainers.rules import prediction_rows
from xcore.nlil.gnn import gnnexplainer_soft
from xcore.runtime import Progress

GNNEXPLAINER = "nlil:gnnexplainer"

EDGE_SCORE = ScoreSpec(
    label="GNNExplainer edge mask",
    measures="the importance GNNExplainer (torch_geometric.explain) gives the edge for the GCN's prediction of "
             "this node (a learned soft mask in [0, 1]).",
    signed=False, unit="mask value", directed=False)


class GNNExplainerExplainer(Explainer):
    """GNNExplainer's most important edges for the GCN's prediction of a node (the comparison baseline)."""

    name = GNNEXPLAINER
    title = "GNNExplainer (torch_geometric.explain)"
    score_spec = EDGE_SCORE
    settings_fields = ("explainer_epochs", "compare_nodes")
    prediction_column = "gcn"

    def __init__(self, k: int = 8) -> None:
        self.k = k

    def supports(self, model: object) -> str | None:
        return GCNRuleExplainer().supports(model)

    def explain(self, model: NLILEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        model.check_fitted()
        wanted, rows = prediction_rows(model, data, targets, model.settings.compare_nodes)
        exps = []
        for t in wanted:
            h = rows.loc[t, "head"]
            truth = rows.loc[t, "truth"]
            exps.append(Explanation(target=t, target_text=f"{t}: GCN predicts {rows.loc[t, 'gcn']:.3f}",
                                    prediction=float(rows.loc[t, "gcn"]), items=self._edges(model, h, t),
                                    truth=None if pd.isna(truth) else float(truth)))
        return self.finish(ExplanationSet(exps, method=self.name))

    def _edges(self, model: NLILEstimator, h: str, t: str) -> list[ExplanationItem]:
        """The `k` edges of highest mask for the GCN's prediction of target `t` of head `h`."""
        gcn, g, _ = model.gcn_[h]
        kb = model.kbs_[h]
        v = model.one(h, t).x[0]
        mask = gnnexplainer_soft(gcn, g, np.array([v]), epochs=model.settings.explainer_epochs,
                                 seed=model.settings.seed)[0].numpy()
        items = []
        for e in np.argsort(-mask, kind="stable")[: self.k]:
            if mask[e] <= 0:
                continue
            a, b = kb.entities[g.pairs[e, 0]], kb.entities[g.pairs[e, 1]]
            items.append(ExplanationItem(kind="ground_formula", text=f"edge({a}, {b})",
                                         natural=f"the edge between {a} and {b}", score=float(mask[e]),
                                         atoms=[f"edge({a}, {b})"]))
        return items
