"""`RelationalDataset`: predicates plus per-predicate tables of ground atoms with truth values."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import numpy as np
import pandas as pd

from xcore.data.schema import PARTITIONS, Predicate, Schema
from xcore.data.table_checks import PROVENANCE_COLUMNS, normalise_tables
from xcore.errors import DataError
from xcore.optional_deps import import_optional

if TYPE_CHECKING:
    import networkx as nx

    from xcore.data.predictions import UserPredictions

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
        self.tables = normalise_tables(self.schema, self.tables)

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
        g = import_optional("networkx").Graph()  # start-up: only the predicate graph needs networkx (0.2 s)
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
