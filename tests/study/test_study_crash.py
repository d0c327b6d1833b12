"""Crash test: a participant's driver process is killed (SIGKILL) again and again mid-session and
restarted with the same token; every answer reported saved before a kill is stored exactly once and
the finished session has every screen exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from study_helpers import make_study, new_store

ROOT = Path(__file__).resolve().parents[2]


def start_driver(db: Path, token: str, delay: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "xcore.study", "drive", "--db", str(db), "--study", "s1",
                             f"--token={token}", "--delay", str(delay)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_kill_and_restart_loses_and_duplicates_nothing(tmp_path):
    db = tmp_path / "crash.sqlite"
    store = new_store(tmp_path, "crash.sqlite")
    study = make_study(n_items=10)
    store.publish(study)
    (token,) = store.add_participants("s1", 1)
    expected_questions = {pos: {q.id for q in store.participant("s1", token).screen(pos).questions}
                          for pos in range(10)}
    reported: list[int] = []
    kills = 0
    for round_ in range(12):
        # alternate: a slow driver killed between answers, and a fast one killed while it is writing
        proc = start_driver(db, token, delay=0.2 if round_ % 2 == 0 else 0.0)
        seen = 0
        finished = False
        for line in proc.stdout:
            if line.startswith("saved "):
                reported.append(int(line.split()[1]))
                seen += 1
                if seen == 2:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
                    break
            elif line.strip() == "done":
                finished = True
                break
        proc.wait(timeout=60)
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.read()
        rows = store.responses("s1")
        # every answer reported saved before the kill is there, exactly once
        for pos in reported:
            got = rows[rows["position"] == pos]
            assert set(got["question_id"]) == expected_questions[pos]
            assert len(got) == len(expected_questions[pos])
        if finished:
            break
    assert kills >= 3, "the session should have been killed several times before it finished"
    assert finished
    rows = store.responses("s1")
    assert sorted(rows["position"].unique()) == list(range(10))
    assert not rows.duplicated(["position", "question_id"]).any()
    assert len(rows) == sum(len(v) for v in expected_questions.values())
    # the answers are the driver's (rating 1 + position mod 5), not garbled by the kills
    rated = rows[rows["question_id"] == "useful_relational"]
    assert (rated["answer"].astype(int) == 1 + rated["position"] % 5).all()
    store.dispose()
