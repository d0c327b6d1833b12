"""Tabular CSV: feature columns plus a label column, for the classifier page.

The result keeps ``tabular`` (the cleaned table: column names sanitised like predicate names,
``?`` and empty cells as NaN, all-numeric columns converted to numbers, text columns
categorical) and ``label`` (the
sanitised label column; default the last column). Its relational view has one binary predicate
per feature column, ``<col>(Row, Value)`` (observations), and ``<label>(Row, Class)`` whose atoms
are targets with truth 1. Rows are the constants ``r1, r2, ...`` (row ``i`` of ``tabular`` is
``r{i+1}``); missing cells give no atom. Quoted fields (with commas or line breaks) are read as
CSV; the separator is detected from the header (comma, semicolon or tab) unless given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import Parts, add, atom_frame, build_dataset, check_predicate_count
from xcore.data.io.columnar import read_encoded_records
from xcore.data.io.files import Source, first_record, head_lines, read_source, sanitize_name, stem, unique_names
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


def check_separator(sep: object, file: str) -> None:
    """Refuse a separator the CSV reader cannot split on (empty, several characters, non-ASCII, a
    quote or a line break) with a `DataError` saying what it must be, before any parsing."""
    if not isinstance(sep, str) or len(sep) != 1 or not sep.isascii() or sep in '"\r\n':
        raise DataError(f"the separator (option sep) must be one ASCII character other than a double "
                        f"quote or a line break, such as ',' ';' or a tab; got {sep!r}", file=file)


def tabular_from_bytes(data: bytes, file: str, name: str, *, label: str | None = None,
                       sep: str | None = None, header: bool = True,
                       missing: Sequence[str] = MISSING, limits: Limits | None = None) -> RelationalDataset:
    """Parse table bytes into a dataset with `tabular`, `label` and the relational view.

    Columns are read dictionary-encoded (a code per cell, each distinct text once) and stay so:
    the relational view's tables are categorical, never a Python string per cell.
    """
    if sep is None:
        first = head_lines(data)
        sep = _guess_separator(first[0] if first else "")
    check_separator(sep, file)
    rec = read_encoded_records(data, file, sep)
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
    columns = {c: _Column.of(col, missing) for c, col in zip(cols, body.columns)}
    del rec, body
    target = _label_column(label, original, cols, file)
    table = pd.DataFrame({c: col.cleaned() for c, col in columns.items()}, copy=False)
    preds, parts = _relational_view(columns, original, target, file, lines)
    del columns
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


@dataclass
class _Column:
    """One table column as codes into its sorted distinct present texts (-1: missing cell)."""

    codes: np.ndarray
    texts: pd.Index

    @classmethod
    def of(cls, column: pa.ChunkedArray, missing: Sequence[str]) -> "_Column":
        """Codes of a dictionary-encoded column; texts in `missing` (and unused ones) dropped."""
        array = column.combine_chunks()
        dictionary = array.dictionary.to_pandas()
        codes = array.indices.to_numpy(zero_copy_only=False)
        used = np.bincount(codes, minlength=len(dictionary)) > 0
        keep = used & ~dictionary.isin(list(missing)).to_numpy()
        order = np.flatnonzero(keep)[np.argsort(dictionary[keep].to_numpy(dtype=object), kind="stable")]
        small = np.int8 if len(order) < 127 else np.int16 if len(order) < 32767 else np.int32
        remap = np.full(len(dictionary) + 1, -1, dtype=small)  # the last slot: code -1 stays -1
        remap[order] = np.arange(len(order), dtype=small)
        return cls(remap[codes], pd.Index(dictionary.iloc[order].reset_index(drop=True), dtype="str"))

    @property
    def present(self) -> np.ndarray:
        return self.codes >= 0

    def categorical(self, keep: np.ndarray | None = None) -> pd.Categorical:
        """The texts of the cells (of the `keep` rows) as a categorical."""
        codes = self.codes if keep is None else self.codes[keep]
        return pd.Categorical.from_codes(codes, dtype=_unique_categories(self.texts), validate=False)

    def cleaned(self) -> pd.Series:
        """The column of ``tabular``: numbers when every present text is one, else a categorical
        of the texts (a small code per cell, each distinct text once; missing cells NaN)."""
        present = self.present
        if present.any() and _is_number(self.texts[self.codes[np.argmax(present)]]):
            numbers = pd.to_numeric(pd.Series(self.texts), errors="coerce")
            finite = np.isfinite(numbers.to_numpy(dtype="float64"))
            if finite.all():
                values = numbers.to_numpy()
                if not present.all():
                    values = values.astype("float64")
                return pd.Series(np.append(values, np.nan if values.dtype.kind == "f" else 0)[self.codes],
                                 copy=False)
        return pd.Series(self.categorical(), copy=False)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _row_ids(n: int) -> tuple[np.ndarray, pd.CategoricalDtype]:
    """Codes and categorical type of the row constants ``r1..rN`` (categories sorted as text).

    Text order of ``r<number>`` is the order of the digits padded on the right, shorter first on
    a tie (``r1 < r10 < r100 < r11``): an integer sort, no string comparisons.
    """
    numbers = np.arange(1, n + 1, dtype=np.int64)
    width = len(str(n))
    digits = np.ones(n, dtype=np.int64)
    for k in range(1, width):
        digits += numbers >= 10 ** k
    order = np.argsort(numbers * 10 ** (width - digits) * (width + 1) + digits, kind="stable")
    codes = np.empty(n, dtype=np.int32)
    codes[order] = np.arange(n, dtype=np.int32)
    texts = pc.binary_join_element_wise(pa.scalar("r", pa.large_string()),
                                        pc.cast(pa.array(numbers[order]), pa.large_string()),
                                        pa.scalar("", pa.large_string()))
    return codes, _unique_categories(pd.Index(texts.to_pandas(), dtype="str"))


def _unique_categories(texts: pd.Index) -> pd.CategoricalDtype:
    """The categorical type of `texts`, known distinct: pandas' own check would build a hash table
    holding a Python string per category (about 100 MB for two million rows) and keep it."""
    try:
        return pd.CategoricalDtype._from_fastpath(texts, ordered=False)
    except (AttributeError, TypeError):  # a pandas without the fast path: the checked way
        return pd.CategoricalDtype(texts)


def _relational_view(columns: dict[str, _Column], original: list[str], target: str, file: str,
                     lines: np.ndarray) -> tuple[list[Predicate], Parts]:
    row_codes, row_type = _row_ids(len(lines))
    all_rows = pd.Categorical.from_codes(row_codes, dtype=row_type, validate=False)
    preds: list[Predicate] = []
    parts: Parts = {}
    for j, (c, col) in enumerate(columns.items()):
        label = original[j].replace("{", "{{").replace("}", "}}")
        is_label = c == target
        preds.append(Predicate(c, 2, ("row", c), closed=not is_label,
                               template=f"{{0}} has {label} {{1}}",
                               description=f"column {original[j]!r}" + (" (label)" if is_label else "")))
        keep = col.present
        if keep.all():  # share the row ids and line numbers between predicates (no copies)
            args, at = [all_rows, col.categorical()], lines
        else:
            args = [pd.Categorical.from_codes(row_codes[keep], dtype=row_type, validate=False), col.categorical(keep)]
            at = lines[keep]
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
