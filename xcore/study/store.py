"""Study storage with SQLAlchemy Core: published studies, participants (hashed tokens), append-only answers.

SQLite by default (WAL, synchronous=FULL; writes start with BEGIN IMMEDIATE so concurrent writers
queue instead of failing, reads are plain deferred transactions that never wait behind a writer), any
SQLAlchemy URL otherwise. Each item screen is stored in one transaction; no stored row is ever deleted
and only a study's `closed` flag is ever updated (SQLite triggers enforce it on every table; other
databases rely on the grants described in the README); a unique key (participant, position, question)
makes a replayed submission fail instead of duplicating. The schema is versioned (`SCHEMA_VERSION`,
`MIGRATIONS`); opening a current database writes nothing (a read-only copy opens), an old one is
migrated on open.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import pandas as pd
from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from xcore import __version__
from xcore.errors import ConfigError, XcoreError
from xcore.study.definition import Question, Study, published_graphs
from xcore.study.design import participant_plan

LOG = logging.getLogger(__name__)
SCHEMA_VERSION = 2
DB_ENV = "XCORE_STUDY_DB"
DEFAULT_DB = Path(__file__).resolve().parents[2] / "xcore_study.sqlite"
CONSENT_POSITION = -1
MAX_TEXT = 2000
MAX_RESPONSE_MS = 24 * 3600 * 1000
BUSY_TIMEOUT_S = 30.0
UNAVAILABLE = "the study database is busy or unavailable right now; please try again in a moment"
"""What a participant or researcher is told when the database cannot be read or written (no path, no SQL)."""


class StudyError(XcoreError):
    """A study operation was refused (unknown study, bad definition, storage failure)."""


class AccessDenied(StudyError):
    """A token or key does not open what it was used for."""


class StudyClosed(StudyError):
    """The study no longer accepts answers."""


class SubmissionRejected(StudyError):
    """A submission is malformed (wrong questions, out-of-range values, wrong position)."""


class ReplayRejected(SubmissionRejected):
    """A submission for a screen that is already answered (a replay, a double click or another tab).

    `identical` is True when the stored answers equal the rejected ones (a double click: nothing is
    lost) and False when they differ (another tab answered first: the participant must be told)."""

    def __init__(self, message: str, identical: bool = True) -> None:
        super().__init__(message)
        self.identical = identical


metadata = MetaData()
meta_table = Table("xs_meta", metadata, Column("key", String(64), primary_key=True), Column("value", Text))
studies = Table(
    "xs_studies", metadata,
    Column("id", String(64), primary_key=True),
    Column("title", Text, nullable=False),
    Column("digest", String(64), nullable=False),
    Column("definition", Text, nullable=False),
    Column("published_at", String(32), nullable=False),
    Column("closed", Boolean, nullable=False, default=False),
)
participants = Table(
    "xs_participants", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("study_id", String(64), ForeignKey("xs_studies.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", String(32), nullable=False),
    UniqueConstraint("study_id", "number", name="uq_participant_number"),
)
responses = Table(
    "xs_responses", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("study_id", String(64), ForeignKey("xs_studies.id"), nullable=False),
    Column("participant_id", Integer, ForeignKey("xs_participants.id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("item_id", String(64), nullable=False),
    Column("condition_code", String(1), nullable=False),
    Column("question_id", String(40), nullable=False),
    Column("answer", Text, nullable=False),
    Column("response_ms", Integer, nullable=False),
    Column("answered_at", String(32), nullable=False),
    Column("app_version", String(32), nullable=False, server_default=""),
    UniqueConstraint("participant_id", "position", "question_id", name="uq_one_answer"),
)
RESPONSE_COLUMNS = ("participant", "study_id", "position", "item_id", "condition_code", "question_id", "answer",
                    "response_ms", "answered_at", "app_version", "orphan")

def _refuse(name: str, when: str, table: str, why: str) -> tuple[str, str]:
    return name, f"CREATE TRIGGER IF NOT EXISTS {name} BEFORE {when} ON {table} BEGIN SELECT RAISE(ABORT, '{why}'); END"


PROTECT_TRIGGERS: dict[str, str] = dict([
    _refuse("xs_responses_no_update", "UPDATE", "xs_responses", "responses are append-only"),
    _refuse("xs_responses_no_delete", "DELETE", "xs_responses", "responses are append-only"),
    _refuse("xs_participants_no_update", "UPDATE", "xs_participants", "participants are append-only"),
    _refuse("xs_participants_no_delete", "DELETE", "xs_participants", "participants are append-only"),
    _refuse("xs_studies_frozen", "UPDATE OF id, title, digest, definition, published_at", "xs_studies",
            "published studies are frozen"),
    _refuse("xs_studies_no_delete", "DELETE", "xs_studies", "published studies are never deleted"),
    _refuse("xs_meta_no_update", "UPDATE", "xs_meta", "the schema row changes only by migration"),
    _refuse("xs_meta_no_delete", "DELETE", "xs_meta", "the schema row changes only by migration"),
])
"""SQLite triggers protecting every study table: rows are only ever added, except a study's `closed` flag."""
APPEND_ONLY_TRIGGERS = tuple(PROTECT_TRIGGERS.values())


