"""HiGHS prints a banner on fd 1 when a process makes its first solver; xcore makes every solver
through `xcore.runtime.new_highs`, so command output (``xcore run``, ``python -m xcore.psl``) stays clean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MAKE_TWO = """
import highspy
from xcore.runtime import new_highs
first, second = new_highs(), new_highs(threads=1)
assert first.getOptionValue("output_flag")[1] is False and second.getOptionValue("threads")[1] == 1
print("only this line")
"""


def test_the_first_solver_of_a_process_prints_nothing():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", MAKE_TWO], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "only this line\n"


def test_a_plain_highs_prints_the_banner_this_guards_against():
    """The reference: without new_highs the banner does reach stdout (so the test above means something)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", "import highspy; highspy.Highs()"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert "HiGHS" in done.stdout
