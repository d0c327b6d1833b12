"""Tree KB (ID3) and Direct KB on the paper's 4-bit data and against brute-force counting."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from test_plkb_reference import reference_interval

from xcore.plkb.direct import count_combinations, direct_kb
from xcore.plkb.inference import Reasoner
from xcore.plkb.literals import Domain
from xcore.plkb.tree import entropy, forest_kb, id3, information_gains, nodes_frame, tree_kb

POSITIVES = ["0000", "1111", "1010", "1100"]
NEGATIVES = ["0010", "0100", "1110", "1000"]


def four_bit():
    X = pd.DataFrame([list(r) for r in POSITIVES + NEGATIVES], columns=["a1", "a2", "a3", "a4"])
    y = np.array([True] * 4 + [False] * 4)
    dom = Domain.from_frame(X)
    return X, y, dom, dom.encode(X)


Q0101 = {"a1": "0", "a2": "1", "a3": "0", "a4": "1"}

TABLE1 = {  # the 8 root-to-leaf clauses (ties between equal gains go to the lowest feature index)
    "POS | ~a4_1": 1.0,
    "POS | ~a4_0 | ~a1_0 | ~a2_0 | ~a3_0": 1.0,
    "POS | ~a4_0 | ~a1_0 | ~a2_0 | ~a3_1": 0.0,
    "POS | ~a4_0 | ~a1_0 | ~a2_1": 0.0,
    "POS | ~a4_0 | ~a1_1 | ~a2_0 | ~a3_0": 0.0,
    "POS | ~a4_0 | ~a1_1 | ~a2_0 | ~a3_1": 1.0,
    "POS | ~a4_0 | ~a1_1 | ~a2_1 | ~a3_0": 1.0,
    "POS | ~a4_0 | ~a1_1 | ~a2_1 | ~a3_1": 0.0,
}


def test_entropy_and_root_gains():
    assert entropy(np.array([3]), np.array([7]))[0] == pytest.approx(0.9852, abs=1e-4)
    assert entropy(np.array([0, 5]), np.array([0, 5])).tolist() == [0.0, 0.0]
    _, y, dom, codes = four_bit()
    gains, n_values = information_gains(codes, y, dom.cardinalities)
    assert gains[3] == pytest.approx(0.138, abs=5e-4)  # a4
    assert gains[0] == pytest.approx(0.049, abs=5e-4)  # a1
    assert gains[1] == pytest.approx(0.0, abs=1e-12) and gains[2] == pytest.approx(0.0, abs=1e-12)
    assert n_values.tolist() == [2, 2, 2, 2]


def test_id3_splits_on_a4_first_and_yields_table1():
    _, y, dom, codes = four_bit()
    nodes = id3(codes, y, dom)
    assert dom.features[nodes[0].split] == "a4"
    kb = tree_kb(nodes, dom)
    frame = kb.to_frame()
    assert len(kb) == 8
    assert dict(zip(frame["clause"], frame["p"])) == TABLE1
    # every clause's p is the positive ratio of the rows matching its path, and leaves partition rows
    assert frame["support"].sum() == 8
    assert nodes_frame(nodes, dom).query("leaf").shape[0] == 8


def test_tree_kb_makes_0101_positive_by_exact_lp():
    """Example 6 of the paper says negative; the exact LP on the Table 1 KB says omega(POS) = 1,
    decided by the clause 1.0: POS | ~a4_1 (the only relevant one)."""
    _, y, dom, codes = four_bit()
    kb = tree_kb(id3(codes, y, dom), dom)
    q = dom.query(Q0101)
    for scope in ("relevant", "full"):
        iv = Reasoner(kb, "highs", scope).interval(q)
        lo, hi, _ = reference_interval(kb, q, scope)
        assert (iv.lo, iv.hi) == (pytest.approx(lo, abs=1e-6), pytest.approx(hi, abs=1e-6))
        assert iv.lo == pytest.approx(1.0, abs=1e-6) and iv.positive
    assert kb.relevant(q).to_frame()["clause"].tolist() == ["POS | ~a4_1"]


def test_all_nodes_adds_internal_paths_and_root_prior():
    _, y, dom, codes = four_bit()
    nodes = id3(codes, y, dom)
    kb = tree_kb(nodes, dom, all_nodes=True)
    assert len(kb) == len(nodes) == 15
    frame = kb.to_frame()
    assert frame.loc[frame["clause"] == "POS", "p"].item() == 0.5
    assert frame.loc[frame["clause"] == "POS | ~a4_0", "p"].item() == pytest.approx(3 / 7)


def test_id3_options_and_unseen_values():
    _, y, dom, codes = four_bit()
    shallow = tree_kb(id3(codes, y, dom, max_depth=1), dom)
    assert sorted(shallow.to_frame()["clause"]) == ["POS | ~a4_0", "POS | ~a4_1"]
    # a value missing from a node's rows still gets a leaf (parent's ratio, support 0)
    dom3 = Domain(("a",), (("0", "1", "2"),))
    nodes = id3(np.array([[0], [1], [1]]), np.array([True, False, False]), dom3)
    frame = tree_kb(nodes, dom3).to_frame().set_index("clause")
    assert frame.loc["POS | ~a_2", "p"] == pytest.approx(1 / 3) and frame.loc["POS | ~a_2", "support"] == 0


def test_forest_is_seeded_and_unions_trees():
    _, y, dom, codes = four_bit()
    a = forest_kb(codes, y, dom, n_trees=5, seed=1)
    b = forest_kb(codes, y, dom, n_trees=5, seed=1)
    assert a.equals(b)
    assert set(a.source) == {f"tree{t}" for t in range(5)}


def brute_direct(X: pd.DataFrame, y: np.ndarray, max_k: int, min_support: int = 1) -> dict[str, tuple[float, int]]:
    """Direct KB by plain loops: every k-subset of features, every value combination seen."""
    out = {}
    cols = list(X.columns)
    for k in range(1, max_k + 1):
        for feats in combinations(cols, k):
            for vals, grp in X.groupby(list(feats)):
                vals = vals if isinstance(vals, tuple) else (vals,)
                idx = grp.index.to_numpy()
                if len(idx) < min_support:
                    continue
                body = " | ".join(["POS"] + [f"~{f}_{v}" for f, v in zip(feats, vals)])
                out[body] = (float(y[idx].mean()), len(idx))
    return out


@pytest.mark.parametrize("max_k,min_support", [(1, 1), (2, 1), (3, 2), (4, 1)])
def test_direct_kb_matches_brute_force(max_k, min_support):
    rng = np.random.default_rng(max_k)
    X = pd.DataFrame(rng.integers(0, 3, size=(60, 4)).astype(str), columns=["a", "b", "c", "d"])
    y = rng.random(60) < 0.4
    dom = Domain.from_frame(X)
    kb = direct_kb(dom.encode(X), y, dom, max_k, min_support)
    frame = kb.to_frame()
    got = {c: (p, s) for c, p, s in zip(frame["clause"], frame["p"], frame["support"])}
    want = brute_direct(X, y, max_k, min_support)
    assert got.keys() == want.keys()
    for c in want:
        assert got[c][0] == pytest.approx(want[c][0]) and got[c][1] == want[c][1]


def test_direct_kb_chunking_gives_the_same_counts(monkeypatch):
    import xcore.plkb.direct as direct

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(40, 5))
    y = rng.random(40) < 0.5
    whole = count_combinations(codes, y, 2)
    monkeypatch.setattr(direct, "CHUNK_CELLS", 50)  # one combination per chunk
    chunked = count_combinations(codes, y, 2)
    pd.testing.assert_frame_equal(whole.reset_index(drop=True), chunked.reset_index(drop=True))


def test_direct_min_support_fraction():
    X, y, dom, codes = four_bit()
    kb = direct_kb(codes, y, dom, max_k=2, min_support=0.5)  # at least 4 of 8 rows
    assert set(kb.to_frame()["clause"]) == set(brute_direct(X, y, 2, min_support=4))
    assert (kb.support >= 4).all() and len(kb) == 9  # 6 single values and 3 pairs with a4=0


def test_direct_kb_example8_single_feature_queries():
    """With the Direct KB, a1=0 -> 1/3, a2=1 -> 1/2, a3=0 -> 1/2, a4=1 -> 1; 0101 sits at 0.5."""
    _, y, dom, codes = four_bit()
    kb = direct_kb(codes, y, dom, max_k=4)
    r = Reasoner(kb)
    expected = {"a1": 1 / 3, "a2": 0.5, "a3": 0.5, "a4": 1.0}
    for f, want in expected.items():
        q = dom.query({f: Q0101[f]})
        iv = r.interval(q)
        lo, hi, _ = reference_interval(kb, q, "relevant")
        assert iv.mid == pytest.approx(want, abs=1e-6) and iv.lo == pytest.approx(lo, abs=1e-6)
        assert iv.hi == pytest.approx(hi, abs=1e-6)
    full = r.interval(dom.query(Q0101))
    assert full.mid == pytest.approx(0.5, abs=1e-6)
    assert not full.positive  # a tie at 0.5 is negative
