"""`AtomStore`: every ground atom of a dataset with a stable integer id, over integer constants.

Built once from a `RelationalDataset`. Constants are dictionary-encoded (sorted distinct strings
-> 0..C-1) so that grounding joins integers. Atom ids are deterministic: predicates in schema
order, within a predicate its observed rows then its target rows, in table order. Observed atoms
carry their value; target (open) atoms are the variables of inference (value NaN) and are
numbered 0..T-1 in atom-id order (`target_index`). Truth labels attach to targets (`truth`);
truth rows that are not targets are not atoms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import PARTITIONS, Predicate, Schema
from xcore.errors import DataError


@dataclass(frozen=True)
class PredicateAtoms:
    """The atoms of one predicate: ids ``offset .. offset+n-1``, observed rows first."""

    predicate: Predicate
    index: int
    offset: int
    n_obs: int
    n_targets: int
    args: np.ndarray
    """(n, arity) int32 constant ids."""

    @property
    def n(self) -> int:
        return self.n_obs + self.n_targets

    @property
    def ids(self) -> np.ndarray:
        """Atom ids of this predicate's atoms, in row order (int64)."""
        return np.arange(self.offset, self.offset + self.n, dtype=np.int64)


@dataclass
class AtomStore:
    """All ground atoms of a dataset (observations and targets) with stable integer ids."""

    schema: Schema
    constants: np.ndarray
    """Sorted distinct constant strings (object array); a constant's id is its position."""
    predicates: dict[str, PredicateAtoms]
    value: np.ndarray
    """(n_atoms,) float64: observed value, NaN for targets."""
    is_target: np.ndarray
    target_ids: np.ndarray
    """(n_targets,) int64 atom ids of the targets, ascending."""
    target_index: np.ndarray
    """(n_atoms,) int64: column of an atom among the targets, -1 for observed atoms."""
    truth: np.ndarray
    """(n_targets,) float64 truth labels aligned with `target_ids`, NaN where unknown."""
    target_initial: np.ndarray
    """(n_targets,) float64 initial values given in the targets tables (NaN if none)."""
    domains: dict[str, np.ndarray] = field(default_factory=dict)
    """Per argument type: sorted constant ids appearing in that type's positions."""

    # ------------------------------------------------------------------ build
    @classmethod
    def from_dataset(cls, dataset: RelationalDataset) -> "AtomStore":
        """Encode constants and number every observed and target atom of `dataset`."""
        preds = list(dataset.schema)
        constants, encoded = _encoded_arguments(dataset)

        domains_parts: dict[str, list[np.ndarray]] = {}
        for p in preds:
            for i, typ in enumerate(p.types):
                for part in PARTITIONS:
                    domains_parts.setdefault(typ, []).append(encoded[(p.name, i, part)])
        domains = {t: np.unique(np.concatenate(parts)).astype(np.int32) for t, parts in domains_parts.items()}

        table: dict[str, PredicateAtoms] = {}
        values, targets, truths, initial = [], [], [], []
        offset = 0
        for k, p in enumerate(preds):
            obs, tgt = dataset.tables[p.name]["obs"], dataset.tables[p.name]["targets"]
            n_obs, n_tgt = len(obs), len(tgt)
            args = np.empty((n_obs + n_tgt, p.arity), dtype=np.int32)
            for i in range(p.arity):
                args[:n_obs, i] = encoded[(p.name, i, "obs")]
                args[n_obs:, i] = encoded[(p.name, i, "targets")]
            table[p.name] = PredicateAtoms(p, k, offset, n_obs, n_tgt, args)
            values.append(obs["value"].to_numpy(dtype=np.float64))
            values.append(np.full(n_tgt, np.nan))
            targets.append(np.zeros(n_obs, dtype=bool))
            targets.append(np.ones(n_tgt, dtype=bool))
            initial.append(tgt["value"].to_numpy(dtype=np.float64))
            truths.append(_target_truth(p, args[n_obs:], encoded, dataset.tables[p.name]["truth"]))
            offset += n_obs + n_tgt

        value = np.concatenate(values) if values else np.zeros(0)
        is_target = np.concatenate(targets) if targets else np.zeros(0, dtype=bool)
        target_ids = np.flatnonzero(is_target).astype(np.int64)
        target_index = np.full(len(value), -1, dtype=np.int64)
        target_index[target_ids] = np.arange(len(target_ids), dtype=np.int64)
        return cls(
            schema=dataset.schema,
            constants=constants,
            predicates=table,
            value=value,
            is_target=is_target,
            target_ids=target_ids,
            target_index=target_index,
            truth=np.concatenate(truths) if truths else np.zeros(0),
            target_initial=np.concatenate(initial) if initial else np.zeros(0),
            domains=domains,
        )

    # ------------------------------------------------------------------ sizes
    @property
    def n_atoms(self) -> int:
        return int(len(self.value))

    @property
    def n_targets(self) -> int:
        return int(len(self.target_ids))

    @property
    def n_constants(self) -> int:
        return int(len(self.constants))

    def __len__(self) -> int:
        return self.n_atoms

    # ------------------------------------------------------------------ per-atom arrays
    @cached_property
    def pred(self) -> np.ndarray:
        """(n_atoms,) int32 predicate index (schema order) of every atom."""
        out = np.empty(self.n_atoms, dtype=np.int32)
        for pa_ in self.predicates.values():
            out[pa_.offset:pa_.offset + pa_.n] = pa_.index
        return out

    @cached_property
    def args(self) -> np.ndarray:
        """(n_atoms, max arity) int32 constant ids of every atom, padded with -1."""
        width = max((p.predicate.arity for p in self.predicates.values()), default=0)
        out = np.full((self.n_atoms, width), -1, dtype=np.int32)
        for p in self.predicates.values():
            out[p.offset:p.offset + p.n, :p.predicate.arity] = p.args
        return out

    @cached_property
    def observed_value_ext(self) -> np.ndarray:
        """(n_atoms + 1,) observed values, 0 for targets and a trailing 0 so index -1 (a missing
        atom) reads 0: lets linear forms gather without masks."""
        return np.append(np.where(self.is_target, 0.0, self.value), 0.0)

    @cached_property
    def target_index_ext(self) -> np.ndarray:
        """(n_atoms + 1,) `target_index` with a trailing -1 for index -1 (a missing atom); int32
        when it fits (half the memory traffic of the gathers in linear forms)."""
        dtype = np.int32 if self.n_targets < 2**31 - 1 else np.int64
        return np.append(self.target_index, -1).astype(dtype)

    @property
    def predicate_names(self) -> list[str]:
        return list(self.predicates)

    # ------------------------------------------------------------------ constants
    def constant_id(self, name: str) -> int:
        """Id of one constant string, -1 when no atom mentions it."""
        i = int(np.searchsorted(self.constants, name))
        return i if i < len(self.constants) and self.constants[i] == name else -1

    def constant_ids(self, names: object) -> np.ndarray:
        """Ids of many constant strings (vectorised), -1 where unknown."""
        arr = _as_arrow_strings(pd.Series(np.asarray(names, dtype=object)).astype(str))
        return _encode(arr, self.constants, missing=-1)

    def domain(self, type_name: str) -> np.ndarray:
        """Sorted constant ids appearing in arguments of this type (empty if the type is unused)."""
        return self.domains.get(type_name, np.zeros(0, dtype=np.int32))

    # ------------------------------------------------------------------ statistics
    def n_rows(self, pred: str) -> int:
        """Number of atoms (observed + target) of a predicate."""
        return self.predicates[pred].n

    def n_distinct(self, pred: str, columns: int | tuple[int, ...]) -> int:
        """Number of distinct constants (or constant tuples) in argument column(s) of a predicate."""
        cols = (columns,) if isinstance(columns, (int, np.integer)) else tuple(sorted(columns))
        key = (pred, cols)
        if key not in self._distinct_cache:
            args = self.predicates[pred].args
            if len(cols) == args.shape[1] and len(cols) > 0:
                n = len(args)  # whole rows are unique
            elif not cols:
                n = 1 if len(args) else 0
            else:
                n = len(pd.unique(_row_keys(args[:, list(cols)], self.n_constants)))
            self._distinct_cache[key] = int(n)
        return self._distinct_cache[key]

    def join_size(self, pred1: str, cols1: tuple[int, ...], pred2: str, cols2: tuple[int, ...]) -> int:
        """Exact size of the equi-join of two predicates' atom tables on the given columns
        (sum over key values of the product of their frequencies); cached."""
        key = (pred1, tuple(cols1), pred2, tuple(cols2))
        if key not in self._distinct_cache:
            k1 = _row_keys(self.predicates[pred1].args[:, list(cols1)], self.n_constants)
            k2 = _row_keys(self.predicates[pred2].args[:, list(cols2)], self.n_constants)
            u1, c1 = np.unique(k1, return_counts=True)
            u2, c2 = np.unique(k2, return_counts=True)
            _, i1, i2 = np.intersect1d(u1, u2, assume_unique=True, return_indices=True)
            self._distinct_cache[key] = int(np.dot(c1[i1].astype(np.int64), c2[i2].astype(np.int64)))
        return self._distinct_cache[key]

    @cached_property
    def _distinct_cache(self) -> dict[tuple[str, tuple[int, ...]], int]:
        return {}

    # ------------------------------------------------------------------ text and views
    def atom_text(self, ids: object) -> np.ndarray:
        """Canonical text ``pred(a, b)`` of atom ids (object array; '<missing>' for -1)."""
        ids = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        out = np.full(len(ids), "<missing>", dtype=object)
        if not len(ids):
            return out
        valid = (ids >= 0) & (ids < self.n_atoms)
        if not valid[ids >= 0].all():
            raise DataError(f"atom id out of range (store has {self.n_atoms} atoms)")
        preds = self.pred[ids[valid]]
        args = self.args[ids[valid]]
        names = np.array(list(self.predicates), dtype=object)
        text = np.empty(int(valid.sum()), dtype=object)
        for k in np.unique(preds):
            rows = preds == k
            name = names[k]
            arity = self.predicates[name].predicate.arity
            parts = pd.Series(np.full(int(rows.sum()), f"{name}("), dtype=object)
            for i in range(arity):
                sep = ", " if i else ""
                parts = parts + sep + pd.Series(self.constants[args[rows, i]], dtype=object)
            text[rows] = (parts + ")").to_numpy(dtype=object)
        out[valid] = text
        return out

    def frame(self, ids: object | None = None) -> pd.DataFrame:
        """Atoms as a table: atom_id, predicate, a0..aK (strings, '' past the arity), value, is_target."""
        ids = np.arange(self.n_atoms, dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64)
        names = np.array(list(self.predicates), dtype=object)
        args = self.args[ids]
        cols: dict[str, object] = {"atom_id": ids, "predicate": names[self.pred[ids]] if len(names) else []}
        consts = np.append(self.constants, "").astype(object)
        for i in range(args.shape[1]):
            cols[f"a{i}"] = consts[args[:, i]]  # -1 picks the trailing ''
        cols["value"] = self.value[ids]
        cols["is_target"] = self.is_target[ids]
        return pd.DataFrame(cols)

    def targets_frame(self) -> pd.DataFrame:
        """The targets in column order, with their truth label (NaN when unknown)."""
        return self.frame(self.target_ids).assign(truth=self.truth)

    def lookup(self, pred: str, args_frame: pd.DataFrame | np.ndarray) -> np.ndarray:
        """Atom ids of `pred` atoms given their arguments (strings in a0..ak, or a constant-id
        matrix); -1 where no such atom exists. Vectorised (one hash join)."""
        if pred not in self.predicates:
            raise DataError(f"unknown predicate {pred!r}")
        p = self.predicates[pred]
        k = p.predicate.arity
        if isinstance(args_frame, pd.DataFrame):
            missing = [f"a{i}" for i in range(k) if f"a{i}" not in args_frame.columns]
            if missing:
                raise DataError(f"lookup of {pred}: argument columns {missing} missing")
            query = np.column_stack([self.constant_ids(args_frame[f"a{i}"].to_numpy(dtype=object))
                                     for i in range(k)]) if k else np.zeros((len(args_frame), 0), np.int32)
        else:
            query = np.asarray(args_frame, dtype=np.int64).reshape(-1, k)
        pos = _match_rows(p.args, query)
        return np.where(pos >= 0, pos + p.offset, -1).astype(np.int64)


