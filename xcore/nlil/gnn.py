"""Post-hoc explanation of a GNN: a 2-layer GCN (PyTorch Geometric) on the same graph, m-NLIL rules
trained on its predictions, and GNNExplainer on the same nodes, compared by fidelity+/- and the
characterisation score (Amara et al., 2022; the definitions of `torch_geometric.explain.metric`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.nlil.graph import KB, Queries, kb_from_dataset, queries
from xcore.nlil.model import one_thread
from xcore.optional_deps import import_optional


def _pyg():
    return import_optional("torch_geometric.nn", "the GCN mode").GCNConv  # heavy: only the GCN mode loads it


@dataclass
class GraphTensors:
    """Node features (own unary predicates + a constant), undirected edges, and each edge's entity pair."""

    x: torch.Tensor
    edge_index: torch.Tensor
    pairs: np.ndarray
    """(E, 2) entity indices of each directed edge (both directions of every relation fact)"""


def graph_tensors(kb: KB) -> GraphTensors:
    """The KB as a PyG graph: every binary fact an undirected edge (deduplicated)."""
    feats = torch.zeros(kb.n, len(kb.unary) + 1)
    for i, u in enumerate(sorted(kb.unary)):
        feats[torch.as_tensor(kb.unary[u], dtype=torch.long), i] = 1.0
    feats[:, -1] = 1.0
    if kb.binary:
        e = np.concatenate([kb.binary[p] for p in sorted(kb.binary)], axis=1)
        e = np.concatenate([e, e[::-1]], axis=1)
        e = np.unique(e[:, e[0] != e[1]], axis=1)
    else:
        e = np.zeros((2, 0), dtype=np.int64)
    return GraphTensors(feats, torch.as_tensor(e, dtype=torch.long), e.T.copy())


class GCN(nn.Module):
    """Two GCNConv layers (hidden units, ReLU, dropout) and a logit per node."""

    def __init__(self, n_features: int, hidden: int = 16, dropout: float = 0.5) -> None:
        super().__init__()
        conv = _pyg()
        self.conv1, self.conv2 = conv(n_features, hidden), conv(hidden, 1)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        h = torch.relu(self.conv1(x, edge_index, edge_weight))
        h = torch.nn.functional.dropout(h, self.dropout, self.training)
        return self.conv2(h, edge_index, edge_weight).squeeze(-1)


def train_gcn(g: GraphTensors, q: Queries, epochs: int = 200, lr: float = 0.01, seed: int = 0) -> GCN:
    """Fit the GCN on labelled nodes (binary cross-entropy, Adam, weight decay 5e-4), seeded."""
    with torch.random.fork_rng(), one_thread():
        torch.manual_seed(seed)
        model = GCN(g.x.shape[1])
        opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)
        idx = torch.as_tensor(q.x, dtype=torch.long)
        y = torch.as_tensor(q.label, dtype=torch.float32)
        model.train()
        for _ in range(epochs):
            opt.zero_grad()
            loss = nn.functional.binary_cross_entropy_with_logits(model(g.x, g.edge_index)[idx], y)
            loss.backward()
            opt.step()
    model.eval()
    return model


def gcn_proba(model: GCN, g: GraphTensors, edge_mask: torch.Tensor | None = None) -> np.ndarray:
    """P(label) of every node (edges weighted by `edge_mask` when given)."""
    with torch.no_grad():
        return torch.sigmoid(model(g.x, g.edge_index, edge_mask)).numpy()


def edge_mask_of(g: GraphTensors, kb: KB, atoms: list[list[str]]) -> torch.Tensor:
    """A 0/1 mask over the graph's edges: the edges (either direction) of the binary ground atoms given."""
    pairs = []
    for group in atoms:
        for a in group:
            inner = a[a.index("(") + 1:-1].split(", ")
            if len(inner) == 2:
                pairs.append(inner)
    mask = torch.zeros(g.edge_index.shape[1])
    if not pairs:
        return mask
    ab = kb.index_of(np.array([p[0] for p in pairs], dtype=object)), kb.index_of(np.array([p[1] for p in pairs], dtype=object))
    codes = np.concatenate([ab[0] * kb.n + ab[1], ab[1] * kb.n + ab[0]])
    mask[torch.as_tensor(np.isin(g.pairs[:, 0] * kb.n + g.pairs[:, 1], codes))] = 1.0
    return mask


