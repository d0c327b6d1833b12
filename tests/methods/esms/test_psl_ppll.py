"""PPLL weight learning: exact log-partition against adaptive quadrature, gradient, planted weights."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from xcore.psl.ppll import build_pieces, learn_weight


def random_rule(seed: int, n: int = 5, m: int = 12):
    rng = np.random.default_rng(seed)
    A = sp.csr_matrix((rng.random((m, n)) < 0.4) * rng.choice([-1.0, 1.0], (m, n)))
    return A, rng.uniform(-1, 1, m), rng.random(m) < 0.5, rng.random(n)


def phi_of_atom(A, b, sq, y, i, t):
    yy = y.copy()
    yy[i] = t
    h = np.maximum(A @ yy + b, 0)
    p = np.where(sq, h * h, h)
    return p[A[:, [i]].toarray().ravel() != 0].sum()


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.0, 0.3, 2.0, 25.0]))
def test_log_partition_and_expectation_match_quadrature(seed, w):
    A, b, sq, y = random_rule(seed)
    pieces = build_pieces(A, b, sq, y)
    logz = pieces.log_partition(w)
    expected = pieces.expected(w)
    for k, i in enumerate(pieces.atoms):
        kinks = sorted(set(pieces.lo[pieces.atom == k]) | set(pieces.hi[pieces.atom == k]))[1:-1]
        f = lambda t: np.exp(-w * phi_of_atom(A, b, sq, y, i, t))  # noqa: E731
        z = quad(f, 0, 1, points=kinks or None, limit=500, epsabs=0, epsrel=1e-13)[0]
        e = quad(lambda t: phi_of_atom(A, b, sq, y, i, t) * f(t), 0, 1, points=kinks or None,
                 limit=500, epsabs=0, epsrel=1e-12)[0] / z
        assert logz[k] == pytest.approx(np.log(z), abs=1e-9, rel=1e-10)
        assert expected[k] == pytest.approx(e, abs=1e-5, rel=1e-5)
        assert pieces.observed[k] == pytest.approx(phi_of_atom(A, b, sq, y, i, y[i]), abs=1e-12)


def test_objective_is_concave_and_gradient_matches_difference():
    A, b, sq, y = random_rule(11, n=8, m=30)
    pieces = build_pieces(A, b, sq, y)
    ws = np.linspace(0, 10, 41)
    vals = np.array([pieces.objective(w) for w in ws])
    assert np.all(np.diff(vals, 2) <= 1e-9)
    for w in (0.5, 3.0):
        fd = (pieces.objective(w + 1e-5) - pieces.objective(w - 1e-5)) / 2e-5
        assert pieces.gradient(w) == pytest.approx(fd, rel=1e-4, abs=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("w_true,squared", [(2.0, True), (6.0, True), (3.0, False)])
def test_planted_weight_is_recovered(w_true, squared):
    # one ground rule per atom: x_i -> y_i (distance x_i - y_i); y_i drawn from its exact conditional
    rng = np.random.default_rng(42)
    n = 20_000
    x = rng.random(n)
    grid = np.linspace(0, 1, 4001)
    h = np.maximum(x[:, None] - grid[None, :], 0)
    dens = np.exp(-w_true * (h * h if squared else h))
    cdf = np.cumsum(dens, axis=1)
    cdf /= cdf[:, -1:]
    u = rng.random(n)
    idx = (cdf < u[:, None]).sum(axis=1)
    y = grid[np.minimum(idx, 4000)]
    A = sp.csr_matrix((-np.ones(n), (np.arange(n), np.arange(n))), shape=(n, n))
    res = learn_weight(A, x, squared, y)
    assert res.weight == pytest.approx(w_true, rel=0.08)
    assert abs(res.gradient) < 1e-3 * n


def test_weight_is_zero_when_rule_only_hurts_and_capped_when_never_violated():
    # truth violates x -> y everywhere (y = 0, x = 1): the best weight is 0
    n = 50
    A = sp.csr_matrix((-np.ones(n), (np.arange(n), np.arange(n))), shape=(n, n))
    assert learn_weight(A, np.ones(n), True, np.zeros(n)).weight == 0.0
    # truth satisfies it everywhere with slack: likelihood grows without bound -> the cap
    assert learn_weight(A, np.full(n, 0.5), True, np.ones(n), w_max=50.0).weight == 50.0
    # a rule that can never be violated carries no information: weight 0
    assert learn_weight(A, np.zeros(n), True, np.ones(n)).weight == 0.0


def test_unscored_atoms_are_context_only():
    A, b, sq, y = random_rule(5)
    scored = np.array([True, False, True, False, True])
    pieces = build_pieces(A, b, sq, y, scored)
    assert list(pieces.atoms) == [0, 2, 4]
