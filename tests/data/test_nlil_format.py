"""NLIL's data folders (pred.txt + label<TAB>atom files) load, and bad lines name file and line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.data import load
from xcore.data.shared import shared_data_dir
from xcore.errors import DataError

PRED = b"zero(int)\neven(int)\nsucc(int,int)\n"


def _facts() -> bytes:
    lines = [f"{int(i == 0)}\tzero({i})" for i in range(4)] + [f"{int(i % 2 == 0)}\teven({i})" for i in range(4)]
    lines += [f"{int(j == i + 1)}\tsucc({i},{j})" for i in range(4) for j in range(4)]
    return ("\n".join(lines) + "\n").encode()


def test_folder_loads_with_even_as_head():
    files = [("t/pred.txt", PRED), ("t/fact.txt", _facts()), ("t/test.txt", _facts())]
    ds = load(files)
    assert ds.predicate("even").closed is False and ds.predicate("succ").closed
    assert len(ds.targets("even")) == 4 and ds.truth("even")["value"].sum() == 2
    assert len(ds.observations("even")) == 0  # test atoms are not also observed
    assert len(ds.observations("succ")) == 16 and ds.observations("succ")["value"].sum() == 3
    assert load(files, heads="zero").predicate("zero").closed is False


def test_bad_lines_name_file_and_line():
    with pytest.raises(DataError) as e:
        load([("t/pred.txt", PRED), ("t/fact.txt", b"1\tzero(0)\n1\tsucc(0)\n")])
    assert e.value.file == "t/fact.txt" and e.value.line == 2
    with pytest.raises(DataError) as e:
        load([("t/pred.txt", PRED), ("t/fact.txt", b"1\tzero(0)\n1 odd(3)\n")], fmt="nlil")
    assert e.value.line == 2


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("01\t\n(),zeroevnsuc 23x")), max_size=80))
def test_fuzzed_fact_files_load_or_name_the_line(text):
    try:
        load([("t/pred.txt", PRED), ("t/fact.txt", text.encode())], fmt="nlil")
    except DataError as e:
        assert e.file in ("t/fact.txt", "t/pred.txt")


@pytest.mark.slow
def test_shared_evensucc_loads_and_m_nlil_applies():
    folder = shared_data_dir() / "nlil_evensucc10"
    if not folder.is_dir():
        pytest.skip("shared data not present")
    from xcore.methods import REGISTRY

    ds = load(folder)
    assert [p.name for p in ds.predicates if not p.closed] == ["even"]
    assert REGISTRY["nlil"].applicable(ds) is None
