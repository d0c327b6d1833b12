"""Markov logic inference: evidence folding, colouring, exact enumeration, Gibbs vs exact, R-hat."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from xcore.data.samples import load_sample
from xcore.errors import XcoreError
from xcore.logic.grounding import ground
from xcore.logic.parser import parse_rules
from xcore.mln import GroundMLN, build_ground_mln, exact, gibbs, log_prob, naive_gibbs
from xcore.mln.synthetic import random_ground_mln

FS_RULES = """\
1.5 smokes(x) => cancer(x)
1.1 friends(x, y) ^ smokes(x) => smokes(y)
-0.5 smokes(x)
0.3 !cancer(x) v !smokes(x) v friends(x, x)
"""


def random_mln(n_atoms: int, n_clauses: int, seed: int, max_len: int = 3, scale: float = 1.5) -> GroundMLN:
    return random_ground_mln(n_atoms, n_clauses, seed=seed, max_len=max_len, scale=scale)


def brute_force_marginals(mln: GroundMLN) -> np.ndarray:
    """Independent reference: loop over worlds and clauses in plain Python."""
    n = mln.n_atoms
    S = mln.S.toarray()
    z, acc = 0.0, np.zeros(n)
    for bits in itertools.product([0, 1], repeat=n):
        x = np.array(bits)
        score = 0.0
        for c in range(mln.n_clauses):
            sat = any((S[c, j] > 0 and x[j]) or (S[c, j] < 0 and not x[j]) for j in range(n))
            score += mln.weights[c] * sat
        p = np.exp(score)
        z += p
        acc += p * x
    return acc / z


def test_exact_matches_brute_force():
    mln = random_mln(6, 10, seed=3)
    np.testing.assert_allclose(exact(mln).marginals, brute_force_marginals(mln), atol=1e-12)


def test_colour_classes_share_no_clause_and_cover_all_atoms():
    mln = random_mln(40, 120, seed=1, max_len=4)
    classes = mln.colour_classes
    assert sorted(np.concatenate(classes).tolist()) == list(range(40))
    A = abs(mln.S).toarray()
    for cls in classes:
        assert (A[:, cls].sum(axis=1) <= 1).all()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_gibbs_marginals_match_exact_on_random_networks(seed):
    mln = random_mln(int(4 + seed), int(8 + 2 * seed), seed=100 + seed)
    ref = exact(mln).marginals
    res = gibbs(mln, n_samples=6000, burn_in=200, n_chains=4, seed=seed)
    err = np.abs(res.marginals - ref)
    assert err.max() < 0.02
    assert (err <= 5 * res.marginal_se + 1e-3).all()
    assert np.nanmax(res.rhat) < 1.05


def test_gibbs_is_seeded():
    mln = random_mln(6, 10, seed=9)
    a, b = gibbs(mln, 200, 10, seed=4), gibbs(mln, 200, 10, seed=4)
    np.testing.assert_array_equal(a.atom_counts, b.atom_counts)
    assert a.atom_updates == 6 * 4 * 210


@pytest.mark.slow
def test_threaded_chains_agree_with_exact_and_are_seeded():
    mln = random_mln(6, 10, seed=21)
    a = gibbs(mln, 3000, 100, n_chains=4, seed=2, n_jobs=2)
    b = gibbs(mln, 3000, 100, n_chains=4, seed=2, n_jobs=2)
    np.testing.assert_array_equal(a.atom_counts, b.atom_counts)
    assert a.atom_counts.shape == (20, 6, 4)
    assert np.abs(a.marginals - exact(mln).marginals).max() < 0.02


@pytest.mark.parametrize("kw", [dict(n_samples=0), dict(thin=0), dict(n_chains=1.5), dict(burn_in=-1),
                                dict(n_jobs=0), dict(init=np.zeros((3, 3)))])
def test_gibbs_rejects_bad_arguments(kw):
    with pytest.raises(XcoreError):
        gibbs(random_mln(4, 5, seed=0), **{"n_samples": 10, **kw})


def test_naive_sampler_agrees_with_exact():
    mln = random_mln(5, 9, seed=11)
    marg, _, updates = naive_gibbs(mln, 20000, seed=0)
    assert updates == 5 * 20000
    assert np.abs(marg - exact(mln).marginals).max() < 0.03


def test_rhat_flags_chains_stuck_in_different_modes():
    # a <=> b with huge weight: chains started at 00 and 11 never meet
    S = sp.csr_matrix(np.array([[-1, 1], [1, -1]], dtype=np.int8))
    mln = GroundMLN(None, None, S, np.array([30.0, 30.0]), np.zeros(2, np.int32), np.arange(2),  # type: ignore[arg-type]
                    np.zeros(2, bool))
    init = np.array([[0, 1], [0, 1]], dtype=np.int8)
    res = gibbs(mln, 400, 0, n_chains=2, seed=0, init=init)
    assert (res.rhat > 2).all()
    assert res.diagnostics()["converged"] is False and res.diagnostics()["atoms_above_threshold"] == 2
    well = gibbs(random_mln(5, 8, seed=2), 2000, 100, seed=0)
    assert np.nanmax(well.rhat) < 1.05
    d = well.diagnostics()
    assert d["converged"] and d["atoms_above_threshold"] == 0 and d["max_rhat"] == np.nanmax(well.rhat)


# ---------------------------------------------------------------------- grounding + folding
@pytest.fixture(scope="module")
def friends_program():
    ds = load_sample("friends_smokers")
    return ground(parse_rules(FS_RULES, dialect="mln"), ds, domain_variables=True)


def test_folding_preserves_the_distribution(friends_program):
    """sum_f w_f n_f over ALL ground clauses (evidence + query world) minus the folded network's
    log-weight is the same constant for every query world."""
    prog = friends_program
    store = prog.store
    mln = build_ground_mln(prog)
    rng = np.random.default_rng(0)
    diffs = []
    for _ in range(20):
        x = rng.integers(0, 2, mln.n_atoms)
        full = np.where(store.is_target, 0.0, np.nan_to_num(store.value) >= 0.5).astype(float)
        full[store.target_ids] = x
        full = np.append(full, 0.0)  # missing atom (-1) is false
        total = 0.0
        for g in prog:
            vals = full[g.atom_ids]
            lit = np.where(g.signs[None, :] > 0, vals, 1 - vals)
            total += g.rule.weight * (lit.max(axis=1) > 0).sum()
        diffs.append(total - mln.log_weight(x))
    assert np.ptp(diffs) < 1e-9
    assert mln.summary()["dropped_satisfied_by_evidence"] > 0


def test_tautologies_and_duplicates_fold_away():
    ds = load_sample("friends_smokers")
    prog = ground(parse_rules("1.0 smokes(x) v !smokes(x)\n0.7 smokes(x) v smokes(x)", dialect="mln"), ds,
                  domain_variables=True)
    mln = build_ground_mln(prog)
    n_smokes_targets = int((store_pred(prog.store) == "smokes").sum())
    assert mln.dropped["tautology"] == n_smokes_targets
    assert mln.n_clauses == n_smokes_targets and mln.nnz == n_smokes_targets  # one literal each


def store_pred(store):
    names = np.array(list(store.predicates), dtype=object)
    return names[store.pred[store.target_ids]]


def test_hard_clause_violated_by_evidence_is_an_error():
    ds = load_sample("friends_smokers")
    # anna smokes (observed) and has cancer; edward smokes and has no cancer (observed)
    prog = ground(parse_rules("smokes(x) => cancer(x).", dialect="mln"), ds, domain_variables=True)
    with pytest.raises(XcoreError, match="violated by the evidence"):
        build_ground_mln(prog)


def test_hard_clause_gets_hard_weight():
    ds = load_sample("friends_smokers")
    prog = ground(parse_rules("friends(x, y) ^ smokes(x) => smokes(y).", dialect="mln"), ds,
                  domain_variables=True)
    mln = build_ground_mln(prog, hard_weight=12.0)
    assert mln.hard.all() and (mln.weights == 12.0).all()


def test_exact_refuses_large_networks():
    with pytest.raises(XcoreError, match="at most 20"):
        exact(random_mln(21, 5, seed=0))
    with pytest.raises(XcoreError):
        log_prob(random_mln(25, 5, seed=0), 0)


def test_empty_network_and_isolated_atoms():
    empty = GroundMLN(None, None, sp.csr_matrix((0, 0), dtype=np.int8), np.zeros(0), np.zeros(0, np.int32),  # type: ignore[arg-type]
                      np.zeros(0, np.int64), np.zeros(0, bool))
    assert gibbs(empty, 10, 1).diagnostics()["converged"]
    assert exact(empty).log_z == 0.0
    # atoms 1 and 2 occur in no clause: probability exactly 1/2
    lone = GroundMLN(None, None, sp.csr_matrix(np.array([[1, 0, 0]], dtype=np.int8)), np.ones(1),  # type: ignore[arg-type]
                     np.zeros(1, np.int32), np.zeros(1, np.int64), np.zeros(1, bool))
    np.testing.assert_allclose(exact(lone).marginals, [np.e / (1 + np.e), 0.5, 0.5])
    res = gibbs(lone, 4000, 10, seed=0)
    assert np.abs(res.marginals - exact(lone).marginals).max() < 0.02
