"""`read_psl_file` (columnar, Arrow kernels) against the line-by-line reader it replaced (issue 12).

The reference below is the former implementation: decode, split lines, skip whitespace-only lines,
split at tabs, strip fields, check the field count, pass values as text to the dataset's checks.
Both go through the same dataset validation; they must give the same tables or the same error
(file, line and message) on hand-picked edge cases and on random files.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import atom_frame
from xcore.data.io.psl_folder import read_psl_file
from xcore.data.schema import Predicate, Schema
from xcore.errors import DataError

FILE = "p_obs.txt"


def reference_frame(data: bytes, file: str, p: Predicate) -> pd.DataFrame:
    """The former line-by-line reader."""
    if b"\x00" in data:
        raise DataError("NUL", file=FILE)
    text = data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise DataError("file is empty", file=FILE, line=1)
    keep = [(i + 1, line.split("\t")) for i, line in enumerate(text.split("\n")) if line.strip()]
    k = p.arity
    for line, fields in keep:
        if len(fields) not in (k, k + 1):
            raise DataError(f"{p.name} has arity {k}: expected {k} tab-separated arguments and an "
                            f"optional truth value, found {len(fields)} fields", file=FILE, line=line)
    lines = np.array([line for line, _ in keep], dtype=np.int64)
    args = [pd.Series([f[j].strip() for _, f in keep], dtype=object) for j in range(k)]
    has_value = any(len(f) == k + 1 for _, f in keep)
    values = np.array([f[k].strip() if len(f) > k else "" for _, f in keep], dtype=object) if has_value else None
    return atom_frame(args, values, FILE, lines)


def outcome(reader, data: bytes, arity: int):
    """The validated observations of predicate p (sorted rows), or the DataError's (line, problem)."""
    p = Predicate("p", arity)
    try:
        frame = reader(data, FILE, p)
        ds = RelationalDataset(Schema.of([p]), {"p": {"obs": frame}})
    except DataError as e:
        return ("error", e.line, e.problem)
    t = ds.table("p", "obs")
    return ("ok", sorted(map(tuple, t[[*p.columns, "value"]].astype(object).to_numpy().tolist())))


CASES = [
    b"a\tb\t0.5\nc\td\n",                      # values on some lines only (k and k+1 fields)
    b"\xef\xbb\xbfa\tb\t1\r\nc\td\t0\r\n",     # BOM and CRLF
    b"a\tb\t1\rc\td\t0.25",                    # old Mac line ends, no final line break
    b"\n \t \n a \t b \t 0.5 \n\n",            # blank and tab-only lines, spaces around fields
    b'"a"\t"b c"\t1\n',                        # quotes are ordinary characters
    b"a\xc2\xa0\tb\xe3\x80\x80\t1e-3\n",       # Unicode spaces are stripped (U+00A0, U+3000)
    b"a\tb\t\nc\td\t1\n",                      # an empty value field: the default
    b"a\tb\tnan\n",                            # 'nan' is not a truth value
    b"a\tb\t+.5\nc\td\t5e-1\n",                # number spellings
    b"a\tb\t0.5\nb\tc\tyes\n",                 # text value: error on its line
    b"a\tb\n\nc\n",                            # too few fields, after a blank line
    b"a\tb\t1\t2\n",                           # too many fields
    b"a\tb\t1\na\tb\t0\n",                     # a duplicate atom with another value
    b"a\t\t1\n",                               # empty argument
    b"   \n\t\n",                              # nothing but blanks
]


@pytest.mark.parametrize("data", CASES)
def test_columnar_reader_matches_the_line_reader(data):
    assert outcome(read_psl_file, data, 2) == outcome(reference_frame, data, 2)


def test_arity_zero_and_one_files():
    for data, k in ((b"0.5\n", 0), (b"\n1\n", 0), (b"x\ny\t0.2\n", 1), (b"x\t0.2\t1\n", 1)):
        assert outcome(read_psl_file, data, k) == outcome(reference_frame, data, k), data


def test_values_are_parsed_to_float_columns():
    frame = read_psl_file(b"a\tb\t0.25\nc\td\n", FILE, Predicate("p", 2))
    assert frame["value"].dtype == np.float64 and frame["value"].iloc[0] == 0.25 and np.isnan(frame["value"].iloc[1])
    assert frame["a0"].tolist() == ["a", "c"] and frame["_line"].tolist() == [1, 2]


FIELD = st.sampled_from(["a", "b", "c", " a", "b ", "\u00a0c", "0", "1", "0.5", " 0.5", "x y", '"q"', "", "1.5",
                         "nan", "-0.1"])
LINE = st.lists(FIELD, min_size=0, max_size=4).map("\t".join)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=8), ending=st.sampled_from(["\n", "\r\n", "\r"]),
       bom=st.booleans(), arity=st.integers(1, 3))
def test_random_files_read_alike(lines, ending, bom, arity):
    data = ("\ufeff" if bom else "").encode() + ending.join(lines).encode("utf-8")
    assert outcome(read_psl_file, data, arity) == outcome(reference_frame, data, arity)
