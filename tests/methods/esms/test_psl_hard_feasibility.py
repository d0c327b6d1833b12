"""Hard constraints in every MAP solver: a program whose hard constraints cannot all hold is refused by
ADMM as by the QP (ADMM used to stop at its iteration limit and write the violating values, exit 0);
a feasible one is solved by ADMM within the tolerance, equal to the QP. Also: the command stops
quietly when its reader goes away (`| head`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.psl.admm import map_admm
from xcore.psl.inference import map_qp
from xcore.psl.map_problem import HARD_TOL, hard_violation
from xcore.psl.program import HingeProgram

ROOT = Path(__file__).resolve().parents[3]


def program(bounds: list[tuple[list[float], float, bool]]) -> HingeProgram:
    """Two atoms, the squared priors !y0, !y1 (weight 1), and hard rows sum(c*y) + d <= 0 (or = 0)."""
    A = sp.csr_matrix(np.eye(2))
    C = sp.csr_matrix(np.array([c for c, _, _ in bounds], dtype=float))
    return HingeProgram(A=A, b=np.zeros(2), w=np.ones(2), squared=np.ones(2, dtype=bool), C=C,
                        d=np.array([d for _, d, _ in bounds], dtype=float),
                        equality=np.array([eq for _, _, eq in bounds]))


INFEASIBLE = {
    "sum over 2": [([-1.0, -1.0], 3.0, False)],               # y0 + y1 >= 3 with y in [0, 1]
    "at least 0.7 and at most 0.6": [([-1.0, 0.0], 0.7, False), ([1.0, 0.0], -0.6, False)],
    "equal to 1.5": [([1.0, 0.0], -1.5, True)],
}


@pytest.mark.parametrize("rows", INFEASIBLE.values(), ids=INFEASIBLE.keys())
@pytest.mark.parametrize("solver", [map_admm, map_qp], ids=["admm", "qp"])
def test_unsatisfiable_hard_constraints_are_refused_by_every_solver(solver, rows):
    with pytest.raises(XcoreError, match="hard constraints"):
        solver(program(rows))


def test_admm_holds_satisfiable_hard_constraints_and_agrees_with_the_qp():
    prog = program([([-1.0, -1.0], 1.5, False), ([1.0, -1.0], 0.0, True)])  # y0 + y1 >= 1.5, y0 = y1
    admm, qp = map_admm(prog, tol=1e-10, max_iter=100_000), map_qp(prog)
    assert hard_violation(prog, admm.y) <= HARD_TOL and admm.converged
    np.testing.assert_allclose(admm.y, [0.75, 0.75], atol=1e-4)
    np.testing.assert_allclose(qp.y, [0.75, 0.75], atol=1e-6)


def _config(tmp_path: Path, rules: list[str], n: int = 2) -> Path:
    rows = [[f"a{i}", f"b{i}"] for i in range(n)] if n > 2 else [["a", "b"], ["b", "a"]]
    path = tmp_path / "knows.json"
    path.write_text(json.dumps({"rules": rules, "predicates": {"Knows/2": {"targets": rows}}}))
    return path


def _command(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "xcore.psl", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_the_command_exits_2_on_unsatisfiable_hard_constraints_with_admm(tmp_path):
    config = _config(tmp_path, ["1: !Knows(A,B) ^2", "Knows(A, B) + Knows(B, A) >= 3 ."])
    done = _command("--config", str(config), "--method", "admm", "--output", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert "hard constraints cannot all hold" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out" / "KNOWS.txt").exists()


def test_the_command_stops_quietly_when_its_reader_goes_away(tmp_path):
    config = _config(tmp_path, ["1: !Knows(A,B) ^2"], n=60_000)  # more output than a pipe buffer holds
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "xcore.psl", "--config", str(config), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert first.startswith(b"KNOWS(") and "internal error" not in err and "Traceback" not in err
