"""Loaders, writers, format detection, zip safety and the sample registry of xcore.data."""

from __future__ import annotations

import io
import json
import math
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import xcore.data as xd
from xcore.data import io as xio
from xcore.data.dataset import RelationalDataset
from xcore.data.io import Limits
from xcore.data.schema import PARTITIONS, Predicate, Schema
from xcore.data.shared import shared_data_dir
from xcore.errors import DataError

SHARED = shared_data_dir()
SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="shared benchmark data not present")


# ---------------------------------------------------------------------- helpers
def atoms(ds: RelationalDataset, pred: str, part: str) -> set[tuple]:
    """The atoms of one table as a set of (args..., value) with NaN as None."""
    p = ds.predicate(pred)
    t = ds.table(pred, part)
    return {(*map(str, r[:-1]), None if math.isnan(r[-1]) else float(r[-1]))
            for r in t[[*p.columns, "value"]].itertuples(index=False)}


def content(ds: RelationalDataset, flags: bool = True) -> dict:
    """Everything a dataset holds, comparable with ==."""
    return {p.name: ((p.arity, p.types, p.closed, p.explainable, p.template) if flags else (p.arity,),
                     {part: atoms(ds, p.name, part) for part in PARTITIONS}) for p in ds.predicates}


def make_zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


MANIFEST = b"""name: tiny
description: a tiny dataset
predicates:
  - {name: knows, arity: 2, types: [person, person], closed: false, template: "{0} knows {1}"}
  - {name: smokes, arity: 1, types: [person], closed: true, explainable: false}
"""


def psl_files(**extra: bytes) -> dict[str, bytes]:
    files = {"tiny/manifest.yaml": MANIFEST,
             "tiny/knows_obs.txt": b"a\tb\t1.0\nb\tc\t0.5\n",
             "tiny/knows_targets.txt": b"a\tc\n",
             "tiny/knows_truth.txt": b"a\tc\t1\n",
             "tiny/smokes_obs.txt": b"a\nb\t0\n"}
    files.update({f"tiny/{k}": v for k, v in extra.items()})
    return files


def error_of(fn, *args, **kwargs) -> DataError:
    with pytest.raises(DataError) as info:
        fn(*args, **kwargs)
    return info.value


# ---------------------------------------------------------------------- PSL folders
def test_psl_folder_loads_values_flags_and_defaults():
    ds = xio.load_psl_folder(psl_files())
    assert ds.name == "tiny" and ds.description == "a tiny dataset"
    knows = ds.predicate("knows")
    assert (knows.types, knows.closed, knows.template) == (("person", "person"), False, "{0} knows {1}")
    assert ds.predicate("smokes").explainable is False
    assert atoms(ds, "knows", "obs") == {("a", "b", 1.0), ("b", "c", 0.5)}
    assert atoms(ds, "knows", "targets") == {("a", "c", None)}
    assert atoms(ds, "knows", "truth") == {("a", "c", 1.0)}
    assert atoms(ds, "smokes", "obs") == {("a", 1.0), ("b", 0.0)}
    assert len(ds.truth("smokes")) == 0  # absent files are fine


def test_psl_folder_roundtrip_on_disk(tmp_path):
    ds = xio.load_psl_folder(psl_files())
    xio.write_psl_folder(ds, tmp_path / "out")
    back = xio.load_psl_folder(tmp_path / "out")
    assert content(back) == content(ds) and back.name == ds.name and back.description == ds.description
    assert not (tmp_path / "out" / "smokes_truth.txt").exists()


def test_psl_writer_removes_stale_files_and_refuses_tabs(tmp_path):
    (tmp_path / "smokes_truth.txt").write_text("zzz\t1\n")
    ds = xio.load_psl_folder(psl_files())
    xio.write_psl_folder(ds, tmp_path)
    assert not (tmp_path / "smokes_truth.txt").exists()
    bad = RelationalDataset(Schema.of([Predicate("p", 1)]), {"p": {"obs": pd.DataFrame({"a0": ["x\ty"]})}})
    assert "cannot write" in error_of(xio.write_psl_folder, bad, tmp_path / "bad").problem


def test_psl_file_of_undeclared_predicate_is_named():
    err = error_of(xio.load_psl_folder, psl_files(**{"likes_obs.txt": b"a\tb\n"}))
    assert err.file == "tiny/likes_obs.txt" and "not declared" in err.problem


