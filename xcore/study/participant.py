"""What one participant token opens (`ParticipantSession`): its own plan, blinded screens and answers,
each screen stored in one transaction after its answers are checked (`validate_answers`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd
from sqlalchemy import Connection, insert, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from xcore import __version__
from xcore.study.definition import Question, Study
from xcore.study.design import participant_plan
from xcore.study.engine import now_utc
from xcore.study.errors import UNAVAILABLE, ReplayRejected, StudyClosed, StudyError, SubmissionRejected
from xcore.study.schema import responses, studies

if TYPE_CHECKING:
    from xcore.study.store import StudyStore

LOG = logging.getLogger(__name__)
CONSENT_POSITION = -1
MAX_TEXT = 2000
MAX_RESPONSE_MS = 24 * 3600 * 1000


@dataclass(frozen=True)
class Screen:
    """One participant screen (blinded) and the questions whose answers it expects."""

    position: int
    item_id: str
    code: str
    questions: tuple[Question, ...]
    view: dict[str, Any]



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
