"""The DuckDB side of grounding: one shared in-memory database per setting, and the atom and domain tables
a grounding plan scans registered as zero-copy Arrow views (in record batches DuckDB scans in parallel)."""

from __future__ import annotations

import functools
from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from xcore.logic.atoms import AtomStore
from xcore.logic.sql import GroundingPlan, TableNames
from xcore.runtime import new_duckdb


@functools.lru_cache(maxsize=8)
def database(engine_join_order: bool, threads: int | None, pinned_build_sides: bool = False
              ) -> duckdb.DuckDBPyConnection:
    """One in-memory DuckDB per setting, shared by all grounding calls (opening one costs ~50 ms;
    each call works in its own cursor, whose registered tables other cursors do not see).

    `pinned_build_sides` (with xcore's join order) also stops DuckDB from swapping hash-join build and
    probe sides: on LastFM-size path-of-3 rules its swap built hash tables on the joined intermediate
    result (8 GB and 40 s for one capped count, against 0.7 GB and 0.5 s pinned; issue 13)."""
    con = new_duckdb(threads)  # bounded memory, spilling to its own temporary folder
    if not engine_join_order:
        pinned = ",build_side_probe_side" if pinned_build_sides else ""
        con.execute(f"SET disabled_optimizers = 'join_order{pinned}'")
    return con


def register_tables(con: duckdb.DuckDBPyConnection, store: AtomStore, plans: Sequence[GroundingPlan],
                    names: TableNames = TableNames(), targets: bool = False) -> None:
    """Register the atom tables (atom_id, a0..) and domain tables (const_id) the plans scan,
    as zero-copy Arrow views in a DuckDB connection (`targets`: also each predicate's target rows)."""
    preds = {s.name for p in plans for s in p.scans if s.source == "atoms"}
    types = {s.name for p in plans for s in p.scans if s.source == "domain"}
    for name in sorted(preds):
        pa_ = store.predicates[name]
        cols = {"atom_id": pa.array(pa_.ids)}
        for i in range(pa_.predicate.arity):
            cols[f"a{i}"] = pa.array(np.ascontiguousarray(pa_.args[:, i]))
        table = pa.table(cols)
        con.register(names.atoms.format(name), _chunked(table))
        if targets and pa_.n_targets:
            con.register(names.targets.format(name), _chunked(table.slice(pa_.n_obs)))
    for t in sorted(types):
        con.register(names.domain.format(t), _chunked(pa.table({"const_id": pa.array(store.domain(t).astype(np.int32))})))


SCAN_CHUNK_ROWS = 16_384
"""Rows per Arrow record batch of a registered table: DuckDB scans batches in parallel, so one
big batch would run every join pipeline on a single thread."""


def _chunked(table: pa.Table) -> pa.Table:
    """The same table as zero-copy slices of `SCAN_CHUNK_ROWS` rows."""
    if table.num_rows <= SCAN_CHUNK_ROWS:
        return table
    return pa.Table.from_batches(table.to_batches(max_chunksize=SCAN_CHUNK_ROWS), schema=table.schema)