def test_psl_badly_named_text_file_is_named_but_readme_ignored():
    assert xio.load_psl_folder(psl_files(**{"README.txt": b"hello"})).name == "tiny"
    err = error_of(xio.load_psl_folder, psl_files(**{"knows.txt": b"a\tb\n"}))
    assert err.file == "tiny/knows.txt"


@pytest.mark.parametrize("fname, data, line, words", [
    ("knows_obs.txt", b"a\tb\n\na\tb\tc\td\n", 3, "arity 2"),
    ("knows_obs.txt", b"a\tb\t1\nb\tc\t1.5\n", 2, "outside [0, 1]"),
    ("knows_obs.txt", b"a\tb\tyes\n", 1, "not a number"),
    ("knows_obs.txt", b"a\tb\t1\na\tb\t0\n", 2, "different values"),
    ("knows_obs.txt", b"a\tb\nx\tc\n", 2, "also an observation"),  # targets file has a-c
    ("knows_obs.txt", b"\n   \n", 1, "empty"),
    ("knows_obs.txt", b"a\tb\n\xff\xfe\tc\n", 2, "UTF-8"),
    ("knows_obs.txt", b"a\tb\nc\x00\td\n", 2, "binary"),
    ("knows_obs.txt", b"a\t \n", 1, "empty argument"),
])
def test_psl_errors_name_file_line_and_problem(fname, data, line, words):
    files = psl_files(**{fname: data})
    if words == "also an observation":
        files["tiny/knows_obs.txt"] = b"x\ty\na\tc\n"
        line, fname = 1, "knows_targets.txt"
    err = error_of(xio.load_psl_folder, files)
    assert err.file == f"tiny/{fname}" and err.line == line and words in err.problem, str(err)


def test_psl_without_manifest_and_bad_manifests():
    files = psl_files()
    del files["tiny/manifest.yaml"]
    assert "manifest" in error_of(xio.load_psl_folder, files).problem
    bad_yaml = error_of(xio.load_psl_folder, psl_files(**{"manifest.yaml": b"name: x\npredicates: [\n  - {a"}))
    assert bad_yaml.file == "tiny/manifest.yaml" and "YAML" in bad_yaml.problem and bad_yaml.line
    unsafe = b"predicates: !!python/object/apply:os.system ['echo hi']\n"
    assert "YAML" in error_of(xio.load_psl_folder, psl_files(**{"manifest.yaml": unsafe})).problem
    typo = MANIFEST.replace(b"explainable: false", b"explainible: false")
    assert "explainible" in error_of(xio.load_psl_folder, psl_files(**{"manifest.yaml": typo})).problem
    tmpl = MANIFEST.replace(b"{0} knows {1}", b"{0} knows {2}")
    assert "template" in error_of(xio.load_psl_folder, psl_files(**{"manifest.yaml": tmpl})).problem
    spec = MANIFEST.replace(b"{0} knows {1}", b"{0:>999999999}")
    assert "template" in error_of(xio.load_psl_folder, psl_files(**{"manifest.yaml": spec})).problem
    arity = MANIFEST.replace(b"arity: 2", b"arity: two")
    assert "arity" in error_of(xio.load_psl_folder, psl_files(**{"manifest.yaml": arity})).problem


def test_psl_json_manifest_and_mapping_form():
    doc = {"name": "j", "predicates": {"knows": {"arity": 2}, "smokes": {"types": ["person"]}}}
    files = psl_files()
    del files["tiny/manifest.yaml"]
    files["tiny/manifest.json"] = json.dumps(doc).encode()
    ds = xio.load_psl_folder(files)
    assert ds.name == "j" and ds.predicate("smokes").arity == 1 and ds.predicate("knows").closed
    files["tiny/manifest.json"] = b'{"predicates": [' * 5000
    assert "JSON" in error_of(xio.load_psl_folder, files).problem


def test_size_limit_is_enforced_for_paths_and_uploads(tmp_path):
    f = tmp_path / "big_obs.txt"
    f.write_bytes(b"a\tb\n" * 100)
    err = error_of(xio.load_triples, f, limits=Limits(max_file_bytes=100))
    assert err.file == str(f) and "limit" in err.problem
    err = error_of(xd.load, ("t.tsv", b"a\tr\tb\n" * 100), limits=Limits(max_file_bytes=100))
    assert err.file == "t.tsv" and "limit" in err.problem
    assert xio.DEFAULT_LIMITS.max_file_bytes == 50 * 1024 * 1024


