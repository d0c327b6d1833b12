"""Knowledge-graph triples: ``head<TAB>relation<TAB>tail`` per line, no header.

Each relation becomes a binary predicate with types ("entity", "entity"); its name is the
relation sanitised (``Part-of`` -> ``part_of``) and its description the original name. In a
folder (Neural-LP layout) the file stem decides the role: by default ``facts``, ``train`` and
``valid`` are observations and ``test`` becomes targets with truth 1; ``entities.txt`` and
``relations.txt`` are ignored. Pass ``roles={"train": "targets", ...}`` to change that
(roles: ``obs``, ``targets``, ``skip``) and ``default_role`` for other file names.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import Parts, add, atom_frame, build_dataset, check_predicate_count
from xcore.data.io.columnar import read_records, strings
from xcore.data.io.files import (
    FileSet,
    Source,
    head_lines,
    read_source,
    sanitize_name,
    source_label,
    stem,
    suffix,
    unique_names,
)
from xcore.data.io.limits import DEFAULT_LIMITS, Limits
from xcore.data.io.writers import check_constants, write_lines
from xcore.data.schema import Predicate
from xcore.errors import DataError

DEFAULT_ROLES: dict[str, str] = {"facts": "obs", "train": "obs", "valid": "obs", "test": "targets",
                                 "entities": "skip", "relations": "skip", "readme": "skip"}
ROLE_NAMES = ("obs", "targets", "skip")
SUFFIXES = (".txt", ".tsv")


def load_triples(source: Source, name: str | None = None, *, roles: Mapping[str, str] | None = None,
                 default_role: str = "obs", limits: Limits | None = None) -> RelationalDataset:
    """Load one triples file or a folder of them (see the module docstring for roles)."""
    files = read_source(source, limits, suffixes=SUFFIXES)
    return triples_from_files(files, name or source_label(source), roles=roles, default_role=default_role,
                              limits=limits)


def looks_like_triples(data: bytes) -> bool:
    """Whether the first non-blank line of a text (as the parser sees it) has three tab-separated fields."""
    first = head_lines(data)
    return bool(first) and len(first[0].split("\t")) == 3


def triples_from_files(files: FileSet, name: str, roles: Mapping[str, str] | None = None,
                       default_role: str = "obs", limits: Limits | None = None) -> RelationalDataset:
    """Build the dataset from in-memory triples files."""
    role_of = {**DEFAULT_ROLES, **{k.lower(): v for k, v in (roles or {}).items()}}
    for r in (*role_of.values(), default_role):
        if r not in ROLE_NAMES:
            raise DataError(f"unknown role {r!r}; use one of {', '.join(ROLE_NAMES)}")
    chunks = []
    for file in sorted(files):
        role = role_of.get(stem(file).lower(), default_role)
        if role == "skip" or (len(files) > 1 and suffix(file) not in SUFFIXES):
            continue
        chunks.append((file, role, *read_triples_file(files[file], file)))
    if not chunks:
        raise DataError("no triples files found", file=name)
    relations = sorted(set().union(*(set(pd.unique(c[3])) for c in chunks)))
    if len(relations) > (limits or DEFAULT_LIMITS).max_predicates:
        file, line = _first_over_limit(chunks, (limits or DEFAULT_LIMITS).max_predicates)
        check_predicate_count(len(relations), limits, file, line)
    pred_names = dict(zip(relations, unique_names(sanitize_name(r, "r") for r in relations)))
    with_targets = set().union(*(set(pd.unique(c[3])) for c in chunks if c[1] == "targets"))
    preds = [Predicate(pred_names[r], 2, ("entity", "entity"), closed=r not in with_targets,
                       description=r) for r in relations]
    parts: Parts = {}
    while chunks:  # each file's columns are dropped once its atoms are grouped (memory)
        file, role, head, rel, tail, lines = chunks.pop(0)
        codes, uniques = pd.factorize(rel, sort=False)
        order = np.argsort(codes, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=len(uniques)))))
        head, tail, lines = head.array.take(order), tail.array.take(order), lines[order]
        del codes, order, rel
        for k, r in enumerate(uniques):
            idx = slice(int(bounds[k]), int(bounds[k + 1]))
            args = [head[idx], tail[idx]]
            if role == "obs":
                add(parts, pred_names[r], "obs", atom_frame(args, None, file, lines[idx]))
            else:
                add(parts, pred_names[r], "targets", atom_frame(args, None, file, lines[idx]))
                add(parts, pred_names[r], "truth", atom_frame(args, 1.0, file, lines[idx]))
    return build_dataset(preds, parts, name)


def _first_over_limit(chunks: list, limit: int) -> tuple[str, int]:
    """File and line where the relation after the first `limit` distinct ones first appears."""
    seen: set = set()
    for file, _, _, rel, _, lines in chunks:
        firsts = rel.drop_duplicates()
        for i, r in zip(firsts.index, firsts):
            if r not in seen:
                seen.add(r)
                if len(seen) > limit:
                    return file, int(lines[i])
    return chunks[0][0], 1


def read_triples_file(data: bytes, file: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Heads, relations, tails (stripped strings) and 1-based line numbers of a triples file.

    Read columnar (`read_records`); the columns are Arrow-backed ``str`` Series.
    """
    rec = read_records(data, file, "\t")
    if rec.width != 3 or rec.bad is not None:
        line, found = (int(rec.lines[0]), rec.width) if rec.width != 3 else rec.bad  # type: ignore[misc]
        raise DataError(f"expected head<TAB>relation<TAB>tail (3 fields), found {found} field(s)",
                        file=file, line=line)
    head, rel, tail = (strings(c) for c in rec.columns)
    empty = (rel == "").to_numpy(dtype=bool)
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise DataError("empty relation", file=file, line=int(rec.lines[i]))
    return head, rel, tail, rec.lines


