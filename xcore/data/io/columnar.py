"""Columnar reading of delimited text with pyarrow.csv: records, 1-based line numbers, no per-row Python.

`read_records` is the one reader of delimited files (triples, long CSV, tables); `read_ragged` reads
unquoted files whose records may differ in width (PSL predicate files: arguments, optional value).
`read_records` checks the bytes like `decode_text` (NUL bytes, UTF-8, BOM, ``\\r``/``\\r\\n`` endings, empty
file), skips blank records exactly as `split_records` does (lines that are empty, whitespace
only, or whose every field is blank), and returns string columns plus each record's line.
Text without a double quote is read unquoted by pyarrow (fields never span lines, so line
numbers follow from the positions of the line breaks). Quoted CSV is read by pyarrow too
(``""`` escapes, line breaks inside fields), its records' physical lines from a vectorised scan
of the quotes (`quoted_layout`); the loaders keep the strict quoting rules of Python's csv
module, so a file with a quote the scan cannot place (text after a closing quote, a quote
inside an unquoted field, an unterminated field), or an error pyarrow reports without a line,
goes through `split_records` (the csv module), which reads it or names the exact line.
Errors of the foreign reader become `DataError` naming the file and line.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from xcore.data.io.files import allow_fields_of, decode_text, field_counts, split_records
from xcore.data.io.quoted_layout import QuotedLayout, quoted_layout
from xcore.errors import DataError

WHITESPACE = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
"""The characters Python's `str.strip` removes: fields are stripped of exactly these (Arrow's own
whitespace class also holds U+FEFF, which Python keeps)."""
BLOCK_BYTES = 1 << 22
"""pyarrow.csv block size (4 MiB): bounds the reader's working memory besides the result. A file
with a longer record gets a block that holds it (`block_bytes`): pyarrow refuses a record that
straddles two blocks."""


TEXT_BLOCK_BYTES = 1 << 20
"""Bytes `check_text` decodes at a time (1 MiB): the largest Python string it holds."""
BOM = b"\xef\xbb\xbf"
POOL = pa.default_memory_pool()
"""Arrow memory pool of the reader: the same pool as pandas' Arrow-backed strings, so the
reader's freed blocks are reused by the steps after it instead of adding to the peak."""


@dataclass
class Records:
    """Non-blank records of a delimited file as string columns (all the width of the first)."""

    columns: list[pa.ChunkedArray]
    """One string column per field position, with surrounding whitespace stripped."""
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

    def first_line(self) -> int:
        """Line of the first record (1 when there is none)."""
        return int(self.lines[0]) if len(self.lines) else 1


def strings(column: pa.Array | pa.ChunkedArray, strip: bool = False) -> pd.Series:
    """A string column as a pandas ``str`` Series backed by the Arrow buffers (no Python strings).

    That is the dtype dataset tables have anyway; going through numpy object arrays would create
    one Python string per cell (about 60 bytes each) and convert them back.
    """
    if strip:
        column = pc.utf8_trim(column, WHITESPACE)
    out = column.to_pandas()
    return out if out.dtype == "str" else out.astype("str")


def read_records(data: bytes, file: str, sep: str) -> Records:
    """The non-blank records of delimited text (see the module docstring)."""
    if b'"' in data or data.startswith(BOM * 2):  # quoted CSV, or a BOM pyarrow would drop
        return _read_quoted(data, file, sep, encoded=False)
    check_text(data, file)  # NUL, UTF-8, empty: the same errors as every loader
    return _read_arrow(_normalised(data), file, sep)


def normalised_bytes(data: bytes) -> bytes:
    """UTF-8 bytes as `decode_text` would normalise them, still bytes: no BOM, ``\n`` breaks only."""
    return _normalised(data)


