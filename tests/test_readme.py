"""The Python example of README.md runs as written (so the documentation cannot drift from the code)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("```python\nfrom xcore.data import load")
    body = text[start + len("```python\n"):]
    return body[:body.index("```\n")]


@pytest.mark.slow
def test_readme_python_example_runs(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(readme_example(), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "word_precision" in done.stdout and "I-Explain" in done.stdout
    assert "plkb:decisive" in done.stdout and "pushes it" in done.stdout  # the driver and verify ran
    assert "['esms', 'mln', 'plkb'" in done.stdout