def fidelity(model: GCN, g: GraphTensors, nodes: np.ndarray, masks: list[torch.Tensor]) -> dict[str, float]:
    """Fidelity+ (prediction changes when the explanation's edges are removed) and fidelity- (changes when
    only they are kept), model-explanation form, and their characterisation score (weights 0.5/0.5)."""
    base = gcn_proba(model, g) >= 0.5
    plus, minus = [], []
    for v, m in zip(nodes, masks):  # one masked forward per explained node: masks differ per node
        plus.append((gcn_proba(model, g, 1.0 - m)[v] >= 0.5) != base[v])
        minus.append((gcn_proba(model, g, m)[v] >= 0.5) != base[v])
    fp, fm = float(np.mean(plus)) if plus else 0.0, float(np.mean(minus)) if minus else 0.0
    return {"fidelity+": fp, "fidelity-": fm, "characterization": characterization(fp, fm)}


def characterization(fid_plus: float, fid_minus: float, w_plus: float = 0.5, w_minus: float = 0.5) -> float:
    """The characterisation score: weighted harmonic mean of fid+ and 1 - fid-."""
    if fid_plus <= 0 or fid_minus >= 1:
        return 0.0
    return (w_plus + w_minus) / (w_plus / fid_plus + w_minus / (1.0 - fid_minus))


def gnnexplainer_soft(model: GCN, g: GraphTensors, nodes: np.ndarray, epochs: int = 100,
                      seed: int = 0) -> list[torch.Tensor]:
    """GNNExplainer's (`torch_geometric.explain`) soft edge mask for each node, seeded."""
    pyg_explain = import_optional("torch_geometric.explain")  # heavy (torch_geometric): GCN mode only
    explainer = pyg_explain.Explainer(model=model, algorithm=pyg_explain.GNNExplainer(epochs=epochs), explanation_type="model",
                          edge_mask_type="object", node_mask_type=None,
                          model_config=dict(mode="binary_classification", task_level="node", return_type="raw"))
    out = []
    with torch.random.fork_rng(), one_thread():
        torch.manual_seed(seed)
        for v in nodes:  # GNNExplainer optimises one mask per explained node
            out.append(explainer(g.x, g.edge_index, index=int(v)).edge_mask.detach())
    return out


def top_k(mask: torch.Tensor, k: int) -> torch.Tensor:
    """A soft mask binarised to its k largest positive entries."""
    hard = torch.zeros_like(mask)
    n = int((mask > 0).sum())
    if k > 0 and n:
        hard[torch.topk(mask, min(k, n)).indices] = 1.0
    return hard


def gnnexplainer_masks(model: GCN, g: GraphTensors, nodes: np.ndarray, sizes: list[int], epochs: int = 100,
                       seed: int = 0) -> list[torch.Tensor]:
    """GNNExplainer's edge masks for each node, binarised to its top-k edges (k = the rule's subgraph size)."""
    return [top_k(m, k) for m, k in zip(gnnexplainer_soft(model, g, nodes, epochs, seed), sizes)]


def gcn_predictions(ds: RelationalDataset, head: str, epochs: int = 200, seed: int = 0) -> pd.DataFrame:
    """A GCN trained on `head`'s labelled observations, and its predictions of every atom of `head` (labelled
    observations and targets) as a frame target, prediction (0/1), score (P(true)): the file a user brings
    to explain a GNN with m-NLIL rules (`xcore run nlil DATA --explain-predictions FILE`)."""
    kb = kb_from_dataset(ds, exclude=(head,))
    train = queries(ds, kb, head, "obs" if len(ds.tables[head]["obs"]) else "truth")
    if ds.schema[head].arity != 1:
        raise XcoreError(f"a GCN classifies nodes: {head} has arity {ds.schema[head].arity}")
    g = graph_tensors(kb)
    p = gcn_proba(train_gcn(g, train, epochs=epochs, seed=seed), g)
    atoms = pd.concat([ds.tables[head][part]["a0"] for part in ("obs", "targets")]).astype(str).unique()
    score = p[kb.index_of(atoms)]
    return pd.DataFrame({"target": [f"{head}({a})" for a in atoms], "prediction": (score >= 0.5).astype(int),
                         "score": score.round(6)})