def test_predicate_count_limit_applies_to_every_format():
    few = Limits(max_predicates=2)
    cases = [
        (xio.load_long_csv, ("f.csv", b"predicate,arg1\np,a\nq,a\nr,a\n")),
        (xio.load_tabular, ("t.csv", b"a,b,c\n1,2,3\n")),
        (xio.load_triples, ("kg.tsv", b"a\tr\tb\na\ts\tb\na\tt\tb\n")),
        (xio.load_prolog, ("kb.pl", b"p(a). q(a). r(a).\n")),
        (xio.load_psl_folder, psl_files(**{"manifest.yaml": MANIFEST + b"  - {name: third, arity: 1}\n"})),
    ]
    for fn, source in cases:
        assert "above the limit" in error_of(fn, source, limits=few).problem, fn.__name__
        assert fn(source) is not None
    wide = b"predicate," + b",".join(b"arg%d" % i for i in range(1, 70)) + b"\np" + b",a" * 69 + b"\n"
    assert "at most 64" in error_of(xio.load_long_csv, ("f.csv", wide)).problem


# ---------------------------------------------------------------------- long CSV
LONG = b"""predicate,arg1,arg2,value,partition
knows,a,b,1,obs
knows,b,c,0.25,
smokes,a,,,obs
knows,a,c,,targets
knows,a,c,1,truth
"""


def test_long_csv_infers_schema():
    ds = xio.load_long_csv(("facts.csv", LONG))
    assert ds.name == "facts"
    assert [(p.name, p.arity, p.closed) for p in ds.predicates] == [("knows", 2, False), ("smokes", 1, True)]
    assert atoms(ds, "knows", "obs") == {("a", "b", 1.0), ("b", "c", 0.25)}
    assert atoms(ds, "smokes", "obs") == {("a", 1.0)}
    assert atoms(ds, "knows", "targets") == {("a", "c", None)}
    assert atoms(ds, "knows", "truth") == {("a", "c", 1.0)}


def test_long_csv_without_value_or_partition_and_quoted_fields():
    data = b'predicate,arg1,arg2\nname,"Smith, J.","a\nb"\nname,x,y\nname,x,y,\n'
    err = error_of(xio.load_long_csv, ("q.csv", data))
    assert err.line == 5, "line numbers must count the line break inside the quoted field"
    ds = xio.load_long_csv(("q.csv", data[: data.rindex(b"name,x,y,")]))
    assert atoms(ds, "name", "obs") == {("Smith, J.", "a\nb", 1.0), ("x", "y", 1.0)}


@pytest.mark.parametrize("body, line, words", [
    (b"knows,a,b,1,obs\nknows,a,,1,obs\n", 3, "1 arguments here but 2 on line 2"),
    (b"knows,,b,1,obs\n", 2, "arg1 is empty"),
    (b"knows,a,b,1,maybe\n", 2, "partition"),
    (b"knows,a,b,2,obs\n", 2, "outside [0, 1]"),
    (b"knows,a,b,x,obs\n", 2, "not a number"),
    (b"kn ows,a,b,1,obs\n", 2, "not valid"),
    (b"knows,a,b,1,obs,extra\n", 2, "expected 5"),
    (b"knows,a,b,,targets\nknows,a,b,,obs\n", 2, "also an observation"),
])
def test_long_csv_errors(body, line, words):
    err = error_of(xio.load_long_csv, ("f.csv", b"predicate,arg1,arg2,value,partition\n" + body))
    assert err.file == "f.csv" and err.line == line and words in err.problem, str(err)


def test_long_csv_header_errors():
    assert error_of(xio.load_long_csv, ("f.csv", b"pred,arg1\nx,y\n")).line == 1
    assert "arg1..arg" in error_of(xio.load_long_csv, ("f.csv", b"predicate,arg2\nx,y\n")).problem
    assert "no facts" in error_of(xio.load_long_csv, ("f.csv", b"predicate,arg1\n")).problem


