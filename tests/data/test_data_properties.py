"""Property tests of the data loaders: malformed input only ever raises DataError, and
writing then loading a dataset gives the same dataset back (for every format with a writer)."""

from __future__ import annotations

import csv
import io
import math
import zipfile

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xcore.data as xd
from xcore.data import io as xio
from xcore.data.dataset import RelationalDataset
from xcore.data.io import Limits
from xcore.data.schema import PARTITIONS, Predicate, Schema
from xcore.errors import DataError

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROUND = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SMALL = Limits(max_file_bytes=2_000_000, max_total_bytes=4_000_000, max_members=50)


# ---------------------------------------------------------------------- helpers
def only_data_errors(fn, *args, **kwargs) -> RelationalDataset | None:
    """Run a loader; DataError is fine, any other exception fails the test."""
    try:
        ds = fn(*args, **kwargs)
    except DataError as e:
        assert str(e)  # the message renders
        return None
    assert isinstance(ds, RelationalDataset)
    return ds


def atoms(ds: RelationalDataset, pred: str, part: str) -> set[tuple]:
    p = ds.predicate(pred)
    t = ds.table(pred, part)
    return {(*map(str, r[:-1]), None if math.isnan(r[-1]) else float(r[-1]))
            for r in t[[*p.columns, "value"]].itertuples(index=False)}


def content(ds: RelationalDataset, key=lambda p: (p.arity, p.types, p.closed, p.explainable, p.template)) -> dict:
    return {p.name: (key(p), {part: atoms(ds, p.name, part) for part in PARTITIONS}) for p in ds.predicates}


def make_zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


# ---------------------------------------------------------------------- valid seeds and mutations
MANIFEST = b"""name: tiny
predicates:
  - {name: knows, arity: 2, types: [person, person], closed: false, template: "{0} knows {1}"}
  - {name: smokes, arity: 1}
"""
PSL_OBS = b"a\tb\t1.0\nb\tc\t0.5\nc\td\n"
PSL_TARGETS = b"a\tc\nd\ta\t0.3\n"
LONG = b"predicate,arg1,arg2,value,partition\nknows,a,b,1,obs\nsmokes,a,,0.5,\nknows,a,c,,targets\nknows,a,c,1,truth\n"
PROLOG = b"% c\n:- modeb(1,p(+t)).\np(a). q(a,'B c').\nr([x,y], -1.5).\n:- set(i,\n 2).\n"
TRIPLES = b"a\tr\tb\nb\ts\tc\nc\tr\ta\n"
TABLE = b'name,age,ok\n"Smith, J.",3.5,yes\nLee,?,no\nKim,,yes'

JUNK = [b"\t", b"\t\t", b",", b"\n", b"\r", b"\r\n", b"\x00", b"\xff\xfe", b"\xc3", b'"', b"'", b"%",
        b"nan", b"inf", b"-1", b"1e400", b"2", b"abc", b"0x1", b"X", b"_", b":-", b"(", b")", b"[", b"]",
        b".", b"/*", b"{0}", b"!!python/object:os.system", b"&a [*a, *a]", b"\xef\xbb\xbf", b"   ",
        b"predicate", b"a\tb\tc\td\te", b"\x1b[1m"]


