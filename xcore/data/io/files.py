"""Reading sources into memory (paths, folders, uploads) and splitting text into records.

Every loader works on a *file set*: a dict from a display name (what error messages show) to the
file's bytes. `read_source` builds it from a path, a folder, an upload ``(filename, bytes)``, a
list of uploads or a ready dict, enforcing the size limits.
"""

from __future__ import annotations

import csv
import io
import os
import re
import threading
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping, Sequence, Union

import numpy as np

from xcore.data.io.limits import DEFAULT_LIMITS, Limits
from xcore.errors import DataError

Upload = tuple[str, bytes]
Source = Union[str, os.PathLike, Upload, Sequence[Upload], Mapping[str, bytes]]
"""What loaders accept: a file or folder path, ``(filename, bytes)``, a list of those, or a dict."""

FileSet = dict[str, bytes]


# ---------------------------------------------------------------------- names
def basename(name: str) -> str:
    """Last component of a display name (``a/b/c.txt`` -> ``c.txt``)."""
    return PurePosixPath(name.replace("\\", "/")).name


def suffix(name: str) -> str:
    """Lower-case extension with the dot (``.txt``), or ``""``."""
    return PurePosixPath(basename(name)).suffix.lower()


def stem(name: str) -> str:
    """File name without folder and extension."""
    return PurePosixPath(basename(name)).stem


def is_hidden(rel: str) -> bool:
    """Hidden or system entries (``.DS_Store``, ``__MACOSX/...``) that loaders ignore."""
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


_BAD_NAME_CHARS = re.compile(r"[^a-z0-9_]+")


def sanitize_name(text: str, prefix: str = "p") -> str:
    """A valid lower-case predicate name from free text (``Part-of`` -> ``part_of``)."""
    name = _BAD_NAME_CHARS.sub("_", str(text).strip().lower()).strip("_")
    if not name or name[0].isdigit():
        name = f"{prefix}_{name}" if name else prefix
    return name


def unique_names(names: Iterable[str]) -> list[str]:
    """Make names unique by appending ``_2``, ``_3``, ... to repeats (order kept)."""
    seen: set[str] = set()
    next_k: dict[str, int] = {}
    out = []
    for n in names:
        cand = n
        if cand in seen:
            k = next_k.get(n, 2)
            while f"{n}_{k}" in seen:
                k += 1
            cand, next_k[n] = f"{n}_{k}", k + 1
        seen.add(cand)
        out.append(cand)
    return out


# ---------------------------------------------------------------------- reading
def source_label(source: object) -> str:
    """A short name for a source: file stem, folder name or upload name (default dataset name)."""
    if isinstance(source, (str, os.PathLike)):
        p = Path(source)
        return p.name if p.is_dir() else p.stem
    if isinstance(source, tuple) and len(source) == 2 and isinstance(source[0], str):
        return stem(source[0])
    if isinstance(source, list):
        stems = {stem(item[0]) for item in source if isinstance(item, tuple) and item and isinstance(item[0], str)}
        if len(stems) == 1:
            return stems.pop()
    return "dataset"


def read_source(source: Source, limits: Limits | None = None,
                suffixes: Iterable[str] | None = None) -> FileSet:
    """Read a source into a file set, checking sizes; folders are read recursively.

    `suffixes` (lower-case, with dot) restricts which files of a folder are read; single files
    and uploads are always kept. Raises DataError for missing paths and files over the limits.
    """
    limits = limits or DEFAULT_LIMITS
    keep = None if suffixes is None else {s.lower() for s in suffixes}
    files: FileSet = {}
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                rel = f.relative_to(path).as_posix()
                if not f.is_file() or is_hidden(rel) or (keep is not None and f.suffix.lower() not in keep):
                    continue
                files[str(f)] = _read_file(f, limits)
                _check_totals(files, limits, str(path))
        elif path.is_file():
            files[str(path)] = _read_file(path, limits)
        else:
            raise DataError("no such file or folder", file=str(path))
    elif isinstance(source, tuple) and len(source) == 2 and isinstance(source[0], str):
        files[source[0]] = _check_bytes(source[0], source[1], limits)
    elif isinstance(source, Mapping):
        for name, data in source.items():
            files[str(name)] = _check_bytes(str(name), data, limits)
            _check_totals(files, limits, "upload")
    elif isinstance(source, (list, tuple)):
        for item in source:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                raise DataError(f"expected (filename, bytes) pairs, got {type(item).__name__}")
            files[item[0]] = _check_bytes(item[0], item[1], limits)
            _check_totals(files, limits, "upload")
    else:
        raise DataError(f"cannot read data from a {type(source).__name__}; give a path, "
                        f"(filename, bytes) or a list of those")
    return files


def _read_file(path: Path, limits: Limits) -> bytes:
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise DataError(f"file is {size:,} bytes, above the limit of {limits.max_file_bytes:,}",
                        file=str(path))
    try:
        return path.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read file: {e.strerror or e}", file=str(path)) from None


def _check_bytes(name: str, data: object, limits: Limits) -> bytes:
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise DataError(f"expected bytes, got {type(data).__name__}", file=name)
    if len(data) > limits.max_file_bytes:
        raise DataError(f"file is {len(data):,} bytes, above the limit of {limits.max_file_bytes:,}",
                        file=name)
    return data


def _check_totals(files: FileSet, limits: Limits, where: str) -> None:
    if len(files) > limits.max_members:
        raise DataError(f"more than {limits.max_members:,} files", file=where)
    total = sum(len(b) for b in files.values())
    if total > limits.max_total_bytes:
        raise DataError(f"files total {total:,} bytes, above the limit of {limits.max_total_bytes:,}",
                        file=where)