def test_long_csv_with_manifest_schema(tmp_path):
    (tmp_path / "manifest.yaml").write_bytes(MANIFEST)
    ds = xio.load_long_csv(("f.csv", b"predicate,arg1,arg2\nknows,a,b\n"), schema=tmp_path / "manifest.yaml")
    assert ds.name == "tiny" and ds.predicate("knows").types == ("person", "person")
    assert len(ds.observations("smokes")) == 0
    err = error_of(xio.load_long_csv, ("f.csv", b"predicate,arg1,arg2\nknows,a,b\nlikes,a,b\n"),
                   schema=tmp_path / "manifest.yaml")
    assert err.line == 3 and "not in the schema" in err.problem
    err = error_of(xio.load_long_csv, ("f.csv", b"predicate,arg1,arg2\nsmokes,a,b\n"),
                   schema=[Predicate("smokes", 1)])
    assert err.line == 2 and "arity 1" in err.problem


def test_long_csv_roundtrip(tmp_path):
    ds = xio.load_psl_folder(psl_files())
    xio.write_long_csv(ds, tmp_path / "x.csv")
    back = xio.load_long_csv(tmp_path / "x.csv", schema=ds.schema)
    assert content(back) == content(ds)
    inferred = xio.load_long_csv(tmp_path / "x.csv")
    assert content(inferred, flags=False) == content(ds, flags=False)
    assert inferred.predicate("knows").closed is False and inferred.predicate("smokes").closed is True


# ---------------------------------------------------------------------- Prolog
@needs_shared
def test_prolog_trains():
    ds = xio.load_prolog(SHARED / "trains_michalski10")
    assert ds.name == "trains_michalski10"
    assert atoms(ds, "eastbound", "truth") == {(f"east{i}", 1.0) for i in range(1, 6)} | {
        (f"west{i}", 0.0) for i in range(6, 11)}
    assert len(ds.targets("eastbound")) == 10 and ds.predicate("eastbound").closed is False
    counts = {p: len(ds.observations(p)) for p in ("car", "short", "long", "closed", "open_car", "double",
                                                    "jagged", "shape", "load", "wheels", "has_car", "train")}
    assert counts == {"car": 30, "short": 22, "long": 8, "closed": 9, "open_car": 19, "double": 3,
                      "jagged": 2, "shape": 30, "load": 30, "wheels": 30, "has_car": 30, "train": 10}
    assert len(ds.observations("shape_1")) == 7 and ds.predicate("shape_1").description == "Prolog predicate shape/1"
    assert ds.predicate("load").types == ("car", "shape", "int")  # from the modeb declaration
    assert ("car_11", "rectangle", "3", 1.0) in atoms(ds, "load", "obs")
    assert ds.predicate("has_car").closed and ds.target_predicates == ["eastbound"]


@needs_shared
def test_prolog_mutagenesis_atom_bond_and_rings():
    ds = xio.load_prolog(SHARED / "mutagenesis" / "atom_bond.pl")
    assert len(ds.observations("atm")) == 5894 and len(ds.observations("bond")) == 6309
    assert ("d1", "d1_1", "c", "22", "-0.117", 1.0) in atoms(ds, "atm", "obs")
    rings = xio.load_prolog(SHARED / "mutagenesis" / "ring_struc.pl")
    assert len(rings.observations("benzene")) == 509
    assert ("d1", "[d1_6,d1_1,d1_2,d1_3,d1_4,d1_5]", 1.0) in atoms(rings, "benzene", "obs")
    assert all(v.startswith("[[") for v in rings.observations("ball3")["a1"])


PROLOG = b"""% comment with 'quote
:- set(i,2).
:- modeb(1, likes(+person,
                  #thing)).
/* block
comment */ likes(ann, 'New York').  likes(bob, 'it''s %not a comment').
likes( carl , [a, b]).
size(bob, -3.5). size(ann, 1e3).
nested(f(x, g(y)), "str").
"""


def test_prolog_syntax_features():
    ds = xio.load_prolog(("kb.b", PROLOG))
    assert atoms(ds, "likes", "obs") == {("ann", "New York", 1.0), ("bob", "it's %not a comment", 1.0),
                                         ("carl", "[a,b]", 1.0)}
    assert ds.predicate("likes").types == ("person", "thing")
    assert atoms(ds, "size", "obs") == {("bob", "-3.5", 1.0), ("ann", "1e3", 1.0)}
    assert atoms(ds, "nested", "obs") == {("f(x,g(y))", "str", 1.0)}
    line = ds.observations("likes")  # provenance stripped
    assert "_line" not in line.columns