def _normalised(data: bytes) -> bytes:
    """Bytes without BOM and with ``\\n`` line breaks only (as `decode_text` normalises)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def _line_numbers(data: bytes) -> tuple[np.ndarray, int]:
    """1-based numbers of the non-empty lines (what pyarrow reads with ignore_empty_lines), and the
    length in bytes of the longest line."""
    breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    lengths = np.diff(breaks, prepend=-1) - 1  # line k ends at breaks[k]
    lines = np.flatnonzero(lengths > 0) + 1
    longest = int(lengths.max()) if len(lengths) else 0
    if not len(data) or data[-1:] != b"\n":  # a last line without its line break
        lines = np.append(lines, len(breaks) + 1)
        longest = max(longest, len(data) - (int(breaks[-1]) + 1 if len(breaks) else 0))
    return lines.astype(np.int64), longest


def block_bytes(longest_record: int) -> int:
    """pyarrow's block size for a file whose longest record has `longest_record` bytes: `BLOCK_BYTES`,
    or a power of two holding twice that record (a record may not straddle two blocks)."""
    need = 2 * (longest_record + 1)
    return BLOCK_BYTES if need <= BLOCK_BYTES else 1 << (need - 1).bit_length()


def read_encoded_records(data: bytes, file: str, sep: str) -> Records:
    """`read_records` with every column dictionary-encoded: int32 codes plus its distinct texts.

    Same checks, blank records, stripping, lines and errors; each column is one
    ``DictionaryArray`` chunk whose dictionary holds distinct stripped texts. A table column has few
    distinct values, so this holds 4 bytes a cell instead of the text and its 8-byte offset.
    """
    if b'"' in data or data.startswith(BOM * 2):  # quoted CSV, or a BOM pyarrow would drop
        return _read_quoted(data, file, sep, encoded=True)
    check_text(data, file)
    return _read_arrow(_normalised(data), file, sep, encoded=True)


def _read_quoted(data: bytes, file: str, sep: str, encoded: bool) -> Records:
    """Quoted CSV read by pyarrow (quotes, ``""`` escapes, line breaks in fields), its record
    lines from `quoted_layout`; files whose quotes the scan cannot place, and errors pyarrow
    reports without a line, go the careful way (`split_records`), whose errors are exact."""
    if len(sep) == 1 and sep not in '"\n\r' and len(sep.encode()) == 1:
        check_text(data, file)
        text = _normalised(data)
        layout = None if text.startswith(BOM) else quoted_layout(text, sep.encode())
        if layout is not None:
            records = _read_arrow(text, file, sep, encoded=encoded, layout=layout)
            if records is not None:
                return records
        del text
    rows, lines = split_records(decode_text(data, file), file, sep, quoted=True)
    records = _from_rows(rows, lines)
    del rows
    if encoded:
        return Records([pa.chunked_array([_encoded(c, trim=False)]) for c in records.columns],
                       records.lines, records.bad)
    return records


def check_text(data: bytes, file: str, block: int = TEXT_BLOCK_BYTES) -> None:
    """The checks of `decode_text` (NUL bytes, UTF-8, nothing but whitespace) with the same errors,
    decoding a block at a time instead of holding the whole text as one Python string."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    view = memoryview(data)
    blank = True
    try:
        if b"\x00" in data:
            raise ValueError
        for start in range(0, len(data), block):
            text = decoder.decode(view[start:start + block], final=start + block >= len(data))
            blank = blank and (not text or text.isspace())
            del text
    except (UnicodeDecodeError, ValueError):
        blank = True
    if blank or not data:
        decode_text(data, file)  # raises its error naming the line


