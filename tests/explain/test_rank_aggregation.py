"""Tests of weighted top-k rank aggregation (CEMC) against exact enumeration and hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import xcore.explain.rank_aggregation as ra
import xcore.explain.rank_problem as rp
from xcore.errors import XcoreError
from xcore.explain import (
    Aggregation,
    aggregate_objective,
    borda,
    brute_force_aggregate,
    cemc,
    coalition_weights,
    footrule_assignment,
)

DISTANCES = ("footrule", "kendall")


def random_problem(rng: np.random.Generator, n_items=(5, 8), n_lists=(3, 6)):
    """Random partial lists over a few items (lengths 1..n) with random positive weights."""
    n = int(rng.integers(*n_items))
    m = int(rng.integers(*n_lists))
    names = [f"f{i}" for i in range(n)]
    lists = [[names[j] for j in rng.permutation(n)[: rng.integers(1, n + 1)]] for _ in range(m)]
    weights = rng.uniform(0.1, 3.0, m)
    return lists, weights


def planted_problem(rng: np.random.Generator, n: int, m: int, noise: float):
    """Noisy, truncated copies of one hidden order."""
    truth = [f"x{i}" for i in rng.permutation(n)]
    lists = []
    for _ in range(m):
        order = np.argsort(np.arange(n) + rng.normal(0, noise, n))
        lists.append([truth[j] for j in order[: rng.integers(n // 2, n + 1)]])
    return lists, rng.uniform(0.2, 2.0, m)


# ---------------------------------------------------------------------- objective by hand
WORKED_LISTS = [["a", "b", "c"], ["b", "a"], ["c"]]
WORKED_WEIGHTS = [1.0, 2.0, 0.5]


def test_worked_example_footrule():
    # ranks (unranked -> own length + 1): A a1 b2 c3 | B b1 a2 c3 | C c1 a2 b2; tau a1 b2 c3.
    # A: 0. B: |2-1| + |1-2| = 2 (c unranked in both: not counted). C: |1-3| + |2-1| + |2-2| = 3.
    assert aggregate_objective(["a", "b"], WORKED_LISTS, WORKED_WEIGHTS) == pytest.approx(1 * 0 + 2 * 2 + 0.5 * 3)


def test_worked_example_kendall():
    # B: (a,b) discordant = 1. C: (a,b) tied in C -> 0, (a,c) and (b,c) discordant -> 2.
    assert aggregate_objective(["a", "b"], WORKED_LISTS, WORKED_WEIGHTS, distance="kendall") == pytest.approx(
        2 * 1 + 0.5 * 2)


def test_unweighted_default_and_k_argument():
    assert aggregate_objective(["a", "b"], WORKED_LISTS) == pytest.approx(0 + 2 + 3)
    assert aggregate_objective(["a", "b"], WORKED_LISTS, k=2) == pytest.approx(5)
    with pytest.raises(XcoreError, match="k = 3"):
        aggregate_objective(["a", "b"], WORKED_LISTS, k=3)


def test_items_beyond_k_keep_their_input_rank():
    # k = 2 but the input list has 4 items: w keeps rank 4 (not truncated), tau puts it at 3.
    lists = [["x", "y", "z", "w"]]
    assert aggregate_objective(["x", "y"], lists) == 1.0
    assert aggregate_objective(["x", "y"], lists, distance="kendall") == 0.0  # z, w tied in tau
    assert aggregate_objective(["y", "x"], lists, distance="kendall") == 1.0


def test_item_unranked_in_both_lists_is_not_counted_by_footrule():
    # E = [a] ranks b, c, d at 2; tau = [b, c] ranks a, d at 3. d is in neither -> 0 (not |2-3|).
    lists = [["a"], ["b", "c", "d"]]
    assert aggregate_objective(["b", "c"], lists, weights=[1.0, 0.0]) == pytest.approx(2 + 1 + 0)


def test_identical_list_has_zero_distance():
    lists = [["p", "q", "r", "s"]]
    for d in DISTANCES:
        assert aggregate_objective(["p", "q", "r", "s"], lists, distance=d) == 0.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(DISTANCES), st.integers(1, 5))
def test_fast_objective_matches_definition(seed, distance, k):
    rng = np.random.default_rng(seed)
    lists, weights = random_problem(rng, n_items=(5, 9))
    prob = rp.prepare(lists, weights, k, distance)
    codes = np.array([rng.permutation(prob.n)[: prob.k] for _ in range(30)])
    np.testing.assert_allclose(rp.FastObjective(prob)(codes), rp.direct_objectives(prob, codes))


# ---------------------------------------------------------------------- exact references
@pytest.mark.parametrize("seed", range(15))
def test_footrule_assignment_matches_brute_force(seed):
    lists, weights = random_problem(np.random.default_rng(seed))
    k = 1 + seed % 4
    exact = footrule_assignment(lists, weights, k)
    bf = brute_force_aggregate(lists, weights, k)
    assert exact.objective == pytest.approx(bf.objective)
    assert aggregate_objective(exact.ranking, lists, weights) == pytest.approx(exact.objective)


def test_brute_force_returns_the_minimum_of_all_candidates():
    lists, weights = random_problem(np.random.default_rng(7))
    for d in DISTANCES:
        bf = brute_force_aggregate(lists, weights, 3, d)
        prob = rp.prepare(lists, weights, 3, d)
        _, obj = ra._enumerate_objectives(prob)
        assert bf.objective == pytest.approx(obj.min())
        assert bf.iterations == obj.size
        assert aggregate_objective(bf.ranking, lists, weights, distance=d) == pytest.approx(bf.objective)


def test_brute_force_refuses_huge_enumerations():
    lists = [[f"i{j}" for j in range(30)]]
    with pytest.raises(XcoreError, match="brute force would enumerate"):
        brute_force_aggregate(lists, k=6)


# ---------------------------------------------------------------------- CEMC vs brute force
@pytest.fixture(params=[True, False], ids=["informed-start", "blind-start"])
def informed_start(request, monkeypatch):
    """Run CEMC with its Borda/input-list starting candidates, or with one arbitrary list only."""
    if not request.param:
        monkeypatch.setattr(ra, "_seed_candidates", lambda prob: np.arange(prob.k)[None, :])
    return request.param


@pytest.mark.parametrize("distance", DISTANCES)
def test_cemc_finds_brute_force_optimum(distance, informed_start):
    rng = np.random.default_rng(2024 if distance == "footrule" else 4202)
    unique_checked = 0
    for case in range(30):
        lists, weights = random_problem(rng)
        res = cemc(lists, weights, k=3, distance=distance, seed=case)
        bf = brute_force_aggregate(lists, weights, k=3, distance=distance)
        assert res.objective == pytest.approx(bf.objective), (case, lists, weights)
        assert aggregate_objective(res.ranking, lists, weights, distance=distance) == pytest.approx(res.objective)
        _, obj = ra._enumerate_objectives(rp.prepare(lists, weights, 3, distance))
        if np.sum(np.isclose(obj, obj.min())) == 1:
            assert res.ranking == bf.ranking
            unique_checked += 1
    assert unique_checked >= 10  # the ranking check really ran


@pytest.mark.parametrize("seed", range(3))
def test_cemc_reaches_assignment_optimum_on_30_items(seed):
    lists, weights = planted_problem(np.random.default_rng(seed), n=30, m=5, noise=4.0)
    res = cemc(lists, weights, k=6, seed=seed)
    assert res.objective == pytest.approx(footrule_assignment(lists, weights, k=6).objective)


def test_cemc_kendall_larger_brute_force():
    lists, weights = planted_problem(np.random.default_rng(11), n=9, m=4, noise=3.0)
    res = cemc(lists, weights, k=4, distance="kendall", seed=1)
    assert res.objective == pytest.approx(brute_force_aggregate(lists, weights, 4, "kendall").objective)


def test_cemc_result_fields():
    lists, weights = random_problem(np.random.default_rng(3))
    res = cemc(lists, weights, k=3, seed=0)
    assert isinstance(res, Aggregation)
    assert len(res.ranking) == 3 and len(set(res.ranking)) == 3
    assert len(res.history) == res.iterations
    assert res.history[-1] == pytest.approx(res.objective)
    assert all(b <= a + 1e-9 for a, b in zip(res.history, res.history[1:]))  # best never worsens
    n = len(res.items)
    assert res.probabilities.shape == (n, 4)
    np.testing.assert_allclose(res.probabilities[:, :3].sum(axis=0), 1.0)  # each position: one item
    np.testing.assert_allclose(res.probabilities.sum(axis=1), 1.0)         # each item: somewhere
    assert res.items == list(dict.fromkeys(x for lst in lists for x in lst))


# ---------------------------------------------------------------------- behaviour
@pytest.mark.parametrize("distance", DISTANCES)
def test_unanimous_lists_return_that_list(distance):
    lst = ["e", "c", "a", "d", "b", "f"]
    assert cemc([lst] * 4, distance=distance, seed=5).ranking == lst
    res = cemc([lst] * 3, k=3, distance=distance, seed=5)
    assert res.ranking == lst[:3]


def test_unanimous_lists_without_informed_start(monkeypatch):
    monkeypatch.setattr(ra, "_seed_candidates", lambda prob: np.arange(prob.k)[None, :])
    lst = ["e", "c", "a", "d", "b", "f", "g"]
    assert cemc([lst] * 3, k=4, seed=0).ranking == lst[:4]
    assert cemc([lst] * 3, k=4, distance="kendall", seed=0).ranking == lst[:4]


@pytest.mark.parametrize("distance", DISTANCES)
def test_heavy_weight_dominates(distance):
    a = ["a", "b", "c", "d", "e"]
    b = ["e", "d", "c", "b", "a"]
    lists = [a, b, b]
    assert cemc(lists, distance=distance, seed=0).ranking == b           # majority wins unweighted
    assert cemc(lists, weights=[10, 1, 1], distance=distance, seed=0).ranking == a
    assert cemc(lists, weights=[0, 1, 1], distance=distance, seed=0).ranking == b


def test_reproducible_with_seed():
    lists, weights = planted_problem(np.random.default_rng(5), n=25, m=4, noise=8.0)
    r1 = cemc(lists, weights, k=6, distance="kendall", seed=42)
    r2 = cemc(lists, weights, k=6, distance="kendall", seed=42)
    assert r1.ranking == r2.ranking and r1.history == r2.history and r1.iterations == r2.iterations
    np.testing.assert_array_equal(r1.probabilities, r2.probabilities)


def test_k_defaults_to_longest_list_and_is_capped():
    lists = [["a", "b"], ["c", "a", "d"]]
    assert len(cemc(lists).ranking) == 3
    assert len(brute_force_aggregate(lists, k=10).ranking) == 4
    assert len(cemc(lists, k=10).ranking) == 4


def test_non_string_hashable_items():
    lists = [[(1, 2), 3, "z"], [3, (1, 2)], ["z", 3]]
    res = cemc(lists, k=2, seed=0)
    assert res.objective == pytest.approx(brute_force_aggregate(lists, k=2).objective)


def test_max_iter_bounds_iterations():
    lists, weights = planted_problem(np.random.default_rng(1), n=20, m=3, noise=10.0)
    res = cemc(lists, weights, k=5, max_iter=2, seed=0)
    assert res.iterations == 2 and len(res.history) == 2


# ---------------------------------------------------------------------- borda
def test_borda_by_hand():
    # ranks (unranked -> own length + 1): a 1+2+2=5, b 2+1+2=5, c 3+3+1=7 (weights 1).
    assert borda(WORKED_LISTS, k=3) == ["a", "b", "c"]  # tie a/b keeps first appearance
    # weights 1, 2, 0.5: a 1+4+1=6, b 2+2+1=5, c 3+6+0.5=9.5
    assert borda(WORKED_LISTS, WORKED_WEIGHTS, k=2) == ["b", "a"]
    assert borda(WORKED_LISTS, [0, 0, 1], k=1) == ["c"]


# ---------------------------------------------------------------------- coalition weights
def test_coalition_weights_formula_dense_and_sparse():
    m1 = np.array([[3.0, 0.0], [0.0, 4.0]])   # norm 5
    m2 = np.zeros((3, 3))
    m2[0, 0] = 5.0                           # norm 5
    m3 = np.array([[0.0, 10.0]])             # norm 10
    expected = 1 - np.array([5, 5, 10]) / 20
    np.testing.assert_allclose(coalition_weights([m1, m2, m3]), expected)
    sparse = [scipy.sparse.csr_matrix(m1), scipy.sparse.coo_array(m2), m3]
    np.testing.assert_allclose(coalition_weights(sparse), expected)


def test_coalition_weights_sparse_duplicates_are_summed():
    dup = scipy.sparse.coo_matrix(([1.0, 2.0], ([0, 0], [0, 0])), shape=(2, 2))  # entry (0,0) = 3
    np.testing.assert_allclose(coalition_weights([dup, np.array([[1.0]])]), [1 - 3 / 4, 1 - 1 / 4])


def test_coalition_weights_degenerate_cases():
    np.testing.assert_array_equal(coalition_weights([np.zeros((2, 2)), scipy.sparse.csr_matrix((3, 3))]), [1, 1])
    np.testing.assert_array_equal(coalition_weights([np.ones((2, 2))]), [1.0])
    with pytest.raises(XcoreError, match="empty"):
        coalition_weights([])
    with pytest.raises(XcoreError, match="non-finite"):
        coalition_weights([np.array([np.nan]), np.ones(2)])
    with pytest.raises(XcoreError, match="sequence of matrices"):
        coalition_weights(np.ones((2, 2)))


def test_coalition_weights_feed_cemc():
    beta = coalition_weights([np.ones((2, 2)), np.zeros((2, 2)), np.zeros((2, 2))])
    np.testing.assert_allclose(beta, [0, 1, 1])
    lists = [["a", "b"], ["b", "a"], ["b", "a"]]
    assert cemc(lists, beta, seed=0).ranking == ["b", "a"]


# ---------------------------------------------------------------------- validation
@pytest.mark.parametrize("fn", [cemc, brute_force_aggregate, borda])
def test_validation_errors(fn):
    ok = [["a", "b"], ["b", "c"]]
    cases = [
        (([],), "empty input"),
        (([["a"], []],), "list 1 is empty"),
        (("abc",), "sequence of ranked lists"),
        (([["a"], "ab"],), "list 1 is not a sequence"),
        (([["a", "b", "a"]],), "more than once"),
        (([[["unhashable"]]],), "not hashable"),
        ((ok, [1.0]), "1 weights for 2 lists"),
        ((ok, [1.0, -0.5]), "non-negative"),
        ((ok, [0.0, 0.0]), "all weights are zero"),
        ((ok, [1.0, float("nan")]), "finite"),
        ((ok, None, 0), "at least 1"),
        ((ok, None, 1.5), "integer"),
    ]
    for args, message in cases:
        with pytest.raises(XcoreError, match=message):
            fn(*args)


def test_distance_and_parameter_validation():
    ok = [["a", "b"], ["b", "c"]]
    with pytest.raises(XcoreError, match="unknown distance"):
        cemc(ok, distance="spearman")
    with pytest.raises(XcoreError, match="unknown distance"):
        aggregate_objective(["a"], ok, distance="l1")
    for kwargs, message in [({"rho": 0}, "rho"), ({"rho": 1.0}, "rho"), ({"smoothing": 0}, "smoothing"),
                            ({"n_samples": 1}, "n_samples"), ({"patience": 0}, "patience"),
                            ({"max_iter": 0}, "max_iter")]:
        with pytest.raises(XcoreError, match=message):
            cemc(ok, **kwargs)


def test_aggregate_objective_ranking_validation():
    ok = [["a", "b"], ["b", "c"]]
    with pytest.raises(XcoreError, match="not in any input list"):
        aggregate_objective(["a", "zz"], ok)
    with pytest.raises(XcoreError, match="more than once"):
        aggregate_objective(["a", "a"], ok)
    with pytest.raises(XcoreError, match="at least 1"):
        aggregate_objective([], ok)


def test_numpy_and_pandas_lists_are_accepted():
    import pandas as pd

    lists = [["a", "b", "c"], ["b", "a"], ["c"]]
    expected = aggregate_objective(["a", "b"], lists, WORKED_WEIGHTS)
    as_arrays = [np.array(x) for x in lists]
    assert aggregate_objective(["a", "b"], as_arrays, WORKED_WEIGHTS) == pytest.approx(expected)
    as_series = [pd.Series(x) for x in lists]
    assert aggregate_objective(["a", "b"], as_series, WORKED_WEIGHTS) == pytest.approx(expected)
    assert aggregate_objective(["a", "c"], np.array([["a", "b"], ["c", "a"]])) == pytest.approx(
        aggregate_objective(["a", "c"], [["a", "b"], ["c", "a"]]))
