"""Link prediction with path rules against references: filtered MRR / Hits@k against a brute-force ranking
(pandas average ranks over the filtered candidates), the sparse propagation against dense products and
their gradients, the dropped query edge against a graph without it, a planted composition rule learned,
and cancel interrupting training."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
import torch

from xcore.data.io import load_triples
from xcore.errors import Cancelled
from xcore.nlil.linkpred import (
    LinkPredictor,
    PathRules,
    SparseGraph,
    TripleKB,
    both_directions,
    evaluate,
    fit_link_predictor,
    triple_kb,
)
from xcore.runtime import cancellable


def random_kb(n: int = 9, R: int = 2, m: int = 20, held: int = 6, seed: int = 0) -> TripleKB:
    rng = np.random.default_rng(seed)
    t = np.unique(np.stack([rng.integers(0, n, m + held), rng.integers(0, R, m + held), rng.integers(0, n, m + held)], 1),
                  axis=0)
    t = t[rng.permutation(len(t))]
    return TripleKB(np.array([f"e{i}" for i in range(n)], dtype=object), [f"r{i}" for i in range(R)],
                    t[held:], t[:held])


class TiedScores(PathRules):
    """Integer scores with many ties (a fixed random table per query relation), to test the ranking alone."""

    def __init__(self, kb: TripleKB) -> None:
        super().__init__(kb, rank=1, path_length=1)
        rng = np.random.default_rng(1)
        self.table = torch.as_tensor(rng.integers(0, 3, (2 * kb.R, kb.n, kb.n)).astype(np.float32))

    def forward(self, q, x, drop=None):
        return self.table[q][x]


def brute_force(kb: TripleKB, model: PathRules) -> pd.DataFrame:
    """Every held-out triple both ways: average rank of the answer among the candidates not otherwise known."""
    known = {tuple(t) for t in both_directions(np.concatenate([kb.observed, kb.held_out]), kb.R)}
    rows = []
    for x, q, y in both_directions(kb.held_out, kb.R):
        with torch.no_grad():
            s = model(int(q), torch.tensor([x]))[0].numpy()
        cands = [e for e in range(kb.n) if e == y or (x, q, e) not in known]
        ranks = pd.Series(-s[cands]).rank(method="average")
        rank = float(ranks.iloc[cands.index(y)])
        rows.append({"relation": kb.relations[q % kb.R], "rank": rank})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_filtered_mrr_and_hits_equal_a_brute_force_ranking_with_ties(seed):
    kb = random_kb(seed=seed)
    lp = LinkPredictor(kb, TiedScores(kb))
    overall, per_rel = evaluate(lp, batch=3)
    ref = brute_force(kb, lp.model)
    r = ref["rank"].to_numpy()
    assert (r != np.round(r)).any()  # ties did occur and counted half
    assert overall["mrr"] == pytest.approx((1 / r).mean())
    for k in (1, 3, 10):
        assert overall[f"hits@{k}"] == pytest.approx((r <= k).mean())
    for row in per_rel.itertuples():
        mine = ref[ref["relation"] == row.relation]["rank"].to_numpy()
        assert row.queries == len(mine) and row.mrr == pytest.approx((1 / mine).mean())


@pytest.mark.parametrize("n,m,one_hot", [(40, 30, False), (40, 30, True), (6, 30, False)])  # sparse and dense paths
def test_propagation_and_its_gradients_equal_dense_products(n, m, one_hot):
    rng = np.random.default_rng(0)
    src, dst, op = rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 4, m)
    g = SparseGraph(src, dst, op, n)
    assert g.dense == (n == 6)
    w = torch.rand(4, dtype=torch.float64, requires_grad=True)
    v = torch.rand(n, 5, dtype=torch.float64)
    if one_hot:  # a chain's first step: mostly zeros, so only the neighbourhood is computed
        v = torch.nn.functional.one_hot(torch.as_tensor(src[:5]), n).T.to(torch.float64) * v
    v.requires_grad_()
    out = g.apply(w, v)
    M = torch.zeros(4, n, n, dtype=torch.float64)
    for s, d, k in zip(src, dst, op):
        M[k, d, s] += 1.0
    w2, v2 = w.detach().clone().requires_grad_(), v.detach().clone().requires_grad_()
    ref = torch.einsum("k,kds,sb->db", w2, M, v2)
    torch.testing.assert_close(out, ref)
    up = torch.rand(n, 5, dtype=torch.float64)
    (out * up).sum().backward()
    (ref * up).sum().backward()
    torch.testing.assert_close(w.grad, w2.grad)
    on = v.detach() != 0  # the chain only needs v's gradient where v has mass (elsewhere it is not computed)
    torch.testing.assert_close(v.grad[on], v2.grad[on])


def test_training_gradient_equals_per_query_graphs_without_their_edge():
    kb = random_kb(n=40, R=2, m=60, seed=4)
    assert not PathRules(kb).graph.dense  # the scipy path
    model = PathRules(kb, rank=2, path_length=3, seed=0)
    picks = [(int(kb.observed[i, 1]), i) for i in (1, 2, 7)]
    for q, i in picks:
        x, _, y = kb.observed[i]
        s = model(q, torch.tensor([x]), drop=torch.tensor([y]))
        (-torch.log(s[0, y].clamp(min=1e-20))).backward()
    mine = model.logits.grad.clone()
    model.logits.grad = None
    for q, i in picks:
        x, _, y = kb.observed[i]
        cut = PathRules(TripleKB(kb.entities, kb.relations, np.delete(kb.observed, i, axis=0), kb.held_out), 2, 3)
        cut.logits = model.logits
        s = cut(q, torch.tensor([x]))
        (-torch.log(s[0, y].clamp(min=1e-20))).backward()
    torch.testing.assert_close(mine, model.logits.grad)


def test_dropped_query_edge_equals_the_graph_without_it():
    kb = random_kb(n=40, R=2, m=60, seed=3)
    model = PathRules(kb, rank=2, path_length=3, seed=0)
    with torch.no_grad():
        model.logits.normal_(0, 1.0, generator=torch.Generator().manual_seed(0))
    for i in (0, 5, 11):
        x, r, y = kb.observed[i]
        for q, a, b in ((r, x, y), (r + kb.R, y, x)):  # the triple as a tail query and as a head query
            cut = TripleKB(kb.entities, kb.relations, np.delete(kb.observed, i, axis=0), kb.held_out)
            other = PathRules(cut, rank=2, path_length=3)
            other.logits = model.logits
            with torch.no_grad():
                mine = model(int(q), torch.tensor([a]), drop=torch.tensor([b]))
                ref = other(int(q), torch.tensor([a]))
            torch.testing.assert_close(mine, ref)


def family_like(n_families: int = 30, seed: int = 0) -> list[tuple[bytes, bytes]]:
    """Three generations per family: parent facts, grandparent = parent of parent; some grandparent held out."""
    rng = np.random.default_rng(seed)
    facts, test = [], []
    for f in range(n_families):
        g, p, c = f"g{f}", [f"p{f}_{i}" for i in range(2)], [f"c{f}_{i}" for i in range(3)]
        facts += [(g, "parent", q) for q in p]
        for k in c:
            par = p[int(rng.integers(0, 2))]
            facts.append((par, "parent", k))
            (test if rng.random() < 0.3 else facts).append((g, "grandparent", k))
    def enc(rows):
        return "".join(f"{a}\t{r}\t{b}\n" for a, r, b in rows).encode()
    return [("facts.txt", enc(facts)), ("test.txt", enc(test))]


@pytest.mark.slow
def test_a_planted_composition_is_learned_and_ranks_first():
    kb = triple_kb(load_triples(family_like(), name="fam"))
    lp = fit_link_predictor(kb, rank=2, path_length=2, epochs=30, lr=0.1, seed=0)
    overall, per_rel = evaluate(lp)
    gp = per_rel.set_index("relation").loc["grandparent"]
    assert gp["mrr"] > 0.9
    rules = lp.rule_frame()
    top = rules[rules["relation"] == "grandparent"].iloc[0]
    assert top["rule"] == "grandparent(X, Y) <- parent, parent"


def test_cancel_interrupts_training():
    kb = triple_kb(load_triples(family_like(), name="fam"))
    stop = threading.Event()
    seen = []

    def report(fraction, message):
        seen.append(message)
        if len(seen) == 3:
            stop.set()

    with pytest.raises(Cancelled):
        fit_link_predictor(kb, epochs=1000, progress=cancellable(report, stop))
    assert len(seen) == 3