@st.composite
def mutated(draw, seed: bytes) -> bytes:
    """A valid file with a few random edits: junk inserted, bytes deleted, lines duplicated,
    tabs dropped, truncation, or a huge line."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert", "delete", "dup", "notabs", "truncate", "huge", "random"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert":
            data[pos:pos] = draw(st.sampled_from(JUNK))
        elif op == "delete":
            del data[pos:pos + draw(st.integers(1, 5))]
        elif op == "dup":
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[i].replace(b"1", b"0"))
            data = bytearray(b"\n".join(lines))
        elif op == "notabs":
            end = data.find(b"\n", pos)
            end = len(data) if end < 0 else end
            data[pos:end] = data[pos:end].replace(b"\t", b"")
        elif op == "truncate":
            del data[pos:]
        elif op == "huge":
            data[pos:pos] = draw(st.sampled_from([b"a", b"a\t", b'"', b"(", b"x,"])) * 150_000
        else:
            data[pos:pos] = draw(st.binary(max_size=20))
    return bytes(data)


anything = st.one_of(st.binary(max_size=600), st.text(max_size=300).map(lambda t: t.encode("utf-8")))


# ---------------------------------------------------------------------- fuzzing every loader
@FUZZ
@given(st.one_of(anything, mutated(PSL_OBS)), st.one_of(st.just(MANIFEST), anything, mutated(MANIFEST)),
       mutated(PSL_TARGETS))
@pytest.mark.slow
def test_psl_folder_only_raises_data_error(obs, manifest, targets):
    files = {"d/manifest.yaml": manifest, "d/knows_obs.txt": obs, "d/knows_targets.txt": targets}
    only_data_errors(xio.load_psl_folder, files, limits=SMALL)
    only_data_errors(xio.load_psl_folder, {"d/manifest.json": manifest, "d/smokes_truth.txt": obs}, limits=SMALL)


@FUZZ
@given(st.one_of(anything, mutated(LONG)))
def test_long_csv_only_raises_data_error(data):
    only_data_errors(xio.load_long_csv, ("f.csv", data), limits=SMALL)
    only_data_errors(xio.load_long_csv, ("f.csv", data), schema=[Predicate("knows", 2), Predicate("smokes", 1)],
                     limits=SMALL)


@FUZZ
@given(st.one_of(anything, mutated(PROLOG)), mutated(b"p(a).\np(b).\n"))
def test_prolog_only_raises_data_error(background, examples):
    only_data_errors(xio.load_prolog, ("x.b", background), limits=SMALL)
    only_data_errors(xio.load_prolog, [("x.b", background), ("x.f", examples), ("x.n", examples)], limits=SMALL)


@FUZZ
@given(st.one_of(anything, mutated(TRIPLES)))
def test_triples_only_raises_data_error(data):
    only_data_errors(xio.load_triples, ("kg.tsv", data), limits=SMALL)
    only_data_errors(xio.load_triples, [("facts.txt", TRIPLES), ("test.txt", data)], limits=SMALL)


@FUZZ
@given(st.one_of(anything, mutated(TABLE)), st.sampled_from([None, "ok", "age", "missing"]))
def test_tabular_only_raises_data_error(data, label):
    only_data_errors(xio.load_tabular, ("t.csv", data), label=label, limits=SMALL)


@FUZZ
@given(st.one_of(anything, st.binary(max_size=50).map(lambda b: b"PK\x03\x04" + b)),
       st.dictionaries(st.sampled_from(["manifest.yaml", "d/knows_obs.txt", "../x.txt", "/abs.txt", "a.b",
                                        "a.f", "kg.tsv", "t.csv", "x.zip", "__MACOSX/y", "facts.txt",
                                        "C:/x.txt", "d/../../e.txt", "weird name.data"]),
                       st.one_of(anything, mutated(TRIPLES), mutated(PSL_OBS), mutated(LONG)), max_size=4))
def test_zip_only_raises_data_error(raw, members):
    only_data_errors(xio.load_zip, raw, limits=SMALL)
    archive = make_zip(members)
    only_data_errors(xio.load_zip, archive, limits=SMALL)
    only_data_errors(xio.load_zip, archive[: len(archive) // 2], limits=SMALL)
    only_data_errors(xd.load, ("up.zip", archive), limits=SMALL)


@FUZZ
@given(st.sampled_from(["x.csv", "x.tsv", "x.txt", "x.b", "x.f", "x.n", "x.pl", "x.zip", "x.data",
                        "manifest.yaml", "manifest.json", "x", "knows_obs.txt", "facts.txt"]),
       st.one_of(anything, mutated(LONG), mutated(TRIPLES), mutated(PROLOG), mutated(TABLE)))
def test_load_only_raises_data_error(name, data):
    only_data_errors(xd.load, (name, data), limits=SMALL)
    only_data_errors(xd.load, [("manifest.yaml", MANIFEST), (name, data)], limits=SMALL)


# ---------------------------------------------------------------------- round trips
names = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
type_names = st.sampled_from(["entity", "person", "thing"])
constants = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=6) \
    .filter(lambda s: s == s.strip() and s != "")
unit = st.floats(0, 1, allow_nan=False)


@st.composite
def datasets(draw, boolean: bool = False, binary: bool = False, const=constants) -> RelationalDataset:
    """Random valid datasets; `boolean` limits values to what Prolog/triples can hold."""
    preds, tables = [], {}
    for name in draw(st.lists(names, min_size=1, max_size=4, unique=True)):
        arity = 2 if binary else draw(st.integers(1, 3))
        atoms_ = draw(st.lists(st.tuples(*[const] * arity), min_size=1, max_size=8, unique=True))
        roles = draw(st.lists(st.sampled_from(["obs", "target"]), min_size=len(atoms_), max_size=len(atoms_)))
        obs = [a for a, r in zip(atoms_, roles) if r == "obs"]
        tgt = [a for a, r in zip(atoms_, roles) if r == "target"]
        cols = [f"a{i}" for i in range(arity)]

        def frame(rows, values):
            df = pd.DataFrame(rows, columns=cols, dtype=object) if rows else pd.DataFrame(columns=cols)
            return df.assign(value=pd.Series(values, dtype="float64"))

        if boolean:
            truth_v = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=len(tgt), max_size=len(tgt)))
            if binary:
                truth_v = [1.0] * len(tgt)
            t = {"obs": frame(obs, [1.0] * len(obs)), "targets": frame(tgt, [math.nan] * len(tgt)),
                 "truth": frame(tgt, truth_v)}
        else:
            t = {"obs": frame(obs, draw(st.lists(unit, min_size=len(obs), max_size=len(obs)))),
                 "targets": frame(tgt, draw(st.lists(st.one_of(unit, st.just(math.nan)),
                                                     min_size=len(tgt), max_size=len(tgt)))),
                 "truth": frame(tgt[: len(tgt) // 2 + 1], draw(st.lists(unit, min_size=len(tgt[: len(tgt) // 2 + 1]),
                                                                         max_size=len(tgt[: len(tgt) // 2 + 1]))))}
        types = ("entity", "entity") if binary else tuple(draw(st.lists(type_names, min_size=arity, max_size=arity)))
        preds.append(Predicate(name, arity, types, closed=not tgt,
                               explainable=draw(st.booleans()),
                               template=draw(st.sampled_from([None, "{0} is odd", "{0} {0}"]))))
        tables[name] = t
    return RelationalDataset(Schema.of(preds), tables, name=draw(names), description=draw(st.text(max_size=20)))


@pytest.mark.slow
@ROUND
@given(datasets())
def test_psl_folder_roundtrip(tmp_path_factory, ds):
    path = tmp_path_factory.mktemp("psl")
    xio.write_psl_folder(ds, path)
    back = xd.load(path)
    assert content(back) == content(ds)
    assert (back.name, back.description) == (ds.name, ds.description)


@pytest.mark.slow
@ROUND
@given(datasets())
def test_long_csv_roundtrip(tmp_path_factory, ds):
    path = tmp_path_factory.mktemp("csv") / "facts.csv"
    xio.write_long_csv(ds, path)
    assert content(xio.load_long_csv(path, schema=ds.schema)) == content(ds)
    inferred = xd.load(path)
    assert content(inferred, key=lambda p: (p.arity, p.closed)) == content(ds, key=lambda p: (p.arity, p.closed))


@pytest.mark.slow
@ROUND
@given(datasets(boolean=True))
def test_prolog_roundtrip(tmp_path_factory, ds):
    path = tmp_path_factory.mktemp("pl")
    xio.write_prolog(ds, path, "kb")
    back = xd.load(path)
    key = lambda p: (p.arity, p.types, p.closed)  # noqa: E731
    assert content(back, key) == content(ds, key)


@pytest.mark.slow
@ROUND
@given(datasets(boolean=True, binary=True, const=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,5}", fullmatch=True)))
def test_triples_roundtrip(tmp_path_factory, ds):
    path = tmp_path_factory.mktemp("kg")
    xio.write_triples(ds, path)
    back = xd.load(path)
    key = lambda p: (p.arity, p.types, p.closed)  # noqa: E731
    assert content(back, key) == content(ds, key)


@pytest.mark.slow
@ROUND
@given(st.lists(names, min_size=2, max_size=4, unique=True), st.data())
def test_tabular_roundtrip(tmp_path_factory, header, data):
    n = data.draw(st.integers(1, 6))
    cell = st.one_of(constants, st.integers(-5, 5).map(str), unit.map(repr), st.just(""), st.just("?"))
    rows = [[data.draw(cell) for _ in header] for _ in range(n)]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *rows])
    first = xd.load(("t.csv", buf.getvalue().encode()), label=header[0])
    path = tmp_path_factory.mktemp("tab") / "t.csv"
    xio.write_tabular(first, path)
    back = xd.load(path, label=first.label)
    pd.testing.assert_frame_equal(back.tabular, first.tabular)
    assert back.label == first.label == header[0]


def test_manifest_keeps_unicode_line_separators(tmp_path):
    # YAML reads a raw NEL/LS character as a line break; the writer must escape them
    ds = RelationalDataset(Schema.of([Predicate("p", 1)]), {"p": {"obs": pd.DataFrame({"a0": ["a"], "value": [1.0]})}},
                           name="n", description="a\x85b\u2028c é")
    xio.write_psl_folder(ds, tmp_path / "d")
    assert xd.load(tmp_path / "d").description == ds.description
