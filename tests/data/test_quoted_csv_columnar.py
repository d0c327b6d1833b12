"""Quoted CSV read columnar (pyarrow + a vectorised quote scan) against the csv-module reference.

The reference is the careful path the loaders used for every quoted file before: Python's csv
module (strict) via `split_records`. For random quoted content (separators, ``""`` escapes, line
breaks inside fields, CRLF / CR-only endings, BOM, blank and all-empty records, ragged rows and
injected quoting errors) both must give the same records, the same physical lines and the same
errors, and well-formed files must never touch the csv module.
"""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xcore.data.io import columnar, ragged
from xcore.data.io.files import decode_text, split_records
from xcore.data.io.quoted_layout import quoted_layout
from xcore.errors import DataError

CHARS = ["a", "b", "z", " ", ",", ";", "\t", '"', "\n", "\r", "é", "\u3000", "?"]
BLANKS = ["", "   ", '""', '"",""', ",,", '" "', "\t"]


def reference(data: bytes, sep: str) -> tuple:
    """What the csv-module path gives: header, lines and cells, or the first bad record, or the error."""
    try:
        rows, lines = split_records(decode_text(data, "t.csv"), "t.csv", sep, quoted=True)
    except DataError as e:
        return ("error", str(e), e.line)
    if not rows:
        return ("empty",)
    width = len(rows[0])
    for row, line in zip(rows, lines):
        if len(row) != width:
            return ("bad", [f.strip() for f in rows[0]], int(lines[0]), (int(line), len(row)))
    return ("ok", [[f.strip() for f in row] for row in rows], lines.tolist())


def columnar_result(data: bytes, sep: str, encoded: bool) -> tuple:
    """The same summary of `read_records` / `read_encoded_records`."""
    try:
        rec = (columnar.read_encoded_records if encoded else columnar.read_records)(data, "t.csv", sep)
    except DataError as e:
        return ("error", str(e), e.line)
    if not rec.width:
        return ("empty",)
    if rec.bad is not None:
        return ("bad", rec.row(0), rec.first_line(), rec.bad)
    cols = []
    for c in rec.columns:
        array = c.combine_chunks()
        if hasattr(array, "dictionary"):
            array = array.dictionary.take(array.indices)
        cols.append(array.to_pylist())
    return ("ok", [list(r) for r in zip(*cols)], rec.lines.tolist())


def _field(draw, sep: str, always_quote: bool) -> tuple[str, bool]:
    text = "".join(draw(st.lists(st.sampled_from(CHARS), max_size=5)))
    special = any(ch in text for ch in (sep, '"', "\n", "\r"))
    if special or always_quote or draw(st.booleans()):
        return '"' + text.replace('"', '""') + '"', True
    return text, False


@st.composite
def quoted_files(draw) -> tuple[bytes, str, bool]:
    """A CSV with quoted cells; returns bytes, separator and whether it is well-formed quoting."""
    sep = draw(st.sampled_from([",", ";", "\t"]))
    width = draw(st.integers(1, 4))
    always = draw(st.booleans())
    clean = True
    records = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["row"] * 6 + ["blank", "ragged", "error"]))
        if kind == "blank":
            records.append(draw(st.sampled_from(BLANKS)).replace(",", sep))
            continue
        n = width + (draw(st.sampled_from([-1, 1])) if kind == "ragged" else 0)
        cells = [_field(draw, sep, always)[0] for _ in range(max(n, 1))]
        if kind == "error":  # a quote the strict csv module rejects or reads literally
            clean = False
            j = draw(st.integers(0, len(cells) - 1))
            cells[j] = draw(st.sampled_from(['"x"y', ' "x"', 'x"y', '"open', '"a""b"c']))
        records.append(sep.join(cells))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = eol.join(records) + (eol if draw(st.booleans()) else "")
    if not any('"' in r for r in records):
        text = '"h"' + eol + text
    bom = "\ufeff" if draw(st.booleans()) else ""
    return (bom + text).encode(), sep, clean


@pytest.mark.slow
@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(quoted_files(), st.booleans(), st.sampled_from([None, 7]))
def test_columnar_quoted_csv_equals_csv_module(case, encoded, scan_block) -> None:
    data, sep, clean = case
    calls = []
    real = columnar.split_records

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    columnar.split_records = counting
    old_scan = columnar.quoted_layout.__defaults__
    try:
        if scan_block:  # scan a few bytes at a time: the parity carried across blocks
            columnar.quoted_layout.__defaults__ = (scan_block,)
        got = columnar_result(data, sep, encoded)
    finally:
        columnar.split_records = real
        columnar.quoted_layout.__defaults__ = old_scan
    want = reference(data, sep)
    assert got == want, (data, sep)
    if clean:
        assert not calls, f"a well-formed quoted file went through the csv module: {data!r}"


