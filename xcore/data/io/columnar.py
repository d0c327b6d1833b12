"""Columnar reading of delimited text with pyarrow.csv: records, 1-based line numbers, no per-row Python.

`read_records` is the one reader of delimited files (triples, long CSV, tables; PSL files later):
it checks the bytes like `decode_text` (NUL bytes, UTF-8, BOM, ``\\r``/``\\r\\n`` endings, empty
file), skips blank records exactly as `split_records` does (lines that are empty, whitespace
only, or whose every field is blank), and returns string columns plus each record's line.
Text without a double quote is read unquoted by pyarrow (fields never span lines, so line
numbers follow from the positions of the line breaks); quoted CSV goes through `split_records`
(Python's csv module, whose strict quoting rules and line numbers for multi-line fields the
loaders keep). Errors of the foreign reader become `DataError` naming the file and line.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from xcore.data.io.files import decode_text, field_counts, split_records
from xcore.errors import DataError

BLOCK_BYTES = 1 << 22
"""pyarrow.csv block size (4 MiB): bounds the reader's working memory besides the result."""


@dataclass
class Records:
    """Non-blank records of a delimited file as string columns (all the width of the first)."""

    columns: list[pa.Array]
    """One string array per field position, stripped of nothing (callers strip)."""
    lines: np.ndarray
    """1-based line of each record (int64)."""
    bad: tuple[int, int] | None = None
    """(line, field count) of the first record whose width differs from the first's, if any."""

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def width(self) -> int:
        return len(self.columns)

    def row(self, i: int) -> list[str]:
        """Record `i` as a list of strings (for headers)."""
        return [str(c[i].as_py()) for c in self.columns]

    def drop_first(self) -> "Records":
        """The records without the first (the header)."""
        return Records([c.slice(1) for c in self.columns], self.lines[1:], self.bad)


def objects(column: pa.Array | pa.ChunkedArray, strip: bool = True) -> np.ndarray:
    """A string column as a numpy object array whose equal values share one Python string.

    Dictionary-encoding first means a column of n cells with u distinct values costs n pointers
    and u strings, not n strings (the memory of a loaded file is dominated by this).
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if strip:
        column = pc.utf8_trim_whitespace(column)
    enc = pc.dictionary_encode(column)
    uniques = enc.dictionary.to_numpy(zero_copy_only=False).astype(object)
    return uniques[enc.indices.to_numpy(zero_copy_only=False)] if len(uniques) else \
        np.empty(len(column), dtype=object)


def read_records(data: bytes, file: str, sep: str) -> Records:
    """The non-blank records of delimited text (see the module docstring)."""
    text_check = decode_text(data, file)  # NUL, UTF-8, empty: the same errors as every loader
    if '"' in text_check:
        rows, lines = split_records(text_check, file, sep, quoted=True)
        del text_check
        return _from_rows(rows, lines)
    del text_check
    return _read_unquoted(_normalised(data), file, sep)


def _normalised(data: bytes) -> bytes:
    """Bytes without BOM and with ``\\n`` line breaks only (as `decode_text` normalises)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def _line_numbers(data: bytes) -> np.ndarray:
    """1-based numbers of the non-empty lines (what pyarrow reads with ignore_empty_lines)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(buf)]))
    return np.flatnonzero(ends > starts).astype(np.int64) + 1


def _read_unquoted(data: bytes, file: str, sep: str) -> Records:
    nonempty = _line_numbers(data)
    header, header_line = _first_record(data, sep)
    if header is None:
        return Records([], np.zeros(0, np.int64), None)
    width = len(header)
    names = [f"f{j}" for j in range(width)]
    skipped: list[int] = []
    bad: list[tuple[int, int]] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        """Blank lines are skipped (as `split_records` does); the first other bad row stops."""
        line = int(nonempty[row.number - 1]) if row.number else 0
        if not row.text.strip():
            skipped.append(row.number - 1)
            return "skip"
        bad.append((line, int(row.actual_columns)))
        return "error"

    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False, block_size=BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(delimiter=sep, quote_char=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=True,
                                             invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                 strings_can_be_null=False, check_utf8=False))
    except (pa.ArrowException, ValueError, OverflowError, MemoryError) as e:
        if bad:  # the first record and the first bad one: what the loaders report
            return Records([pa.array([f], pa.string()) for f in header], np.array([header_line]), bad[0])
        raise DataError(f"cannot read the file ({type(e).__name__}: {_short(str(e))})", file=file) from None
    lines = np.delete(nonempty, skipped) if skipped else nonempty
    columns = [table.column(j).combine_chunks() if table.column(j).num_chunks != 1 else table.column(j).chunk(0)
               for j in range(width)]
    blank = None
    for col in columns:
        b = pc.equal(pc.utf8_trim_whitespace(col), "")
        blank = b if blank is None else pc.and_(blank, b)
    if blank is not None and pc.any(blank).as_py():
        keep = pc.invert(blank)
        columns = [c.filter(keep) for c in columns]
        lines = lines[keep.to_numpy(zero_copy_only=False)]
    return Records(columns, lines, None)


def _first_record(data: bytes, sep: str) -> tuple[list[str] | None, int]:
    """The fields and line of the first record with a non-blank field (None if there is none)."""
    m = re.compile(rb"[^\s" + re.escape(sep.encode()) + rb"]").search(data)
    if m is None:
        return None, 0
    start = data.rfind(b"\n", 0, m.start()) + 1
    end = data.find(b"\n", m.start())
    end = len(data) if end < 0 else end
    return data[start:end].decode("utf-8", "replace").split(sep), data.count(b"\n", 0, start) + 1


def _from_rows(rows: list[list[str]], lines: np.ndarray) -> Records:
    """Records from `split_records` output (the quoted-CSV path)."""
    if not rows:
        return Records([], lines, None)
    width = len(rows[0])
    counts = field_counts(rows)
    wrong = np.flatnonzero(counts != width)
    bad = (int(lines[wrong[0]]), int(counts[wrong[0]])) if len(wrong) else None
    if bad is not None:
        rows, lines = rows[:wrong[0]], lines[:wrong[0]]
    columns = [pa.array([r[j] for r in rows], pa.string()) for j in range(width)]
    return Records(columns, lines, bad)


def _short(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."
