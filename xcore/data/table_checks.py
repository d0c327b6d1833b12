"""Validation of a dataset's atom tables against its schema: argument columns, truth values in [0, 1],
repeated atoms, targets that are also observed; clean copies without the provenance columns loaders
attach (the file and line a bad row names)."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from xcore.data.schema import PARTITIONS, Predicate, Schema, arg_columns
from xcore.errors import DataError

PROVENANCE_COLUMNS = ("_file", "_line")
"""Optional columns loaders attach so validation can name the file and line of a bad row."""


def empty_table(arity: int) -> pd.DataFrame:
    """An empty atom table of the given arity: columns a0..a{n-1} (str) and value (float)."""
    cols = {c: np.empty(0, dtype=object) for c in arg_columns(arity)}
    cols["value"] = np.empty(0, dtype=np.float64)
    return pd.DataFrame(cols, copy=False)


def normalise_tables(schema: Schema, tables: Mapping[str, Mapping[str, pd.DataFrame]]) -> dict:
    """Check every table against the schema and return clean copies (no provenance columns)."""
    for pred in tables:
        if not isinstance(tables[pred], Mapping):
            raise DataError(f"tables[{pred!r}] must map partitions ({', '.join(PARTITIONS)}) to tables, "
                            f"got {type(tables[pred]).__name__}")
        if pred not in schema:
            file = _first_file(tables[pred])
            raise DataError(f"unknown predicate {pred!r} (not declared in the schema)", file=file)
    out: dict[str, dict[str, pd.DataFrame]] = {}
    shared: dict = {}  # columns and checks shared between tables (see _constant)
    for p in schema:
        given = tables.get(p.name, {})
        for part in given:
            if part not in PARTITIONS:
                raise DataError(f"predicate {p.name}: unknown partition {part!r}",
                                file=_first_file({part: given[part]}))
        parts = {part: _clean_table(p, part, given.get(part), shared) for part in PARTITIONS}
        _check_target_not_observed(p, parts)
        out[p.name] = {part: _without_provenance(t) for part, t in parts.items()}
    return out


def _without_provenance(table: pd.DataFrame) -> pd.DataFrame:
    """The table without its file and line columns (an empty table has none: no copy made)."""
    if "_file" not in table.columns and "_line" not in table.columns:
        return table
    return table.drop(columns=list(PROVENANCE_COLUMNS), errors="ignore")


def _first_file(parts: Mapping[str, pd.DataFrame]) -> str | None:
    for df in parts.values():
        if df is not None and "_file" in df.columns and len(df):
            return str(df["_file"].iloc[0])
    return None


def _where(df: pd.DataFrame, idx: int, p: Predicate, part: str) -> tuple[str, int]:
    """File and 1-based line of row position `idx`, from provenance columns when present."""
    if "_file" in df.columns and "_line" in df.columns:
        return str(df["_file"].iloc[idx]), int(df["_line"].iloc[idx])
    return f"{p.name}/{part}", idx + 1


def _clean_table(p: Predicate, part: str, df: pd.DataFrame | None,
                 shared: dict | None = None) -> pd.DataFrame:
    """A validated copy of one atom table (arguments, value, provenance), duplicates dropped.

    Categorical argument columns (string categories) stay categorical: their checks run on the
    categories and codes, so a table-shaped dataset with millions of atoms is never a string per
    cell. `shared` (one per dataset) lets tables share default value columns and checks.
    """
    if df is None:
        return empty_table(p.arity)
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"predicate {p.name}/{part}: expected a table, got {type(df).__name__}")
    df = df.reset_index(drop=True)
    cols = p.columns
    arg_like = [c for c in df.columns if c not in (*PROVENANCE_COLUMNS, "value")]
    if sorted(arg_like) != sorted(cols):
        file, line = _where(df, 0, p, part) if len(df) else (f"{p.name}/{part}", None)
        raise DataError(
            f"predicate {p.name} has arity {p.arity} but its {part} table has argument columns "
            f"{arg_like}", file=file, line=line)
    args = _clean_arguments(df, cols, p, part, shared)
    value_col = _clean_values(df, p, part, shared)
    v = np.asarray(value_col)
    file_col, line_col = _provenance(df, p, part)
    clean = pd.DataFrame({**args, "value": value_col, "_file": file_col, "_line": line_col}, copy=False)
    return _deduplicated(clean, cols, v, p)


def _clean_values(df: pd.DataFrame, p: Predicate, part: str, shared: dict | None) -> np.ndarray | pd.Series:
    """The truth values of a table as float64 in [0, 1] (targets may be NaN; no value column: the default)."""
    default = np.nan if part == "targets" else 1.0
    if "value" in df.columns:
        raw = df["value"]
        if pd.api.types.is_numeric_dtype(raw.dtype) and not pd.api.types.is_bool_dtype(raw.dtype):
            values = raw.astype("float64")  # already numbers (columnar loaders): nothing to parse
            bad = np.zeros(0, dtype=np.int64)
        else:
            values = pd.to_numeric(raw, errors="coerce").astype("float64")
            unread = np.flatnonzero(values.isna().to_numpy() & raw.notna().to_numpy())  # blank text reads as none
            bad = unread[(raw.iloc[unread].astype(str).str.strip() != "").to_numpy()]
        if len(bad):
            i = int(bad[0])
            file, line = _where(df, i, p, part)
            raise DataError(f"{p.name}: truth value {raw.iloc[i]!r} is not a number", file=file, line=line)
        value_col = (values.fillna(default) if part != "targets" else values).to_numpy()
    else:
        value_col = _constant(len(df), default, shared)
    v = np.asarray(value_col)
    out_of_range = ~np.isnan(v) & ((v < 0.0) | (v > 1.0))
    if part != "targets":
        out_of_range |= np.isnan(v)
    if out_of_range.any():
        i = int(np.flatnonzero(out_of_range)[0])
        file, line = _where(df, i, p, part)
        raise DataError(f"{p.name}: truth value {v[i]} is outside [0, 1]", file=file, line=line)
    return value_col


def _deduplicated(clean: pd.DataFrame, cols: list[str], v: np.ndarray, p: Predicate) -> pd.DataFrame:
    """The table with repeated atoms dropped, or a DataError when an atom repeats with another value."""
    if cols and len(clean) > 1 and _may_repeat(clean, cols) and clean.duplicated(subset=cols).any():
        firsts = clean.drop_duplicates(subset=cols, keep="first")[[*cols, "value"]]
        ref = clean[cols].merge(firsts, on=cols, how="left")["value"].to_numpy()
        differs = ~((ref == v) | (np.isnan(ref) & np.isnan(v)))
        if differs.any():
            i = int(np.flatnonzero(differs)[0])
            key = tuple(map(str, clean.loc[i, cols]))
            raise DataError(
                f"{p.atom_text(key)} appears twice with different values ({ref[i]} and {v[i]})",
                file=str(clean["_file"].iloc[i]), line=int(clean["_line"].iloc[i]))
        clean = clean.drop_duplicates(subset=cols, keep="first").reset_index(drop=True)
    elif not cols and len(clean) > 1:
        if len(np.unique(v)) > 1:
            raise DataError(f"{p.name} appears twice with different values",
                            file=str(clean["_file"].iloc[1]), line=int(clean["_line"].iloc[1]))
        clean = clean.iloc[:1].reset_index(drop=True)
    return clean


def _may_repeat(frame: pd.DataFrame, cols: list[str]) -> bool:
    """False when a categorical argument never repeats a value (then no atom can): a count of its
    codes, much cheaper than hashing every row."""
    for c in cols:
        if isinstance(frame[c].dtype, pd.CategoricalDtype):
            codes = frame[c].cat.codes.to_numpy()
            if len(codes) and np.bincount(codes).max() <= 1:
                return False
    return True


STACK_ROWS = 4096
"""Tables up to this many rows check their argument columns together (the per-column overheads
dominate there); longer ones column by column, which keeps Arrow-backed text out of Python objects."""


def _clean_arguments(df: pd.DataFrame, cols: list[str], p: Predicate, part: str,
                     shared: dict | None = None) -> dict[str, pd.Series]:
    """Every argument column as strings (or string categories); DataError for an empty argument.

    Categorical columns are checked on their categories; the other columns of the table are checked
    together, one string conversion for all of them (per column, a wide table of few rows spent
    milliseconds per column in pandas' overheads: 300 predicates of arity 64 took 25 s)."""
    out = {c: _clean_argument(df, c, p, part, shared) for c in cols
           if isinstance(df[c].dtype, pd.CategoricalDtype)}
    plain = [c for c in cols if c not in out]
    n = len(df)
    if len(plain) < 2 or n == 0 or n > STACK_ROWS:  # long columns: each checked on its own (Arrow kernels)
        out.update({c: _clean_argument(df, c, p, part, shared) for c in plain})
        return {c: out[c] for c in cols}
    stacked = np.concatenate([df[c].to_numpy(dtype=object) for c in plain])  # column after column
    nulls = pd.isna(stacked)
    if nulls.any():
        i = int(np.flatnonzero(nulls)[0])
        file, line = _where(df, i % n, p, part)
        raise DataError(f"{p.name}: empty argument {plain[i // n]}", file=file, line=line)
    texts = pd.Series(stacked, copy=False).astype(str)
    blank = ((texts.str.len() == 0) | texts.str.isspace()).to_numpy(dtype=bool)
    if blank.any():
        i = int(np.flatnonzero(blank)[0])
        file, line = _where(df, i % n, p, part)
        raise DataError(f"{p.name}: empty argument {plain[i // n]}", file=file, line=line)
    strings = texts.array  # the dtype a single column's astype(str) gives, sliced per column without copies
    for j, c in enumerate(plain):
        out[c] = pd.Series(strings[j * n:(j + 1) * n], name=c, copy=False)
    return {c: out[c] for c in cols}


def _clean_argument(df: pd.DataFrame, c: str, p: Predicate, part: str, shared: dict | None = None) -> pd.Series:
    """Argument column `c` as strings (or string categories); DataError for an empty one.

    `shared` remembers which categories are blank, per categories object (tables of one loaded
    table share their row constants)."""
    col = df[c]
    if isinstance(col.dtype, pd.CategoricalDtype):
        if not pd.api.types.is_string_dtype(col.cat.categories.dtype):
            col = col.cat.rename_categories(col.cat.categories.astype(str))
        codes = col.cat.codes.to_numpy()
        texts = col.cat.categories
        key = ("blank", id(texts))
        if shared is None or key not in shared:
            blank_text = np.asarray((texts.str.len() == 0) | texts.str.isspace(), dtype=bool)
            if shared is not None:
                shared[key] = (texts, blank_text)  # the index kept, so its id stays its own
        else:
            blank_text = shared[key][1]
        nulls = codes < 0
        blank = blank_text[codes] if blank_text.any() else np.zeros(len(col), dtype=bool)
    else:
        nulls = col.isna().to_numpy()
        blank = None
    if nulls.any():
        file, line = _where(df, int(np.flatnonzero(nulls)[0]), p, part)
        raise DataError(f"{p.name}: empty argument {c}", file=file, line=line)
    if blank is None:
        col = col.astype(str)
        blank = ((col.str.len() == 0) | col.str.isspace()).to_numpy(dtype=bool)  # no copies
    if blank.any():
        file, line = _where(df, int(np.flatnonzero(blank)[0]), p, part)
        raise DataError(f"{p.name}: empty argument {c}", file=file, line=line)
    return col


def _constant(n: int, value: float, shared: dict[tuple[int, float], pd.Series] | None) -> pd.Series:
    """A column of `n` copies of `value`, one per length through `shared`: tables built from it
    share its memory, and pandas' copy-on-write copies it for a table that is written to."""
    key = (n, value)
    if shared is None or key not in shared:
        column = pd.Series(np.full(n, value), copy=False)
        if shared is None:
            return column
        shared[key] = column
    return shared[key]


def _provenance(df: pd.DataFrame, p: Predicate, part: str) -> tuple[pd.Categorical, np.ndarray]:
    """File and line columns of a table (its own, or ``pred/part`` and the row number).

    The file is categorical: the few file names once, a small code per row (a string per row
    of a multi-million-row table took gigabytes).
    """
    if "_file" in df.columns and "_line" in df.columns:
        files = df["_file"]
        if isinstance(files.dtype, pd.CategoricalDtype) and not files.isna().any():  # as loaders give it
            codes, names = files.cat.codes.to_numpy(), files.cat.categories
        else:
            codes, names = pd.factorize(files, use_na_sentinel=False)
        return (pd.Categorical.from_codes(codes, [str(x) for x in names], validate=False),
                df["_line"].to_numpy(dtype=np.int64))
    return (pd.Categorical.from_codes(np.zeros(len(df), dtype=np.int8), [f"{p.name}/{part}"], validate=False),
            np.arange(1, len(df) + 1))


def _check_target_not_observed(p: Predicate, parts: dict[str, pd.DataFrame]) -> None:
    obs, tgt = parts["obs"], parts["targets"]
    if not len(obs) or not len(tgt):
        return
    cols = p.columns
    if cols:
        clash = tgt[cols].reset_index().merge(obs[cols], on=cols, how="inner")["index"].to_numpy()
    else:
        clash = np.array([0])
    if len(clash):
        i = int(np.min(clash))
        key = tuple(tgt.loc[i, cols]) if cols else ()
        raise DataError(f"target {p.atom_text(key)} is also an observation",
                        file=str(tgt["_file"].iloc[i]), line=int(tgt["_line"].iloc[i]))