@pytest.mark.parametrize("text, line, words", [
    (b"a(b).\n\nc(X).\n", 3, "variable X"),
    (b"a(b).\nc(_).\n", 2, "variable _"),
    (b"a(b).\np(x) :- q(x).\n", 2, "a rule"),
    (b"a(b).\n:- dynamic foo/1.\nfoo(bar)", 3, "end with '.'"),
    (b"a(b).\nb('unterminated).\n", 2, "unterminated"),
    (b"a(b c).\n", 1, "missing comma"),
    (b"a(b,).\n", 1, "empty argument"),
    (b"a(b)).\n", 1, "unbalanced"),
    (b"42.\n", 1, "not a fact"),
])
def test_prolog_errors_name_file_and_line(text, line, words):
    """Examples (.f) must be ground facts; background files may hold rules (tests/data/test_prolog_rules.py)."""
    err = error_of(xio.load_prolog, ("kb.f", text))
    assert err.file == "kb.f" and err.line == line and words in err.problem, str(err)


def test_prolog_patterns_do_not_backtrack_exponentially():
    """Quote runs that made the clause regex exponential (ReDoS) are now linear."""
    for text in ("p(" + "'a'" * 40 + " x", "p(" + "''a" * 40, "/*" * 5000, "p(" + "\\" * 5000):
        with pytest.raises(DataError):
            xio.load_prolog(("kb.pl", text.encode()))
    ds = xio.load_prolog(("kb.pl", ("p('a" + "''a" * 2000 + "').").encode()))
    assert ds.observations("p")["a0"].iloc[0] == "a" + "'a" * 2000


def test_prolog_positive_and_negative_conflict():
    files = [("t.b", b"p(a).\n"), ("t.f", b"q(a).\n"), ("t.n", b"q(b).\nq(a).\n")]
    err = error_of(xio.load_prolog, files)
    assert "different values" in err.problem and err.file == "t.n" and err.line == 2
    files = [("t.b", b"q(a).\n"), ("t.f", b"q(a).\n")]
    assert "also an observation" in error_of(xio.load_prolog, files).problem


def test_prolog_roundtrip(tmp_path):
    files = [("t.b", PROLOG), ("t.f", b"good(ann).\n'Odd'(x).\n"), ("t.n", b"good(bob).\n")]
    ds = xio.load_prolog(files, name="t")
    xio.write_prolog(ds, tmp_path, "t")
    back = xio.load_prolog(tmp_path)
    assert content(back, flags=False) == content(ds, flags=False)
    assert back.predicate("likes").types == ("person", "thing") and not back.predicate("good").closed


def test_prolog_writer_refuses_what_aleph_cannot_hold(tmp_path):
    ds = xio.load_psl_folder(psl_files())
    assert "value other than 1" in error_of(xio.write_prolog, ds, tmp_path).problem


# ---------------------------------------------------------------------- triples
@needs_shared
def test_triples_family_neural_lp_folder():
    ds = xio.load_triples(SHARED / "family")
    assert sorted(p.name for p in ds.predicates) == sorted(
        "aunt brother daughter father husband mother nephew niece sister son uncle wife".split())
    assert ds.n_atoms("obs") == 17615 + 5868 + 2038 and ds.n_atoms("targets") == 2835
    assert ds.n_atoms("truth") == 2835 and set(ds.truth("aunt")["value"]) == {1.0}
    assert ds.predicate("aunt").types == ("entity", "entity") and ds.predicate("aunt").description == "aunt"


def test_triples_sanitise_names_roles_and_errors():
    data = b"a\tPart-of\tb\nb\t/people/person\tc\nc\tpart_of\td\n"
    ds = xio.load_triples(("kg.tsv", data))
    names = {p.description: p.name for p in ds.predicates}
    assert names == {"Part-of": "part_of", "/people/person": "people_person", "part_of": "part_of_2"}
    assert ds.n_atoms("obs") == 3 and ds.target_predicates == []
    ds = xio.load_triples([("train.txt", b"a\tr\tb\n"), ("facts.txt", b"b\tr\tc\n")], roles={"train": "targets"})
    assert atoms(ds, "r", "targets") == {("a", "b", None)} and atoms(ds, "r", "obs") == {("b", "c", 1.0)}
    err = error_of(xio.load_triples, ("kg.tsv", b"a\tr\tb\n\na\tr\n"))
    assert err.line == 3 and "3 fields" in err.problem
    assert "role" in error_of(xio.load_triples, ("kg.tsv", data), default_role="bogus").problem