def test_happy_path_never_uses_the_csv_module(monkeypatch) -> None:
    """Quoted cells with separators, escapes, CRLF and line breaks are read by pyarrow alone."""
    def refuse(*args, **kwargs):
        raise AssertionError("csv-module path used")

    monkeypatch.setattr(columnar, "split_records", refuse)
    data = b'\xef\xbb\xbf"name","note"\r\n"a, b","say ""hi"""\r\n\r\n"c","two\r\nlines"\r\n"",""\r\n"d","e"\r\n'
    rec = columnar.read_records(data, "t.csv", ",")
    assert rec.row(0) == ["name", "note"]
    assert [c.to_pylist() for c in rec.drop_first().columns] == [["a, b", "c", "d"], ['say "hi"', "two\nlines", "e"]]
    assert rec.lines.tolist() == [1, 2, 4, 7]
    enc = columnar.read_encoded_records(data, "t.csv", ",")
    assert enc.lines.tolist() == [1, 2, 4, 7]


@pytest.mark.parametrize("bad, line", [
    (b'"x"y,1\n', 4),          # text after a closing quote
    (b'"open,1\n', 4),         # unterminated quoted field
    (b'"a","b","c"\n', 4),     # three fields where the header has two
])
def test_errors_name_the_physical_line_after_multiline_fields(bad: bytes, line: int) -> None:
    """Line 4 is the fourth physical line: a field above spans two lines (CR-only inside)."""
    from xcore.data.io.long_csv import long_csv_from_bytes

    data = b'predicate,arg1\n"p","multi\rline"\n' + bad
    with pytest.raises(DataError) as err:
        long_csv_from_bytes(data, "f.csv", "f")
    assert err.value.line == line and "f.csv" in str(err.value)


def test_layout_rejects_quotes_strict_csv_does_not_place() -> None:
    for text in (b'a"b\n', b'"a"b\n', b' "a"\n', b'"a\n', b'"a"""\n"'):
        assert quoted_layout(text, b",") is None, text
    layout = quoted_layout(b'"a\n\nb",c\n\n""\nd', b",")
    assert layout.lines.tolist() == [1, 5, 6] and layout.multiline


def test_read_ragged_holds_no_decoded_copy_of_the_file() -> None:
    """UTF-8 is checked a block at a time: the Python heap never holds the file as one string."""
    data = ("é" + "x" * 200 + "\t1.0\n").encode() * 60_000  # 12 MB
    tracemalloc.start()
    try:
        rec = ragged.read_ragged(data, "p.txt", "\t")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rec.lines) == 60_000 and rec.counts.max() == 2
    assert peak < len(data) / 3, f"peak Python heap {peak:,} B for a {len(data):,} B file"
    with pytest.raises(DataError) as err:
        ragged.read_ragged(data[:-3] + b"\xff\n", "p.txt", "\t")
    assert err.value.line == 60_000


def test_tabular_text_columns_are_categorical() -> None:
    """Text columns of ``ds.tabular`` hold a small code per cell, not a Python object per cell;
    values, missing cells and the written CSV stay as they were."""
    import io

    import pandas as pd

    from xcore.data.io.tabular import tabular_from_bytes

    rows = ['"colour","size, cm","label"'] + [f'"{c}",{k},"{y}"' for c, k, y in
                                             zip(["red", "blue", "?", "", 'say ""hi""'] * 400, range(2000), ["a", "b"] * 1000)]
    ds = tabular_from_bytes("\n".join(rows).encode(), "t.csv", "t")
    colour = ds.tabular["colour"]
    assert isinstance(colour.dtype, pd.CategoricalDtype) and isinstance(ds.tabular["label"].dtype, pd.CategoricalDtype)
    assert colour.memory_usage(deep=True, index=False) < 3 * len(colour) + 1000
    assert colour.iloc[:5].tolist()[:2] == ["red", "blue"] and colour.iloc[2:4].isna().all()
    assert colour.iloc[4] == 'say "hi"' and ds.tabular["size_cm"].dtype.kind == "i"
    assert (colour == "red").sum() == 400 and colour.isna().sum() == 800
    buf = io.StringIO()
    ds.tabular.to_csv(buf, index=False)
    assert buf.getvalue().splitlines()[1] == "red,0,a"


@pytest.mark.parametrize("bad_at", [None, 1500])
def test_lines_stay_exact_across_reader_blocks(monkeypatch, bad_at) -> None:
    """pyarrow reads in blocks; multi-line records, skipped blank records of another width and a
    ragged row far into the file keep their physical lines (small blocks: many boundaries)."""
    import random

    rnd = random.Random(7)
    records = ['"id","text","n"']
    for i in range(2000):
        kind = rnd.random()
        if kind < 0.1:
            records.append(rnd.choice(["", "   ", '""', '"",""', '" ",\t']))
        elif i == bad_at:
            records.append(f'"{i}","short"')
        else:
            text = rnd.choice(["plain", "two\nlines", 'say ""x""', "a, b", "\r\nlead", "three\n\nbreaks"])
            records.append(f'"{i}","{text}",{rnd.randint(0, 9)}')
    data = "\r\n".join(records).encode()
    want = reference(data, ",")
    monkeypatch.setattr(columnar, "BLOCK_BYTES", 512)

    def refuse(*args, **kwargs):
        raise AssertionError("csv-module path used")

    monkeypatch.setattr(columnar, "split_records", refuse)
    assert columnar_result(data, ",", encoded=False) == want
    assert columnar_result(data, ",", encoded=True) == want
    assert want[0] == ("ok" if bad_at is None else "bad")