def _v1_to_v2(conn: Connection) -> None:
    """Version 1 had no app version per answer and no append-only triggers."""
    cols = {c["name"] for c in inspect(conn).get_columns("xs_responses")}
    if "app_version" not in cols:
        conn.exec_driver_sql("ALTER TABLE xs_responses ADD COLUMN app_version VARCHAR(32) NOT NULL DEFAULT ''")


MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _v1_to_v2}
"""from-version -> the step that upgrades a database to from-version + 1."""


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def token_hash(token: str) -> str:
    """The stored form of a participant token (tokens are random, so one keyed SHA-256 suffices)."""
    return hmac.new(b"xcore.study.token", token.encode("utf-8"), hashlib.sha256).hexdigest()


def default_url() -> str:
    """The database URL: `XCORE_STUDY_DB` (a SQLAlchemy URL or a file path), else a file beside the app."""
    return as_url(os.environ.get(DB_ENV, "").strip() or str(DEFAULT_DB))


def as_url(value: str) -> str:
    """A SQLAlchemy URL as given, or a file path as a SQLite URL."""
    return value if "://" in value else f"sqlite:///{Path(value).resolve()}"


WRITE = "xcore_write"
"""Execution option marking a connection that writes (its transaction starts with BEGIN IMMEDIATE)."""


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for an in-memory database)."""
    from sqlalchemy.engine import make_url

    database = make_url(url).database
    return None if database in (None, "", ":memory:") else Path(database)


def _sqlite_engine(url: str, read_only: bool = False, busy_timeout: float = BUSY_TIMEOUT_S) -> Engine:
    path = sqlite_path(url)
    memory = path is None
    options: dict[str, Any] = {"poolclass": StaticPool} if memory else {}
    if read_only and path is not None:
        # mode=ro never writes; an archived copy in a read-only folder without its -wal file is opened
        # immutable (nothing else can be writing it)
        frozen = not Path(f"{path}-wal").exists() and not os.access(path.parent, os.W_OK)
        uri = f"{path.resolve().as_uri()}?mode=ro{'&immutable=1' if frozen else ''}"
        options["creator"] = lambda: sqlite3.connect(uri, uri=True, timeout=busy_timeout, check_same_thread=False)
    engine = create_engine(url, connect_args={"timeout": busy_timeout, "check_same_thread": False}, **options)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # let SQLAlchemy's BEGIN below start transactions
        cur = dbapi_conn.cursor()
        if not read_only:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # writers take the write lock up front (no upgrade deadlocks); readers take a WAL snapshot and
        # never wait behind a writer
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")

    return engine


@dataclass(frozen=True)
class Screen:
    """One participant screen (blinded) and the questions whose answers it expects."""

    position: int
    item_id: str
    code: str
    questions: tuple[Question, ...]
    view: dict[str, Any]


class StudyStore:
    """All studies of one database. Researcher operations live here; participants get `ParticipantSession`s."""

    _studies_cache: dict[str, Study]

    def __init__(self, url: str | None = None, read_only: bool = False, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        self.url = as_url(url) if url else default_url()
        self.read_only = read_only
        try:
            if self.url.startswith("sqlite"):
                path = sqlite_path(self.url)
                if read_only and path is not None and not path.is_file():
                    raise StudyError(f"cannot open the study database {self._safe_url()}: no such file")
                self.engine = _sqlite_engine(self.url, read_only, busy_timeout)
            else:
                self.engine = create_engine(self.url)
            self._migrate()
        except ImportError as e:
            raise StudyError(f"cannot open the study database {self._safe_url()}: its driver is not installed "
                             f"({e.name})") from None
        except SQLAlchemyError as e:
            raise StudyError(f"cannot open the study database {self._safe_url()}: {e.__class__.__name__}: "
                             f"{str(e).splitlines()[0]}") from None
        self._studies_cache = {}
        self._lock = threading.Lock()

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A read transaction (deferred: never waits behind a writer); storage errors become `StudyError`."""
        try:
            with self.engine.connect() as conn:
                yield conn
        except SQLAlchemyError as e:
            LOG.warning("study database read failed: %s", e)
            raise StudyError(UNAVAILABLE) from None

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction (BEGIN IMMEDIATE on SQLite); refused on a read-only store; a database that
        stays locked or cannot be written becomes `StudyError` (integrity errors pass to the caller)."""
        if self.read_only:
            raise StudyError("this study database was opened read-only")
        try:
            with self.engine.connect() as conn:
                conn.execution_options(**{WRITE: True})
                with conn.begin():
                    yield conn
        except OperationalError as e:  # locked past the busy timeout, disk full, read-only file
            LOG.warning("study database write failed: %s", e)
            raise StudyError(UNAVAILABLE) from None

    def _safe_url(self) -> str:
        from sqlalchemy.engine import make_url

        try:
            return make_url(self.url).render_as_string(hide_password=True)
        except Exception:  # noqa: BLE001 - only for a message
            return "(unparsable URL)"

    # ------------------------------------------------------------------ schema
    def schema_version(self) -> int:
        with self.reading() as conn:
            return self._version(conn)

    @staticmethod
    def _version(conn: Connection) -> int:
        if not inspect(conn).has_table("xs_meta"):
            return 0
        row = conn.execute(select(meta_table.c.value).where(meta_table.c.key == "schema_version")).first()
        return int(row[0]) if row else 0

    def _current(self, conn: Connection) -> bool:
        """True when the database is at `SCHEMA_VERSION` with every table (and, on SQLite, every trigger)."""
        if self._version(conn) != SCHEMA_VERSION:
            return False
        names = set(inspect(conn).get_table_names())
        if not set(metadata.tables) <= names:
            return False
        if conn.dialect.name == "sqlite":
            have = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
            return set(PROTECT_TRIGGERS) <= have
        return True

    def _migrate(self) -> None:
        """Create or upgrade the schema; a current database is only read (so a read-only copy, a full disk
        or a busy writer does not stop it opening)."""
        with self.engine.connect() as conn:
            if self._current(conn):
                return
        if self.read_only:
            raise StudyError(f"the study database needs upgrading to schema version {SCHEMA_VERSION}; "
                             "open it once writable")
        with self.writing() as conn:
            if self._current(conn):  # another process migrated it meanwhile
                return
            version = self._version(conn)
            has_responses = inspect(conn).has_table("xs_responses")
            if version == 0 and has_responses:
                version = 1  # version 1 databases predate the meta table's version row
            if version > SCHEMA_VERSION:
                raise StudyError(f"the study database has schema version {version}, newer than this xcore "
                                 f"({SCHEMA_VERSION}); upgrade xcore")
            sqlite = conn.dialect.name == "sqlite"
            if sqlite:
                for name in ("xs_meta_no_update", "xs_meta_no_delete"):
                    conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
            if version:
                while version < SCHEMA_VERSION:
                    MIGRATIONS[version](conn)
                    version += 1
            metadata.create_all(conn)
            conn.execute(meta_table.delete().where(meta_table.c.key == "schema_version"))
            conn.execute(insert(meta_table).values(key="schema_version", value=str(SCHEMA_VERSION)))
            if sqlite:
                for ddl in PROTECT_TRIGGERS.values():
                    conn.exec_driver_sql(ddl)

    # ------------------------------------------------------------------ studies (researcher)
    def publish(self, study: Study) -> str:
        """Store a study definition, frozen; publishing the same definition again is a no-op, another
        definition under a used id is refused. Returns the digest."""
        digest = study.digest()
        with self.writing() as conn:
            row = conn.execute(select(studies.c.digest).where(studies.c.id == study.id)).first()
            if row is not None:
                if row[0] != digest:
                    raise StudyError(f"a different study with id {study.id!r} is already published; "
                                     "published studies are frozen: choose a new id")
                return digest
            conn.execute(insert(studies).values(id=study.id, title=study.title, digest=digest,
                                                definition=study.to_json(indent=None), published_at=now_utc(),
                                                closed=False))
        return digest

    def study(self, study_id: str) -> Study:
        """A published study as frozen (checked against its stored digest)."""
        with self._lock:
            if study_id in self._studies_cache:
                return self._studies_cache[study_id]
        with self.reading() as conn:
            row = conn.execute(select(studies.c.definition, studies.c.digest).where(studies.c.id == study_id)).first()
        if row is None:
            raise StudyError(f"no study {study_id!r} is published")
        with published_graphs():
            study = Study.from_json(row[0])
        if study.digest() != row[1]:
            raise StudyError(f"study {study_id!r} does not match its stored digest: the definition was altered")
        with self._lock:
            self._studies_cache[study_id] = study
        return study

    def studies(self) -> pd.DataFrame:
        """Published studies: id, title, published time, closed, participants, answers."""
        n_part = (select(participants.c.study_id, func.count().label("participants"))
                  .group_by(participants.c.study_id).subquery())
        n_resp = (select(responses.c.study_id, func.count().label("answers"))
                  .where(responses.c.position >= 0).group_by(responses.c.study_id).subquery())
        q = (select(studies.c.id, studies.c.title, studies.c.published_at, studies.c.closed,
                    func.coalesce(n_part.c.participants, 0).label("participants"),
                    func.coalesce(n_resp.c.answers, 0).label("answers"))
             .select_from(studies.outerjoin(n_part, n_part.c.study_id == studies.c.id)
                          .outerjoin(n_resp, n_resp.c.study_id == studies.c.id))
             .order_by(studies.c.published_at))
        with self.reading() as conn:
            rows = conn.execute(q).all()
        return pd.DataFrame(rows, columns=["id", "title", "published_at", "closed", "participants", "answers"])

    def is_closed(self, study_id: str) -> bool:
        with self.reading() as conn:
            row = conn.execute(select(studies.c.closed).where(studies.c.id == study_id)).first()
        if row is None:
            raise StudyError(f"no study {study_id!r} is published")
        return bool(row[0])

    def close(self, study_id: str, closed: bool = True) -> None:
        """Close a study to new answers (or reopen it)."""
        self.study(study_id)
        with self.writing() as conn:
            conn.execute(update(studies).where(studies.c.id == study_id).values(closed=bool(closed)))

    def add_participants(self, study_id: str, n: int) -> list[str]:
        """`n` new participant tokens (random, shown once; only their hashes are stored)."""
        if not 1 <= n <= 10_000:
            raise ConfigError(f"add 1 to 10000 participants at a time, got {n}", field="participants")
        self.study(study_id)
        # URL-safe, and never starting with '-' so a token pasted after --token is not read as an option
        tokens = ["p" + secrets.token_urlsafe(24) for _ in range(n)]
        for attempt in range(20):
            try:
                with self.writing() as conn:
                    start = conn.execute(select(func.coalesce(func.max(participants.c.number) + 1, 0))
                                         .where(participants.c.study_id == study_id)).scalar_one()
                    conn.execute(insert(participants), [
                        {"study_id": study_id, "number": start + i, "token_hash": token_hash(t), "created_at": now_utc()}
                        for i, t in enumerate(tokens)])
                return tokens
            except IntegrityError:
                continue  # another researcher session enrolled at the same moment: take the next numbers
            except SQLAlchemyError as e:
                LOG.warning("enrolling participants failed: %s", e)
                raise StudyError(UNAVAILABLE) from None
        raise StudyError("could not enrol participants (the database stayed busy)")

    def responses(self, study_id: str, include_consent: bool = False) -> pd.DataFrame:
        """Every stored answer of a study (researcher only), oldest first; columns `RESPONSE_COLUMNS`.

        An answer whose participant row is missing (an orphan: the row was deleted outside xcore) is kept,
        with `orphan` True and participant = -(its participant key), so it is counted, never dropped."""
        orphan = participants.c.id.is_(None)
        q = (select(func.coalesce(participants.c.number, -responses.c.participant_id).label("participant"),
                    responses.c.study_id, responses.c.position,
                    responses.c.item_id, responses.c.condition_code, responses.c.question_id, responses.c.answer,
                    responses.c.response_ms, responses.c.answered_at, responses.c.app_version,
                    orphan.label("orphan"))
             .select_from(responses.outerjoin(participants, participants.c.id == responses.c.participant_id))
             .where(responses.c.study_id == study_id).order_by(responses.c.id))
        if not include_consent:
            q = q.where(responses.c.position >= 0)
        with self.reading() as conn:
            rows = conn.execute(q).all()
        frame = pd.DataFrame(rows, columns=list(RESPONSE_COLUMNS))
        frame["orphan"] = frame["orphan"].astype(bool)
        return frame

    # ------------------------------------------------------------------ participants
    def participant(self, study_id: str, token: str) -> "ParticipantSession":
        """The session a participant link opens; an unknown token (or one of another study) is refused."""
        if not isinstance(token, str) or not 10 <= len(token) <= 100:
            raise AccessDenied("this participant link is not valid")
        with self.reading() as conn:
            row = conn.execute(select(participants.c.id, participants.c.number, participants.c.study_id)
                               .where(participants.c.token_hash == token_hash(token))).first()
        if row is None or not hmac.compare_digest(str(row[2]).encode(), str(study_id).encode()):
            raise AccessDenied("this participant link is not valid")
        return ParticipantSession(self, self.study(study_id), int(row[0]), int(row[1]))

    def dispose(self) -> None:
        self.engine.dispose()


class ParticipantSession:
    """What one participant token opens: its own plan, screens and answers, and nothing else."""

    def __init__(self, store: StudyStore, study: Study, row_id: int, number: int) -> None:
        self._store = store
        self._row_id = row_id
        self.study = study
        self.number = number
        self.plan = participant_plan(study, number)

    @property
    def total(self) -> int:
        return len(self.plan)

    def _positions(self, conn: Connection) -> list[int]:
        q = (select(responses.c.position).where(responses.c.participant_id == self._row_id).distinct()
             .order_by(responses.c.position))
        return [int(r[0]) for r in conn.execute(q)]

    def progress(self) -> tuple[bool, int]:
        """(consent given, next position to answer); next == total when finished."""
        with self._store.reading() as conn:
            done = self._positions(conn)
        consented = CONSENT_POSITION in done
        answered = [p for p in done if p >= 0]
        return consented, (max(answered) + 1 if answered else 0)

    def screen(self, position: int) -> Screen:
        """The blinded screen at `position` of this participant's plan."""
        if not 0 <= position < self.total:
            raise SubmissionRejected(f"there is no screen {position} (this study has {self.total})")
        item_id, code = self.plan[position]
        questions = tuple(self.study.screen_questions(item_id, code, position))
        return Screen(position, item_id, code, questions, self.study.participant_screen(item_id, code, position))

    def consent(self) -> None:
        """Record consent (once; a repeat is harmless)."""
        try:
            self._write(CONSENT_POSITION, "", "", {"consent": "yes"}, 0, require_consent=False)
        except ReplayRejected:
            pass

    def submit(self, position: int, answers: Mapping[str, Any], response_ms: int) -> int:
        """Store the answers of one screen in one transaction; returns the next position.

        Refused: an unknown or missing question, a value outside the scale, a screen already answered
        (replay), a screen out of order, a closed study, or no consent yet.
        """
        screen = self.screen(position) if isinstance(position, int) and not isinstance(position, bool) else None
        if screen is None:
            raise SubmissionRejected("the position must be an integer")
        values = validate_answers(screen.questions, answers)
        if isinstance(response_ms, bool) or not isinstance(response_ms, int) or not 0 <= response_ms <= MAX_RESPONSE_MS:
            raise SubmissionRejected(f"response time must be 0..{MAX_RESPONSE_MS} ms, got {response_ms!r}")
        self._write(position, screen.item_id, screen.code, values, response_ms)
        return position + 1

    def _write(self, position: int, item_id: str, code: str, values: Mapping[str, str], response_ms: int,
               require_consent: bool = True) -> None:
        at = now_utc()
        try:
            with self._store.writing() as conn:
                closed = conn.execute(select(studies.c.closed).where(studies.c.id == self.study.id)).scalar_one()
                if closed:
                    raise StudyClosed("this study is closed: it no longer accepts answers")
                done = self._positions(conn)
                if require_consent and CONSENT_POSITION not in done:
                    raise SubmissionRejected("consent has not been given yet")
                if position in done:
                    raise ReplayRejected(f"screen {position + 1} is already answered",
                                         identical=self._stored(conn, position) == dict(values))
                answered = [p for p in done if p >= 0]
                expected = max(answered) + 1 if answered else 0
                if position >= 0 and position != expected:
                    raise SubmissionRejected(f"screen {position + 1} cannot be answered before screen {expected + 1}")
                conn.execute(insert(responses), [
                    {"study_id": self.study.id, "participant_id": self._row_id, "position": position,
                     "item_id": item_id, "condition_code": code, "question_id": qid, "answer": value,
                     "response_ms": response_ms, "answered_at": at, "app_version": __version__}
                    for qid, value in values.items()])
        except IntegrityError:
            with self._store.reading() as conn:
                same = self._stored(conn, position) == dict(values)
            raise ReplayRejected(f"screen {position + 1} is already answered", identical=same) from None
        except SQLAlchemyError as e:
            LOG.warning("storing an answer failed: %s", e)
            raise StudyError(UNAVAILABLE) from None

    def _stored(self, conn: Connection, position: int) -> dict[str, str]:
        """The answers stored for one screen of this participant, by question id."""
        q = select(responses.c.question_id, responses.c.answer).where(responses.c.participant_id == self._row_id,
                                                                      responses.c.position == position)
        return {str(r[0]): str(r[1]) for r in conn.execute(q)}

    def answers(self) -> pd.DataFrame:
        """This participant's own answers (never anyone else's)."""
        q = (select(responses.c.position, responses.c.item_id, responses.c.question_id, responses.c.answer,
                    responses.c.response_ms, responses.c.answered_at)
             .where(responses.c.participant_id == self._row_id, responses.c.position >= 0)
             .order_by(responses.c.id))
        with self._store.reading() as conn:
            rows = conn.execute(q).all()
        return pd.DataFrame(rows, columns=["position", "item_id", "question_id", "answer", "response_ms",
                                           "answered_at"])


def validate_answers(questions: tuple[Question, ...], answers: Mapping[str, Any]) -> dict[str, str]:
    """The answers as stored text, after checking them against exactly the screen's questions."""
    if not isinstance(answers, Mapping):
        raise SubmissionRejected("answers must be a mapping of question id to answer")
    asked = {q.id: q for q in questions}
    unknown = sorted(set(map(str, answers)) - set(asked))
    if unknown:
        raise SubmissionRejected(f"question {unknown[0]!r} is not asked on this screen")
    out: dict[str, str] = {}
    for qid, q in asked.items():
        value = answers.get(qid)
        if q.kind == "free_text":
            if value is None:
                value = ""
            if not isinstance(value, str) or len(value) > MAX_TEXT:
                raise SubmissionRejected(f"{qid}: free text must be a string of at most {MAX_TEXT} characters")
            if q.required and not value.strip():
                raise SubmissionRejected(f"{qid}: an answer is required")
            out[qid] = value
            continue
        if value is None:
            raise SubmissionRejected(f"{qid}: an answer is required")
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= q.scale:
            raise SubmissionRejected(f"{qid}: the answer must be an integer from 1 to {q.scale}, got {value!r}")
        out[qid] = str(value)
    return out