def test_triples_roundtrip(tmp_path):
    ds = xio.load_triples([("facts.txt", b"a\tr\tb\nb\ts\tc\n"), ("test.txt", b"a\ts\td\n")], name="kg")
    xio.write_triples(ds, tmp_path)
    assert content(xio.load_triples(tmp_path)) == content(ds)


# ---------------------------------------------------------------------- tabular
@pytest.mark.slow
@needs_shared
def test_tabular_mushroom():
    ds = xio.load_tabular(SHARED / "mushroom" / "agaricus-lepiota.data", label="edibility")
    t = ds.tabular
    assert t.shape == (8124, 23) and ds.label == "edibility"
    assert t["edibility"].value_counts().to_dict() == {"e": 4208, "p": 3916}
    assert t["stalk_root"].isna().sum() == 2480
    assert len(ds.observations("stalk_root")) == 8124 - 2480
    assert atoms(ds, "edibility", "truth") == {(f"r{i + 1}", c, 1.0) for i, c in enumerate(t["edibility"])}
    assert ds.predicate("edibility").closed is False and ds.predicate("cap_shape").types == ("row", "cap_shape")
    assert ds.predicate("cap_shape").render(["r1", "x"]) == "r1 has cap-shape x"


@needs_shared
def test_tabular_titanic_quoted_names():
    ds = xio.load_tabular(SHARED / "titanic" / "train.csv", label="Survived")
    t = ds.tabular
    assert t.shape == (891, 12) and ds.label == "survived"
    assert t.loc[0, "name"] == "Braund, Mr. Owen Harris"
    assert t["age"].isna().sum() == 177 and t["cabin"].isna().sum() == 687 and t["embarked"].isna().sum() == 2
    assert t["survived"].sum() == 342 and t["fare"].dtype == float


def test_tabular_missing_values_trailing_line_and_default_label():
    data = b"Temp (C),wind,play\n21,?,yes\n\n 19 ,strong,no\n,weak,yes\n\n"
    ds = xio.load_tabular(("w.csv", data))
    assert list(ds.tabular.columns) == ["temp_c", "wind", "play"] and ds.label == "play"
    assert ds.tabular["temp_c"].tolist()[:2] == [21, 19] and math.isnan(ds.tabular["temp_c"][2])
    assert atoms(ds, "temp_c", "obs") == {("r1", "21", 1.0), ("r2", "19", 1.0)}
    assert atoms(ds, "play", "targets") == {("r1", "yes", None), ("r2", "no", None), ("r3", "yes", None)}
    semi = xio.load_tabular(("w.csv", b"a;b\n1;x\n"))
    assert semi.label == "b" and semi.tabular["a"].tolist() == [1]


def test_tabular_errors():
    assert "not found" in error_of(xio.load_tabular, ("w.csv", b"a,b\n1,2\n"), label="c").problem
    err = error_of(xio.load_tabular, ("w.csv", b"a,b\n1,2\n3,4,5\n"))
    assert err.line == 3 and "expected 2" in err.problem
    assert "appears twice" in error_of(xio.load_tabular, ("w.csv", b"p,x,x\n1,2,3\n")).problem
    assert "two columns" in error_of(xio.load_tabular, ("w.csv", b"a\n1\n")).problem


def test_tabular_roundtrip(tmp_path):
    data = b'name,age,ok\n"Smith, J.",3.5,1\nLee,,0\n'
    ds = xio.load_tabular(("t.csv", data))
    xio.write_tabular(ds, tmp_path / "t.csv")
    back = xio.load_tabular(tmp_path / "t.csv")
    pd.testing.assert_frame_equal(back.tabular, ds.tabular)
    assert back.label == ds.label and content(back, flags=False) == content(ds, flags=False)
    assert "no table" in error_of(xio.write_tabular, xio.load_psl_folder(psl_files()), tmp_path / "x").problem


