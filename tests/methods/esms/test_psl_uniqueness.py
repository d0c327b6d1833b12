"""Non-unique MAP optima: programs whose optimal set is known in closed form, each solver's state."""

from __future__ import annotations

import io

import pytest
import scipy.sparse as sp

from xcore.psl.inference import map_inference
from xcore.psl.program import HingeProgram
from xcore.psl.uniqueness import optimum_spread


def program(rows, squared, w, n, hard=(), equality=()):
    A = sp.csr_matrix([r[0] for r in rows], shape=(len(rows), n))
    C = sp.csr_matrix([h[0] for h in hard], shape=(len(hard), n)) if hard else None
    return HingeProgram(A, [r[1] for r in rows], w, squared, C=C, d=[h[1] for h in hard] if hard else None,
                        equality=list(equality) if hard else None)


def two_sided(i, value, n):
    """Squared hinges pulling atom i to `value` from both sides."""
    e = [0.0] * n
    e[i] = 1.0
    return [(e, -value), ([-x for x in e], value)]


CASES = {
    # name: (program, solvers, expected moving atoms -> (low, high) on the optimal set, or {} when unique)
    "linear hinge y0 + y1 <= 1 (flat), y2 pinned to 0.3": (
        lambda: program([([1, 1, 0], -1.0)] + two_sided(2, 0.3, 3), [False, True, True], [1.0, 2.0, 2.0], 3),
        ("qp", "admm"), {0: (0.0, 1.0), 1: (0.0, 1.0)}),
    "squared pulls y0 = y1 = 0.7 (unique)": (
        lambda: program(two_sided(0, 0.7, 2) + [([1, -1], 0.0), ([-1, 1], 0.0)], True, 1.0, 2),
        ("qp", "lbfgs", "admm"), {}),
    "an atom in no active potential: max(0, y0 - 0.5)^2 (flat below 0.5)": (
        lambda: program([([1.0, 0.0], -0.5)] + two_sided(1, 0.2, 2), True, 1.0, 2),
        ("qp", "lbfgs", "admm"), {0: (0.0, 0.5)}),
    "hard y0 + y1 = 1 with linear pulls (flat on [0.2, 0.8])": (
        lambda: program([([1, 0], -0.2), ([0, 1], -0.2)], False, 1.0, 2, hard=[([1, 1], -1.0)], equality=[True]),
        ("qp", "admm"), {0: (0.2, 0.8), 1: (0.2, 0.8)}),
    "hard y0 + y1 = 1 with squared pulls (unique 0.5, 0.5)": (
        lambda: program([([1, 0], -0.2), ([0, 1], -0.2)], True, 1.0, 2, hard=[([1, 1], -1.0)], equality=[True]),
        ("qp", "admm"), {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_flat_directions_are_found_and_unique_optima_are_not_flagged(name):
    make, solvers, expected = CASES[name]
    prog = make()
    for solver in solvers:
        res = map_inference(prog, method=solver, tol=1e-12, max_iter=200_000)
        spread = optimum_spread(prog, res.y)
        assert spread.checked, (solver, spread.message)
        assert spread.unique == (not expected), (solver, spread.moving, res.y)
        assert sorted(spread.moving.tolist()) == sorted(expected), solver
        for i, lo, hi in zip(spread.moving, spread.low, spread.high):
            # the LPs reach the ends of the optimal segment along the random direction (a segment here)
            assert lo == pytest.approx(expected[i][0], abs=1e-5) and hi == pytest.approx(expected[i][1], abs=1e-5)
        for end in spread.ends:  # the other optima found are optimal and feasible
            assert prog.energy(end) == pytest.approx(res.energy, abs=1e-5)
            assert prog.constraint_violation(end) < 1e-5
        if not expected:
            assert "unique" in spread.describe()
        else:
            assert "NOT unique" in spread.describe()


def test_the_command_warns_about_a_flat_optimum(tmp_path):
    """A PSL project whose target is in no active potential below 0.5: the command says so."""
    from xcore.psl.cli import main

    (tmp_path / "obs.txt").write_text("a\t0.5\n")
    (tmp_path / "t.txt").write_text("a\n")
    (tmp_path / "p.json").write_text(
        '{"rules": ["1.0: Q(X) -> P(X) ^2", "1.0: P(X) -> Q(X) ^2"],'
        ' "predicates": {"Q/1": {"observations": ["obs.txt"]}, "P/1": {"targets": ["t.txt"]}}}')
    # P(a) = 0.5 is forced from both sides: unique
    out, err = io.StringIO(), io.StringIO()
    assert main(["--config", str(tmp_path / "p.json")], stdout=out, stderr=err) == 0
    assert "the optimum is unique" in err.getvalue()
    (tmp_path / "p.json").write_text(
        '{"rules": ["1.0: P(X) -> Q(X) ^2"],'
        ' "predicates": {"Q/1": {"observations": ["obs.txt"]}, "P/1": {"targets": ["t.txt"]}}}')
    out, err = io.StringIO(), io.StringIO()
    assert main(["--config", str(tmp_path / "p.json"), "-q"], stdout=out, stderr=err) == 0
    text = err.getvalue()
    assert "warning: the optimum is NOT unique" in text and "P(a) in [0, 0.5]" in text
    out, err = io.StringIO(), io.StringIO()
    assert main(["--config", str(tmp_path / "p.json"), "--no-check-unique"], stdout=out, stderr=err) == 0
    assert "unique" not in err.getvalue()
