"""Exceptions raised by xcore: every user-facing problem is one of these, never a bare traceback."""

from __future__ import annotations

import reprlib

_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxstring, _BRIEF.maxother, _BRIEF.maxlong = 3, 80, 80, 40
_BRIEF.maxlist = _BRIEF.maxtuple = _BRIEF.maxdict = _BRIEF.maxset = _BRIEF.maxfrozenset = 6


def brief(value: object, limit: int = 200) -> str:
    """A short repr of user data for messages: a few items per level, three levels, `limit` chars.

    Plain ``repr`` of a value read from YAML walks every shared alias (``[*a8]`` can stand for
    387 million strings in 500 bytes); this one touches at most 6**3 items.
    """
    try:
        text = _BRIEF.repr(value)
    except ValueError:  # an int too long to print (Python's digit limit)
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


class XcoreError(Exception):
    """Base class of every error xcore raises on purpose (bad input, limits, failed solves)."""


class DataError(XcoreError):
    """A data file (or in-memory table) is malformed; names the file, the line and the problem."""

    def __init__(self, problem: str, file: str | None = None, line: int | None = None) -> None:
        self.problem = problem
        self.file = file
        self.line = line
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.file or "<data>"
        if self.line is not None:
            where = f"{where}, line {self.line}"
        return f"{where}: {self.problem}"


class ParseError(XcoreError):
    """A rule or clause does not parse; names the line and column (both 1-based)."""

    def __init__(self, problem: str, line: int, column: int, text: str = "", source: str | None = None) -> None:
        self.problem = problem
        self.line = line
        self.column = column
        self.text = text
        self.source = source
        where = f"{source}, " if source else ""
        msg = f"{where}line {line}, column {column}: {problem}"
        if text:
            msg += f"\n    {text}\n    {' ' * max(column - 1, 0)}^"
        super().__init__(msg)


class SchemaError(XcoreError):
    """A rule does not fit the dataset's schema (unknown predicate, wrong arity, unbound variable)."""


class GroundingTooLarge(XcoreError):
    """Grounding a rule would exceed the configured limit; names the rule and its estimated size."""

    def __init__(self, rule_text: str, estimate: int, limit: int) -> None:
        self.rule_text = rule_text
        self.estimate = estimate
        self.limit = limit
        super().__init__(
            f"rule `{rule_text}` would produce about {estimate:,} ground rules, "
            f"above the limit of {limit:,}; add a body atom that binds its variables "
            f"(a block predicate) or raise the limit"
        )


class ConfigError(XcoreError, ValueError):
    """A setting is out of range or of the wrong type; names the field and the allowed values."""

    def __init__(self, problem: str, field: str | None = None) -> None:
        self.problem = problem
        self.field = field
        super().__init__(f"{field}: {problem}" if field else problem)


class NotFittedError(XcoreError, AttributeError):
    """An estimator was asked to predict or explain before `fit` (as scikit-learn's NotFittedError)."""


class Cancelled(XcoreError):
    """The user cancelled a running computation (raised at its next progress report); nothing is kept."""


class SolverError(XcoreError):
    """A numerical solver (LP, QP, L-BFGS-B, sampler) failed or returned an unusable answer."""


def wrap_foreign(error: BaseException, what: str) -> XcoreError:
    """An xcore error for a foreign exception raised while doing `what` (xcore errors pass through).

    Workflows call this at their boundary so a user sees one clear sentence, never a traceback;
    the original exception stays attached as `__cause__` for developers.
    """
    if isinstance(error, XcoreError):
        return error
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    wrapped = XcoreError(f"{what} failed: {detail} ({type(error).__name__})")
    wrapped.__cause__ = error
    return wrapped
