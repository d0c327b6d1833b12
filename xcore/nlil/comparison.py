"""m-NLIL's rules against GNNExplainer as explanations of the GCN, on the same held-out nodes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.nlil.estimator import NLILEstimator
from xcore.nlil.gnn import edge_mask_of, fidelity, gnnexplainer_masks
from xcore.nlil.rules import groundings


def gcn_comparison(est: NLILEstimator, h: str, data: RelationalDataset | None = None) -> pd.DataFrame:
    """Rules against GNNExplainer on the targets of `data` a rule fires for (None: the training queries):
    fidelity+, fidelity-, characterisation; and the rules' agreement with the GCN on all those targets."""
    est.check_fitted()
    if h not in est.gcn_:
        raise XcoreError("this run has no GCN: train with mode='gcn'")
    model, g, p = est.gcn_[h]
    kb, lr = est.kbs_[h], est.labels_[h]
    test, _ = est.targets_of(h, data)
    facts, frame = kb.facts(), test.frame(kb)
    fired = kb.store().fires(lr.rules, frame)
    agree = float((fired.any(1) == (p[test.x] >= 0.5)).mean()) if len(test) else 0.0
    s = est.settings
    pick = np.flatnonzero(fired.any(1))[: s.compare_nodes]
    nodes = test.x[pick]
    masks = [edge_mask_of(g, kb, groundings(lr.rules[int(fired[i].argmax())], facts, kb.entities[test.x[i]]))
             for i in pick]
    ours = fidelity(model, g, nodes, masks)
    theirs = fidelity(model, g, nodes, gnnexplainer_masks(model, g, nodes, [int(m.sum()) for m in masks],
                                                             epochs=s.explainer_epochs, seed=s.seed))
    return pd.DataFrame([{"head": h, "explainer": "m-NLIL rules", "nodes": len(nodes), **ours,
                          "agreement_with_gcn": agree},
                         {"head": h, "explainer": "GNNExplainer (top-k edges)", "nodes": len(nodes), **theirs,
                          "agreement_with_gcn": float("nan")}])
