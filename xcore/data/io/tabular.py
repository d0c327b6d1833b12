"""Tabular CSV: feature columns plus a label column, for the classifier page.

The result keeps ``tabular`` (the cleaned table: column names sanitised like predicate names,
``?`` and empty cells as NaN, all-numeric columns converted to numbers) and ``label`` (the
sanitised label column; default the last column). Its relational view has one binary predicate
per feature column, ``<col>(Row, Value)`` (observations), and ``<label>(Row, Class)`` whose atoms
are targets with truth 1. Rows are the constants ``r1, r2, ...`` (row ``i`` of ``tabular`` is
``r{i+1}``); missing cells give no atom. Quoted fields (with commas or line breaks) are read as
CSV; the separator is detected from the header (comma, semicolon or tab) unless given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import Parts, add, atom_frame, build_dataset, check_predicate_count
from xcore.data.io.columnar import read_records, strings
from xcore.data.io.files import (Source, first_record, head_lines, read_source, sanitize_name,
                                 stem, unique_names)
from xcore.data.io.limits import Limits
from xcore.data.schema import Predicate
from xcore.errors import DataError

MISSING = ("?", "")
"""Cell texts read as missing values (after stripping spaces)."""


def load_tabular(source: Source, name: str | None = None, *, label: str | None = None,
                 sep: str | None = None, header: bool = True, missing: Sequence[str] = MISSING,
                 limits: Limits | None = None) -> RelationalDataset:
    """Load a table with a label column (original or sanitised name; default: last column)."""
    files = read_source(source, limits, suffixes=(".csv", ".data", ".tsv"))
    if len(files) != 1:
        raise DataError(f"expected one table file, found {len(files)}")
    (file, data), = files.items()
    return tabular_from_bytes(data, file, name or stem(file), label=label, sep=sep, header=header,
                              missing=missing, limits=limits)


def tabular_from_bytes(data: bytes, file: str, name: str, *, label: str | None = None,
                       sep: str | None = None, header: bool = True,
                       missing: Sequence[str] = MISSING, limits: Limits | None = None) -> RelationalDataset:
    """Parse table bytes into a dataset with `tabular`, `label` and the relational view."""
    if sep is None:
        first = head_lines(data)
        sep = _guess_separator(first[0] if first else "")
    rec = read_records(data, file, sep)
    if not rec.width:
        first_record([], rec.lines, file)
    check_predicate_count(rec.width, limits, file, rec.first_line())
    if header:
        original = rec.row(0)
        dup = pd.Series(original)[pd.Series(original).duplicated()]
        if len(dup):
            raise DataError(f"column name {dup.iloc[0]!r} appears twice in the header "
                            f"(does the file have a header row?)", file=file, line=rec.first_line())
    else:
        original = [f"col{j + 1}" for j in range(rec.width)]
    if len(original) < 2:
        raise DataError(f"a table needs at least two columns (features and a label); is the "
                        f"separator {sep!r} right?", file=file, line=rec.first_line())
    if rec.bad is not None:
        raise DataError(f"expected {len(original)} fields (as in the header), found {rec.bad[1]}",
                        file=file, line=rec.bad[0])
    body = rec.drop_first() if header else rec
    lines = body.lines
    if not len(body):
        raise DataError("the table has a header but no rows", file=file, line=int(rec.first_line()))
    cols = unique_names(sanitize_name(c, "c") for c in original)
    raw = pd.DataFrame({c: strings(col) for c, col in zip(cols, body.columns)})  # stripped, Arrow-backed
    del rec, body
    is_missing = raw.isin(list(missing)).to_numpy()
    target = _label_column(label, original, cols, file)
    table = _clean_table(raw, is_missing)
    preds, parts = _relational_view(raw, is_missing, original, cols, target, file, lines)
    return build_dataset(preds, parts, name, tabular=table, label=target)


def _guess_separator(first: str) -> str:
    """Comma, semicolon or tab: whichever the first non-blank line has most of (comma if none)."""
    counts = {s: first.count(s) for s in (",", ";", "\t")}
    best = max(counts, key=lambda s: counts[s])
    return best if counts[best] else ","


def _label_column(label: str | None, original: list[str], cols: list[str], file: str) -> str:
    if label is None:
        return cols[-1]
    for names in (cols, original):
        if label in names:
            return cols[names.index(label)]
    raise DataError(f"label column {label!r} not found; columns: {', '.join(original)}", file=file, line=1)


def _clean_table(raw: pd.DataFrame, is_missing: np.ndarray) -> pd.DataFrame:
    out = {}
    for j, c in enumerate(raw.columns):
        col = raw[c].mask(is_missing[:, j])
        present = ~is_missing[:, j]
        out[c] = _shared_objects(col)
        if present.any() and _is_number(col[present].iloc[0]):
            num = pd.to_numeric(col, errors="coerce")
            if np.isfinite(num.to_numpy(dtype="float64")[present]).all():
                out[c] = num
    return pd.DataFrame(out)


def _shared_objects(col: pd.Series) -> pd.Series:
    """An object column in which equal strings are one Python object (NaN stays NaN).

    A table column has few distinct values; a string per cell would take ~60 bytes a cell.
    """
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    values = np.append(np.asarray(uniques, dtype=object), np.nan)
    return pd.Series(values[codes], index=col.index, dtype=object)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _relational_view(raw: pd.DataFrame, is_missing: np.ndarray, original: list[str], cols: list[str],
                     target: str, file: str, lines: np.ndarray) -> tuple[list[Predicate], Parts]:
    numbers = pc.cast(pa.array(np.arange(1, len(raw) + 1)), pa.large_string())
    rows = pa.chunked_array([pc.binary_join_element_wise(pa.scalar("r", pa.large_string()), numbers,
                                                         pa.scalar("", pa.large_string()))]).to_pandas().array
    preds: list[Predicate] = []
    parts: Parts = {}
    for j, c in enumerate(cols):
        label = original[j].replace("{", "{{").replace("}", "}}")
        is_label = c == target
        preds.append(Predicate(c, 2, ("row", c), closed=not is_label,
                               template=f"{{0}} has {label} {{1}}",
                               description=f"column {original[j]!r}" + (" (label)" if is_label else "")))
        keep = ~is_missing[:, j]
        if keep.all():  # share the row ids and line numbers between predicates (no copies)
            args, at = [rows, raw[c].array], lines
        else:
            args, at = [rows[keep], raw[c].array[keep]], lines[keep]
        if is_label:
            add(parts, c, "targets", atom_frame(args, None, file, at))
            add(parts, c, "truth", atom_frame(args, 1.0, file, at))
        else:
            add(parts, c, "obs", atom_frame(args, None, file, at))
    return preds, parts


def write_tabular(ds: RelationalDataset, path: str | os.PathLike) -> Path:
    """Write `ds.tabular` as CSV (missing cells as `?`, so an all-missing row survives a reload).

    DataError if the dataset has no table.
    """
    if ds.tabular is None:
        raise DataError(f"dataset {ds.name} has no table to write (it was not loaded from one)")
    path = Path(path)
    ds.tabular.to_csv(path, index=False, lineterminator="\n", encoding="utf-8", na_rep="?")
    return path
