"""NLIL core against references: operators against dense adjacency products, DuckDB rule execution
against brute-force enumeration, the hard network against DuckDB, every formula level built."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import torch

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.nlil.graph import kb_from_dataset, queries
from xcore.nlil.model import NLIL, train
from xcore.nlil.rules import (
    And,
    Not,
    Or,
    Rule,
    Statement,
    depth,
    fires,
    quality,
    statements,
)


def tiny(seed: int = 0, n: int = 12) -> RelationalDataset:
    """A random graph: two relations, two unary predicates, and a unary head with random labels."""
    rng = np.random.default_rng(seed)
    ents = [f"e{i}" for i in range(n)]
    def pairs(k):
        a, b = rng.integers(0, n, k), rng.integers(0, n, k)
        return pd.DataFrame({"a0": [ents[i] for i in a], "a1": [ents[j] for j in b]}).drop_duplicates()
    tables = {"r": {"obs": pairs(18)}, "s": {"obs": pairs(14)},
              "u": {"obs": pd.DataFrame({"a0": ents[: n // 2]})}, "v": {"obs": pd.DataFrame({"a0": ents[::3]})},
              "h": {"obs": pd.DataFrame({"a0": ents, "value": rng.integers(0, 2, n).astype(float)})}}
    preds = [Predicate("r", 2), Predicate("s", 2), Predicate("u", 1), Predicate("v", 1), Predicate("h", 1, closed=False)]
    return RelationalDataset(Schema.of(preds), tables)


def dense(ds: RelationalDataset, kb) -> dict[str, np.ndarray]:
    """Dense 0/1 adjacency and unary vectors by name (the reference)."""
    n, idx = kb.n, {e: i for i, e in enumerate(kb.entities)}
    out = {}
    for p in ("r", "s"):
        m = np.zeros((n, n))
        for a, b in ds.observations(p)[["a0", "a1"]].itertuples(index=False):
            m[idx[a], idx[b]] = 1
        out[p] = m
    for p in ("u", "v"):
        out[p] = np.isin(kb.entities, ds.observations(p)["a0"]).astype(float)
    return out


def test_operators_match_dense_adjacency_products():
    ds = tiny()
    kb = kb_from_dataset(ds, exclude=("h",))
    ops = kb.operators()
    ref = dense(ds, kb)
    assert ops.names == ["id", "r", "r^-1", "s", "s^-1", "u?", "v?"]
    V = torch.rand(1, 3, kb.n)
    for k, name in enumerate(ops.names):
        a = torch.zeros(1, ops.k)
        a[0, k] = 1.0
        got = ops.mixed(V, a)[0].numpy()
        got_t = ops.mixed(V, a, transpose=True)[0].numpy()
        v = V[0].numpy()
        if name == "id":
            want = want_t = v
        elif name.endswith("?"):
            want = want_t = v * ref[name[0]]
        else:
            M = ref[name[0]] if not name.endswith("^-1") else ref[name[0]].T
            want, want_t = v @ M, v @ M.T  # M_k^T v per row, and M_k v
        np.testing.assert_allclose(got, np.minimum(want, 1.0), atol=1e-6)
        np.testing.assert_allclose(got_t, np.minimum(want_t, 1.0), atol=1e-6)
        if name in ("r", "s"):
            sp = ops.matrix(name).to_dense().numpy()
            np.testing.assert_allclose(sp, ref[name].T)


def brute_statement(st: Statement, ref: dict[str, np.ndarray], n: int) -> np.ndarray:
    """Does the statement hold for each X, by enumerating every variable assignment."""
    out = np.zeros(n, dtype=bool)
    ops = [o for o in st.ops if o != "id"]
    moves = [o for o in ops if not o.endswith("?")]
    for x in range(n):
        for path in itertools.product(range(n), repeat=len(moves)):
            cur, i, ok = x, 0, True
            for o in ops:
                if o.endswith("?"):
                    ok &= bool(ref[o[0]][cur])
                    continue
                nxt = path[i]
                i += 1
                M = ref[o[0]]
                ok &= bool(M[nxt, cur] if o.endswith("^-1") else M[cur, nxt])
                cur = nxt
            if st.test is not None:
                ok &= bool(ref[st.test][cur])
            if ok:
                out[x] = True
                break
    return out


def brute(f, ref, n):
    if isinstance(f, Statement):
        return brute_statement(f, ref, n)
    if isinstance(f, Not):
        return ~brute(f.arg, ref, n)
    a, b = brute(f.left, ref, n), brute(f.right, ref, n)
    return a & b if isinstance(f, And) else a | b


RULES = [
    Statement(("r^-1",), "u"),
    Statement(("r", "s"), "v"),
    Statement(("u?", "s^-1"), None),
    Statement(("r", "id", "r^-1"), "u"),
    And(Statement(("r",), "u"), Not(Statement(("s^-1",), "v"))),
    Or(And(Statement(("r",), None), Statement(("s",), "u")), Not(Statement(("v?",), None))),
]


@pytest.mark.parametrize("body", RULES, ids=range(len(RULES)))
def test_duckdb_execution_matches_brute_force_enumeration(body):
    ds = tiny(seed=3)
    kb = kb_from_dataset(ds, exclude=("h",))
    q = queries(ds, kb, "h", "obs")
    got = fires(Rule("h", 1, body), kb.facts(), q.frame(kb))
    want = brute(body, dense(ds, kb), kb.n)[q.x]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(6))
def test_hard_network_computes_exactly_the_decoded_rule(seed):
    """With every attention at its argmax the network is the extracted rule: it agrees with DuckDB."""
    ds = tiny(seed=seed)
    kb = kb_from_dataset(ds, exclude=("h",))
    q = queries(ds, kb, "h", "obs")
    m = NLIL(kb.operators(), "h", 1, n_statements=4, path_length=3, depth=2, width=3, seed=seed, init_scale=2.0)
    rule = m.rule()
    with torch.no_grad():
        hard = m.score(q, hard=True).numpy() > 0.5
    np.testing.assert_array_equal(hard, fires(rule, kb.facts(), q.frame(kb)))


def test_binary_head_hard_network_matches_duckdb():
    ds = tiny(seed=1)
    kb = kb_from_dataset(ds, exclude=("h",))
    x, y = np.meshgrid(np.arange(kb.n), np.arange(kb.n))
    from xcore.nlil.graph import Queries

    q = Queries("g", 2, x.ravel(), y.ravel(), np.zeros(kb.n ** 2, np.float32))
    for seed in range(4):
        m = NLIL(kb.operators(), "g", 2, n_statements=3, path_length=2, depth=2, width=2, seed=seed, init_scale=2.0)
        with torch.no_grad():
            hard = m.score(q, hard=True).numpy() > 0.5
        np.testing.assert_array_equal(hard, fires(m.rule(), kb.facts(), q.frame(kb)))


def test_every_formula_level_is_built_and_trained():
    """Depth 2 means two connective levels that the output can select and that receive gradient
    (the public NLIL code returns after the first level)."""
    ds = tiny()
    kb = kb_from_dataset(ds, exclude=("h",))
    q = queries(ds, kb, "h", "obs")
    m = NLIL(kb.operators(), "h", 1, n_statements=3, path_length=2, depth=2, width=2, seed=0)
    levels = m.formulas(m.statements(None))
    assert [t.shape[0] for t in levels] == [3, 2, 2]
    p = m.score(q)
    p.sum().backward()
    for l in range(2):
        assert m.left[l].grad is not None and m.left[l].grad.abs().sum() > 0
        assert m.conn[l].grad.abs().sum() > 0
    with torch.no_grad():  # select a level-2 formula: the decoded rule nests two connectives
        m.out_logits.zero_()
        m.out_logits[-1] = 10.0
        m.conn[1][-1] = torch.tensor([5.0, 0.0])
        m.left[1][-1].zero_()
        m.left[1][-1][0] = 5.0
        m.right[1][-1].zero_()
        m.right[1][-1][1] = 5.0
        m.conn[0].copy_(torch.tensor([[0.0, 5.0], [0.0, 5.0]]))
        m.left[0].zero_()
        m.left[0][:, 0] = 5.0
        m.right[0].zero_()
        m.right[0][0, 1] = 5.0
        m.right[0][1, 2] = 5.0
        m.op_logits.zero_()
        for i, k in enumerate((1, 3, 2)):
            m.op_logits[i, 0, k] = 5.0
        m.path_logits.zero_()
        m.path_logits[:, 1] = 5.0
    rule = m.rule()
    assert depth(rule.body) == 2 and len(statements(rule.body)) == 4
    assert rule.text.count("|") == 2 and "&" in rule.text


def test_training_recovers_a_planted_conjunction_and_is_deterministic():
    rng = np.random.default_rng(0)
    ds = tiny(seed=5, n=30)
    kb = kb_from_dataset(ds, exclude=("h",))
    planted = Rule("h", 1, Statement(("r^-1",), "u"))
    label = fires(planted, kb.facts(), pd.DataFrame({"x": kb.entities})).astype(float)
    tables = {p.name: dict(ds.tables[p.name]) for p in ds.schema}
    tables["h"] = {"obs": pd.DataFrame({"a0": kb.entities, "value": label})}
    ds2 = RelationalDataset(ds.schema, tables)
    q = queries(ds2, kb, "h", "obs")
    assert 0 < q.label.mean() < 1, rng
    rules = []
    for _ in range(2):
        m = NLIL(kb.operators(), "h", 1, n_statements=4, path_length=2, depth=1, width=2, seed=1)
        losses = train(m, q, epochs=150, lr=0.1, seed=1)
        rules.append(m.rule())
        assert losses[-1] < losses[0] / 4
    assert rules[0] == rules[1]
    got = quality(fires(rules[0], kb.facts(), q.frame(kb)), q.label)
    assert got["precision"] == 1.0 and got["recall"] == 1.0, rules[0].text
