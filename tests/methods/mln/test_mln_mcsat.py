"""MC-SAT (`xcore.mln.mcsat`): marginals and importances against exact enumeration on small networks
with hard clauses, a network whose two modes single-site Gibbs cannot connect, hard clauses never
violated, seeded determinism, the `auto` choice, cancellation, and the sampler setting in a run."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xcore.data import load
from xcore.errors import XcoreError
from xcore.methods import REGISTRY, run_method
from xcore.mln.exact import exact
from xcore.mln.gibbs import gibbs
from xcore.mln.importance import importance
from xcore.mln.mcsat import choose_sampler, mcsat, run_sampler
from xcore.mln.network import GroundMLN
from xcore.mln.synthetic import random_ground_mln
from xcore.runtime import Cancelled, cancellable


def network(clauses: list[list[int]], weights: list[float | None], n_atoms: int) -> GroundMLN:
    """A ground network from signed 1-based literals; weight None marks a hard clause (weight 20)."""
    rows = [i for i, c in enumerate(clauses) for _ in c]
    cols = [abs(lit) - 1 for c in clauses for lit in c]
    vals = np.array([1 if lit > 0 else -1 for c in clauses for lit in c], dtype=np.int8)
    S = sp.csr_matrix((vals, (rows, cols)), shape=(len(clauses), n_atoms), dtype=np.int8)
    S.sort_indices()
    hard = np.array([w is None for w in weights])
    w = np.array([20.0 if w is None else w for w in weights])
    return GroundMLN(None, None, S, w, np.arange(len(clauses), dtype=np.int32), np.arange(len(clauses)), hard)


# atoms 1-4 tied by hard equivalences (a chain 1 <=> 2 <=> 3 <=> 4): two modes, all true or all false
TWO_MODES = network([[-1, 2], [-2, 1], [-2, 3], [-3, 2], [-3, 4], [-4, 3], [1], [4], [5, -1], [-5, -4]],
                    [None] * 6 + [0.3, -0.5, 1.0, 0.7], 5)


def with_hard(seed: int, n_atoms: int = 9, n_clauses: int = 22, n_hard: int = 6) -> GroundMLN:
    """A random network whose first `n_hard` clauses are hard (for seeds 0, 4, 5: 40, 180 and 92 of the
    512 worlds satisfy them)."""
    mln = random_ground_mln(n_atoms, n_clauses, seed=seed)
    mln.hard = np.arange(n_clauses) < n_hard
    mln.weights = np.where(mln.hard, 20.0, mln.weights)
    return mln


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 4])
def test_marginals_and_importance_match_exact_with_hard_clauses(seed):
    mln = with_hard(seed)
    ref = exact(mln)
    res = mcsat(mln, n_samples=1500, burn_in=50, n_chains=4, seed=seed)
    assert res.sampler == "mcsat" and res.extra["rejected_steps"] < 0.5 * 1550 * 4  # exact steps: some rejected
    assert np.abs(res.marginals - ref.marginals).max() < 0.05
    assert np.nanmax(np.abs(importance(mln, res) - importance(mln, ref))) < 0.08
    assert res.diagnostics()["converged"]


@pytest.mark.slow
def test_mcsat_crosses_the_hard_barrier_gibbs_cannot():
    """Every chain started in the all-true mode: Gibbs never leaves it (each move out breaks a hard
    clause, a factor e^-20), MC-SAT mixes to the exact marginals."""
    ref = exact(TWO_MODES).marginals
    start = np.ones((5, 4), dtype=np.int8)
    g = gibbs(TWO_MODES, n_samples=1000, burn_in=100, n_chains=4, seed=0, init=start)
    assert np.all(g.marginals[:4] == 1.0) and abs(ref[0] - 0.261) < 1e-3  # Gibbs: 1.0 where the truth is 0.26
    m = mcsat(TWO_MODES, n_samples=1500, burn_in=50, n_chains=4, seed=0, init=start)
    assert np.abs(m.marginals - ref).max() < 0.05
    assert np.all(m.rhat < 1.1)


@pytest.mark.slow
def test_hard_clauses_hold_in_every_sample_and_runs_are_seeded():
    mln = with_hard(5)
    a = mcsat(mln, n_samples=300, burn_in=10, n_chains=3, seed=7)
    b = mcsat(mln, n_samples=300, burn_in=10, n_chains=3, seed=7)
    c = mcsat(mln, n_samples=300, burn_in=10, n_chains=3, seed=8)
    hard = mln.hard
    # clause_counts: per batch, kept samples (all chains) with the clause satisfied
    assert np.array_equal(a.clause_counts[:, hard], np.repeat(a.batch_sizes[:, None] * 3, hard.sum(), axis=1))
    assert mln.satisfied(a.state.T)[:, hard].all()
    assert np.array_equal(a.atom_counts, b.atom_counts) and np.array_equal(a.state, b.state)
    assert not np.array_equal(a.atom_counts, c.atom_counts)


def test_auto_picks_mcsat_for_hard_or_heavy_ties_only():
    light = network([[1, 2], [1]], [1.0, 2.0], 2)
    hard_unit = network([[1], [1, 2]], [None, 1.0], 2)
    hard_tie = network([[1, -2]], [None], 2)
    heavy_tie = network([[1, -2]], [-6.0], 2)
    assert [choose_sampler(m) for m in (light, hard_unit, hard_tie, heavy_tie)] == ["gibbs", "gibbs", "mcsat", "mcsat"]
    assert choose_sampler(hard_tie, "gibbs") == "gibbs"
    with pytest.raises(XcoreError, match="unknown sampler"):
        choose_sampler(light, "walk")
    with pytest.raises(XcoreError, match="does not take"):
        run_sampler(hard_tie, "mcsat", watch=([0], [0]))


def test_contradicting_hard_clauses_are_sampled_with_their_finite_weight():
    """No world satisfies both hard clauses: MC-SAT samples the network's own (weight-20) distribution,
    says how many hard clauses its start violates, and never violates more than one of the pair."""
    contradiction = network([[1], [-1], [1, 2]], [None, None, 1.0], 2)
    res = mcsat(contradiction, n_samples=50, n_chains=2, seed=0)
    assert res.extra["hard_violated_at_start"] == 1
    assert np.array_equal(res.clause_counts[:, :2].sum(axis=1), res.batch_sizes * 2)


def test_negative_weights_match_exact():
    """A negative-weight clause kept as "stays violated" fixes its atoms (the other branch of the step)."""
    mln = network([[1, 2], [2, -3], [1, 3], [-1, -2]], [-1.2, -0.7, 0.9, None], 3)
    res = mcsat(mln, n_samples=1200, burn_in=20, n_chains=2, seed=1)
    assert np.abs(res.marginals - exact(mln).marginals).max() < 0.05


def test_cancel_stops_the_chains():
    calls = []

    def progress(fraction, message):
        calls.append(message)

    with pytest.raises(Cancelled):
        mcsat(TWO_MODES, n_samples=100_000, n_chains=2, progress=cancellable(progress, lambda: len(calls) >= 2))
    assert calls[0].startswith("MC-SAT")


# the frozen network of test_mln_convergence_note: hard A(x) <=> B(x)
FROZEN = b"A(obj)\nB(obj)\nA(x) <=> B(x).\n0.1 A(x)\n"


@pytest.mark.slow
def test_run_with_auto_sampler_uses_mcsat_on_hard_ties_and_converges():
    db = b"".join(b"0.5 A(O%d)\n" % i for i in range(6))
    ds = load([("p.mln", FROZEN), ("e.db", db), ("query.db", b"A(x)\nB(x)\n")])
    s = REGISTRY["mln"].default_settings(ds).replace(inference="gibbs", n_samples=600, burn_in=20, n_chains=4,
                                                    explainers=("mln:m-explain",))
    assert s.sampler == "auto"
    run = run_method("mln", ds, s, cache=None)
    assert run.model.model_.method_ == "mcsat"
    assert run.metrics["converged"] == 1.0
    assert run.model.notes_[0].startswith("MC-SAT 4 chains x 600 samples (burn-in 20): converged")
    ref = MLNModelExact(ds)
    got = dict(zip(run.predictions["target"], run.predictions["prediction"]))
    assert max(abs(got[a] - ref[a]) for a in got) < 0.08  # 12 atoms, 2,400 autocorrelated samples


def MLNModelExact(ds) -> dict[str, float]:
    from xcore.mln.model import MLNModel

    m = MLNModel("\n".join(ds.rules)).ground(ds).infer("exact").marginals()
    return dict(zip(m["atom"], m["marginal"]))


# I-Explain on a program with a hard formula: Adv is antisymmetric (hard), advisors are professors
PEOPLE = ("A", "B", "C")
PROF = {"B", "C"}
W_PROF, W_SYM, W_HARD = 1.2, -0.8, 20.0
ANTISYMMETRIC = f"""
*Prof(person)
Adv(person, person)
{W_PROF} Adv(x, y) => Prof(y)
{W_SYM} Adv(x, y) => Adv(y, x)
Adv(x, y) => !Adv(y, x).
"""


def _brute_importance(query: str, rule: int, x: str, y: str) -> float:
    """I(f, Q) over every world of the open Adv atoms, from the formulas' first-order meaning (the hard
    formula with the network's finite hard weight)."""
    import itertools

    atoms = [(a, b) for a in PEOPLE for b in PEOPLE if (a, b) != ("A", "C")]
    truth = np.array(list(itertools.product([0.0, 1.0], repeat=len(atoms))))
    col = {a: k for k, a in enumerate(atoms)}

    def adv(a, b):
        return truth[:, col[(a, b)]] > 0 if (a, b) in col else np.zeros(len(truth), dtype=bool)

    formulas = {0: lambda a, b: ~adv(a, b) | (b in PROF), 1: lambda a, b: ~adv(a, b) | adv(b, a),
                2: lambda a, b: ~adv(a, b) | ~adv(b, a)}
    weights = {0: W_PROF, 1: W_SYM, 2: W_HARD}
    logw = sum(weights[r] * f(a, b) for r, f in formulas.items() for a in PEOPLE for b in PEOPLE)
    p = np.exp(logw - logw.max())
    p /= p.sum()
    xq = truth[:, [f"Adv({a}, {b})" for a, b in atoms].index(query)]
    n_f = formulas[rule](x, y).astype(float)
    return float((p * n_f) @ xq / (p @ xq) - p @ n_f)


