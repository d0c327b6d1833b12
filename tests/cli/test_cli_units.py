"""In-process parts of the command line: --set parsing, the progress display, internal errors (exit 1),
`xcore app` finding app.py."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

import xcore.cli as cli
from xcore.errors import ConfigError
from xcore.esms.settings import ESMSSettings
from xcore.methods import REGISTRY
from xcore.mln.settings import MLNSettings
from xcore.plkb.settings import PLKBSettings

ROOT = Path(__file__).resolve().parents[2]


def test_set_values_are_strings_coerced_by_the_settings_class():
    sets = cli.parse_set(["gamma=0.5", "iterations=7", "counterparts=true", "block=none", "explainable=a, b",
                          "target=rating"], ESMSSettings)
    assert sets == {"gamma": "0.5", "iterations": "7", "counterparts": "true", "block": None,
                    "explainable": ("a", "b"), "target": "rating"}
    s = ESMSSettings.parse(sets)
    assert (s.gamma, s.iterations, s.counterparts, s.block, s.explainable) == (0.5, 7, True, None, ("a", "b"))
    m = MLNSettings.parse(cli.parse_set(["explainers=lime,shap", "target=null"], MLNSettings))
    assert m.explainers == ("mln:lime", "mln:shap") and m.target is None  # old names read as today's
    assert cli.parse_set(["drop="], PLKBSettings) == {"drop": ()}
    assert cli.parse_set(["knowledge=0.9: POS | ~a=b"], PLKBSettings) == {"knowledge": "0.9: POS | ~a=b"}
    with pytest.raises(ConfigError, match="key=value"):
        cli.parse_set(["gamma"], ESMSSettings)
    with pytest.raises(ConfigError, match="iterations"):
        ESMSSettings.parse({"target": "r", **cli.parse_set(["iterations=many"], ESMSSettings)})


def test_progress_is_a_bar_on_a_terminal_and_lines_otherwise():
    tty = io.StringIO()
    bar = cli.StderrProgress(tty, tty=True, width=10)
    bar(0.5, "half")
    bar(1.0, "done")
    bar.done()
    drawn = tty.getvalue()
    assert "\r" in drawn and " 50%|" in drawn and "| half [" in drawn and "100%|" in drawn and "| done [" in drawn
    assert "<" in drawn.split("| half [")[1].split("]")[0]  # elapsed<remaining: tqdm's ETA
    assert "\r" not in drawn.rsplit("done [", 1)[1]  # closed: nothing redrawn after the last state
    plain = io.StringIO()
    lines = cli.StderrProgress(plain, tty=False)
    for i in range(101):
        lines(i / 100, "sampling")
    lines(1.0, "writing")
    text = plain.getvalue()
    assert "\r" not in text and text.splitlines()[0] == "  0% sampling" and text.splitlines()[-1] == "100% writing"
    assert len(text.splitlines()) == 12  # one line per 10 points, plus the new message
    quiet = io.StringIO()
    cli.StderrProgress(quiet, quiet=True)(0.3, "x")
    assert quiet.getvalue() == ""


def test_an_internal_error_exits_1_without_a_traceback(monkeypatch, capsys, tmp_path):
    spec = REGISTRY["plkb"]

    def broken(dataset, settings, progress=None):
        return 1 / 0

    monkeypatch.setitem(REGISTRY._loaded, "plkb", dataclasses.replace(spec, run=broken))
    code = cli.main(["run", "plkb", "sample:titanic_like", "-q", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "internal error" in err and "ZeroDivisionError" in err and "Traceback" not in err
    assert cli.main(["--debug", "run", "plkb", "sample:titanic_like", "-q", "--out", str(tmp_path)]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_app_runs_streamlit_on_the_repositorys_app(monkeypatch, capsys):
    assert cli.app_path() == ROOT / "app.py"
    calls = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd=None: calls.append((cmd, cwd)) or 0)
    assert cli.main(["app", "--port", "8999", "--headless"]) == 0
    cmd, cwd = calls[0]
    assert cmd[1:4] == ["-m", "streamlit", "run"] and cmd[4] == str(ROOT / "app.py")
    assert cmd[cmd.index("--server.port") + 1] == "8999" and Path(cwd) == ROOT
    monkeypatch.setattr(cli, "app_path", lambda: None)
    assert cli.main(["app"]) == 2
    assert "app.py was not found" in capsys.readouterr().err


def test_unknown_report_target_exits_2_after_writing_the_data_files(tmp_path, capsys):
    code = cli.main(["run", "plkb", "sample:titanic_like", "--set", "explain_rows=3", "--targets", "row 99999",
                     "--out", str(tmp_path), "-q"])
    assert code == 2 and "no explanation of target 'row 99999'" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["explanations.json", "metrics.json", "predictions.csv",
                                                          "run.json"]
    assert cli.main(["explain", str(tmp_path / "run.json"), "row 1", "-k", "0"]) == 2
    assert "-k: must be at least 1" in capsys.readouterr().err


def test_report_from_a_bundle_adds_the_data_summary_when_given_the_data(tmp_path, capsys):
    assert cli.main(["run", "plkb", "sample:titanic_like", "--set", "explain_rows=2", "--out", str(tmp_path), "-q"]) == 0
    out = tmp_path / "again.html"
    assert cli.main(["report", str(tmp_path / "run.json"), "--out", str(out)]) == 0
    bare = out.read_text()
    assert '<section id="data"><h2>Data</h2>\n<p>Dataset <b>titanic_like</b>' in bare
    assert cli.main(["report", str(tmp_path / "run.json"), "--out", str(out), "--data", "sample:titanic_like",
                     "--cards", "1"]) == 0
    full = out.read_text()
    assert '<section id="data"><h2>Data</h2>\n<table>' in full and full.count('class="card"') == 1
    assert f"wrote {out}" in capsys.readouterr().out