# ---------------------------------------------------------------------- helpers
def _as_arrow_strings(series: pd.Series) -> pa.Array:
    """A string column as an Arrow string array (zero-copy for pandas' Arrow-backed strings)."""
    arr = pa.array(series, from_pandas=True)
    if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = pc.cast(arr, pa.large_string())
    return arr


def _sorted_constants(arrays: list[pa.Array]) -> np.ndarray:
    """Sorted distinct strings across arrays (hash-unique first, then sort the small result)."""
    arrays = [a for a in arrays if len(a)]
    if not arrays:
        return np.array([], dtype=object)
    uniq = [pc.unique(a.cast(pa.large_string())) for a in arrays]
    merged = pc.unique(pa.chunked_array(uniq, type=pa.large_string()))
    return np.sort(np.asarray(merged.to_pylist(), dtype=object))


def _encode(arr: pa.Array, constants: np.ndarray, missing: int | None = None) -> np.ndarray:
    """Constant ids (int32) of string values; unknown values -> `missing` (or an error)."""
    if not len(arr):
        return np.zeros(0, dtype=np.int32)
    value_set = pa.array(constants, type=pa.large_string()) if len(constants) else pa.array([], pa.large_string())
    idx = pc.index_in(arr.cast(pa.large_string()), value_set=value_set)
    if idx.null_count:
        if missing is None:
            raise DataError("internal: constant missing from the dictionary")
        idx = pc.fill_null(idx, missing)
    return idx.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)