@pytest.mark.slow
def test_i_explain_with_mcsat_matches_brute_force_importance():
    """C = S = 1: the coalition is the whole network, sampled by MC-SAT (auto picks it: a hard formula
    ties two atoms); every item's I(f, Q) equals the brute-force value to Monte Carlo tolerance."""
    from xcore.mln.iexplain import IExplainer
    from xcore.mln.model import MLNModel

    ds = load([("p.mln", ANTISYMMETRIC.encode()), ("e.db", b"Prof(B)\nProf(C)\n!Adv(A, C)\n"),
               ("query.db", b"Adv(x, y)\n")])
    model = MLNModel("\n".join(ds.rules)).ground(ds)
    options = {"n_samples": 1500, "burn_in": 50, "n_chains": 4}
    ex = IExplainer(C=1.0, S=1.0, T=1, top_k=20, inference="gibbs", gibbs_options=options, seed=0).fit(model, "person")
    assert {c.inference for c in ex.coalition_details_} == {"mcsat"}
    checked, worst = 0, 0.0
    for q in ("Adv(A, B)", "Adv(B, A)", "Adv(B, C)", "Adv(C, B)"):
        for item in ex.explain(q).items:
            x, y = item.atoms[0][len("Adv("):-1].split(", ")
            want = _brute_importance(q, item.extras["rule_index"], x, y)
            worst = max(worst, abs(item.score - want))
            checked += 1
    assert checked >= 12 and worst < 0.06, worst


