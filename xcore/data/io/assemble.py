"""Building atom tables with provenance and constructing the dataset once, at the end."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.io.limits import DEFAULT_LIMITS, Limits
from xcore.data.schema import Predicate, Schema, arg_columns
from xcore.errors import DataError

Parts = dict[str, dict[str, list[pd.DataFrame]]]
"""Collected atom tables: predicate -> partition -> list of frames (concatenated at the end)."""


def atom_frame(args: Sequence[Sequence[str]] | pd.DataFrame, values: object, file: str | np.ndarray,
               lines: np.ndarray) -> pd.DataFrame:
    """An atom table with columns a0..a{k-1}, value (raw; validated later), _file and _line.

    `args` is a frame whose columns are the arguments in order, or a list of columns.
    `values` is a column, a scalar (1.0, or NaN for targets), or None for "no value column".
    """
    cols = [args[c] for c in args.columns] if isinstance(args, pd.DataFrame) else list(args)
    n = len(lines)
    data: dict[str, object] = {}
    for name, col in zip(arg_columns(len(cols)), cols):
        # pandas/Arrow string arrays are kept as they are (no Python string per cell)
        data[name] = col.array if isinstance(col, pd.Series) else \
            col if isinstance(col, pd.api.extensions.ExtensionArray) else np.asarray(col, dtype=object)
    if values is not None:
        data["value"] = values if np.ndim(values) else \
            np.full(n, values, dtype=np.float64 if isinstance(values, (int, float)) else object)
    # one file name per row as a categorical: 1 byte a row instead of a string each
    data["_file"] = file if np.ndim(file) else pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [file])
    data["_line"] = np.asarray(lines, dtype=np.int64)
    return pd.DataFrame(data, index=pd.RangeIndex(n), copy=False)  # the columns are not copied


def check_predicate_count(n: int, limits: Limits | None, file: str | None,
                          line: int | Callable[[int], int] | None = None) -> None:
    """Refuse datasets with more predicates than `Limits.max_predicates` (before building them).

    `line` is the line to name, or a function of the limit giving it (the line where the first
    predicate over the limit appears; only called when the limit is exceeded).
    """
    limit = (limits or DEFAULT_LIMITS).max_predicates
    if n > limit:
        raise DataError(f"{n:,} predicates (columns or relations), above the limit of {limit:,}", file=file,
                        line=line(limit) if callable(line) else line)


def add(parts: Parts, pred: str, partition: str, frame: pd.DataFrame) -> None:
    """Collect one frame of atoms for a predicate and partition."""
    if len(frame):
        parts.setdefault(pred, {}).setdefault(partition, []).append(frame)


def build_dataset(predicates: Sequence[Predicate], parts: Parts, name: str, description: str = "",
                  tabular: pd.DataFrame | None = None, label: str | None = None) -> RelationalDataset:
    """Concatenate the collected frames and validate everything in one `RelationalDataset`."""
    tables: dict[str, dict[str, pd.DataFrame]] = {}
    for pred, by_part in parts.items():
        tables[pred] = {}
        for part, frames in by_part.items():
            frames = [_with_value(f) for f in frames] if any("value" in f for f in frames) else frames
            tables[pred][part] = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    return RelationalDataset(Schema.of(list(predicates)), tables, name=name, description=description,
                             tabular=tabular, label=label)


def _with_value(frame: pd.DataFrame) -> pd.DataFrame:
    return frame if "value" in frame else frame.assign(value="")
