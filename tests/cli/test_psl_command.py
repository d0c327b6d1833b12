"""`python -m xcore.psl`: PSL's command line shape, files and exit codes, through subprocess."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xcore.psl import cli
from xcore.psl.java_engine import java_psl_jar

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "methods" / "esms"))
from test_psl_projects import closed_form, write_data_project, write_json_project  # noqa: E402


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "xcore.psl", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def read_values(path: Path) -> dict[tuple[str, ...], float]:
    out = {}
    for line in path.read_text().splitlines():
        *args, value = line.split("\t")
        out[tuple(args)] = float(value)
    return out


@pytest.mark.slow
def test_config_writes_one_upper_case_file_per_open_predicate(tmp_path):
    config = write_json_project(tmp_path / "proj")
    res = run("--config", str(config), "--output", str(tmp_path / "out"), "--eval")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["KNOWS.txt"]
    values = read_values(tmp_path / "out" / "KNOWS.txt")
    assert set(values) == set(closed_form())
    for atom, want in closed_form().items():
        assert values[atom] == pytest.approx(want, abs=1e-6)
    assert "Knows: 3 atoms with truth" in res.stdout


@pytest.mark.slow
def test_model_and_data_pair_from_its_folder(tmp_path):
    write_data_project(tmp_path)
    res = run("--model", "likes.psl", "--data", "likes.data", "--output", "out", "-q", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    values = read_values(tmp_path / "out" / "LIKES.txt")
    assert set(values) == {("u1", "i1"), ("u1", "i2"), ("u2", "i1"), ("u2", "i2")}
    assert values[("u1", "i1")] + values[("u1", "i2")] <= 1 + 1e-6
    lines = res.stderr.splitlines()
    assert lines[0] == "steps: infer on the infer split (PSL's CLI learns only with --learn)"
    # u1's two likes share the hard "<= 1" row and linear hinges: the optimum is flat, and -q still says so
    assert len(lines) == 2 and lines[1].startswith("warning: the optimum is NOT unique")
    assert "Likes(u1, i1) in [0.4, 1]" in lines[1]


@pytest.mark.slow
@pytest.mark.parametrize("args, words", [
    (["--config", "missing.json"], "no such file"),
    (["--data", "likes.data"], "needs its rules"),
    ([], "give --config"),
    (["--config", "bad.json"], "line 1"),
])
def test_bad_input_exits_2_with_a_message_and_no_traceback(tmp_path, args, words):
    write_data_project(tmp_path)
    (tmp_path / "likes.psl").rename(tmp_path / "rules.txt")
    (tmp_path / "bad.json").write_text('{"rules": ["1: A(X) ->"], "predicates": {"A/1": {}}}')
    res = run(*args, cwd=tmp_path)
    assert res.returncode == 2
    assert words in res.stderr
    assert "Traceback" not in res.stderr


def test_internal_errors_exit_1(monkeypatch):
    def boom(*_):
        raise RuntimeError("solver exploded")
    monkeypatch.setattr(cli, "run", boom)
    err = io.StringIO()
    assert cli.main(["--config", "x.json"], stdout=io.StringIO(), stderr=err) == 1
    assert "internal error: RuntimeError: solver exploded" in err.getvalue()


def test_help_does_not_import_heavy_libraries():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = ("import sys, runpy; sys.argv = ['xcore.psl', '--help']\n"
            "try:\n    runpy.run_module('xcore.psl.cli', run_name='not_main')\nexcept SystemExit: pass\n"
            "from xcore.psl.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(['--help'])\n"
            "print(sorted(m for m in ('torch', 'sklearn', 'plotly', 'streamlit') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
@pytest.mark.skipif(java_psl_jar() is None,
                    reason="needs Java and the PSL jar bundled in pslpython (the bench extra)")
def test_same_files_as_the_java_engine(tmp_path):
    """The reference: Java PSL reads the same config and writes the same KNOWS.txt (ADMM, tight eps)."""
    config = write_json_project(tmp_path / "proj")
    options = ('"options": {"admmreasoner.epsilonabs": 1e-8, "admmreasoner.epsilonrel": 1e-8, '
               '"admmreasoner.maxiterations": 100000, "reasoner.objectivebreak": false, '
               f'"reasoner.variablemovementbreak": false, "runtime.inference.output.results.dir": "{tmp_path / "java"}"}},')
    text = config.read_text().replace('"options": {"admmreasoner.maxiterations": 500},', options)
    config.write_text(text.replace(', "learn": [["a", "b"]]', ""))  # a learn split would make PSL learn too
    java = subprocess.run(["java", "-jar", str(java_psl_jar()), str(config)], capture_output=True, text=True,
                          timeout=300)
    assert java.returncode == 0, java.stdout[-2000:] + java.stderr[-2000:]
    ours = run("--config", str(config), "--output", str(tmp_path / "ours"))
    assert ours.returncode == 0, ours.stderr
    assert sorted(p.name for p in (tmp_path / "java").iterdir()) == sorted(p.name for p in (tmp_path / "ours").iterdir())
    theirs, mine = read_values(tmp_path / "java" / "KNOWS.txt"), read_values(tmp_path / "ours" / "KNOWS.txt")
    assert set(theirs) == set(mine)
    for atom in theirs:
        assert mine[atom] == pytest.approx(theirs[atom], abs=1e-5)
