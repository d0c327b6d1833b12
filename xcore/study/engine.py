"""Where the study database is and how it is opened: the URL (`XCORE_STUDY_DB` or a file beside the
app), the SQLite engine (WAL, BEGIN IMMEDIATE for writers, read-only opening of archived copies), the
stored form of tokens and the timestamps."""

from __future__ import annotations

import hashlib
import hmac
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

DB_ENV = "XCORE_STUDY_DB"
DEFAULT_DB = Path(__file__).resolve().parents[2] / "xcore_study.sqlite"
BUSY_TIMEOUT_S = 30.0


def now_utc() -> str:
    """The time now in UTC, ISO 8601 to the millisecond (the stored timestamps)."""
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
    database = make_url(url).database
    return None if database in (None, "", ":memory:") else Path(database)


def sqlite_engine(url: str, read_only: bool = False, busy_timeout: float = BUSY_TIMEOUT_S) -> Engine:
    """A SQLite engine: WAL and synchronous=FULL for writers, BEGIN IMMEDIATE for writes, read-only opening."""
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