def _encoded(column: pa.ChunkedArray, trim: bool) -> pa.DictionaryArray:
    """One dictionary array of a (string or dictionary) column, its dictionary distinct and stripped."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column, memory_pool=POOL)
    column = column.unify_dictionaries(memory_pool=POOL)
    if column.num_chunks:
        dictionary = column.chunk(0).dictionary
        indices = pa.concat_arrays([c.indices for c in column.chunks], memory_pool=POOL)
    else:
        dictionary, indices = pa.array([], pa.large_string()), pa.array([], pa.int32())
    dictionary = dictionary.cast(pa.large_string())
    if trim:  # stripping may make two texts equal: encode the stripped dictionary again
        again = pc.dictionary_encode(pc.utf8_trim(dictionary, WHITESPACE))
        if len(again.dictionary) < len(dictionary):
            indices = again.indices.take(indices)
        dictionary = again.dictionary
    return pa.DictionaryArray.from_arrays(indices.cast(pa.int32()), dictionary)


def _read_arrow(data: bytes, file: str, sep: str, encoded: bool = False,
               layout: QuotedLayout | None = None) -> Records | None:
    """Records of normalised bytes read by pyarrow: unquoted, or quoted CSV with its `layout`
    (then None when pyarrow fails without naming a bad record, or disagrees with the layout)."""
    quoted = layout is not None
    if quoted:
        nonempty = layout.lines
        longest = int((layout.ends - layout.starts).max()) if len(layout.starts) else 0
        header, header_line = _first_quoted(data, layout, sep)
        if header is None and header_line < 0:  # the csv module must place the error
            return None
    else:
        nonempty, longest = _line_numbers(data)
        header, header_line = _first_record(data, sep)
    if header is None:
        return Records([], np.zeros(0, np.int64), None)
    width = len(header)
    rows = _InvalidRows(nonempty, sep, quoted)
    try:
        table = _arrow_csv(data, width, sep, quoted, encoded, longest, rows)
    except (pa.ArrowException, ValueError, OverflowError, MemoryError) as e:
        if rows.bad and (rows.bad[0][0] > 0 or not quoted):  # the first record and the first bad one
            return Records([pa.chunked_array([[f.strip()]], pa.string()) for f in header],
                           np.array([header_line]), rows.bad[0])
        if quoted:
            return None
        raise DataError(f"cannot read the file ({type(e).__name__}: {_short(str(e))})", file=file) from None
    lines = np.delete(nonempty, rows.skipped) if rows.skipped else nonempty
    if len(lines) != table.num_rows:  # pyarrow and the layout disagree: the careful way decides
        return None
    columns = [table.column(j) for j in range(width)]
    del table
    # a quoted field may hold the separator (a tab is whitespace) and line breaks: strip those too
    trim = has_spaces(data, None) or layout.multiline if layout is not None else has_spaces(data, sep)
    if encoded:  # one column at a time, so only one column's codes are ever held twice
        records = _drop_blank_encoded([_encoded(columns.pop(0), trim) for _ in range(width)], lines)
        POOL.release_unused()  # the reader's freed blocks back to the system (numpy cannot reuse them)
        return records
    return _without_blank_records(columns, lines, trim)


class _InvalidRows:
    """pyarrow's invalid-row handler: blank records are skipped (as `split_records` does); the first
    other bad row stops the read and is kept as (line, fields)."""

    def __init__(self, nonempty: np.ndarray, sep: str, quoted: bool) -> None:
        self.nonempty, self.sep, self.quoted = nonempty, sep, quoted
        self.skipped: list[int] = []
        self.bad: list[tuple[int, int]] = []

    def __call__(self, row: pacsv.InvalidRow) -> str:
        line = int(self.nonempty[row.number - 1]) if 0 < row.number <= len(self.nonempty) else 0
        if _is_blank(row.text, self.sep, self.quoted):
            self.skipped.append(row.number - 1)
            return "skip"
        self.bad.append((line, int(row.actual_columns)))
        return "error"


def _arrow_csv(data: bytes, width: int, sep: str, quoted: bool, encoded: bool, longest: int,
               on_invalid: _InvalidRows) -> pa.Table:
    """pyarrow's CSV reader over `width` text columns (dictionary-encoded with `encoded`)."""
    names = [f"f{j}" for j in range(width)]
    text_type = pa.dictionary(pa.int32(), pa.string()) if encoded else pa.large_string()
    return pacsv.read_csv(
        io.BytesIO(data),
        read_options=pacsv.ReadOptions(column_names=names, use_threads=False, block_size=block_bytes(longest)),
        parse_options=pacsv.ParseOptions(delimiter=sep, quote_char='"' if quoted else False,
                                         double_quote=True, escape_char=False,
                                         newlines_in_values=quoted, ignore_empty_lines=True,
                                         invalid_row_handler=on_invalid),
        convert_options=pacsv.ConvertOptions(column_types={n: text_type for n in names},
                                             strings_can_be_null=False, check_utf8=False),
        memory_pool=POOL)


