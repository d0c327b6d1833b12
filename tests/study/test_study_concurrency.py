"""Concurrency: participants answering at the same time (threads sharing one engine, and separate
processes on one SQLite file) lose nothing; racing replays of one screen store it once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from study_helpers import answers_for, make_study, new_store

from xcore.study import ReplayRejected

ROOT = Path(__file__).resolve().parents[2]


def test_threads_answering_concurrently_lose_nothing(tmp_path):
    store = new_store(tmp_path)
    store.publish(make_study(n_items=8))
    tokens = store.add_participants("s1", 8)
    errors: list[BaseException] = []
    replays = {"rejected": 0}
    lock = threading.Lock()
    barrier = threading.Barrier(len(tokens) * 2)

    def participant(token: str, twin: bool) -> None:
        """Two threads per token: both submit every screen; exactly one of each pair must win."""
        try:
            p = store.participant("s1", token)
            p.consent()
            barrier.wait()
            for pos in range(p.total):
                try:
                    p.submit(pos, answers_for(p.screen(pos), 1 + pos % 5), 100 + pos)
                except ReplayRejected:
                    with lock:
                        replays["rejected"] += 1
                except Exception as e:  # noqa: BLE001 - collected for the assertion
                    if "before screen" in str(e):  # the twin is one screen behind: catch up
                        continue
                    raise
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=participant, args=(t, twin)) for t in tokens for twin in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    rows = store.responses("s1")
    assert rows["participant"].nunique() == 8
    per = rows.groupby("participant")["position"].nunique()
    assert (per == 8).all(), per
    assert not rows.duplicated(["participant", "position", "question_id"]).any()
    assert replays["rejected"] >= 1
    store.dispose()


def test_processes_answering_concurrently_lose_nothing(tmp_path):
    db = tmp_path / "procs.sqlite"
    store = new_store(tmp_path, "procs.sqlite")
    store.publish(make_study(n_items=10))
    tokens = store.add_participants("s1", 3)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "xcore.study", "drive", "--db", str(db), "--study", "s1",
                               f"--token={t}"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for t in tokens]
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    assert all(o[0].count("saved") == 10 for o in outs)
    rows = store.responses("s1")
    assert (rows.groupby("participant")["position"].nunique() == 10).all()
    assert rows["participant"].nunique() == 3
    assert not rows.duplicated(["participant", "position", "question_id"]).any()
    store.dispose()