def _row_keys(rows: np.ndarray, n_constants: int) -> np.ndarray:
    """One int64 key per row of constant ids (mixed radix when it fits, else a row hash join)."""
    rows = np.asarray(rows, dtype=np.int64)
    base = max(n_constants, 1) + 1
    if rows.shape[1] * math.log2(base) < 62:
        key = np.zeros(len(rows), dtype=np.int64)
        for i in range(rows.shape[1]):
            key = key * base + (rows[:, i] + 1)
        return key
    return pd.DataFrame(rows).groupby(list(range(rows.shape[1])), sort=False).ngroup().to_numpy(np.int64)


def _match_rows(table: np.ndarray, query: np.ndarray) -> np.ndarray:
    """For each query row, the position of the equal row in `table` (rows unique), else -1."""
    n_q = len(query)
    if not n_q:
        return np.zeros(0, dtype=np.int64)
    if table.shape[1] == 0:
        return np.zeros(n_q, dtype=np.int64) if len(table) else np.full(n_q, -1, dtype=np.int64)
    cols = [f"a{i}" for i in range(table.shape[1])]
    left = pd.DataFrame(np.asarray(query, dtype=np.int64), columns=cols)
    right = pd.DataFrame(np.asarray(table, dtype=np.int64), columns=cols)
    right["_pos"] = np.arange(len(table), dtype=np.int64)
    merged = left.merge(right, on=cols, how="left", sort=False)
    return merged["_pos"].fillna(-1).to_numpy(dtype=np.int64)


