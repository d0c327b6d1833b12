"""Issue 18: bad inputs that used to crash, hang, misread or eat memory (causes 1, 4-8, BOM).

Each test names its cause; the properties generate the inputs instead of replaying one reproducer.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from xcore.data.io import load, parse_manifest
from xcore.errors import DataError, XcoreError
from xcore.logic.parser import parse_rules_file

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_data"


def error_of(fn, *args, **kwargs) -> DataError:
    """The DataError `fn` raises (any other outcome fails the test)."""
    with pytest.raises(DataError) as info:
        fn(*args, **kwargs)
    return info.value


# ------------------------------------------------------------------ cause 1: only empty cells
@settings(derandomize=True, max_examples=40, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), blank_lines=st.booleans(),
       name=st.sampled_from(["t.csv", "t.tsv", "t.data"]))
def test_files_of_empty_quoted_cells_are_data_errors(rows: int, cols: int, blank_lines: bool, name: str) -> None:
    """A CSV whose cells are all ``""`` is an empty file, not an IndexError (cause 1)."""
    sep = "\t" if name.endswith(".tsv") else ","
    assume(not (sep == "\t" and cols == 3))  # three tab-separated fields are triples ('""' is a constant)
    line = sep.join(['""'] * cols)
    text = ("\n" if blank_lines else "").join(line + "\n" for _ in range(rows))
    err = error_of(load, (name, text.encode()))
    assert err.file == name and err.line is not None


@pytest.mark.parametrize("data", [b'""', b'"",""\n"",""\n', b'\n""\n\n'])
def test_long_csv_of_empty_cells_is_a_data_error(data: bytes) -> None:
    """The same for a forced long CSV (cause 1)."""
    err = error_of(load, ("facts.csv", data), fmt="long_csv")
    assert err.file == "facts.csv" and err.line is not None


# ------------------------------------------------------------------ cause 4: YAML merge keys
def _merge_bomb(levels: int) -> bytes:
    lines = ["a0: &a0 {x: 1, y: 2}"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i}\n  <<: [*a{i - 1}, *a{i - 1}]\n  k{i}: 1")
    lines.append(f"predicates: [{{name: p, arity: 1}}]\nname: *a{levels}")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("levels", [1, 26, 60])
def test_yaml_merge_keys_are_refused_quickly(levels: int) -> None:
    """Merge keys (``<<``) are refused before being expanded, however deep (cause 4)."""
    t0 = time.perf_counter()
    err = error_of(parse_manifest, _merge_bomb(levels), "manifest.yaml")
    assert time.perf_counter() - t0 < 2.0
    assert "merge" in err.problem and err.file == "manifest.yaml" and err.line is not None


def test_yaml_without_merge_keys_still_loads() -> None:
    """Plain aliases still work (the sample manifests use none, but they are valid YAML)."""
    m = parse_manifest(b"types: &t [person]\npredicates:\n  - {name: p, arity: 1, types: *t}\n",
                       "manifest.yaml")
    assert m.predicates[0].types == ("person",)


# ------------------------------------------------------------------ cause 5: Prolog arity
@pytest.mark.parametrize("n,sep", [(65, ","), (100_000, ", "), (5000, ",")])
def test_prolog_arity_is_capped_before_building(n: int, sep: str) -> None:
    """A fact with more than 64 arguments is refused at once, naming the line (cause 5)."""
    fact = "p(" + sep.join(["a"] * n) + ")."
    t0 = time.perf_counter()
    err = error_of(load, ("f.b", f"q(b).\n{fact}\n".encode()))
    assert time.perf_counter() - t0 < 2.0
    assert err.line == 2 and ("64 arguments" in err.problem or "characters" in err.problem)


def test_prolog_compound_arity_and_term_length_are_capped() -> None:
    """Compound arguments (slow path) and huge terms are refused too (cause 5)."""
    fact = "p(" + ",".join(["f(a)"] * 70) + ")."
    assert error_of(load, ("f.b", fact.encode())).line == 1
    huge = "p('" + "x" * 200_000 + "')."
    t0 = time.perf_counter()
    err = error_of(load, ("f.b", f"q(a).\n\n{huge}\n".encode()))
    assert err.line == 3 and time.perf_counter() - t0 < 2.0


def test_prolog_64_arguments_still_load() -> None:
    """The cap is 64: exactly 64 arguments load."""
    ds = load(("f.b", ("p(" + ",".join(f"c{i}" for i in range(64)) + ").").encode()))
    assert ds.predicate("p").arity == 64


# ------------------------------------------------------------------ cause 6: directives
def test_unterminated_directive_does_not_swallow_the_next_fact() -> None:
    """``:- foo`` without its ``.`` is an error with its line, not a lost fact (cause 6)."""
    err = error_of(load, ("f.pl", b"r(c).\n:- foo\np(a).\nq(b).\n"))
    assert err.line == 2 and "directive" in err.problem


def test_trains_with_a_directive_missing_its_dot() -> None:
    """Replacing a fact of the trains by ``:- short(car_12)`` is reported, not silently dropped."""
    lines = (SAMPLES / "trains_michalski10" / "train.b").read_text().split("\n")
    i = next(k for k, t in enumerate(lines) if t.startswith("short(car_12)."))
    lines[i] = ":- short(car_12)"
    files = {f"train{ext}": (SAMPLES / "trains_michalski10" / f"train{ext}").read_bytes() for ext in (".f", ".n")}
    files["train.b"] = "\n".join(lines).encode()
    err = error_of(load, files)
    assert err.file == "train.b" and err.line == i + 1


def test_multi_line_directives_still_load() -> None:
    """A directive over several lines (ending in its own ``.``) is still skipped."""
    ds = load(("f.pl", b":- modeh(1,\n   p(+thing)).\n:- set(i,\n  2).\np(a).\nq(b).\n"))
    assert sorted(p.name for p in ds.predicates) == ["p", "q"]
    assert ds.predicate("p").types == ("thing",)


# ------------------------------------------------------------------ causes 7, 8: detection
FRIENDS = b"predicate,arg1,arg2,value,partition\nfriends,anna,bob,1,obs\nsmokes,anna,,1,obs\n"


@settings(derandomize=True, max_examples=30, deadline=None)
@given(lead=st.lists(st.sampled_from(["\n", "\r\n", "\r", "  \n", "\t\n"]), min_size=1, max_size=3),
       bom=st.booleans())
def test_long_csv_with_leading_blank_lines_is_a_long_csv(lead: list[str], bom: bool) -> None:
    """Detection skips the blank lines the parser skips (cause 7)."""
    data = (b"\xef\xbb\xbf" if bom else b"") + "".join(lead).encode() + FRIENDS
    ds = load(("friends.csv", data))
    assert sorted(p.name for p in ds.predicates) == ["friends", "smokes"]


@settings(derandomize=True, max_examples=30, deadline=None)
@given(eol=st.sampled_from(["\r", "\r\n", "\n"]), name=st.sampled_from(["kg.tsv", "kg.txt"]))
def test_triples_with_any_line_ending_are_triples(eol: str, name: str) -> None:
    """CR-only line endings do not turn triples into a table (cause 8)."""
    data = eol.join(["alice\tknows\tbob", "bob\tknows\tcarol", "carol\tlikes\talice"]).encode()
    ds = load((name, data))
    assert sorted(p.name for p in ds.predicates) == ["knows", "likes"]


@pytest.mark.parametrize("name", ["kg.tsv", "kg.txt"])
def test_bad_triple_line_with_cr_endings_is_an_error(name: str) -> None:
    """A bad line in CR-only triples is an error with its line, whatever the extension (cause 8)."""
    err = error_of(load, (name, b"alice\tknows\tbob\rx\tr\t\rbob\tknows\tcarol\r"))
    assert err.file == name and err.line == 2


# ------------------------------------------------------------------ extras: BOM in rules
def test_rules_file_with_a_bom(tmp_path: Path) -> None:
    """A UTF-8 BOM is stripped from rules files as from data files."""
    path = tmp_path / "model.psl"
    path.write_bytes(b"\xef\xbb\xbf1.0: friends(A, B) & smokes(A) -> smokes(B) ^2\n")
    rules = parse_rules_file(path)
    assert len(rules) == 1


def test_every_error_is_an_xcore_error_on_odd_bytes() -> None:
    """Smoke: odd inputs give xcore errors only."""
    for name, data in [("t.csv", b'"'), ("t.csv", b'\n\n,\n'), ("k.tsv", b"\r\r\r"), ("f.b", b":-")]:
        with pytest.raises(XcoreError):
            load((name, data))


# ------------------------------------------------------------------ cause 9: foreign errors, zips
def test_foreign_reader_errors_become_data_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """An Arrow failure (e.g. out of memory) while loading is a DataError naming the file (cause 9)."""
    import pyarrow as pa

    from xcore.data.io import columnar

    def failing(*args, **kwargs):
        raise pa.ArrowMemoryError("malloc of size 1234 failed")

    monkeypatch.setattr(columnar.pacsv, "read_csv", failing)
    err = error_of(load, ("kg.txt", b"a\tr\tb\nb\tr\tc\n"))
    assert err.file == "kg.txt" and "ArrowMemoryError" in err.problem


def test_zip_expanding_beyond_the_total_limit_is_refused() -> None:
    """A small zip whose members expand beyond the total limit is refused while reading (cause 9)."""
    import io
    import zipfile

    from xcore.data.io import Limits

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i in range(3):
            zf.writestr(f"d/part{i}.txt", b"a\tr\tb\n" * 200_000)
    data = buf.getvalue()
    assert len(data) < 100_000
    err = error_of(load, ("kg.zip", data), limits=Limits(max_file_bytes=2_000_000, max_total_bytes=3_000_000))
    assert "in total" in err.problem and err.file == "kg.zip"


def test_zip_of_a_large_triples_file_loads_quickly() -> None:
    """A ~60 KB zip of 6 MiB of triples loads in seconds (was 16.7 s for 45 MiB) (cause 9)."""
    import io
    import zipfile

    lines = "\n".join(f"e{i % 5000}\tr{i % 7}\te{(i * 7) % 5001}" for i in range(300_000)).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("kg/facts.txt", lines)
    t0 = time.perf_counter()
    ds = load(("kg.zip", buf.getvalue()))
    assert time.perf_counter() - t0 < 10.0
    assert ds.n_atoms() > 0 and len(ds.predicates) == 7
