"""Explanations: k most decisive features (paper Example 8, hill-climbing vs exhaustive) and the
classifier's own Shapley values (efficiency, brute-force permutations, sampling error, dummy)."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from test_plkb_learners import Q0101, four_bit

from xcore.explain.types import Explanation
from xcore.plkb.direct import direct_kb
from xcore.plkb.explain import (
    decisive_features,
    exact_shapley,
    explanation_accuracy,
    shapley_values,
    top_k,
    topk_agreement,
)
from xcore.plkb.inference import Reasoner
from xcore.plkb.literals import ABSENT, Domain
from xcore.plkb.tree import id3, tree_kb


def random_direct(seed: int, n_features: int = 7, n_rows: int = 80, max_k: int = 2):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.integers(0, 3, size=(n_rows, n_features)).astype(str),
                     columns=[f"f{i}" for i in range(n_features)])
    w = rng.normal(size=n_features)
    y = (X.astype(int).to_numpy() @ w + rng.normal(size=n_rows) * 0.5) > np.median(X.astype(int).to_numpy() @ w)
    dom = Domain.from_frame(X)
    kb = direct_kb(dom.encode(X), y, dom, max_k)
    return Reasoner(kb), dom.encode(X)


def test_example8_most_decisive_feature_of_0101_is_a1():
    _, y, dom, codes = four_bit()
    r = Reasoner(direct_kb(codes, y, dom, max_k=4))
    res = decisive_features(r, dom.query(Q0101), k=1)
    assert not res.positive and res.method == "exhaustive"
    assert res.features == (0,)  # a1 = 0
    assert res.candidates["query"].tolist() == ["a1=0", "a2=1", "a3=0", "a4=1"]
    assert res.candidates["omega_mid"].round(6).tolist() == [0.333333, 0.5, 0.5, 1.0]


def test_tree_kb_positive_0101_is_explained_by_a4():
    _, y, dom, codes = four_bit()
    r = Reasoner(tree_kb(id3(codes, y, dom), dom))
    res = decisive_features(r, dom.query(Q0101), k=1)
    assert res.positive and res.features == (3,) and res.interval.mid == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [2, 3])
def test_hill_climbing_finds_the_exhaustive_optimum(seed, k):
    r, codes = random_direct(seed)
    q = codes[seed]
    ex = decisive_features(r, q, k, max_exhaustive=10_000)
    hc = decisive_features(r, q, k, max_exhaustive=0, restarts=3, seed=seed)
    assert ex.method == "exhaustive" and hc.method == "hill-climb"
    assert len(ex.candidates) == (35 if k == 3 else 21)
    assert hc.interval.mid == pytest.approx(ex.interval.mid, abs=1e-9)
    # the candidate table is best first among the size-k sub-queries
    mids = ex.candidates["omega_mid"].to_numpy()
    assert np.all(np.diff(mids) >= -1e-9) if not ex.positive else np.all(np.diff(mids) <= 1e-9)


def brute_force_shapley(value, n: int) -> np.ndarray:
    """Average marginal contribution over all n! orderings."""
    phi = np.zeros(n)
    perms = list(permutations(range(n)))
    for perm in perms:
        members: list[int] = []
        for i in perm:
            before = value(members)
            members = members + [i]
            phi[i] += value(members) - before
    return phi / len(perms)


def test_exact_shapley_matches_permutation_enumeration_and_is_efficient():
    r, codes = random_direct(1, n_features=5)
    q = codes[3]
    res = shapley_values(r, q)
    assert res.method == "exact" and res.n_coalitions == 32

    def value(members):
        sub = np.full_like(q, ABSENT)
        sub[members] = q[members]
        return r.interval(sub).mid

    np.testing.assert_allclose(res.phi, brute_force_shapley(value, 5), atol=1e-12)
    assert res.phi.sum() == pytest.approx(res.v_full - res.v_empty, abs=1e-12)
    assert res.v_full == pytest.approx(r.interval(q).mid)


def test_exact_shapley_on_a_known_game():
    # v(S) = 1 if {0, 1} <= S: players 0 and 1 split the value, player 2 is a dummy
    n = 3
    table = np.array([1.0 if (m & 3) == 3 else 0.0 for m in range(8)])
    np.testing.assert_allclose(exact_shapley(table, n), [0.5, 0.5, 0.0])


def test_feature_no_clause_mentions_is_a_dummy():
    r, codes = random_direct(2, n_features=4)
    kb = r.kb
    # drop every clause that mentions feature f3
    dom = kb.domain
    f3_atoms = dom.offsets[3] + np.arange(dom.cardinalities[3])
    mentions = np.bincount(kb.lit_clause, weights=np.isin(kb.atoms, f3_atoms), minlength=len(kb)) > 0
    res = shapley_values(Reasoner(kb.select(~mentions)), codes[0])
    assert res.phi[3] == pytest.approx(0.0, abs=1e-12)


def test_permutation_sampling_converges_within_its_standard_error():
    r, codes = random_direct(4, n_features=6)
    q = codes[5]
    exact = shapley_values(r, q, exact_max=12)
    sampled = shapley_values(r, q, exact_max=3, n_permutations=400, seed=1)
    assert sampled.method == "permutation" and (sampled.se > 0).any()
    assert np.all(np.abs(sampled.phi - exact.phi) <= 4 * sampled.se + 1e-9)
    # each permutation's marginals sum to v_full - v_empty, so the estimate is efficient too
    assert sampled.phi.sum() == pytest.approx(exact.v_full - exact.v_empty, abs=1e-9)


def test_top_k_agreement_and_accuracy_helpers():
    a = np.array([0.5, -0.2, 0.1, -0.7])
    assert top_k(a, 2, positive=True).tolist() == [0, 2]
    assert top_k(a, 2, positive=False).tolist() == [3, 1]
    assert top_k(a, 2).tolist() == [3, 0]
    assert topk_agreement(a, np.array([0.4, 0.0, 0.3, 0.0]), 2, positive=True) == 1.0
    assert topk_agreement(a, np.array([0.0, 0.3, 0.4, 0.0]), 2, positive=True) == 0.5
    assert explanation_accuracy([0, 2], np.array([1, 0, 2]), np.array([1, 1, 0])) == 0.5


def test_explanations_convert_to_the_shared_type():
    _, y, dom, codes = four_bit()
    r = Reasoner(direct_kb(codes, y, dom, max_k=4))
    res = shapley_values(r, dom.query(Q0101))
    e = res.to_explanation(target="row 0101")
    assert isinstance(e, Explanation) and len(e.items) == 4
    assert e.items[0].kind == "feature_set" and e.items[0].atoms == ["a4_1"]  # largest |phi|
    back = Explanation.from_json(e.to_json())
    assert back.to_dict() == e.to_dict()
