"""Joint PPLL against references: one rule equals the exact per-rule PPLL; the objective's gradient
equals finite differences; on planted unary data the rule beside the priors gets the planted signal."""

import numpy as np
import pytest
import scipy.sparse as sp

from xcore.psl.joint_ppll import GridPotential, grid_potential, joint_objective, learn_joint_weights
from xcore.psl.ppll import learn_weight


def _unary(rng, n=400, p_s=0.3, hi=0.6, lo=0.1):
    """Atoms 0..n-1 smokes (observed), n..2n-1 cancer (scored); rules as (A, b) hinge rows."""
    s = (rng.random(n) < p_s).astype(float)
    c = (rng.random(n) < np.where(s == 1, hi, lo)).astype(float)
    y = np.concatenate([s, c])
    scored = np.r_[np.zeros(n, bool), np.ones(n, bool)]
    eye = sp.eye(n, format="csr")
    zero = sp.csr_matrix((n, n))
    rules = {
        "prior_false": (sp.hstack([zero, eye]).tocsr(), np.zeros(n)),            # max(0, c)
        "prior_true": (sp.hstack([zero, -eye]).tocsr(), np.ones(n)),             # max(0, 1 - c)
        "smokes->cancer": (sp.hstack([eye, -eye]).tocsr(), np.zeros(n)),         # max(0, s - c)
        "~smokes->~cancer": (sp.hstack([-eye, eye]).tocsr(), np.zeros(n)),       # max(0, c - s)
    }
    return y, scored, rules


@pytest.mark.parametrize("squared", [True, False])
def test_one_rule_matches_exact_ppll(squared):
    y, scored, rules = _unary(np.random.default_rng(0))
    for A, b in rules.values():
        exact = learn_weight(A, b, squared, y, scored=scored).weight
        joint = learn_joint_weights([grid_potential(A, b, squared, y, scored, n=2001)])[0]
        assert joint == pytest.approx(exact, abs=2e-3 * max(1.0, exact))


def test_gradient_matches_finite_differences():
    y, scored, rules = _unary(np.random.default_rng(1))
    pots = [grid_potential(A, b, True, y, scored) for A, b in rules.values()]
    F = np.stack([p.values for p in pots])
    O = np.stack([p.observed for p in pots])
    w = np.array([0.7, 1.3, 0.4, 2.0])
    _, grad = joint_objective(w, F, O)
    h = 1e-6
    num = [(joint_objective(w + h * e, F, O)[0] - joint_objective(w - h * e, F, O)[0]) / (2 * h) for e in np.eye(4)]
    assert grad == pytest.approx(num, rel=1e-4, abs=1e-4)


def test_rule_beside_priors_gets_the_planted_signal():
    y, scored, rules = _unary(np.random.default_rng(2), n=2000)
    pots = {k: grid_potential(A, b, True, y, scored) for k, (A, b) in rules.items()}
    alone = learn_weight(*rules["smokes->cancer"], True, y, scored=scored).weight
    w = learn_joint_weights([pots["prior_false"], pots["prior_true"], pots["smokes->cancer"]])
    assert alone == 0.0  # per-rule PPLL cannot see it (the squared rule is above the uniform expectation)
    assert w[2] > 0.1  # jointly with the priors the rule carries weight
    # the model's MAP for a smoker is above that for a non-smoker (squared hinges: a weighted mean)
    smoker = (w[1] + w[2]) / (w[0] + w[1] + w[2])
    non = w[1] / (w[0] + w[1])
    assert smoker > non + 0.2


def test_no_rules_and_no_atoms():
    assert learn_joint_weights([]).shape == (0,)
    empty = GridPotential(np.zeros((0, 65)), np.zeros(0))
    assert learn_joint_weights([empty]).tolist() == [0.0]


def test_calibrated_weights_put_each_group_map_at_its_rate():
    from xcore.psl.joint_ppll import learn_calibrated_weights

    y, scored, rules = _unary(np.random.default_rng(3), n=3000)
    names = ["prior_false", "prior_true", "smokes->cancer", "~smokes->~cancer"]
    pots = [grid_potential(*rules[k], True, y, scored) for k in names]
    w = learn_calibrated_weights(pots, pots[0].truth, [True, True, False, False])
    smoker = (w[1] + w[2]) / (w[0] + w[1] + w[2])  # exact MAP of the squared-hinge energy per group
    non = w[1] / (w[0] + w[1] + w[3])
    n = 3000
    s, c = y[:n], y[n:]
    assert smoker == pytest.approx(c[s == 1].mean(), abs=0.05)
    assert non == pytest.approx(c[s == 0].mean(), abs=0.05)
    assert w.max() == pytest.approx(10.0)