# ---------------------------------------------------------------------- zip and detection
def test_zip_of_each_format():
    ds = xio.load_zip(make_zip(psl_files()))
    assert ds.name == "tiny" and len(ds.observations("knows")) == 2
    ds = xio.load_zip(("kb.zip", make_zip({"kb/x.b": b"p(a).\n", "kb/x.f": b"q(a).\n"})))
    assert ds.name == "kb" and ds.target_predicates == ["q"]
    ds = xio.load_zip(make_zip({"facts.txt": b"a\tr\tb\n", "test.txt": b"a\tr\tc\n", "entities.txt": b"a\nb\n"}))
    assert ds.n_atoms("targets") == 1
    ds = xio.load_zip(make_zip({"f.csv": LONG}))
    assert ds.predicate("knows").arity == 2
    ds = xio.load_zip(make_zip({"w.csv": b"a,b\n1,x\n", "__MACOSX/._w.csv": b"junk", ".DS_Store": b"x"}), label="a")
    assert ds.label == "a"
    ds = xio.load_zip(make_zip({"m/manifest.yaml": MANIFEST, "m/f.csv": b"predicate,arg1,arg2,value\nknows,a,b,1\n"}))
    assert ds.name == "tiny" and ds.predicate("knows").types == ("person", "person")


def test_zip_guards():
    bomb = make_zip({"big_obs.txt": b"a" * 2_000_000})
    assert len(bomb) < 20_000
    err = error_of(xio.load_zip, bomb, limits=Limits(max_file_bytes=1_000_000))
    assert "big_obs.txt" in err.file and "limit" in err.problem
    err = error_of(xio.load_zip, make_zip({f"{i}.txt": b"a\tr\tb\n" for i in range(5)}), limits=Limits(max_members=4))
    assert "limit" in err.problem
    err = error_of(xio.load_zip, make_zip({f"{i}.txt": b"a\tr\tb\n" * 100 for i in range(5)}),
                   limits=Limits(max_total_bytes=2000))
    assert "in total" in err.problem
    for evil in ("../evil.txt", "/etc/evil.txt", "a/../../evil.txt", "C:/evil.txt"):
        assert "unsafe" in error_of(xio.load_zip, make_zip({evil: b"a\tr\tb\n"})).problem
    assert "zip" in error_of(xio.load_zip, b"PK\x03\x04 not really").problem
    assert "no data files" in error_of(xio.load_zip, make_zip({"__MACOSX/x": b"1"})).problem
    assert "zip inside a zip" in error_of(xio.load_zip, make_zip({"a.zip": b"x"}), fmt="zip").problem


def test_zip_lying_header_is_caught():
    """A member whose header claims a small size but unpacks larger is stopped while reading."""
    raw = bytearray(make_zip({"x_obs.txt": b"a" * 5000}))
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):
        i = raw.find(sig)
        size_at = i + (22 if sig == b"PK\x03\x04" else 24)
        raw[size_at:size_at + 4] = (10).to_bytes(4, "little")
    with pytest.raises(DataError):
        xio.load_zip(bytes(raw), limits=Limits(max_file_bytes=1000))


def test_load_detects_every_format(tmp_path):
    assert xd.load(("f.csv", LONG)).predicate("knows").closed is False
    assert xd.load(("w.csv", b"a,b\n1,x\n")).label == "b"
    assert xd.load(("kg.tsv", b"a\tr\tb\n")).predicate("r").arity == 2
    assert xd.load(("kg.txt", b"a\tr\tb\n")).predicate("r").arity == 2
    assert xd.load(("w.tsv", b"a\tb\n1\tx\n")).label == "b"
    assert xd.load(("x.pl", b"p(a).\n")).predicate("p").arity == 1
    assert xd.load(("x.zip", make_zip(psl_files()))).name == "tiny"
    uploads = xd.load([("x.b", b"p(a).\n"), ("x.n", b"q(a).\n")])
    assert uploads.target_predicates == ["q"] and uploads.name == "x"
    assert xd.load(psl_files(), name="renamed").name == "renamed"
    for name, data in psl_files().items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    assert xd.load(tmp_path / "tiny").name == "tiny"
    assert xd.load(tmp_path / "tiny" / "manifest.yaml").name == "tiny"
    assert xd.load(("mystery.bin", make_zip({"kg.tsv": b"a\tr\tb\n"})), name="z").name == "z"


