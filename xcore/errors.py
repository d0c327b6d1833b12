"""Exceptions raised by xcore: every user-facing problem is one of these, never a bare traceback."""

from __future__ import annotations


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
