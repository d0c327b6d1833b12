"""PSL-style folders: a manifest plus one tab-separated file per predicate and partition.

Layout::

    manifest.yaml              # or manifest.json (see xcore.data.io.manifest)
    knows_obs.txt              # a<TAB>b[<TAB>value]   observations (value defaults to 1)
    knows_targets.txt          # a<TAB>b[<TAB>value]   atoms to infer (value optional)
    knows_truth.txt            # a<TAB>b[<TAB>value]   labels of targets

Files of predicates without atoms may be absent. ``.tsv`` works like ``.txt``; README/LICENSE
text files are ignored; any other ``.txt``/``.tsv`` file is an error naming it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import Parts, add, atom_frame, build_dataset, check_predicate_count
from xcore.data.io.columnar import strings
from xcore.data.io.files import FileSet, Source, basename, read_source, source_label, stem, suffix
from xcore.data.io.limits import Limits
from xcore.data.io.manifest import find_manifest, parse_manifest, write_manifest
from xcore.data.io.ragged import read_ragged
from xcore.data.io.writers import check_constants, join_columns, value_text, write_lines
from xcore.data.schema import PARTITIONS, Predicate
from xcore.errors import DataError

PSL_FILE = re.compile(r"^(?P<pred>.+)_(?P<part>obs|targets|truth)\.(?:txt|tsv)$")
DATA_SUFFIXES = (".txt", ".tsv")
IGNORED_STEMS = ("readme", "license", "licence", "citation", "notes")


def load_psl_folder(source: Source, name: str | None = None, *,
                    limits: Limits | None = None) -> RelationalDataset:
    """Load a PSL-style folder (path, zip-extracted file set or list of uploads)."""
    files = read_source(source, limits, suffixes=(*DATA_SUFFIXES, ".yaml", ".yml", ".json"))
    return psl_from_files(files, name, source_label(source), limits)


def is_psl_data_file(name: str) -> bool:
    """Whether a file name looks like ``<predicate>_<obs|targets|truth>.txt``."""
    return PSL_FILE.match(basename(name)) is not None


def psl_from_files(files: FileSet, name: str | None, default_name: str,
                   limits: Limits | None = None) -> RelationalDataset:
    """Build the dataset from an in-memory file set holding a manifest and data files."""
    mkey = find_manifest(files)
    if mkey is None:
        raise DataError("no manifest.yaml or manifest.json in the PSL folder", file=default_name)
    manifest = parse_manifest(files[mkey], mkey, limits)
    check_predicate_count(len(manifest.predicates), limits, mkey)
    preds = {p.name: p for p in manifest.predicates}
    parts: Parts = {}
    seen: dict[tuple[str, str], str] = {}
    for key in sorted(files):
        if key == mkey or suffix(key) not in DATA_SUFFIXES:
            continue
        m = PSL_FILE.match(basename(key))
        if m is None:
            if stem(key).lower() in IGNORED_STEMS:
                continue
            raise DataError("file name is not <predicate>_<obs|targets|truth>.txt", file=key, line=1)
        pred, part = m["pred"], m["part"]
        if pred not in preds:
            raise DataError(f"predicate {pred!r} is not declared in the manifest", file=key, line=1)
        if (pred, part) in seen:
            raise DataError(f"second file for {pred} {part} (the first is {seen[pred, part]})", file=key, line=1)
        seen[pred, part] = key
        add(parts, pred, part, read_psl_file(files[key], key, preds[pred]))
    return build_dataset(manifest.predicates, parts, name or manifest.name or default_name,
                         manifest.description)


def read_psl_file(data: bytes, file: str, p: Predicate) -> pd.DataFrame:
    """Atoms of one tab-separated file: `arity` arguments then an optional truth value.

    Read columnar (`read_ragged`): arguments become Arrow-backed ``str`` columns and values
    float64 when every given value is a plain number (otherwise the raw text, which the dataset's
    validation reports with file and line).
    """
    rec = read_ragged(data, file, "\t")
    counts = rec.counts
    k = p.arity
    bad = (counts != k) & (counts != k + 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"{p.name} has arity {k}: expected {k} tab-separated arguments and an "
                        f"optional truth value, found {counts[i]} fields", file=file, line=int(rec.lines[i]))
    args = [strings(rec.field(j)) for j in range(k)]
    has = counts == k + 1
    values = None
    if has.any():
        given = rec.field(k, np.flatnonzero(has)) if not has.all() else rec.field(k)
        values = _values(given, has)
    return atom_frame(args, values, file, rec.lines)


def _values(given: pa.Array, has: np.ndarray) -> np.ndarray:
    """Truth values as float64 (NaN where a row has none), or the raw text (with "" where a row has
    none) when some value is not a plain number, so that validation names it as before."""
    try:
        parsed = pc.cast(pc.if_else(pc.equal(given, ""), pa.scalar(None, given.type), given), pa.float64())
        numbers = parsed.to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        numbers = None
    if numbers is not None and not np.isnan(numbers[pc.not_equal(given, "").to_numpy(zero_copy_only=False)]).any():
        out = np.full(len(has), np.nan)
        out[has] = numbers
        return out
    text = np.full(len(has), "", dtype=object)
    text[has] = given.to_numpy(zero_copy_only=False)
    return text


def write_psl_folder(ds: RelationalDataset, path: str | os.PathLike) -> Path:
    """Write a dataset as a PSL folder (manifest.yaml plus one file per non-empty table).

    Stale files of the dataset's predicates with now-empty tables are removed. Constants with
    tabs, line breaks or outer spaces raise DataError (the format cannot hold them).
    """
    path = Path(path)
    for p in ds.predicates:
        for part in PARTITIONS:
            check_constants(p, ds.table(p.name, part), "\t\n\r", "a PSL folder")
            if p.arity == 0 and ds.table(p.name, part)["value"].isna().any():
                raise DataError(f"cannot write 0-ary target {p.name} without a value to a PSL folder")
    path.mkdir(parents=True, exist_ok=True)
    write_manifest(ds, path / "manifest.yaml")
    for p in ds.predicates:
        for part in PARTITIONS:
            t = ds.table(p.name, part)
            target = path / f"{p.name}_{part}.txt"
            if not len(t):
                target.unlink(missing_ok=True)
                continue
            args = join_columns(t, p.columns, "\t").to_numpy(dtype=object)
            vals = value_text(t["value"])
            has = vals != ""
            if p.arity == 0:
                lines = vals
            else:
                lines = np.where(has, args + "\t" + vals, args)
            write_lines(target, list(lines))
    return path