def _without_blank_records(columns: list[pa.ChunkedArray], lines: np.ndarray, trim: bool) -> Records:
    """Text columns (trimmed with `trim`) without the records whose every field is empty."""
    if trim:
        columns = [pc.utf8_trim(c, WHITESPACE, memory_pool=POOL) for c in columns]
    blank = None
    for col in columns:
        b = pc.equal(col, "", memory_pool=POOL)
        blank = b if blank is None else pc.and_(blank, b, memory_pool=POOL)
    if blank is not None and pc.any(blank).as_py():
        keep = pc.invert(blank)
        columns = [c.filter(keep) for c in columns]
        lines = lines[keep.to_numpy(zero_copy_only=False)]
    del blank
    POOL.release_unused()  # the reader's freed blocks back to the system (numpy cannot reuse them)
    return Records(columns, lines, None)


def _drop_blank_encoded(columns: list[pa.DictionaryArray], lines: np.ndarray) -> Records:
    """Records without those whose every field is empty (compared on the codes)."""
    blank = np.ones(len(lines), dtype=bool)
    for col in columns:
        empty = pc.index(col.dictionary, "").as_py()
        if empty < 0:
            blank[:] = False
            break
        blank &= col.indices.to_numpy(zero_copy_only=False) == empty
    if blank.any():
        keep = pa.array(~blank)
        columns = [c.filter(keep) for c in columns]
        lines = lines[~blank]
    return Records([pa.chunked_array([c]) for c in columns], lines, None)


def _first_quoted(data: bytes, layout: QuotedLayout, sep: str) -> tuple[list[str] | None, int]:
    """The fields and line of the first non-blank record of quoted CSV (None, 0 if there is none;
    None, -1 when the csv module rejects it). Only the blank records before it are parsed."""
    for k in range(len(layout.lines)):
        fields = _csv_fields(layout.record(data, k).decode("utf-8"), sep)
        if fields is None:
            return None, -1
        if any(f.strip() for f in fields):
            return fields, int(layout.lines[k])
    return None, 0


def _csv_fields(text: str, sep: str) -> list[str] | None:
    """The fields of one record as the csv module reads it (None when it rejects the text)."""
    allow_fields_of(len(text) + 1)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True))
    except csv.Error:
        return None
    return [f for row in rows for f in row] if len(rows) == 1 else (None if rows else [])


def _is_blank(text: str, sep: str, quoted: bool) -> bool:
    """Whether a record holds only empty or whitespace fields (how `split_records` skips it)."""
    if not quoted:
        return not text.strip()
    fields = _csv_fields(text, sep)
    return fields is not None and not any(f.strip() for f in fields)


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
    columns = [pa.chunked_array([pa.array([r[j].strip() for r in rows], pa.string())]) for j in range(width)]
    return Records(columns, lines, bad)


def _short(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


_SPACE_LEADS = b" \t\x0b\x0c\x1c\x1d\x1e\x1f\xc2\xe1\xe2\xe3"
_NOT_SPACE_LEADS = bytes(b for b in range(256) if b not in _SPACE_LEADS)


def has_spaces(data: bytes, sep: str | None) -> bool:
    """Whether `data` may hold whitespace other than `sep` (None: any) and line breaks (then fields need
    stripping): ASCII whitespace bytes, or one of the Unicode spaces (U+0085, U+00A0, U+1680,
    U+2000.., U+3000). One C pass keeps the bytes that may start one (a regex over 50 MiB took
    1.4 s); the multi-byte ones are looked for only when such lead bytes occur."""
    # a block at a time: bytes.translate sizes its result like its input before shrinking it
    leads = b"".join(data[s:s + TEXT_BLOCK_BYTES].translate(None, _NOT_SPACE_LEADS)
                     for s in range(0, len(data), TEXT_BLOCK_BYTES))
    if sep is not None and len(sep.encode()) == 1:
        leads = leads.replace(sep.encode(), b"")
    if not leads:
        return False
    if leads.strip(b"\xc2\xe1\xe2\xe3"):
        return True
    return any(n in data for n in (b"\xc2\x85", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80",
                                   b"\xe2\x81\x9f", b"\xe3\x80\x80"))
