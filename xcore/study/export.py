"""Study exports as files: CSV cells neutralised against formula injection (OWASP "CSV injection").

A free-text answer such as ``=HYPERLINK("http://evil", "click")`` or ``=cmd|' /C calc'!A0`` would run as
a formula when a researcher opens the CSV in a spreadsheet. Every text cell that starts (after any
leading spaces) with ``= + - @``, a tab or a carriage return gets a leading apostrophe, which
spreadsheets show as text; numbers stay numbers. Used by every CSV export (the Study page and
``xcore study responses``).
"""

from __future__ import annotations

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: object) -> object:
    """`value` made inert for spreadsheets: text starting like a formula gets a leading apostrophe."""
    if isinstance(value, str) and (value.startswith(FORMULA_START) or value.lstrip(" ").startswith(FORMULA_START)):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` whose text cells (and column names) are neutralised."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(neutralise)
    out.columns = [neutralise(str(c)) for c in out.columns]
    return out


def safe_csv(frame: pd.DataFrame) -> str:
    """`frame` as CSV text with every cell neutralised (RFC 4180 line ends, so a cell holding a carriage
    return is quoted instead of breaking the row)."""
    return safe_frame(frame).to_csv(index=False, lineterminator="\r\n")


def responses_csv(store, study_id: str) -> str:
    """A study's raw responses as safe CSV text (generated when asked for, never kept)."""
    return safe_csv(store.responses(study_id))
