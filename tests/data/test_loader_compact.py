"""Compact, columnar loading (issue 18 memory goal): each fast path agrees with a reference.

- dictionary-encoded records agree with `read_records` (and `check_text` with `decode_text`);
- tabular CSV agrees with a pandas.read_csv reference, its atom tables are categorical;
- categorical argument columns are validated like string ones;
- Prolog's columnar fact path agrees with the clause scanner, atoms and errors.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import xcore.data.io.prolog as prolog
from xcore.data import RelationalDataset
from xcore.data.io import load
from xcore.data.io.columnar import check_text, read_encoded_records, read_records
from xcore.data.io.files import decode_text
from xcore.data.io.tabular import MISSING
from xcore.data.schema import Predicate
from xcore.errors import DataError

SEEDS = range(25)


def _cell(rng: np.random.Generator, kind: str) -> str:
    pad = rng.choice(["", "", " ", "  ", "\t", "\u00a0"])
    if rng.random() < 0.15:
        return str(rng.choice(["?", "", " "]))
    text = {"int": str(rng.integers(-5, 30)), "float": f"{rng.normal():.3f}",
            "text": str(rng.choice(["a", "b", "x y", "Zed", "é", "c1"]))}[kind]
    return pad + text + str(rng.choice(["", " "]))


def _table_csv(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    kinds = list(rng.choice(["int", "float", "text"], size=int(rng.integers(2, 6))))
    header = ",".join(f"Col {j}" for j in range(len(kinds)))
    rows = []
    for _ in range(int(rng.integers(1, 40))):
        rows.append(",".join(_cell(rng, k).replace("\t", " " if rng.random() < 0.5 else "\t") for k in kinds))
        if rng.random() < 0.1:
            rows.append(rng.choice(["", "   ", ",".join("" for _ in kinds)]))
    if rng.random() < 0.2:  # quoted fields take the csv-module path
        rows.append(",".join('"q, ' + str(j) + '"' for j in range(len(kinds))))
    newline = "\r\n" if rng.random() < 0.2 else "\n"
    text = newline.join([header, *rows]) + newline
    return (b"\xef\xbb\xbf" if rng.random() < 0.1 else b"") + text.encode()


def _reference(data: bytes) -> pd.DataFrame:
    """Stripped cells of a table by pandas.read_csv (no NA parsing), blank records dropped."""
    frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, skip_blank_lines=True,
                        encoding="utf-8-sig")
    frame = frame.apply(lambda c: c.str.strip())
    return frame[~(frame == "").all(axis=1)].reset_index(drop=True)


@pytest.mark.parametrize("seed", SEEDS)
def test_encoded_records_agree_with_read_records(seed: int) -> None:
    data = _table_csv(seed)
    plain, encoded = read_records(data, "t.csv", ","), read_encoded_records(data, "t.csv", ",")
    assert encoded.lines.tolist() == plain.lines.tolist()
    assert encoded.bad == plain.bad
    assert [c.to_pylist() for c in encoded.columns] == [c.to_pylist() for c in plain.columns]


@pytest.mark.parametrize("data", [b"", b"  \n\t", b"\xef\xbb\xbf", b"a,b\n\x00", b"a,b\n1,\xff\n",
                                  "a\u3000".encode()[:-1], "\u3000\n".encode(), b"ok,1\n"])
def test_check_text_raises_what_decode_text_raises(data: bytes) -> None:
    for block in (1, 2, 4096):
        try:
            decode_text(data, "f.csv")
        except DataError as expected:
            with pytest.raises(DataError) as got:
                check_text(data, "f.csv", block=block)
            assert str(got.value) == str(expected)
        else:
            check_text(data, "f.csv", block=block)


@pytest.mark.parametrize("seed", SEEDS)
def test_tabular_agrees_with_pandas_reference(seed: int) -> None:
    data = _table_csv(seed)
    try:
        ds = load(("t.csv", data))
    except DataError:
        pytest.skip("a generated table without rows or with a bad record")
    ref = _reference(data)
    assert len(ds.tabular) == len(ref)
    for j, c in enumerate(ds.tabular.columns):
        cells = ref.iloc[:, j]
        present = ~cells.isin(MISSING).to_numpy()
        atoms = set(zip(ds.table(c, "truth" if c == ds.label else "obs")["a0"].astype(str),
                        ds.table(c, "truth" if c == ds.label else "obs")["a1"].astype(str)))
        assert atoms == {(f"r{i + 1}", v) for i, v in enumerate(cells) if present[i]}
        col = ds.tabular[c]
        if pd.api.types.is_numeric_dtype(col):
            np.testing.assert_allclose(col.to_numpy(dtype=float)[present], cells[present].astype(float))
            assert col[~present].isna().all()
        else:
            assert col[present].tolist() == cells[present].tolist()
            assert col[~present].isna().all()


def test_tabular_atom_tables_are_categorical_and_sort_as_text() -> None:
    rows = "\n".join(f"{i % 3},{'yes' if i % 2 else 'no'}" for i in range(12))
    ds = load(("t.csv", f"x,label\n{rows}\n".encode()))
    obs = ds.table("x", "obs")
    assert isinstance(obs["a0"].dtype, pd.CategoricalDtype) and isinstance(obs["a1"].dtype, pd.CategoricalDtype)
    texts = obs["a0"].astype(str)
    assert obs["a0"].sort_values().astype(str).tolist() == sorted(texts)
    assert list(obs["a0"].cat.categories) == sorted(obs["a0"].cat.categories)
    assert ds.constants("row").tolist() == sorted(f"r{i}" for i in range(1, 13))
    preview = ds.preview("x", 3)
    assert preview["a0"].tolist() == ["r1", "r2", "r3"] and preview["a1"].tolist() == ["0", "1", "2"]
    # one row constant column and one default value column serve every table
    other = ds.table("label", "truth")
    assert np.shares_memory(obs["a0"].array.codes, other["a0"].array.codes)


def test_shared_value_columns_are_copied_on_write() -> None:
    rows = "\n".join(f"{i},{i % 3},{i % 2}" for i in range(6))
    ds = load(("t.csv", f"x,y,label\n{rows}\n".encode()))
    a, b = ds.table("x", "obs"), ds.table("y", "obs")
    assert np.shares_memory(a["value"].to_numpy(), b["value"].to_numpy())
    a.loc[0, "value"] = 0.25
    assert a["value"].iloc[0] == 0.25 and (b["value"] == 1.0).all()
    assert (ds.table("y", "obs")["value"] == 1.0).all()


def _cat(values: list, categories: list | None = None) -> pd.Categorical:
    return pd.Categorical(values, categories=categories)


def test_categorical_arguments_are_validated() -> None:
    p = Predicate("p", 2)
    ok = pd.DataFrame({"a0": _cat(["a", "b"], ["a", "b", " "]), "a1": _cat([1, 2]), "value": [1.0, 0.5]})
    ds = RelationalDataset([p], {"p": {"obs": ok}})
    assert ds.table("p", "obs")["a1"].astype(str).tolist() == ["1", "2"]  # integer categories as text
    blank = ok.assign(a0=_cat(["a", " "], ["a", " "]), _file="f.csv", _line=[3, 7])
    with pytest.raises(DataError, match="empty argument a0") as e:
        RelationalDataset([p], {"p": {"obs": blank}})
    assert e.value.line == 7 and e.value.file == "f.csv"
    missing = ok.assign(a1=_cat([1, None]))
    with pytest.raises(DataError, match="empty argument a1"):
        RelationalDataset([p], {"p": {"obs": missing}})
    twice = pd.DataFrame({"a0": _cat(["a", "a"]), "a1": _cat(["b", "b"]), "value": [1.0, 0.5]})
    with pytest.raises(DataError, match="appears twice with different values"):
        RelationalDataset([p], {"p": {"obs": twice}})
    same = twice.assign(value=[0.5, 0.5])
    assert len(RelationalDataset([p], {"p": {"obs": same}}).table("p", "obs")) == 1


# ---------------------------------------------------------------------- Prolog
def _prolog_text(seed: int) -> str:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(int(rng.integers(1, 30))):
        r = rng.random()
        name = str(rng.choice(["p", "q", "edge", "hasCar", "r2"]))
        arity = int(rng.integers(0, 4))
        args = [str(rng.choice(["a", "b1", "12", "-3", "1.5e3", "'X y'", "f(a)", "[1,2]", "V"]))
                for _ in range(arity)]
        sp = str(rng.choice(["", " ", "  ", "\t"]))
        fact = name + (f"({sp}{(sp + ',' + sp).join(args)}{sp})" if arity else "") + f"{sp}."
        if r < 0.6:
            out.append(fact)
        elif r < 0.7:
            out.append(str(rng.choice(["", "   ", "% a comment.", "% no dot"])))
        elif r < 0.8:
            out.append(str(rng.choice([":- modeh(*, p(+car, -int)).", ":- dynamic p/2.", ":- foo"])))
        elif r < 0.9:
            out.append(fact + " " + fact)
        else:
            out.append(fact[:-1] + "\n  .")
    return "\n".join(out) + str(rng.choice(["", "\n"]))


def _outcome(text: str):
    """Atoms (per key: rows with their lines) and modes, or the error's text, file and line."""
    try:
        facts = prolog.parse_prolog(text, "t.b")
    except DataError as e:
        return ("error", str(e), e.file, e.line)
    atoms = {}
    for key, blocks in facts.atoms.items():
        rows = []
        for cols, lines in blocks:
            values = [list(map(str, c)) for c in cols]
            rows += [(int(ln), tuple(v[i] for v in values)) for i, ln in enumerate(lines)]
        atoms[key] = sorted(rows)
    return atoms, facts.modes


