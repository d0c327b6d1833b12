"""The README's "Run a user study" commands run as written (on a small run bundle standing in for the
Python example's ESMS bundle)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from study_helpers import make_run

ROOT = Path(__file__).resolve().parents[2]


def study_commands() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("```bash\npython -m xcore.study build")
    body = text[start + len("```bash\n"):]
    return body[:body.index("```\n")]


def test_readme_study_commands_run(tmp_path):
    run = make_run(method="esms", explainers=("esms:ground-rules",))
    (tmp_path / "esms_run.json").write_text(run.to_json())
    done = subprocess.run(["bash", "-e", "-c", study_commands()], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("?study=pilot&p=") == 20
    assert "simulated 40 participants" in done.stdout
    assert (tmp_path / "pilot_report.html").stat().st_size > 100_000
