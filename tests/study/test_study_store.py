"""Study storage: frozen publishing, hashed tokens, token isolation, replayed and malformed submissions,
closing, append-only rows and the schema migration (every database in a temporary directory)."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import text
from study_helpers import answers_for, make_study, new_store

from xcore.study import AccessDenied, ReplayRejected, StudyClosed, StudyError, StudyStore, SubmissionRejected
from xcore.study.store import SCHEMA_VERSION, token_hash


@pytest.fixture
def store(tmp_path):
    s = new_store(tmp_path)
    s.publish(make_study())
    yield s
    s.dispose()


def test_sqlite_is_in_wal_mode(store, tmp_path):
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    assert store.schema_version() == SCHEMA_VERSION


def test_publish_is_frozen(store):
    study = make_study()
    assert store.publish(study) == study.digest()  # the same definition again: no-op
    with pytest.raises(StudyError, match="frozen"):
        store.publish(make_study(seed=99))  # another definition under the same id
    assert store.study("s1") == study


def test_tampered_definition_is_detected(store):
    """Behind the frozen-study trigger, the digest still catches a definition altered by a tool that
    dropped the trigger first."""
    with store.engine.begin() as conn:
        conn.execute(text("DROP TRIGGER xs_studies_frozen"))
        conn.execute(text("UPDATE xs_studies SET definition = replace(definition, 'Toy study', 'Toy studx')"))
    store._studies_cache.clear()
    with pytest.raises(StudyError, match="digest"):
        store.study("s1")


def test_tokens_are_random_and_stored_hashed(store, tmp_path):
    tokens = store.add_participants("s1", 5)
    assert len(set(tokens)) == 5 and all(len(t) >= 30 for t in tokens)
    raw = sqlite3.connect(tmp_path / "study.sqlite").execute("SELECT token_hash FROM xs_participants").fetchall()
    stored = {r[0] for r in raw}
    assert stored == {token_hash(t) for t in tokens}
    assert not any(t in h for t in tokens for h in stored)
    with open(tmp_path / "study.sqlite", "rb") as f:
        blob = f.read()
    assert not any(t.encode() in blob for t in tokens)


def test_token_isolation(store):
    a, b = store.add_participants("s1", 2)
    pa, pb = store.participant("s1", a), store.participant("s1", b)
    pa.consent()
    pb.consent()
    pa.submit(0, answers_for(pa.screen(0), 5), 900)
    pb.submit(0, answers_for(pb.screen(0), 1), 800)
    pb.submit(1, answers_for(pb.screen(1), 2), 800)
    # each token sees and advances only its own rows
    assert set(pa.answers()["answer"]) <= {"5", "", "4"} and len(pa.answers()["position"].unique()) == 1
    assert set(pb.answers()["position"]) == {0, 1}
    assert pa.progress() == (True, 1) and pb.progress() == (True, 2)
    # a token cannot open another study, and a guessed or altered token opens nothing
    store.publish(make_study("s2"))
    with pytest.raises(AccessDenied):
        store.participant("s2", a)
    with pytest.raises(AccessDenied):
        store.participant("s1", a[:-1] + ("x" if a[-1] != "x" else "y"))
    with pytest.raises(AccessDenied):
        store.participant("s1", "")
    # B's answers at position 1 did not move A: A must answer its own position 1 next
    with pytest.raises(SubmissionRejected, match="before screen"):
        pa.submit(2, answers_for(pa.screen(2)), 100)
    rows = store.responses("s1")
    assert sorted(rows.groupby("participant")["position"].nunique()) == [1, 2]


def test_replayed_and_malformed_submissions_are_rejected(store):
    (tok,) = store.add_participants("s1", 1)
    p = store.participant("s1", tok)
    with pytest.raises(SubmissionRejected, match="consent"):
        p.submit(0, answers_for(p.screen(0)), 100)
    p.consent()
    p.consent()  # harmless repeat
    good = answers_for(p.screen(0))
    bad_cases = [
        ({**good, "useful_relational": 6}, "1 to 5"),
        ({**good, "useful_relational": 0}, "1 to 5"),
        ({**good, "useful_relational": "4"}, "integer"),
        ({**good, "useful_relational": True}, "integer"),
        ({**good, "useful_relational": None}, "required"),
        ({**good, "sneaky": 3}, "not asked"),
        ({**good, "comment": "x" * 3000}, "at most"),
        ("4,4", "mapping"),
    ]
    for answers, msg in bad_cases:
        with pytest.raises(SubmissionRejected, match=msg):
            p.submit(0, answers, 100)
    for ms in (-1, 10**12, 1.5, "100"):
        with pytest.raises(SubmissionRejected, match="response time"):
            p.submit(0, good, ms)
    with pytest.raises(SubmissionRejected, match="no screen"):
        p.submit(99, good, 100)
    with pytest.raises(SubmissionRejected, match="before screen"):
        p.submit(1, answers_for(p.screen(1)), 100)
    assert p.submit(0, good, 100) == 1
    with pytest.raises(ReplayRejected):
        p.submit(0, good, 100)  # the same submission again
    rows = store.responses("s1")
    assert len(rows) == len(good) and (rows.groupby("question_id").size() == 1).all()


def test_closed_study_takes_no_answers(store):
    (tok,) = store.add_participants("s1", 1)
    p = store.participant("s1", tok)
    p.consent()
    store.close("s1")
    with pytest.raises(StudyClosed):
        p.submit(0, answers_for(p.screen(0)), 100)
    assert store.responses("s1").empty
    store.close("s1", False)
    p.submit(0, answers_for(p.screen(0)), 100)
    assert len(store.responses("s1")) > 0


def test_responses_are_append_only(store):
    (tok,) = store.add_participants("s1", 1)
    p = store.participant("s1", tok)
    p.consent()
    p.submit(0, answers_for(p.screen(0)), 100)
    for sql in ("UPDATE xs_responses SET answer = '1'", "DELETE FROM xs_responses"):
        with pytest.raises(Exception, match="append-only"):
            with store.engine.begin() as conn:
                conn.execute(text(sql))
    assert len(store.responses("s1")) == 3


def test_version1_database_is_migrated(tmp_path):
    """A version-1 database (no app_version column, no triggers, no version row) opens, keeps its rows
    and is upgraded to the current schema."""
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
    CREATE TABLE xs_meta (key VARCHAR(64) PRIMARY KEY, value TEXT);
    CREATE TABLE xs_studies (id VARCHAR(64) PRIMARY KEY, title TEXT NOT NULL, digest VARCHAR(64) NOT NULL,
        definition TEXT NOT NULL, published_at VARCHAR(32) NOT NULL, closed BOOLEAN NOT NULL);
    CREATE TABLE xs_participants (id INTEGER PRIMARY KEY AUTOINCREMENT, study_id VARCHAR(64) NOT NULL,
        number INTEGER NOT NULL, token_hash VARCHAR(64) NOT NULL UNIQUE, created_at VARCHAR(32) NOT NULL,
        UNIQUE (study_id, number));
    CREATE TABLE xs_responses (id INTEGER PRIMARY KEY AUTOINCREMENT, study_id VARCHAR(64) NOT NULL,
        participant_id INTEGER NOT NULL, position INTEGER NOT NULL, item_id VARCHAR(64) NOT NULL,
        condition_code VARCHAR(1) NOT NULL, question_id VARCHAR(40) NOT NULL, answer TEXT NOT NULL,
        response_ms INTEGER NOT NULL, answered_at VARCHAR(32) NOT NULL,
        UNIQUE (participant_id, position, question_id));
    """)
    study = make_study()
    con.execute("INSERT INTO xs_studies VALUES (?, ?, ?, ?, ?, 0)",
                (study.id, study.title, study.digest(), study.to_json(indent=None), "2025-01-01T00:00:00+00:00"))
    con.execute("INSERT INTO xs_participants VALUES (1, 's1', 0, ?, 'then')", (token_hash("t" * 32),))
    con.execute("INSERT INTO xs_responses VALUES (1, 's1', 1, -1, '', '', 'consent', 'yes', 0, 'then')")
    con.commit()
    con.close()
    s = StudyStore(str(path))
    assert s.schema_version() == SCHEMA_VERSION
    rows = s.responses("s1", include_consent=True)
    assert len(rows) == 1 and rows["app_version"].iloc[0] == ""
    p = s.participant("s1", "t" * 32)
    assert p.progress() == (True, 0)
    p.submit(0, answers_for(p.screen(0)), 10)
    assert len(s.responses("s1")) == 3
    s.dispose()
    assert StudyStore(str(path)).schema_version() == SCHEMA_VERSION  # opening again is a no-op


def test_newer_schema_is_refused(tmp_path):
    s = new_store(tmp_path)
    with s.engine.begin() as conn:  # as a newer xcore's migration would: past the meta table's trigger
        conn.execute(text("DROP TRIGGER xs_meta_no_update"))
        conn.execute(text("UPDATE xs_meta SET value = '99' WHERE key = 'schema_version'"))
    s.dispose()
    with pytest.raises(StudyError, match="newer"):
        new_store(tmp_path)


def test_any_sqlalchemy_url_and_clear_errors(tmp_path):
    s = StudyStore("sqlite://")  # in-memory database through a plain URL
    s.publish(make_study())
    assert list(s.studies()["id"]) == ["s1"]
    with pytest.raises(StudyError, match="cannot open"):
        StudyStore("nosuchdialect://user:secret@host/db")
    try:
        StudyStore("postgresql://user:secret@127.0.0.1:1/db")
    except StudyError as e:
        assert "secret" not in str(e)
