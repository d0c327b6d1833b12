"""MAP inference: L-BFGS-B and ADMM against the independent HiGHS QP, KKT conditions, warm starts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.errors import XcoreError
from xcore.psl import HingeProgram, map_inference


def random_program(seed: int, n: int = 8, m: int = 30, squared: float = 1.0,
                   hard: bool = False) -> HingeProgram:
    rng = np.random.default_rng(seed)
    dense = (rng.random((m, n)) < 0.3) * rng.choice([-1.0, 1.0], (m, n))
    b = rng.uniform(-1.5, 1.0, m)
    w = rng.uniform(0.05, 3.0, m)
    sq = rng.random(m) < squared
    C = d = eq = None
    if hard:
        C = sp.csr_matrix(np.vstack([np.ones(n), np.eye(n)[0] - np.eye(n)[1]]))
        d = np.array([-n / 3.0, 0.0])  # sum(y) <= n/3 and y0 == y1
        eq = np.array([False, True])
    return HingeProgram(sp.csr_matrix(dense), b, w, sq, C=C, d=d, equality=eq)


def rel_gap(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.integers(3, 40))
def test_lbfgs_matches_qp_and_satisfies_kkt(seed, n, m):
    prog = random_program(seed, n, m, squared=1.0)
    ours = map_inference(prog, "lbfgs")
    ref = map_inference(prog, "qp")
    assert ours.energy <= ref.energy * (1 + 1e-6) + 1e-10
    assert rel_gap(ours.energy, ref.energy) <= 1e-6 or abs(ours.energy - ref.energy) < 1e-10
    assert prog.kkt_residual(ours.y) < 1e-5


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_admm_matches_qp_with_linear_hinges_and_hard_rules(seed, hard):
    prog = random_program(seed, n=6, m=20, squared=0.5, hard=hard)
    ours = map_inference(prog, "admm", tol=1e-10, max_iter=50_000)
    ref = map_inference(prog, "qp")
    assert prog.constraint_violation(ours.y) < 1e-5
    assert abs(ours.energy - ref.energy) <= 1e-6 * max(abs(ref.energy), 1.0)


def test_energy_and_gradient_agree_with_finite_differences():
    prog = random_program(3, n=5, m=15, squared=1.0)
    y = np.random.default_rng(0).uniform(0.1, 0.9, 5)
    e, g = prog.energy_and_gradient(y)
    eps = 1e-6
    fd = np.array([(prog.energy(y + eps * np.eye(5)[i]) - prog.energy(y - eps * np.eye(5)[i])) / (2 * eps)
                   for i in range(5)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


def test_hand_computed_two_rule_model():
    # y pulled up by 1.0: x -> y with x = 1 (phi = max(0, 1 - y)^2), down by 3.0: prior ~y (phi = y^2)
    # minimise (1 - y)^2 + 3 y^2  ->  y = 1/4, energy = 0.75
    A = sp.csr_matrix(np.array([[-1.0], [1.0]]))
    prog = HingeProgram(A, np.array([1.0, 0.0]), np.array([1.0, 3.0]), True)
    for method in ("lbfgs", "admm", "qp"):
        r = map_inference(prog, method)
        assert r.y[0] == pytest.approx(0.25, abs=1e-6)
        assert r.energy == pytest.approx(0.75, rel=1e-6)


def test_warm_start_from_solution_needs_few_iterations():
    prog = random_program(7, n=30, m=120, squared=1.0)
    cold = map_inference(prog, "lbfgs")
    warm = map_inference(prog, "lbfgs", y0=cold.y)
    assert warm.iterations <= 2
    assert warm.energy == pytest.approx(cold.energy, rel=1e-9)


def test_bad_inputs_raise_xcore_errors():
    with pytest.raises(XcoreError, match=">= 0"):
        HingeProgram(sp.csr_matrix(np.ones((1, 1))), [0.0], [-1.0], True)
    prog = random_program(1, squared=0.0)
    with pytest.raises(XcoreError, match="smooth"):
        map_inference(prog, "lbfgs")
    with pytest.raises(XcoreError, match="unknown inference method"):
        map_inference(prog, "magic")
    infeasible = HingeProgram(sp.csr_matrix(np.ones((1, 2))), [0.0], [1.0], True,
                              C=sp.csr_matrix(np.ones((1, 2))), d=np.array([1.0]))  # y1 + y2 <= -1
    with pytest.raises(XcoreError, match="HiGHS"):
        map_inference(infeasible, "qp")
