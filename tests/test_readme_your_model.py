"""The README's "Explain your own model" examples run as written from a fresh checkout: a scikit-learn
gradient-boosted classifier exported to ONNX and explained by the classifier, and a GCN's node predictions
on the generated scenes explained by m-NLIL rules (python blocks as scripts, bash lines through
`python -m xcore`, in an empty folder)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def example_blocks() -> list[tuple[str, str]]:
    """(language, code) of every fenced block between the your-model markers of README.md, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    part = text[text.index("<!-- your-model:start -->"):text.index("<!-- your-model:end -->")]
    return re.findall(r"```(python|bash)\n(.*?)```\n", part, flags=re.S)


def test_the_examples_are_there():
    langs = [lang for lang, _ in example_blocks()]
    assert langs == ["python", "bash", "python", "bash"]
    bash = "".join(code for lang, code in example_blocks() if lang == "bash")
    assert "--model titanic_gbc.onnx" in bash and "--explain-predictions gcn_street.csv" in bash


@pytest.mark.slow
def test_readme_your_model_examples_run(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("skl2onnx")
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "OMP_NUM_THREADS": "1", "XCORE_SAMPLE_DATA": str(ROOT / "sample_data")}
    outputs = []
    for i, (lang, code) in enumerate(example_blocks()):
        if lang == "python":
            script = tmp_path / f"block{i}.py"
            script.write_text(code, encoding="utf-8")
            commands = [[sys.executable, str(script)]]
        else:
            commands = [[sys.executable, "-m", "xcore", *shlex.split(line.split("#")[0])[1:]]
                        for line in code.splitlines() if line.strip().startswith("xcore ")]
        for cmd in commands:
            done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, (cmd, done.stderr[-3000:])
            outputs.append(done.stdout)
    text = "\n".join(outputs)
    assert text.count("This explains your model's prediction, which the surrogate reproduces with fidelity") == 2
    assert "Shapley value φ of your model" in text and "ω(POS)" in text
    assert (tmp_path / "runs" / "gcn_rules" / "report.html").read_text(encoding="utf-8").count("surrogate-fidelity") == 1
