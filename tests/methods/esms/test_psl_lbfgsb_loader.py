"""The command's L-BFGS-B loads without scipy.optimize's package init and gives scipy's own result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import sys
import numpy as np
import scipy.sparse as sp
from xcore.psl.program import HingeProgram
from xcore.psl.inference import map_inference

rng = np.random.default_rng(0)
prog = HingeProgram(sp.random(60, 20, density=0.2, random_state=rng), rng.uniform(-1, 1, 60), 1.0, True)
ours = map_inference(prog, method="lbfgs")
assert "scipy.optimize" not in sys.modules, "the package init ran"
assert "scipy.optimize._linprog" not in sys.modules
import scipy.optimize as so  # the real package still imports afterwards, with every solver
res = so.minimize(prog.energy_and_gradient, np.full(20, 0.5), jac=True, method="L-BFGS-B",
                  bounds=so.Bounds(np.zeros(20), np.ones(20)), options={"ftol": 0.0, "gtol": 1e-10})
assert abs(prog.energy(res.x) - ours.energy) < 1e-9, (prog.energy(res.x), ours.energy)
assert so.linprog([1, 1], A_ub=[[-1, -1]], b_ub=[-1]).fun == 1.0
print("ok")
"""


@pytest.mark.slow
def test_lbfgsb_without_the_optimize_package_init():
    root = Path(__file__).resolve().parents[3]
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                       env={"PYTHONPATH": str(root), "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
