"""ADMM's blocks (issue 26): potentials and hard rows that share a linear form are one local problem.

- the block's local step is the exact minimiser of its potentials plus the proximal term, against a
  brute-force 1-D search on the original (unmerged, unscaled) rows;
- a program with duplicated (and positively rescaled) ground rules gives the same MAP state and
  energy as the deduplicated one, equal to the HiGHS QP, with its hard constraints held;
- Java PSL's looser stopping rule is available and stops earlier.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

from xcore.errors import XcoreError
from xcore.psl.admm import blocks_of, map_admm
from xcore.psl.admm_blocks import build_blocks
from xcore.psl.inference import map_qp
from xcore.psl.map_problem import HARD_TOL, hard_violation
from xcore.psl.program import HingeProgram


def _forms(rng: np.random.Generator, n_atoms: int, n_forms: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Distinct linear forms over 1-3 atoms, coefficients +-1 or other small values (as PSL's rules and arithmetic)."""
    forms, seen = [], set()
    while len(forms) < n_forms:
        size = int(rng.integers(1, 4))
        cols = np.sort(rng.choice(n_atoms, size, replace=False))
        coef = rng.choice([1.0, -1.0, 0.5, 2.0, -3.0], size)
        key = (tuple(cols), tuple(coef / np.abs(coef).max()))  # rescaled forms are one form
        if key not in seen:
            seen.add(key)
            forms.append((cols, coef))
    return forms


def _program(rows: list[tuple[np.ndarray, np.ndarray, float, float, bool]],
             hard: list[tuple[np.ndarray, np.ndarray, float, bool]], n_atoms: int) -> HingeProgram:
    """A program from (cols, coef, b, w, squared) soft rows and (cols, coef, d, equality) hard rows."""
    def matrix(items: list) -> sp.csr_matrix:
        data = [(i, c, a) for i, (cols, coef, *_) in enumerate(items) for c, a in zip(cols, coef)]
        r, c, a = zip(*data) if data else ((), (), ())
        return sp.csr_matrix((a, (r, c)), shape=(len(items), n_atoms))

    return HingeProgram(matrix(rows), [r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows],
                        matrix(hard) if hard else None, [h[2] for h in hard] if hard else None,
                        [h[3] for h in hard] if hard else None)


def _brute_step(rows, hard, v: np.ndarray, a: np.ndarray, rho: float) -> float:
    """argmin over s of sum_j w_j h(A_j (v + s a) + b_j) + rho/2 s^2 |a|^2 with the hard rows held, by a dense
    grid then a bounded scalar search (the local minimiser lies on the line v + s a)."""
    def phi(s):  # vectorised over an array of s (or one s)
        s = np.asarray(s, dtype=float)
        x = v + s[..., None] * a
        total = 0.5 * rho * s * s * float(a @ a)
        for cols, coef, b, w, squared in rows:
            h = np.maximum(0.0, x[..., cols] @ coef + b)
            total = total + w * (h * h if squared else h)
        return total

    lo, hi = -50.0, 50.0
    for cols, coef, d, equality in hard:  # coef.(v + s a) + d <= 0 (= 0): an interval of s
        slope, at0 = float(coef @ a[cols]), float(coef @ v[cols]) + d
        edge = -at0 / slope
        if equality:
            return edge
        lo, hi = (lo, min(hi, edge)) if slope > 0 else (max(lo, edge), hi)
    grid = np.linspace(lo, hi, 20001)
    best = grid[int(np.argmin(phi(grid)))]
    step = (hi - lo) / 20000
    return float(minimize_scalar(lambda s: float(phi(s)), bounds=(max(lo, best - step), min(hi, best + step)), method="bounded",
                                 options={"xatol": 1e-12}).x)


def _same_form(cols, coef, block_cols, block_coef) -> bool:
    """Whether a row (cols, coef) is the block's form up to a positive factor."""
    return (len(cols) == len(block_cols) and bool((cols == block_cols).all())
            and bool(np.allclose(coef / np.abs(coef).max(), block_coef)))


