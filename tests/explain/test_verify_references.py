"""`xcore verify`'s interventions against independent references: exact enumeration of small Markov
networks (with every weight sign), an independent QP solve of small PSL programs, and the defects of
issue 32 that every view must now render one way."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.esms.verify import value_without
from xcore.mln.exact import exact
from xcore.mln.importance import formula_direction
from xcore.mln.synthetic import random_ground_mln
from xcore.mln.verify import exact_without, reweighted_without
from xcore.psl.inference import map_qp
from xcore.psl.program import HingeProgram


def brute_change(mln, atom, clause):
    """P(atom) minus P(atom) with one clause's weight 0, from two full enumerations."""
    w = mln.weights.copy()
    w[clause] = 0.0
    return exact(mln).marginals[atom] - exact(mln, w).marginals[atom]


@pytest.mark.parametrize("seed", range(6))
def test_exact_interventions_equal_two_enumerations_and_the_direction_rule(seed):
    mln = random_ground_mln(7, 14, seed=seed, scale=2.0)
    for atom in range(mln.n_atoms):
        clauses = mln.clauses_of(atom)
        if not len(clauses):
            continue
        got = exact_without(mln, atom, clauses)
        want = np.array([brute_change(mln, atom, c) for c in clauses])
        np.testing.assert_allclose(got, want, atol=1e-12)
        # the direction every view renders: sign(w) x sign of the atom's literal, exact for every clause
        signs = np.array([mln.S[c, atom] for c in clauses])
        dirs = np.array([formula_direction(mln.weights[c], s) for c, s in zip(clauses, signs)])
        moved = np.abs(want) > 1e-12
        assert (np.sign(want[moved]) == dirs[moved]).all()


def test_reweighting_one_gibbs_run_matches_exact_changes():
    from xcore.mln.gibbs import gibbs

    mln = random_ground_mln(6, 10, seed=3, scale=1.2)
    res = gibbs(mln, n_samples=4000, burn_in=200, n_chains=4, seed=1,
                watch=(np.arange(mln.n_atoms), np.arange(mln.n_clauses)))
    atom = 2
    clauses = mln.clauses_of(atom)
    got, se = reweighted_without(res.watched, atom, clauses, mln.weights[clauses])
    want = np.array([brute_change(mln, atom, c) for c in clauses])
    assert np.all(np.abs(got - want) <= 4 * se + 0.01)


def test_psl_rule_removal_equals_an_independent_qp_solve():
    rng = np.random.default_rng(0)
    n, m = 5, 12
    A = rng.choice([-1.0, 0.0, 1.0], size=(m, n), p=[0.3, 0.4, 0.3])
    b = rng.uniform(-0.5, 0.5, m)
    w = rng.uniform(0.5, 2.0, m)
    # weak squared priors towards 0.5 on both sides make every optimum unique (strictly convex energy)
    A = np.vstack([A, np.eye(n), -np.eye(n)])
    b = np.concatenate([b, np.full(n, -0.5), np.full(n, 0.5)])
    w = np.concatenate([w, np.full(2 * n, 0.05)])
    m = len(b)
    prog = HingeProgram(A, b, w, np.ones(m, bool))
    y = map_qp(prog).y
    rows = np.arange(m - 2 * n)
    got = value_without(prog, y, 0, rows, "lbfgs")
    want = []
    for r in rows:
        w2 = w.copy()
        w2[r] = 0.0
        want.append(y[0] - map_qp(HingeProgram(A, b, w2, np.ones(m, bool))).y[0])
    np.testing.assert_allclose(got, want, atol=2e-4)
    assert np.array_equal(prog.w, w)  # the program itself is left as it was


def test_negatively_weighted_word_formula_reads_as_what_it_does():
    """Issue 32, defect 1: I(f, Q) > 0 for a formula whose weight is negative; every view must say
    it pushes the query down, and exact enumeration must agree."""
    from xcore.data import load
    from xcore.explain.render import LEGEND, item_table
    from xcore.explain.text import explanation_text
    from xcore.mln.model import MLNModel
    from xcore.viz import ranked_bar_figure

    csv = ("predicate,arg1,arg2,value,partition\n"
           "has_word,r1,mediocre,1,obs\nhas_word,r1,great,1,obs\npositive,r1,,,targets\n")
    ds = load(("reviews.csv", csv.encode()))
    model = MLNModel("-1.5 has_word(r, w) => positive(r)\n0.2 positive(r)\n").ground(ds).infer("exact")
    exp = model.explain("positive(r1)")
    word = [it for it in exp.items if "mediocre" in it.text][0]
    assert word.score > 0 and word.direction == -1
    clause = word.extras["clause"]
    assert brute_change(model.mln_, 0, clause) < 0
    rank = exp.items.index(word) + 1
    bars = {t.name: list(t.y) for t in ranked_bar_figure(exp).data}
    assert any(y.startswith(f"{rank}.") for y in bars[LEGEND[-1]])
    assert item_table(exp).loc[rank - 1, "direction"] == "pushes down"
    line = [ln for ln in explanation_text(exp, k=5).splitlines() if "mediocre" in ln][0]
    assert "pushes it down" in line and "counts against" in line and "pushes it up" not in line