def _encoded_arguments(dataset: RelationalDataset) -> tuple[np.ndarray, dict[tuple[str, int, str], np.ndarray]]:
    """(sorted constants, constant ids of every argument column keyed by (predicate, position, partition))."""
    columns: list[tuple[str, int, str, object]] = []  # (pred, position, partition, arrow array)
    for p in dataset.schema:
        for part in PARTITIONS:
            t = dataset.tables[p.name][part]
            for i in range(p.arity):
                columns.append((p.name, i, part, _as_arrow_strings(t[f"a{i}"])))
    constants = _sorted_constants([c[3] for c in columns])
    return constants, {(c[0], c[1], c[2]): _encode(c[3], constants) for c in columns}


def _target_truth(p: Predicate, target_args: np.ndarray, encoded: dict[tuple[str, int, str], np.ndarray],
                  truth: pd.DataFrame) -> np.ndarray:
    """The truth value of each target atom of `p` (NaN where the truth table has none)."""
    truth_args = np.column_stack([encoded[(p.name, i, "truth")] for i in range(p.arity)]) \
        if p.arity else np.zeros((len(truth), 0), dtype=np.int32)
    pos = _match_rows(target_args, truth_args)
    tv = np.full(len(target_args), np.nan)
    hit = pos >= 0
    tv[pos[hit]] = truth["value"].to_numpy(dtype=np.float64)[hit]
    return tv
