"""Consensus ADMM where few atoms have thousands of local copies (entity-resolution's shape, issue 26):
it reaches the exact solvers' optimum, and over-relaxation with residual balancing keeps the iteration
count low (plain consensus ADMM at rho = 1 needed 4-5 times as many on these programs); potentials over
the same pair are one block (`xcore.psl.admm_blocks`), which the linear hinges need most."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xcore.psl import HingeProgram, map_inference
from xcore.psl.admm import map_admm


def many_copies(seed: int, n: int = 6, m: int = 3000, squared: float = 1.0) -> HingeProgram:
    """`m` hinges over pairs of `n` atoms (each atom in about 2m/n of them), weights as PSL rules have."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(m), 2)
    cols = np.stack([rng.integers(0, n, m), rng.integers(0, n, m)], axis=1).ravel()
    data = np.stack([np.ones(m), -np.ones(m)], axis=1).ravel() * rng.choice([1.0, -1.0], 2 * m)
    A = sp.csr_matrix((data, (rows, cols)), shape=(m, n))
    A.sum_duplicates()
    return HingeProgram(A, rng.uniform(-0.6, 0.4, m), rng.choice([1.0, 10.0, 20.0, 40.0], m),
                        rng.random(m) < squared)


@pytest.mark.parametrize("seed", [0, 1])
def test_admm_reaches_the_exact_optimum_when_atoms_have_thousands_of_copies(seed):
    prog = many_copies(seed)
    ours = map_admm(prog, tol=1e-9, max_iter=20_000)
    exact = map_inference(prog, "qp")
    assert ours.converged
    assert abs(ours.energy - exact.energy) <= 1e-6 * max(abs(exact.energy), 1.0)
    np.testing.assert_allclose(ours.y, exact.y, atol=1e-4)
    assert ours.iterations <= 2_000


def test_admm_with_linear_hinges_and_many_copies_matches_the_qp():
    """Half linear hinges: 10,073 iterations before the blocks (xcore.psl.admm_blocks), 391 with them."""
    prog = many_copies(2, squared=0.5)
    ours = map_admm(prog, tol=1e-9, max_iter=50_000)
    exact = map_inference(prog, "qp")
    assert ours.converged
    assert abs(ours.energy - exact.energy) <= 1e-6 * max(abs(exact.energy), 1.0)
    assert ours.iterations <= 1_000