@pytest.mark.parametrize("seed", range(4))
def test_a_blocks_local_step_is_the_exact_minimiser_of_its_potentials(seed):
    rng = np.random.default_rng(seed)
    n_atoms = 5
    forms = _forms(rng, n_atoms, 4)
    rows, hard = [], []
    for f, (cols, coef) in enumerate(forms):
        for _ in range(int(rng.integers(1, 7))):  # potentials of the form, some rescaled by s > 0
            s = float(rng.choice([1.0, 2.0, 0.25]))
            rows.append((cols, s * coef, s * float(rng.uniform(-2, 2)), float(rng.choice([1.0, 10.0, 0.5])),
                         bool(rng.random() < 0.5)))
        first = rows[-1]  # its twin of the other kind (same constant): merged with it, it would be wrong
        rows.append((first[0], first[1], first[2], 3.0, not first[4]))
        if f == 0:  # a hard row on a form with potentials: a bound on its value
            hard.append((cols, coef, -float(rng.uniform(0.5, 1.5)), False))
    prog = _program(rows, hard, n_atoms)
    bl = build_blocks(prog.A, prog.b, prog.w, prog.squared, prog.C, prog.d, prog.equality, n_atoms)
    assert bl.n_blocks == len(forms)
    for rho in (0.3, 1.0, 7.0):
        v = rng.uniform(-1, 2, len(bl.a))
        t_v = bl.row_sums(bl.a * v)
        t, _ = bl.prox_t(t_v, rho / bl.norm2)
        for g in range(bl.n_blocks):
            copies = np.flatnonzero(bl.rows == g)
            cols, a = bl.cols[copies], bl.a[copies]
            x_v = np.zeros(n_atoms)
            x_v[cols] = v[copies]
            direction = np.zeros(n_atoms)
            direction[cols] = a
            ours = (t[g] - t_v[g]) / bl.norm2[g]
            mine = [r for r in rows if _same_form(r[0], r[1], cols, a)]
            bounds = [h for h in hard if _same_form(h[0], h[1], cols, a)]
            assert ours == pytest.approx(_brute_step(mine, bounds, x_v, direction, rho), abs=1e-6)


def _duplicated(prog_rows, hard, rng):
    """Each soft row split into 1-3 copies whose weights add up to its own, some rescaled by c > 0
    (a linear hinge's weight divided by c, a squared one's by c^2); hard rows repeated and rescaled."""
    rows = []
    for cols, coef, b, w, squared in prog_rows:
        parts = rng.dirichlet(np.ones(int(rng.integers(1, 4)))) * w
        for part in parts:
            c = float(rng.choice([1.0, 1.0, 2.0, 0.5]))
            rows.append((cols, c * coef, c * b, part / (c * c if squared else c), squared))
    dup_hard = [(cols, c * coef, c * d, eq) for cols, coef, d, eq in hard for c in (1.0, 3.0)]
    order = rng.permutation(len(rows))
    return [rows[i] for i in order], dup_hard


