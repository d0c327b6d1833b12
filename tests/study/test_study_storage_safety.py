"""Storage safety (issue 25, items 3-6): reads never wait behind a writer, storage failures become the
study's own message, opening a current database writes nothing (a read-only copy opens), every study
table is protected, orphaned answers are counted, and a second tab's rejected answers are reported."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time

import pytest
from study_helpers import answers_for, make_study, new_store

from xcore.study import ReplayRejected, StudyError, StudyStore, analyse


@pytest.fixture
def store(tmp_path):
    s = new_store(tmp_path)
    s.publish(make_study())
    yield s
    s.dispose()


def enrol(store, n=1):
    tokens = store.add_participants("s1", n)
    sessions = [store.participant("s1", t) for t in tokens]
    for p in sessions:
        p.consent()
    return sessions


def in_thread(fn, timeout: float):
    """Run `fn` in a thread; (finished within `timeout`, result or exception)."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            out["value"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    return not t.is_alive(), out.get("value"), t


def test_reads_do_not_wait_behind_a_writer(store, tmp_path):
    (p,) = enrol(store)
    p.submit(0, answers_for(p.screen(0)), 100)
    writer = sqlite3.connect(tmp_path / "study.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a writer holds the write lock (another participant's screen)
    writer.execute("INSERT INTO xs_meta VALUES ('other', 'x')")
    try:
        for read in (lambda: store.responses("s1"), p.progress, store.studies, lambda: p.answers()):
            start = time.monotonic()
            done, value, _ = in_thread(read, timeout=3.0)
            assert done and not isinstance(value, BaseException), value
            assert time.monotonic() - start < 2.0
        assert p.progress() == (True, 1)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_locked_database_gives_the_studys_own_message(tmp_path):
    s = new_store(tmp_path)
    s.publish(make_study())
    s.dispose()
    locked = StudyStore(f"sqlite:///{tmp_path / 'study.sqlite'}", busy_timeout=0.2)
    locked.engine.dispose()  # no pooled connection keeps the file open
    holder = sqlite3.connect(tmp_path / "study.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO xs_meta VALUES ('other', 'x')")
    try:
        with pytest.raises(StudyError, match="busy or unavailable") as info:
            locked.responses("s1")
        assert "sqlite" not in str(info.value).lower() and str(tmp_path) not in str(info.value)
        with pytest.raises(StudyError, match="busy or unavailable"):
            locked.studies()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        locked.dispose()


def test_opening_a_current_database_writes_nothing(store, tmp_path):
    store.dispose()
    writer = sqlite3.connect(tmp_path / "study.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        done, value, _ = in_thread(lambda: StudyStore(f"sqlite:///{tmp_path / 'study.sqlite'}", busy_timeout=5),
                                   timeout=3.0)
        assert done and isinstance(value, StudyStore), value
        assert list(value.studies()["id"]) == ["s1"]
        value.dispose()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_read_only_archived_copy_opens_and_is_analysed(store, tmp_path):
    sessions = enrol(store, 2)
    for p in sessions:
        p.submit(0, answers_for(p.screen(0)), 100)
    store.dispose()  # checkpoints the WAL into the file
    archive = tmp_path / "archive"
    archive.mkdir()
    shutil.copy(tmp_path / "study.sqlite", archive / "study.sqlite")
    before = (archive / "study.sqlite").read_bytes()
    ro = StudyStore(str(archive / "study.sqlite"), read_only=True)
    rows = ro.responses("s1")
    assert rows["participant"].nunique() == 2
    assert analyse(ro.study("s1"), rows).n_participants == 2
    with pytest.raises(StudyError, match="read-only"):
        ro.close("s1")
    ro.dispose()
    assert (archive / "study.sqlite").read_bytes() == before
    assert {x.name for x in archive.iterdir()} <= {"study.sqlite", "study.sqlite-wal", "study.sqlite-shm"}
    assert not (archive / "study.sqlite-wal").exists() or (archive / "study.sqlite-wal").stat().st_size == 0


PROTECTED = (
    "DELETE FROM xs_participants", "UPDATE xs_participants SET number = 7", "UPDATE xs_participants SET token_hash = 'x'",
    "DELETE FROM xs_studies", "UPDATE xs_studies SET definition = 'x'", "UPDATE xs_studies SET title = 'x'",
    "DELETE FROM xs_meta", "UPDATE xs_meta SET value = '1'",
    "DELETE FROM xs_responses", "UPDATE xs_responses SET answer = '1'",
)


def test_every_study_table_is_protected_even_without_foreign_keys(store, tmp_path):
    (p,) = enrol(store)
    p.submit(0, answers_for(p.screen(0)), 100)
    raw = sqlite3.connect(tmp_path / "study.sqlite", isolation_level=None)  # foreign keys off, as in any tool
    try:
        for sql in PROTECTED:
            with pytest.raises(sqlite3.DatabaseError, match="append-only|frozen|never deleted|migration"):
                raw.execute(sql)
    finally:
        raw.close()
    assert store.responses("s1")["participant"].nunique() == 1 and store.study("s1").title == "Toy study"


def test_closing_a_study_is_still_allowed(store):
    store.close("s1")
    assert store.is_closed("s1")
    store.close("s1", False)
    assert not store.is_closed("s1")


def test_orphaned_answers_are_counted_not_dropped(store, tmp_path):
    """An answer whose participant row was deleted (a tool that dropped the trigger) stays in responses,
    exports and analysis, flagged and counted."""
    a, b = enrol(store, 2)
    for p in (a, b):
        p.submit(0, answers_for(p.screen(0), 5), 100)
    raw = sqlite3.connect(tmp_path / "study.sqlite", isolation_level=None)
    raw.execute("DROP TRIGGER xs_participants_no_delete")
    raw.execute("DELETE FROM xs_participants WHERE number = 1")
    raw.close()
    rows = store.responses("s1")
    assert rows["participant"].nunique() == 2
    orphans = rows[rows["orphan"]]
    assert len(orphans) == 3 and (orphans["participant"] < 0).all()
    result = analyse(store.study("s1"), rows)
    assert result.n_participants == 2 and result.orphans == 1 and result.orphan_answers == 3


def test_a_second_tab_with_other_answers_is_told_apart_from_a_double_click(store):
    (p,) = enrol(store)
    good = answers_for(p.screen(0), 4)
    p.submit(0, good, 100)
    with pytest.raises(ReplayRejected) as same:
        p.submit(0, good, 100)
    assert same.value.identical
    with pytest.raises(ReplayRejected) as other:
        p.submit(0, answers_for(p.screen(0), 2), 100)
    assert not other.value.identical


def test_a_write_that_stays_locked_gives_the_studys_own_message(tmp_path):
    s = new_store(tmp_path)
    s.publish(make_study())
    s.dispose()
    locked = StudyStore(f"sqlite:///{tmp_path / 'study.sqlite'}", busy_timeout=0.2)
    holder = sqlite3.connect(tmp_path / "study.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer keeps the lock past the busy timeout
    try:
        with pytest.raises(StudyError, match="busy or unavailable"):
            locked.close("s1")
        with pytest.raises(StudyError, match="busy or unavailable"):
            locked.add_participants("s1", 1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        locked.dispose()
