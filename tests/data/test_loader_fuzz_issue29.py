"""The loader cases of issue 29's fuzz campaign: an unusable separator is a clear `DataError`, and a
valid CSV with one 10 MB line (long or table layout, quoted or not) loads instead of failing with
pyarrow's "straddles two block boundaries" or the csv module's 128 KiB field limit."""

from __future__ import annotations

import pytest

from xcore.data import load
from xcore.data.io.columnar import BLOCK_BYTES, block_bytes
from xcore.errors import DataError

TABLE = b"a,b,label\n1,2,yes\n3,4,no\n"
BIG = "x" * 10_000_000


@pytest.mark.parametrize("sep", ["", ";;", "\n", "\r", '"', "\u00e9", 3])
def test_an_unusable_separator_is_a_data_error_saying_what_it_must_be(sep):
    with pytest.raises(DataError, match=r"t\.csv: the separator \(option sep\) must be one ASCII character") as info:
        load(("t.csv", TABLE), fmt="tabular", sep=sep)
    assert repr(sep) in str(info.value)


def test_a_usable_separator_still_reads_the_table():
    ds = load(("t.csv", TABLE.replace(b",", b";")), fmt="tabular", sep=";")
    assert ds.tabular.shape == (2, 3) and list(ds.tabular["label"]) == ["yes", "no"]


def test_the_block_grows_to_hold_the_longest_record():
    assert block_bytes(10) == BLOCK_BYTES
    assert block_bytes(10_000_000) >= 2 * 10_000_000 and block_bytes(10_000_000) & (block_bytes(10_000_000) - 1) == 0


@pytest.mark.parametrize("case", ["unquoted", *(pytest.param(c, marks=pytest.mark.slow) for c in
                                              ("quoted", "quoted-multiline", "quoted-header", "careful-path"))])
def test_a_table_with_one_10_mb_line_loads(case):
    rows = b"1,2,yes\n" * 50
    if case == "unquoted":
        data = b"a,b,label\n" + rows + f"{BIG},4,no\n".encode() + b"3,4,no\n"
    elif case == "quoted":
        data = b"a,b,label\n" + rows + f'"{BIG}",4,no\n'.encode() + b"3,4,no\n"
    elif case == "quoted-multiline":
        data = b"a,b,label\n" + rows + f'"{BIG[:5_000_000]}\n{BIG[:5_000_000]}",4,no\n'.encode()
    elif case == "quoted-header":
        data = f'"a{BIG}",b,label\n'.encode() + rows
    else:  # a quote inside an unquoted field sends the file to the csv module (strict rules, exact lines)
        data = b'a,b,label\nx"y,2,yes\n' + f'"{BIG}",4,no\n'.encode()
    ds = load(("t.csv", data), fmt="tabular")
    assert ds.tabular.shape[1] == 3
    if case == "quoted-header":
        assert len(ds.tabular.columns[0]) == 10_000_001 and len(ds.tabular) == 50
        return
    long_cells = [v for col in ds.tabular.columns for v in ds.tabular[col].astype(str) if len(v) >= 5_000_000]
    assert len(long_cells) == 1
    assert len(long_cells[0]) in (10_000_000, 10_000_001)  # the multiline cell keeps its line break
    assert ds.tabular["label"].iloc[-1] == "no"


@pytest.mark.slow
@pytest.mark.parametrize("quoted", [False, True])
def test_a_long_csv_with_one_10_mb_line_loads(quoted):
    arg = f'"{BIG}"' if quoted else BIG
    data = (f"predicate,arg1,value,partition\nknows,alice,1,obs\nknows,{arg},1,obs\nknows,bob,0,obs\n").encode()
    ds = load(("facts.csv", data), fmt="long_csv")
    obs = ds.observations("knows") if hasattr(ds, "observations") else None
    assert ds.summary().set_index("predicate").loc["knows", "observations"] == 3
    if obs is not None:
        assert max(len(str(v)) for v in obs.iloc[:, 0]) == 10_000_000


@pytest.mark.slow
def test_triples_with_one_10_mb_line_load():
    data = f"alice\tknows\tbob\n{BIG}\tknows\tbob\n".encode()
    ds = load(("kg.tsv", data), fmt="triples")
    assert ds.summary().set_index("predicate").loc["knows", "observations"] == 2
