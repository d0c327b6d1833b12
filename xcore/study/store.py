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

import hmac
import logging
import secrets
import threading
from contextlib import contextmanager
from typing import Iterator

import pandas as pd
from sqlalchemy import Connection, create_engine, func, insert, inspect, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

from xcore.errors import ConfigError
from xcore.study.definition import Study, published_graphs

# the store's parts live in their own modules; every name stays importable from here
from xcore.study.engine import (  # noqa: F401
    BUSY_TIMEOUT_S,
    DB_ENV,
    DEFAULT_DB,
    WRITE,
    as_url,
    default_url,
    now_utc,
    sqlite_engine,
    sqlite_path,
    token_hash,
)
from xcore.study.errors import (  # noqa: F401
    UNAVAILABLE,
    AccessDenied,
    ReplayRejected,
    StudyClosed,
    StudyError,
    SubmissionRejected,
)
from xcore.study.participant import (  # noqa: F401
    CONSENT_POSITION,
    MAX_RESPONSE_MS,
    MAX_TEXT,
    ParticipantSession,
    Screen,
    validate_answers,
)
from xcore.study.schema import (  # noqa: F401
    APPEND_ONLY_TRIGGERS,
    MIGRATIONS,
    PROTECT_TRIGGERS,
    RESPONSE_COLUMNS,
    SCHEMA_VERSION,
    meta_table,
    metadata,
    participants,
    responses,
    studies,
)

LOG = logging.getLogger(__name__)


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
                self.engine = sqlite_engine(self.url, read_only, busy_timeout)
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
