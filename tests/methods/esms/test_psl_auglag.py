"""L-BFGS-B under hard linear rows (augmented Lagrangian) against the HiGHS QP on random programs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xcore.psl.inference import map_inference
from xcore.psl.program import HingeProgram


def random_program(seed: int, n: int = 30, m: int = 80, k: int = 8) -> HingeProgram:
    """Squared hinges plus simplex-like rows (sum of a few atoms = 1, or <= 1) and a few single-atom bounds."""
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=0.1, random_state=rng, data_rvs=lambda s: rng.choice([-1.0, 1.0], s))
    b = rng.uniform(-1, 1, m)
    rows, d, eq = [], [], []
    atoms = rng.permutation(n)
    for j in range(k):  # disjoint groups: always feasible
        group = atoms[3 * j:3 * j + 3]
        row = np.zeros(n)
        row[group] = 1.0
        rows.append(row)
        d.append(-1.0)
        eq.append(bool(j % 2 == 0))
    row = np.zeros(n)
    row[atoms[-1]] = 1.0  # y <= 0.3: a bound
    rows.append(row)
    d.append(-0.3)
    eq.append(False)
    return HingeProgram(A, b, rng.uniform(0.1, 3.0, m), True, C=sp.csr_matrix(np.array(rows)), d=d, equality=eq)


@pytest.mark.parametrize("seed", range(6))
def test_augmented_lagrangian_reaches_the_qp_optimum(seed):
    prog = random_program(seed)
    al = map_inference(prog, method="lbfgs")
    qp = map_inference(prog, method="qp")
    assert al.method == "lbfgs+al" and al.converged, al.message
    assert map_inference(prog, method="auto").method == "lbfgs+al"
    assert prog.constraint_violation(al.y) < 1e-8
    assert al.energy == pytest.approx(qp.energy, rel=1e-7, abs=1e-8)
    assert al.energy >= qp.energy - 1e-7  # never below the exact optimum (it holds the same rows)