def test_merged_network_has_the_same_distribution():
    """Repeated clauses summed, opposing unit clauses netted: log-weights differ by one constant over
    all worlds, and no atom keeps more than one unit clause."""
    from xcore.mln.exact import worlds
    from xcore.mln.mcsat_merge import merged_network

    base = network([[1], [-1], [1], [2, -3], [2, -3], [-3, 2], [3], [-3], [1, 2, 3], [-2]],
                   [1.5, -0.7, None, 0.4, 0.9, -0.2, 2.0, 2.0, -1.1, 0.3], 3)
    merged = merged_network(base)
    x = worlds(3, 0, 8)
    diff = base.log_weight(x) - merged.log_weight(x)
    assert np.ptp(diff) < 1e-9
    units = np.diff(merged.S.indptr) == 1
    assert len(np.unique(merged.S.indices[merged.S.indptr[:-1][units]])) == units.sum()
    assert merged.n_clauses == 4  # [1] (hard: 21.5 + 0.7), [2 v -3] (1.1), [1 v 2 v 3], [-2]; atom 3's units cancel
    assert merged.hard.sum() == 1


@pytest.mark.slow
def test_samplesat_option_with_walksat_repair_is_near_exact():
    """Poon and Domingos' SampleSAT (interleaved annealing and WalkSAT moves, then a WalkSAT repair) in
    place of the exact step: near-uniform on the kept clauses, so close to exact on a small network."""
    mln = with_hard(4)
    res = mcsat(mln, n_samples=1000, burn_in=50, n_chains=4, seed=2, sa_sweeps=0, sat_steps=20, repair=200)
    assert res.extra["walksat_flips"] > 0
    assert np.abs(res.marginals - exact(mln).marginals).max() < 0.06


def test_note_says_when_the_hard_clauses_cannot_all_hold():
    """Chains frozen on either side of two contradicting hard clauses: the run's note names the cause."""
    from types import SimpleNamespace

    from xcore.mln.estimator import convergence_note

    contradiction = network([[1], [2], [-1, -2]], [None, None, None], 2)  # every world breaks one
    start = np.array([[1, 1, 0, 1], [1, 0, 1, 1]], dtype=np.int8)
    res = mcsat(contradiction, n_samples=40, burn_in=0, n_chains=4, seed=0, init=start, init_flips=0)
    assert res.extra["hard_violated_at_start"] == 1
    note = convergence_note(SimpleNamespace(result_=res, mln_=contradiction))
    assert "NOT converged" in note and "no world found satisfies every hard formula" in note