# ---------------------------------------------------------------------- text
def decode_text(data: bytes, file: str, allow_empty: bool = False) -> str:
    """UTF-8 text with a BOM removed and line endings normalised to ``\\n``.

    Raises DataError naming the line of the first undecodable byte, for NUL bytes (binary
    files) and, unless `allow_empty`, for files with nothing but whitespace.
    """
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DataError("file contains a NUL byte: it looks binary, not text",
                        file=file, line=data.count(b"\n", 0, nul) + 1)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        offset = e.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        raise DataError(f"byte 0x{data[offset]:02x} at offset {offset} is not UTF-8 text "
                        f"(save the file as UTF-8)", file=file,
                        line=data.count(b"\n", 0, offset) + 1) from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not allow_empty and not text.strip():
        raise DataError("file is empty", file=file, line=1)
    return text


def split_records(text: str, file: str, sep: str, quoted: bool) -> tuple[list[list[str]], np.ndarray]:
    """Split text into records of fields, skipping blank lines; returns records and 1-based lines.

    With `quoted`, double-quoted CSV fields (which may hold separators and newlines) are
    honoured; otherwise every line is one record split at `sep`.
    """
    if quoted and '"' in text:
        return _split_quoted(text, file, sep)
    lines = text.split("\n")
    keep = [i for i, line in enumerate(lines) if line.strip()]
    rows = [lines[i].split(sep) for i in keep]
    return rows, np.asarray(keep, dtype=np.int64) + 1


def allow_fields_of(length: int) -> None:
    """Raise the csv module's field-size limit (process-wide, 128 KiB by default) to `length`
    characters: a valid file may hold one long field, and no field is longer than its file. The
    limit is only ever raised, so concurrent readers never see it lowered under them."""
    with _FIELD_LIMIT_LOCK:
        if csv.field_size_limit() < length:
            csv.field_size_limit(length)


_FIELD_LIMIT_LOCK = threading.Lock()


def _split_quoted(text: str, file: str, sep: str) -> tuple[list[list[str]], np.ndarray]:
    allow_fields_of(len(text) + 1)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    rows: list[list[str]] = []
    starts: list[int] = []
    prev_end = 0
    try:
        for row in reader:
            if any(f.strip() for f in row):
                rows.append(row)
                starts.append(prev_end + 1)
            prev_end = reader.line_num
    except csv.Error as e:
        raise DataError(f"malformed CSV: {e}", file=file, line=prev_end + 1) from None
    return rows, np.asarray(starts, dtype=np.int64)


def first_record(rows: list[list[str]], lines: np.ndarray, file: str) -> list[str]:
    """The first record (header) of a split text; DataError when every record was blank."""
    if not rows:
        raise DataError("no data: every line is blank or holds only empty fields", file=file, line=1)
    return rows[0]


HEAD_BYTES = 65536
"""How much of a file's first non-blank line(s) format detection reads."""

_BLANK_RUN = re.compile(rb"(?:[\t-\r\x1c- ]++|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
                        rb"|\xe2\x81\x9f|\xe3\x80\x80)*+")
"""A run of whitespace, line breaks included: every character `str.strip` removes (``isspace``),
UTF-8 encoded (a test checks the list against Python's)."""
_LINE_END = re.compile(rb"\r\n?|\n")


def _line_starts(data: bytes):
    """(1-based line, start offset, text) of each line that is not blank to `str.strip`, lazily,
    however far the first one is: blank lines are skipped in one regex step, without a window."""
    pos = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    line = 1
    n = len(data)
    while pos < n:
        first = _BLANK_RUN.match(data, pos).end()  # the first character that is not whitespace
        if first >= n:
            return
        start = max(data.rfind(b"\n", pos, first), data.rfind(b"\r", pos, first)) + 1
        start = max(start, pos)
        line += _count_breaks(data, pos, start)
        end_m = _LINE_END.search(data, first)
        end = end_m.start() if end_m else n
        yield line, start, data[start:min(end, start + HEAD_BYTES)].decode("utf-8", "replace")
        if end_m is None:
            return
        line += 1
        pos = end_m.end()


def _count_breaks(data: bytes, start: int, end: int) -> int:
    """Line breaks in data[start:end] with ``\r\n``, ``\r`` and ``\n`` each counting once."""
    return data.count(b"\n", start, end) + data.count(b"\r", start, end) - data.count(b"\r\n", start, end)


def head_lines(data: bytes, n: int = 1) -> list[str]:
    """The first `n` non-blank lines of a file, decoded and split exactly as the loaders do.

    Detection uses this so that it sees the lines the parsers see: BOM removed, ``\r\n`` and
    ``\r`` line endings normalised, blank (whitespace-only) lines skipped however many there are
    (no fixed window: a file of 20 million blank lines then a triple is a triples file). Each line
    is cut at `HEAD_BYTES` bytes.
    """
    out: list[str] = []
    if n <= 0:
        return out
    for _, _, text in _line_starts(data):
        out.append(text)
        if len(out) >= n:
            break
    return out


def first_line_number(data: bytes) -> int:
    """1-based line of the first non-blank line of a file, as the parsers count (1 if there is none)."""
    return next((line for line, _, _ in _line_starts(data)), 1)


def field_counts(rows: list[list[str]]) -> np.ndarray:
    """Number of fields of each record."""
    return np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
