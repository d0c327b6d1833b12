"""Writing a dataset as Aleph-style Prolog files: ``.b`` background facts, ``.f`` / ``.n`` positive and
negative examples of the target (quoted where an atom needs it)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.errors import DataError

_BARE = re.compile(r"^(?:[a-z][A-Za-z0-9_]*|[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$")


def prolog_term(values: pd.Series) -> pd.Series:
    """Constants as Prolog terms: bare atoms and numbers as they are, anything else quoted."""
    s = values.astype(str).reset_index(drop=True)
    bare = s.str.match(_BARE.pattern).to_numpy(dtype=bool)
    quoted = "'" + s.str.replace("\\", "\\\\", regex=False).str.replace("'", "\\'", regex=False) \
        .str.replace("\n", "\\n", regex=False).str.replace("\t", "\\t", regex=False) + "'"
    return s.where(bare, quoted)


def _functor(name: str) -> str:
    return name if re.match(r"^[a-z][A-Za-z0-9_]*$", name) else f"'{name}'"


def _fact_lines(p: Predicate, table: pd.DataFrame) -> list[str]:
    head = _functor(p.name)
    if p.arity == 0:
        return [f"{head}."] * len(table)
    args = prolog_term(table["a0"])
    for c in p.columns[1:]:
        args = args.str.cat(prolog_term(table[c]), sep=",")
    return list(head + "(" + args + ").")


def _same_atoms(a: pd.DataFrame, b: pd.DataFrame, cols: list[str]) -> bool:
    """Whether two (deduplicated) atom tables hold the same atoms."""
    if len(a) != len(b):
        return False
    return not cols or not len(a) or len(a[cols].merge(b[cols], on=cols)) == len(a)


def write_prolog(ds: RelationalDataset, path: str | os.PathLike, stem_name: str = "train") -> list[Path]:
    """Write ``<stem>.b`` (observations, with mode declarations), ``.f`` and ``.n`` (targets).

    Raises DataError when the dataset does not fit Aleph files: observations must have value 1,
    targets must be exactly the truth atoms, with truth 0 or 1.
    """
    folder = Path(path)
    header = [f"% {' '.join(str(ds.name).split())}: written by xcore"]
    b: list[str] = []
    f: list[str] = []
    n: list[str] = []
    for p in ds.predicates:
        if p.arity and re.match(r"^[a-z][A-Za-z0-9_]*$", p.name) and all(
                re.match(r"^[a-z][A-Za-z0-9_]*$", t) for t in p.types):
            modes = ",".join("+" + t for t in p.types)
            header.append(f":- {'modeh' if not p.closed else 'modeb'}(*,{p.name}({modes})).")
        obs, tgt, truth = (ds.table(p.name, part) for part in ("obs", "targets", "truth"))
        if (obs["value"] != 1.0).any():
            raise DataError(f"cannot write {p.name} to Prolog: an observation has a value other than 1")
        if not _same_atoms(tgt, truth, p.columns):
            raise DataError(f"cannot write {p.name} to Prolog: targets and truth atoms differ")
        if tgt["value"].notna().any():
            raise DataError(f"cannot write {p.name} to Prolog: targets have initial values")
        if not truth["value"].isin([0.0, 1.0]).all():
            raise DataError(f"cannot write {p.name} to Prolog: a truth value is not 0 or 1")
        b.extend(_fact_lines(p, obs))
        f.extend(_fact_lines(p, truth[truth["value"] == 1.0]))
        n.extend(_fact_lines(p, truth[truth["value"] == 0.0]))
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for ext, lines in ((".b", header + b), (".f", f), (".n", n)):
        target = folder / f"{stem_name}{ext}"
        if ext != ".b" and not lines:
            target.unlink(missing_ok=True)
            continue
        target.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
        out.append(target)
    return out
