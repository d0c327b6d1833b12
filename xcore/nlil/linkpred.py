"""Knowledge-graph link prediction with TensorLog path rules (Neural LP / DRUM style), evaluated as the
literature does: filtered MRR and Hits@1/3/10 over every relation and both directions.

Every relation r gets an inverse r^-1 (Neural LP's augmentation), so a head query (?, r, t) is the tail
query (t, r^-1, ?). For each of the 2R query relations the model keeps `rank` rules; rule l is a chain of
`path_length` steps, each an attention over the 2R operators and the identity (so shorter paths are
expressible). A step is one sparse matrix product over the whole batch of queries: the attention
weights the edges of the stacked adjacency, `torch.sparse.mm` moves every query's vector at once.
Every step is normalised to sum 1 (as Neural LP does); the score of an object is the sum over rules.
While training, a query's own edge (and its inverse) is taken out of the graph, exactly, by
subtracting its contribution at each step, so the KB can hold the training triples themselves.

Ranks are filtered (the other known true objects of the query, in any partition, are removed) and
ties count half: rank = 1 + #higher + #equal / 2, the expected rank under random tie-breaking
(the "random" protocol of Sun et al., ACL 2020; RNNLogic, Qu et al., ICLR 2021, counts ties the same way).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from torch import nn

from xcore.data.dataset import RelationalDataset
from xcore.errors import DataError
from xcore.nlil.kg import filtered_ranks
from xcore.nlil.sparse import SparseGraph
from xcore.runtime import Progress, null_progress


@dataclass
class TripleKB:
    """Entities, relations, the observed triples (the graph and the training queries) and held-out ones."""

    entities: np.ndarray
    relations: list[str]
    observed: np.ndarray
    """(M, 3) int: subject, relation, object of every observed true triple"""
    held_out: np.ndarray
    """(M', 3) int: the test triples (truth or targets with truth 1), not in the graph"""

    @property
    def n(self) -> int:
        return len(self.entities)

    @property
    def R(self) -> int:
        return len(self.relations)

    def query_name(self, q: int) -> str:
        """The name of query relation q (q >= R: the inverse of relation q - R)."""
        return self.relations[q] if q < self.R else f"{self.relations[q - self.R]}^-1"


def triple_kb(ds: RelationalDataset) -> TripleKB:
    """The binary predicates of `ds` as triples: observations (value >= 0.5) form the graph, true atoms of
    the truth partition are held out (DataError when there are no binary observations)."""
    rels = [p.name for p in ds.schema if p.arity == 2]
    frames = {part: [] for part in ("obs", "truth")}
    for i, r in enumerate(rels):
        for part in frames:
            t = ds.tables[r][part]
            t = t[t["value"] >= 0.5]
            frames[part].append(pd.DataFrame({"h": t["a0"].astype(str).to_numpy(), "r": i,
                                              "t": t["a1"].astype(str).to_numpy()}))
    obs = pd.concat(frames["obs"], ignore_index=True) if rels else pd.DataFrame(columns=["h", "r", "t"])
    test = pd.concat(frames["truth"], ignore_index=True) if rels else pd.DataFrame(columns=["h", "r", "t"])
    if not len(obs):
        raise DataError("link prediction needs observed binary triples (relation(subject, object) facts)")
    entities = np.unique(np.concatenate([obs["h"], obs["t"], test["h"], test["t"]]).astype(str)).astype(object)
    index = pd.Index(entities)

    def codes(f: pd.DataFrame) -> np.ndarray:
        if not len(f):
            return np.zeros((0, 3), dtype=np.int64)
        out = np.stack([index.get_indexer(f["h"]), f["r"].to_numpy(np.int64), index.get_indexer(f["t"])], 1)
        return np.unique(out.astype(np.int64), axis=0)

    observed = codes(obs)
    held = codes(test)
    if len(held):  # a held-out triple that is also observed is not held out
        seen = _keys(observed, len(entities), len(rels))
        held = held[~np.isin(_keys(held, len(entities), len(rels)), seen)]
    return TripleKB(entities, rels, observed, held)


def _keys(t: np.ndarray, n: int, R: int) -> np.ndarray:
    return (t[:, 0] * (2 * R) + t[:, 1]) * n + t[:, 2]


def both_directions(t: np.ndarray, R: int) -> np.ndarray:
    """(M, 3) triples -> (2M, 3) queries (x, q, y): each triple forward and as its inverse (t, r + R, h)."""
    return np.concatenate([t, np.stack([t[:, 2], t[:, 1] + R, t[:, 0]], 1)])


class PathRules(nn.Module):
    """Per query relation, `rank` soft chains of `path_length` operator attentions over one sparse graph."""

    def __init__(self, kb: TripleKB, rank: int = 3, path_length: int = 3, seed: int = 0) -> None:
        super().__init__()
        self.n, self.R, self.L, self.T = kb.n, kb.R, rank, path_length
        self.K = 2 * kb.R + 1  # operators: r, r^-1 for every relation, identity last
        q = both_directions(kb.observed, kb.R)
        self.graph = SparseGraph(q[:, 0], q[:, 2], q[:, 1], kb.n)
        g = torch.Generator().manual_seed(int(seed))
        self.logits = nn.Parameter(0.1 * torch.randn(2 * kb.R, rank, path_length, self.K, generator=g))

    def attention(self, q: int) -> torch.Tensor:
        """(rank, T, K) operator attention of query relation q."""
        return torch.softmax(self.logits[q], dim=-1)

    def forward(self, q: int, x: torch.Tensor, drop: torch.Tensor | None = None) -> torch.Tensor:
        """(B, N) scores of every object for subjects `x` under query relation q; `drop` (B,) objects whose
        own edge x -q-> y (and y -q^-1-> x) is left out of the graph for that query (training)."""
        a = self.attention(q)
        dev = a.device
        x = x.to(dev)
        drop = None if drop is None else drop.to(dev)
        B = len(x)
        inv = (q + self.R) % (2 * self.R)
        cols = torch.arange(B, device=dev)
        total = torch.zeros(self.n, B, device=dev)
        for l in range(self.L):
            v = torch.zeros(self.n, B, device=dev)
            v[x, cols] = 1.0
            for t in range(self.T):
                nxt = self.graph.apply(a[l, t, :-1], v) + a[l, t, -1] * v
                if drop is not None:  # the query's own edge, both ways, out of the product
                    fix = torch.zeros(self.n, B, device=dev)
                    fix = fix.index_put((drop, cols), a[l, t, q] * v[x, cols], accumulate=True)
                    fix = fix.index_put((x, cols), a[l, t, inv] * v[drop, cols], accumulate=True)
                    nxt = nxt - fix
                v = nxt / nxt.sum(0, keepdim=True).clamp(min=1e-20)
            total = total + v
        return total.T

    def rules(self, kb: TripleKB, q: int) -> list[tuple[str, float]]:
        """Each of query q's rules decoded by argmax (identities dropped), with the product of its attentions."""
        with torch.no_grad():
            a = self.attention(q).cpu()
        out = []
        for l in range(self.L):
            best = a[l].max(-1)
            body = [kb.query_name(int(k)) for k in best.indices if int(k) < self.K - 1]
            out.append((", ".join(body) or "(identity)", float(best.values.prod())))
        return out


@dataclass
class LinkPredictor:
    """A trained path-rule model with its KB, per-relation rules and training record."""

    kb: TripleKB
    model: PathRules
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def scores(self, q: int, x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.model(q, torch.as_tensor(x, dtype=torch.long)).cpu().numpy()

    def rule_frame(self) -> pd.DataFrame:
        """Every query relation's rules with confidences, as Neural LP prints them."""
        rows = [{"relation": self.kb.query_name(q), "rule": f"{self.kb.query_name(q)}(X, Y) <- {body}",
                 "confidence": c}
                for q in range(2 * self.kb.R) for body, c in self.model.rules(self.kb, q)]
        return pd.DataFrame(rows).sort_values(["relation", "confidence"], ascending=[True, False], ignore_index=True)


def fit_link_predictor(kb: TripleKB, rank: int = 3, path_length: int = 3, epochs: int = 10, lr: float = 0.1,
                       batch: int = 128, per_epoch: int = 4000, seed: int = 0,
                       progress: Progress | None = None, device: str | torch.device = "cpu") -> LinkPredictor:
    """Adam on -log(normalised score of the true object) of observed triples in both directions, with each
    query's own edge out of the graph; at most `per_epoch` queries per epoch (seeded sample), batched by
    query relation so one weighted sparse matrix serves the whole batch; on `device` (a resolved torch device)."""
    progress = progress or null_progress
    t0 = time.perf_counter()
    torch.manual_seed(seed)
    model = PathRules(kb, rank, path_length, seed).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    queries = both_directions(kb.observed, kb.R)
    losses = []
    for epoch in range(epochs):
        pick = queries if len(queries) <= per_epoch else queries[rng.choice(len(queries), per_epoch, replace=False)]
        pick = pick[np.lexsort((rng.random(len(pick)), pick[:, 1]))]
        groups = [pick[pick[:, 1] == q] for q in np.unique(pick[:, 1])]
        chunks = [g[s:s + batch] for g in groups for s in range(0, len(g), batch)]
        total, count = 0.0, 0
        for i in rng.permutation(len(chunks)):
            c = chunks[i]
            x, y = torch.as_tensor(c[:, 0]), torch.as_tensor(c[:, 2])
            s = model(int(c[0, 1]), x, drop=y)
            loss = -torch.log(s[torch.arange(len(c), device=s.device), y.to(s.device)].clamp(min=1e-20)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(c)
            count += len(c)
            progress((epoch + (count / max(len(pick), 1))) / epochs, f"epoch {epoch + 1}/{epochs}, "
                                                                      f"loss {total / max(count, 1):.4f}")
        losses.append(total / max(count, 1))
    return LinkPredictor(kb, model, losses, time.perf_counter() - t0)


def known_matrix(kb: TripleKB, q: int) -> sp.csr_matrix:
    """(N, N) boolean: y is a known true object of (x, q, ?) in the observed or held-out triples."""
    every = both_directions(np.concatenate([kb.observed, kb.held_out]), kb.R)
    every = every[every[:, 1] == q]
    return sp.csr_matrix((np.ones(len(every), bool), (every[:, 0], every[:, 2])), shape=(kb.n, kb.n))


def evaluate(lp: LinkPredictor, triples: np.ndarray | None = None, batch: int = 256,
             progress: Progress | None = None, with_ranks: bool = False):
    """Filtered MRR and Hits@1/3/10 over both directions of the held-out triples: overall and per relation
    (and, `with_ranks`, every query's rank and true object's score: tail queries, then head queries)."""
    kb = lp.kb
    progress = progress or null_progress
    t = kb.held_out if triples is None else triples
    qs = both_directions(t, kb.R)
    ranks, truth_scores = np.zeros(len(qs)), np.zeros(len(qs))
    relations = np.unique(qs[:, 1])
    for j, q in enumerate(relations):
        idx = np.flatnonzero(qs[:, 1] == q)
        known = known_matrix(kb, int(q))
        for s in range(0, len(idx), batch):
            b = idx[s:s + batch]
            x, y = qs[b, 0], qs[b, 2]
            sc = lp.scores(int(q), x)
            ranks[b] = filtered_ranks(sc, y, known[x].toarray())
            truth_scores[b] = sc[np.arange(len(b)), y]
        progress((j + 1) / len(relations), f"evaluated {kb.query_name(int(q))}")
    rel = qs[:, 1] % kb.R
    rows = []
    for r in range(kb.R):
        m = rel == r
        if m.any():
            rows.append({"relation": kb.relations[r], "queries": int(m.sum()), **summarise(ranks[m])})
    out = summarise(ranks), pd.DataFrame(rows)
    return (*out, ranks, truth_scores) if with_ranks else out


def summarise(ranks: np.ndarray) -> dict[str, float]:
    """MRR, Hits@1/3/10 of filtered ranks (ties already counted half)."""
    if not len(ranks):
        return {"mrr": float("nan"), "hits@1": float("nan"), "hits@3": float("nan"), "hits@10": float("nan")}
    return {"mrr": float((1.0 / ranks).mean()), "hits@1": float((ranks <= 1).mean()),
            "hits@3": float((ranks <= 3).mean()), "hits@10": float((ranks <= 10).mean())}