def write_triples(ds: RelationalDataset, path: str | os.PathLike) -> Path:
    """Write binary predicates as a Neural-LP folder: ``facts.txt`` (obs), ``test.txt`` (targets).

    Observations must have value 1 and targets must all be true (truth 1); otherwise DataError.
    """
    folder = Path(path)
    facts: list[pd.Series] = []
    tests: list[pd.Series] = []
    for p in ds.predicates:
        if p.arity != 2:
            raise DataError(f"cannot write {p.name}/{p.arity} as triples: only binary predicates")
        obs, tgt, truth = (ds.table(p.name, part) for part in ("obs", "targets", "truth"))
        for t in (obs, tgt):
            check_constants(p, t, "\t\n\r", "triples")
        if (obs["value"] != 1.0).any():
            raise DataError(f"cannot write {p.name} as triples: an observation has a value other than 1")
        all_true = bool((truth["value"] == 1.0).all())
        same = len(tgt) == len(truth) and (
            not len(tgt) or len(tgt[["a0", "a1"]].merge(truth[["a0", "a1"]], on=["a0", "a1"])) == len(tgt))
        if not (all_true and same) or tgt["value"].notna().any():
            raise DataError(f"cannot write {p.name} as triples: targets must be exactly the true atoms")
        facts.append(obs["a0"].astype(str) + "\t" + p.name + "\t" + obs["a1"].astype(str))
        tests.append(tgt["a0"].astype(str) + "\t" + p.name + "\t" + tgt["a1"].astype(str))
    folder.mkdir(parents=True, exist_ok=True)
    for fname, parts in (("facts.txt", facts), ("test.txt", tests)):
        lines = pd.concat(parts, ignore_index=True) if parts else pd.Series([], dtype=object)
        if len(lines):
            write_lines(folder / fname, list(lines))
        else:
            (folder / fname).unlink(missing_ok=True)
    return folder
