"""The study mode's refusals: every one is a `StudyError` (an `XcoreError`) the pages and the command line
show as a sentence."""

from __future__ import annotations

from xcore.errors import XcoreError

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