def test_load_reports_unknown_formats_and_bad_options(tmp_path):
    err = error_of(xd.load, ("notes.docx", b"hello"))
    assert err.file == "notes.docx" and "unknown data format" in err.problem
    assert error_of(xd.load, ("notes.txt", b"just some words\n")).file == "notes.txt"
    assert "no manifest" in error_of(xd.load, [("knows_obs.txt", b"a\tb\n")]).problem
    assert "no such file" in error_of(xd.load, tmp_path / "nope").problem
    (tmp_path / "pickles").mkdir()
    (tmp_path / "pickles" / "ind.cora.x").write_bytes(b"\x80\x02")
    err = error_of(xd.load, tmp_path / "pickles")
    assert err.file == str(tmp_path / "pickles") and "no data files" in err.problem
    assert "unknown format" in error_of(xd.load, ("f.csv", LONG), fmt="excel").problem
    assert "label" in error_of(xd.load, ("f.csv", LONG), label="x").problem
    assert "several tables" in error_of(xd.load, [("a.csv", LONG), ("b.csv", LONG)]).problem
    assert "cannot read" in error_of(xd.load, 42).problem


def test_explicit_format_overrides_detection():
    ds = xd.load(("data.txt", b"a\tr\tb\n"), fmt="triples", roles={"data": "targets"})
    assert ds.n_atoms("targets") == 1
    ds = xd.load(("table.data", b"x,y\n1,2\n"), fmt="tabular", label="x")
    assert ds.label == "x"


# ---------------------------------------------------------------------- samples
def test_sample_registry_lists_and_loads_each_sample():
    infos = {s.name: s for s in xd.list_samples()}
    assert {"friends_smokers", "trains_michalski10", "family", "mushroom"} <= set(infos)
    for s in infos.values():
        assert s.title and s.description and s.citation and s.licence and s.format in xio.FORMATS
        assert (s.path / "README.md").is_file()
    fs = xd.load_sample("friends_smokers")
    assert {p.name for p in fs.predicates} == {"person", "friends", "smokes", "cancer"}
    assert fs.predicate("smokes").closed is False and fs.predicate("person").explainable is False
    assert fs.predicate("friends").render(["anna", "bob"]) == "anna is friends with bob"
    assert len(fs.targets("smokes")) == len(fs.truth("smokes")) > 0
    assert len(fs.targets("cancer")) == len(fs.truth("cancer")) > 0
    assert set(xd.load_sample("trains_michalski10").truth("eastbound")["value"]) == {0.0, 1.0}
    fam = xd.load_sample("family")
    assert len(fam.predicates) == 12 and fam.n_atoms("targets") == 1278
    mush = xd.load_sample("mushroom")
    assert mush.label == "edibility" and mush.tabular.shape == (8124, 23)
    assert "unknown sample" in error_of(xd.load_sample, "nope").problem


def test_lastfm_demo_is_listed_only_with_a_manifest(tmp_path, monkeypatch):
    for s in ("friends_smokers",):
        shutil.copytree(SAMPLES / s, tmp_path / s)
    monkeypatch.setenv("XCORE_SAMPLE_DATA", str(tmp_path))
    assert [s.name for s in xd.list_samples()] == ["friends_smokers"]
    (tmp_path / "lastfm_demo").mkdir()
    assert "lastfm_demo" not in [s.name for s in xd.list_samples()]
    assert "not installed" in error_of(xd.load_sample, "lastfm_demo").problem
    shutil.copytree(SAMPLES / "friends_smokers", tmp_path / "lastfm_demo", dirs_exist_ok=True)
    assert "lastfm_demo" in [s.name for s in xd.list_samples()]
    assert xd.load_sample("lastfm_demo").name == "lastfm_demo"


def test_sample_data_is_small():
    total = sum(f.stat().st_size for f in SAMPLES.rglob("*") if f.is_file())
    assert total < 2 * 1024 * 1024


def test_large_file_loads_vectorised(tmp_path):
    """A 60k-line triples file loads (smoke test of the vectorised path; speed is in bench/)."""
    rng = np.random.default_rng(0)
    heads = rng.integers(0, 5000, 60_000)
    tails = rng.integers(0, 5000, 60_000)
    rels = np.array(["r1", "r2", "r3"])[rng.integers(0, 3, 60_000)]
    lines = pd.Series(heads.astype(str)) + "\t" + rels + "\t" + pd.Series(tails.astype(str))
    data = ("\n".join(lines.drop_duplicates()) + "\n").encode()
    ds = xd.load(("big.tsv", data))
    assert ds.n_atoms("obs") == len(pd.Series(lines).drop_duplicates())
