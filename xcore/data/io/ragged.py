"""Unquoted delimited text as ragged records (PSL predicate files: arguments, optional value), read with
Arrow kernels: no Python string per line or field."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from xcore.data.io.columnar import POOL, WHITESPACE, check_text, has_spaces, normalised_bytes


@dataclass
class RaggedRecords:
    """Non-blank lines of unquoted delimited text split into fields; records may differ in width."""

    fields: pa.Array
    """Every field of every record, in order, stripped of surrounding whitespace (large_string)."""
    starts: np.ndarray
    """(n + 1,) int64: record i's fields are ``fields[starts[i]:starts[i + 1]]``."""
    lines: np.ndarray
    """1-based line of each record (int64)."""

    @property
    def counts(self) -> np.ndarray:
        """Number of fields of each record."""
        return np.diff(self.starts)

    def field(self, j: int, rows: np.ndarray | None = None) -> pa.Array:
        """Field `j` of every record (or of the records `rows`; each must have more than j fields)."""
        at = self.starts[:-1] + j if rows is None else self.starts[:-1][rows] + j
        return self.fields.take(pa.array(at))


def read_ragged(data: bytes, file: str, sep: str) -> RaggedRecords:
    """Unquoted delimited text as ragged records (PSL predicate files: arguments, optional value).

    The same checks as `decode_text` (NUL bytes, UTF-8, BOM, ``\\r``/``\\r\\n`` endings, empty
    file); lines holding only whitespace are skipped as `split_records` skips them; quotes are
    ordinary characters. All in Arrow kernels: no Python string per line or field.
    """
    check_text(data, file)  # NUL, UTF-8, empty: decode_text's errors, without a decoded copy
    data = normalised_bytes(data)
    spaces = has_spaces(data, sep)
    text = pa.array([data], pa.large_binary()).cast(pa.large_string(), safe=False)
    lines = pc.split_pattern(text, "\n").flatten()
    del text
    if spaces:
        blank = pc.equal(pc.utf8_trim(lines, WHITESPACE, memory_pool=POOL), "", memory_pool=POOL)
    else:  # without any whitespace but the separator, a blank line is an empty one or separators only
        blank = pc.equal(pc.utf8_trim(lines, sep, memory_pool=POOL), "", memory_pool=POOL) \
            if sep in WHITESPACE else pc.equal(pc.utf8_length(lines), 0)
    keep = pc.invert(blank).to_numpy(zero_copy_only=False)
    numbers = np.flatnonzero(keep).astype(np.int64) + 1
    lines = lines.filter(pa.array(keep))
    split = pc.split_pattern(lines, sep, memory_pool=POOL)
    del lines
    offsets = split.offsets.to_numpy().astype(np.int64)
    flat = split.flatten()
    if spaces:
        flat = pc.utf8_trim(flat, WHITESPACE, memory_pool=POOL)
    return RaggedRecords(flat, offsets - offsets[0], numbers)
