"""Knowledge-graph completion metrics as in Neural LP: filtered MRR and Hits@k of tail queries."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.nlil.graph import KB, Queries
from xcore.nlil.mnlil import LabelRules


def filtered_ranks(scores: np.ndarray, y: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Rank of the true object y[i] among all objects by scores[i], other known true objects removed
    (`known` (B, N) boolean); ties count half (neither optimistic nor pessimistic)."""
    B = len(y)
    true = scores[np.arange(B), y][:, None]
    other = known.copy()
    other[np.arange(B), y] = False
    s = np.where(other, -np.inf, scores)
    greater = (s > true).sum(1)
    ties = (s == true).sum(1) - 1
    return 1.0 + greater + ties / 2.0


def known_objects(ds: RelationalDataset, kb: KB, head: str, x: np.ndarray) -> np.ndarray:
    """(B, N): the objects y with head(x[i], y) true in any partition."""
    t = pd.concat([ds.tables[head][p] for p in ("obs", "truth")])
    t = t[t["value"] >= 0.5]
    xs, ys = kb.index_of(t["a0"].astype(str).to_numpy()), kb.index_of(t["a1"].astype(str).to_numpy())
    codes = np.unique(xs.astype(np.int64) * kb.n + ys)
    grid = x.astype(np.int64)[:, None] * kb.n + np.arange(kb.n)[None, :]
    return np.isin(grid, codes)


def kg_metrics(lr: LabelRules, ds: RelationalDataset, kb: KB, test: Queries, batch: int = 128,
               hits: int = 10) -> dict[str, float]:
    """Filtered MRR and Hits@k of the label's networks on its true test triples (tail prediction)."""
    pos = test.label > 0.5
    x, y = test.x[pos], test.y[pos]
    ranks = []
    for s in range(0, len(x), batch):
        xb, yb = x[s:s + batch], y[s:s + batch]
        ranks.append(filtered_ranks(lr.all_scores(xb), yb, known_objects(ds, kb, lr.head, xb)))
    r = np.concatenate(ranks) if ranks else np.zeros(0)
    return {"mrr": float((1.0 / r).mean()) if len(r) else 0.0,
            f"hits@{hits}": float((r <= hits).mean()) if len(r) else 0.0, "queries": len(r)}
