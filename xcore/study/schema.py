"""The study database's tables (SQLAlchemy Core), the SQLite triggers that keep them append-only, and the
schema version with its migrations."""

from __future__ import annotations

from typing import Callable

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
)

SCHEMA_VERSION = 2


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
    """(name, DDL) of a SQLite trigger that aborts `when` on `table`, saying `why`."""
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