@pytest.mark.parametrize("seed", range(60))
def test_prolog_fact_path_agrees_with_the_scanner(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _prolog_text(seed)
    fast = _outcome(text)
    monkeypatch.setattr(prolog, "FAST_MIN_CHARS", 10 ** 9)  # the clause scanner alone
    assert fast == _outcome(text)


def test_fingerprint_is_the_same_for_string_and_categorical_tables() -> None:
    rows = "\n".join(f"{i % 4},{'yes' if i % 3 else 'no'}" for i in range(9))
    ds = load(("t.csv", f"x,label\n{rows}\n".encode()))
    as_text = {p: {part: t.astype({c: "str" for c in ("a0", "a1")}) for part, t in parts.items()}
               for p, parts in ds.tables.items()}
    plain = RelationalDataset(ds.schema, as_text, tabular=ds.tabular, label=ds.label)
    assert not isinstance(plain.table("x", "obs")["a0"].dtype, pd.CategoricalDtype)
    assert plain.fingerprint() == ds.fingerprint()
    changed = dict(as_text, x={**as_text["x"], "obs": as_text["x"]["obs"].assign(a1=lambda t: t["a1"] + "0")})
    assert RelationalDataset(ds.schema, changed, tabular=ds.tabular, label=ds.label).fingerprint() != ds.fingerprint()