@pytest.mark.parametrize("seed", range(3))
def test_duplicated_ground_rules_give_the_same_map_and_energy_with_hard_rules_held(seed):
    rng = np.random.default_rng(seed)
    n_atoms = 8
    forms = _forms(rng, n_atoms, 12)
    rows = [(cols, coef, float(rng.uniform(-1.5, 1)), float(rng.choice([1.0, 5.0, 20.0])), bool(rng.random() < 0.5))
            for cols, coef in forms for _ in range(int(rng.integers(1, 4)))]
    y_feasible = rng.uniform(0.2, 0.8, n_atoms)  # hard rows that this state holds: the program is feasible
    hard = []
    for cols, coef in forms[:3]:  # on forms that carry potentials too, and one equality
        value = float(coef @ y_feasible[cols])
        hard.append((cols, coef, -value - 0.05, False))
    hard.append((np.array([0, 1]), np.array([1.0, 1.0]), -float(y_feasible[0] + y_feasible[1]), True))
    once = _program(rows, hard, n_atoms)
    twice = _program(*_duplicated(rows, hard, rng), n_atoms)
    y = rng.random(n_atoms)
    assert twice.energy(y) == pytest.approx(once.energy(y), rel=1e-12)  # the same energy function
    assert blocks_of(twice)[0].n_blocks == blocks_of(once)[0].n_blocks  # merged exactly
    assert blocks_of(twice)[0].n_members <= len(rows)
    a, b = map_admm(once, tol=1e-10, max_iter=50_000), map_admm(twice, tol=1e-10, max_iter=50_000)
    exact = map_qp(once)
    for res, prog in ((a, once), (b, twice)):
        assert res.converged, res.message
        assert hard_violation(prog, res.y) <= HARD_TOL
        assert res.energy == pytest.approx(exact.energy, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(b.y, a.y, atol=1e-4)


def test_identical_potentials_share_one_member_and_a_program_of_thousands_few_copies():
    """3,000 pair hinges over 6 atoms (entity-resolution's shape): one block per distinct form."""
    rng = np.random.default_rng(5)
    m, n = 3000, 6
    pairs = rng.integers(0, n, (m, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    rows = [(p, np.array([1.0, -1.0]), float(rng.choice([-0.5, 0.0, 0.25])), 1.0, True) for p in pairs]
    prog = _program(rows, [], n)
    bl, _, _ = blocks_of(prog)
    assert bl.n_blocks == len({tuple(p) for p in pairs})
    assert len(bl.a) == 2 * bl.n_blocks  # one copy per non-zero of a distinct form, not per potential
    assert bl.n_members == len({(tuple(p), r[2]) for p, r in zip(pairs, rows)})
    res = map_admm(prog, tol=1e-9)
    assert res.energy == pytest.approx(map_qp(prog).energy, rel=1e-6, abs=1e-9)


def test_psl_stopping_rule_stops_earlier_near_the_optimum_and_unknown_rules_are_refused():
    rng = np.random.default_rng(7)
    forms = _forms(rng, 10, 30)
    rows = [(cols, coef, float(rng.uniform(-1, 1)), float(rng.choice([1.0, 10.0])), bool(rng.random() < 0.5))
            for cols, coef in forms for _ in range(3)]
    prog = _program(rows, [], 10)
    exact, psl = map_admm(prog, tol=1e-10, max_iter=50_000), map_admm(prog, stop="psl", max_iter=50_000)
    assert psl.converged and psl.iterations < exact.iterations
    assert psl.energy == pytest.approx(exact.energy, rel=1e-2)
    assert psl.energy >= exact.energy - 1e-9 * abs(exact.energy)  # the exact run is the optimum
    with pytest.raises(XcoreError, match="stopping rule"):
        map_admm(prog, stop="java")


EDGE_CASES = {
    "no potentials": ([], [], 3),
    "a weightless potential and one without atoms": (
        [(np.array([0]), np.array([1.0]), -0.5, 0.0, False), (np.array([], dtype=int), np.array([]), 0.3, 1.0, True),
         (np.array([1, 2]), np.array([1.0, -1.0]), 0.2, 2.0, False)], [], 3),
    "a last hard row without atoms": (
        [(np.array([0, 1]), np.array([1.0, -1.0]), 0.1, 1.0, False)],
        [(np.array([0, 1]), np.array([1.0, 1.0]), -1.0, False), (np.array([], dtype=int), np.array([]), -0.5, False)], 3),
}


@pytest.mark.parametrize("case", EDGE_CASES.values(), ids=EDGE_CASES.keys())
def test_programs_with_empty_rows_or_blocks_solve_to_the_qps_energy(case):
    rows, hard, n = case
    prog = _program(rows, hard, n)
    res = map_admm(prog, tol=1e-10)
    assert res.converged, res.message
    assert res.energy == pytest.approx(map_qp(prog).energy, rel=1e-6, abs=1e-8)
