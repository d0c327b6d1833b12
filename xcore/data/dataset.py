"""`RelationalDataset`: predicates plus per-predicate tables of ground atoms with truth values."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping

import numpy as np
import pandas as pd

from xcore.data.schema import PARTITIONS, Predicate, Schema, arg_columns
from xcore.errors import DataError

if TYPE_CHECKING:
    import networkx as nx

    from xcore.data.predictions import UserPredictions

PROVENANCE_COLUMNS = ("_file", "_line")
"""Optional columns loaders attach so validation can name the file and line of a bad row."""


def empty_table(arity: int) -> pd.DataFrame:
    """An empty atom table of the given arity: columns a0..a{n-1} (str) and value (float)."""
    cols = {c: np.empty(0, dtype=object) for c in arg_columns(arity)}
    cols["value"] = np.empty(0, dtype=np.float64)
    return pd.DataFrame(cols, copy=False)


@dataclass
class RelationalDataset:
    """A schema of predicates and, per predicate, observed, target and truth atom tables.

    Each table has argument columns ``a0..a{k-1}`` (strings, or categoricals of strings: the
    tabular loader keeps them categorical, a code per atom) and a ``value`` column in [0, 1]
    (targets may have NaN: no initial value). Construction validates everything and raises
    `DataError` naming file and line (from ``_file``/``_line`` columns when a loader gave them).
    """

    schema: Schema
    tables: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    name: str = "dataset"
    description: str = ""
    tabular: pd.DataFrame | None = None
    label: str | None = None
    """For tabular data (the classifier page): the original table and its label column."""
    rules: tuple[str, ...] = ()
    """Rules that came with the data (a PSL project's model), as PSL text: a starting model."""
    user_predictions: "UserPredictions | None" = None
    """A user's model's predictions whose outputs are this dataset's labels (`xcore.data.predictions`,
    set by `with_predictions`): runs on it are surrogates of that model and report their fidelity."""

    def __post_init__(self) -> None:
        if isinstance(self.schema, (list, tuple)):
            self.schema = Schema.of(self.schema)
        self.rules = tuple(str(r) for r in self.rules)
        self.tables = _normalise_tables(self.schema, self.tables)

    # ------------------------------------------------------------------ identity
    def fingerprint(self) -> str:
        """A content hash of everything a result can depend on: schema with flags, types and templates,
        every atom table (values included) and the tabular part with its label (not the name).

        Runs and caches are keyed by it, so two uploads with one file name but other content, or one
        dataset before and after a flag is changed, never share a result.
        """
        h = hashlib.sha256(b"xcore.dataset.v2|")
        memo: dict = {}
        for p in self.schema:
            h.update(repr((p.name, p.arity, p.types, p.closed, p.explainable, p.template)).encode())
            for part in PARTITIONS:
                t = self.tables[p.name][part]
                h.update(f"{part}:{len(t)}|".encode())
                for c in (c for c in t.columns if c not in PROVENANCE_COLUMNS) if len(t) else ():
                    h.update(f"{c}|".encode() + _row_hashes(t[c], memo).tobytes())
        if self.tabular is not None:
            h.update(f"tabular:{self.label}|{list(map(str, self.tabular.columns))}|{len(self.tabular)}".encode())
            for c in self.tabular.columns:
                h.update(_row_hashes(self.tabular[c], memo).tobytes())
        if self.rules:
            h.update(("rules:" + "\n".join(self.rules)).encode())
        if self.user_predictions is not None:
            h.update(f"predictions:{self.user_predictions.fingerprint()}".encode())
        return h.hexdigest()[:32]

    # ------------------------------------------------------------------ access
    @property
    def predicates(self) -> list[Predicate]:
        return list(self.schema)

    def predicate(self, name: str) -> Predicate:
        return self.schema[name]

    def table(self, pred: str, partition: str) -> pd.DataFrame:
        """The atom table of one predicate and partition ('obs', 'targets' or 'truth')."""
        if partition not in PARTITIONS:
            raise DataError(f"unknown partition {partition!r}; use one of {', '.join(PARTITIONS)}")
        self.schema[pred]  # raises a clear DataError for unknown predicates
        return self.tables[pred][partition]

    def observations(self, pred: str) -> pd.DataFrame:
        return self.table(pred, "obs")

    def targets(self, pred: str) -> pd.DataFrame:
        return self.table(pred, "targets")

    def truth(self, pred: str) -> pd.DataFrame:
        return self.table(pred, "truth")

    @property
    def open_predicates(self) -> list[str]:
        return [p.name for p in self.schema if not p.closed]

    @property
    def target_predicates(self) -> list[str]:
        """Predicates that have at least one target atom."""
        return [p.name for p in self.schema if len(self.tables[p.name]["targets"])]

    def n_atoms(self, partition: str | None = None) -> int:
        parts = PARTITIONS if partition is None else (partition,)
        return int(sum(len(t[part]) for t in self.tables.values() for part in parts))

    # ------------------------------------------------------------------ domains
    def constants(self, type_name: str | None = None) -> np.ndarray:
        """Sorted distinct constants appearing in arguments of the given type (all types if None)."""
        chunks: list[np.ndarray] = []
        for p in self.schema:
            for i, t in enumerate(p.types):
                if type_name is not None and t != type_name:
                    continue
                for part in PARTITIONS:
                    chunks.append(self.tables[p.name][part][f"a{i}"].to_numpy(dtype=object))
        if not chunks:
            return np.array([], dtype=object)
        return np.unique(np.concatenate(chunks).astype(str)).astype(object)

    def types(self) -> list[str]:
        """Distinct argument types in declaration order."""
        seen: dict[str, None] = {}
        for p in self.schema:
            for t in p.types:
                seen.setdefault(t, None)
        return list(seen)

    # ------------------------------------------------------------------ summaries
    def summary(self) -> pd.DataFrame:
        """One row per predicate: arity, types, flags and atom counts per partition."""
        rows = []
        for p in self.schema:
            t = self.tables[p.name]
            rows.append(
                {
                    "predicate": p.name,
                    "arity": p.arity,
                    "types": ", ".join(p.types),
                    "closed": p.closed,
                    "explainable": p.explainable,
                    "observations": len(t["obs"]),
                    "targets": len(t["targets"]),
                    "truth": len(t["truth"]),
                    "template": p.template or "",
                }
            )
        return pd.DataFrame(rows)

    def value_histogram(self, pred: str, partition: str = "obs", bins: int = 10) -> pd.DataFrame:
        """Counts of truth values in `bins` equal-width bins over [0, 1]."""
        values = self.table(pred, partition)["value"].dropna().to_numpy()
        counts, edges = np.histogram(values, bins=bins, range=(0.0, 1.0))
        return pd.DataFrame({"low": edges[:-1], "high": edges[1:], "count": counts})

    def preview(self, pred: str, n: int = 20) -> pd.DataFrame:
        """The first `n` atoms of each partition of a predicate, with a `partition` column."""
        frames = [_plain(self.table(pred, part).head(n)).assign(partition=part) for part in PARTITIONS]
        return pd.concat(frames, ignore_index=True)

    def long_frame(self) -> pd.DataFrame:
        """Every atom as one row: predicate, a0..aK (K = max arity), value, partition."""
        frames = []
        for p in self.schema:
            for part in PARTITIONS:
                t = self.tables[p.name][part]
                if len(t):
                    frames.append(t.assign(predicate=p.name, partition=part))
        if not frames:
            return pd.DataFrame(columns=["predicate", "value", "partition"])
        out = pd.concat(frames, ignore_index=True)
        cols = ["predicate"] + [c for c in out.columns if c.startswith("a") and c[1:].isdigit()]
        cols = sorted(set(cols) - {"predicate"}, key=lambda c: int(c[1:]))
        return out[["predicate", *cols, "value", "partition"]]

    def predicate_graph(self, hub_threshold: int = 6) -> nx.Graph:
        """Predicates as nodes, joined when they share an argument type (the relational structure).

        A type shared by more than `hub_threshold` predicates (every column of a table shares the row
        type) becomes one hub node (``kind="type"``) joined to each of them instead of a clique, so
        wide tables draw as a star rather than a hairball.
        """
        import networkx as nx  # only the predicate graph needs it (0.2 s to import)

        g = nx.Graph()
        preds = list(self.schema)
        for p in preds:
            g.add_node(p.name, arity=p.arity, closed=p.closed, explainable=p.explainable, kind="predicate",
                       atoms=sum(len(self.tables[p.name][part]) for part in PARTITIONS))
        users: dict[str, list[str]] = {}
        for p in preds:
            for t in dict.fromkeys(p.types):
                users.setdefault(t, []).append(p.name)
        hubs = {t for t, names in users.items() if len(names) > hub_threshold}
        for t in sorted(hubs):
            hub = f"type {t}"
            g.add_node(hub, arity=0, closed=True, explainable=False, atoms=0, kind="type")
            for name in users[t]:
                g.add_edge(hub, name, types=[t])
        for i, p in enumerate(preds):
            for q in preds[i + 1:]:
                shared = sorted((set(p.types) & set(q.types)) - hubs)
                if shared:
                    g.add_edge(p.name, q.name, types=shared)
        return g

    # ------------------------------------------------------------------ edits
    def with_flags(self, pred: str, **flags: object) -> "RelationalDataset":
        """A copy (tables shared, not copied) with one predicate's flags changed."""
        p = self.schema[pred].with_flags(**flags)
        preds = {**self.schema.predicates, pred: p}
        return RelationalDataset(Schema(dict(preds)), self.tables, name=self.name,
                                 description=self.description, tabular=self.tabular, label=self.label,
                                 rules=self.rules, user_predictions=self.user_predictions)

    def subset(self, preds: Iterable[str]) -> "RelationalDataset":
        """A dataset with only the named predicates."""
        keep = [self.schema[p] for p in preds]
        return RelationalDataset(Schema.of(keep), {p.name: self.tables[p.name] for p in keep},
                                 name=self.name, description=self.description)


def _row_hashes(column: pd.Series, memo: dict) -> np.ndarray:
    """One uint64 per row, equal for equal values whether the column holds strings or categories.

    A categorical's categories are hashed once per categories object (`memo`; every table of a
    loaded table shares its row constants), then looked up by code: pandas would hash them again
    for each table, which took seconds for a million rows.
    """
    if isinstance(column.dtype, pd.CategoricalDtype) and not column.isna().any():
        categories = column.cat.categories
        if id(categories) not in memo:  # the index is kept in memo, so its id stays its own
            memo[id(categories)] = (categories, pd.util.hash_pandas_object(
                pd.Series(categories, copy=False), index=False).to_numpy())
        return memo[id(categories)][1][column.array.codes]
    return pd.util.hash_pandas_object(column, index=False).to_numpy()


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """A few rows with categorical columns as plain values (concatenating categoricals with other
    categories would first unite every category: a million row names for a 50-row preview)."""
    cats = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame.assign(**{c: np.asarray(frame[c].array, dtype=object) for c in cats}) if cats else frame


# ---------------------------------------------------------------------- validation
def _normalise_tables(schema: Schema, tables: Mapping[str, Mapping[str, pd.DataFrame]]) -> dict:
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
    file_col, line_col = _provenance(df, p, part)
    clean = pd.DataFrame({**args, "value": value_col, "_file": file_col, "_line": line_col}, copy=False)
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
