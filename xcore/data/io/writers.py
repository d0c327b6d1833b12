"""Helpers shared by the writers: value formatting and delimiter-joined rows, vectorised."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from xcore.data.schema import Predicate
from xcore.errors import DataError


def value_text(values: pd.Series) -> np.ndarray:
    """Shortest text that reads back as the same float (``1.0``, ``0.3``); "" for NaN."""
    v = pd.Series(values, dtype="float64").reset_index(drop=True)
    text = v.astype(str).to_numpy(dtype=object)
    text[v.isna().to_numpy()] = ""
    return text


def check_constants(p: Predicate, table: pd.DataFrame, forbidden: str, fmt: str) -> None:
    """Refuse constants the format cannot hold (separators, newlines, outer whitespace)."""
    for c in p.columns:
        col = table[c].astype(str)
        bad = col.str.strip().ne(col)
        for ch in forbidden:
            bad |= col.str.contains(ch, regex=False)
        if bad.any():
            v = col[bad.to_numpy()].iloc[0]
            raise DataError(f"cannot write {p.name} argument {v!r} as {fmt}: it contains a "
                            f"separator, a line break or leading/trailing spaces")


def join_columns(table: pd.DataFrame, cols: list[str], sep: str) -> pd.Series:
    """The given columns joined with `sep`, one string per row."""
    if not cols:
        return pd.Series([""] * len(table), dtype=object)
    out = table[cols[0]].astype(str).reset_index(drop=True)
    if len(cols) > 1:
        out = out.str.cat([table[c].astype(str).reset_index(drop=True) for c in cols[1:]], sep=sep)
    return out


def write_lines(path: str | os.PathLike, lines: pd.Series | list[str]) -> Path:
    """Write lines with LF endings and a final newline (UTF-8)."""
    path = Path(path)
    text = "\n".join(map(str, lines))
    path.write_text(text + "\n" if text else "", encoding="utf-8", newline="\n")
    return path
