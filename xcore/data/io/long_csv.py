"""Long CSV of facts: one atom per row.

Header: ``predicate,arg1,...,argN[,value][,partition]`` (N = the largest arity; shorter atoms
leave trailing arguments empty). ``partition`` is obs (default), targets or truth; ``value`` is
optional (1 for obs/truth, none for targets). Without a schema, arities are inferred per
predicate, argument types are "entity" and predicates with targets are open.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import Parts, add, atom_frame, build_dataset, check_predicate_count
from xcore.data.io.columnar import read_records, strings
from xcore.data.io.files import Source, first_record, head_lines, read_source, source_label, stem
from xcore.data.io.limits import Limits
from xcore.data.io.manifest import MAX_ARITY, SchemaLike, schema_from
from xcore.data.io.writers import check_constants, value_text
from xcore.data.schema import PARTITIONS, Predicate, Schema
from xcore.errors import DataError

_ARG_RE = re.compile(r"^arg(\d+)$")
_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"


def load_long_csv(source: Source, name: str | None = None, *, schema: SchemaLike | None = None,
                  limits: Limits | None = None) -> RelationalDataset:
    """Load a long CSV of facts; `schema` (Schema, predicates or manifest path) fixes the predicates."""
    files = read_source(source, limits, suffixes=(".csv",))
    if len(files) != 1:
        raise DataError(f"expected one CSV file, found {len(files)}", file=source_label(source))
    (file, data), = files.items()
    sch = manifest = None
    if schema is not None:
        sch, manifest = schema_from(schema, limits)
    default = manifest.name if manifest and manifest.name else stem(file)
    return long_csv_from_bytes(data, file, name or default, sch,
                               manifest.description if manifest else "", limits)


def header_fields(data: bytes) -> list[str]:
    """Lower-cased header names of a CSV (for format detection): its first non-blank line, as the
    parser sees it (see `head_lines`); [] if there is none."""
    first = head_lines(data)
    if not first:
        return []
    return [f.strip().strip('"').strip().lower() for f in first[0].split(",")]


def looks_like_long_csv(data: bytes) -> bool:
    """Whether a CSV's header names a predicate column and a partition or value column."""
    h = header_fields(data)
    return "predicate" in h and ("partition" in h or "value" in h)


def long_csv_from_bytes(data: bytes, file: str, name: str, schema: Schema | None = None,
                        description: str = "", limits: Limits | None = None) -> RelationalDataset:
    """Parse long-CSV bytes into a validated dataset (see the module docstring)."""
    rec = read_records(data, file, ",")
    if not rec.width:
        first_record([], rec.lines, file)
    header = [h.lower() for h in rec.row(0)]
    pos = _header_positions(header, file, rec.first_line())
    nargs = len(pos["args"])
    if rec.bad is not None:
        raise DataError(f"expected {len(header)} comma-separated fields (as in the header), "
                        f"found {rec.bad[1]}", file=file, line=rec.bad[0])
    body = rec.drop_first()
    lines = body.lines
    if not len(body):
        raise DataError("the file has a header but no facts", file=file, line=rec.first_line())
    cols = [strings(c) for c in body.columns]  # Arrow-backed, stripped
    del rec, body
    pred = cols[pos["predicate"]]
    _first_bad(~pred.str.match(_NAME_RE).to_numpy(dtype=bool), lines, file,
               lambda i: f"predicate name {pred.iloc[i]!r} is not valid (letters, digits and _ only)")
    if "partition" in pos:
        part = cols[pos["partition"]].str.lower().replace("", "obs")
        _first_bad(~part.isin(PARTITIONS).to_numpy(), lines, file,
                   lambda i: f"partition {part.iloc[i]!r} is not one of {', '.join(PARTITIONS)}")
    else:
        part = pd.Series(np.full(len(lines), "obs", dtype=object), dtype="str")
    values = cols[pos["value"]] if "value" in pos else None
    args = [cols[c] for c in pos["args"]]
    filled = np.column_stack([(a != "").to_numpy(dtype=bool) for a in args]) if nargs \
        else np.zeros((len(lines), 0), dtype=bool)
    if nargs > 1:
        gap = ~filled[:, :-1] & filled[:, 1:]
        rows_with_gap = gap.any(axis=1)
        _first_bad(rows_with_gap, lines, file,
                   lambda i: f"arg{int(np.argmax(gap[i])) + 1} is empty but a later argument is not")
    arity = filled.sum(axis=1)
    check_predicate_count(pred.nunique(), limits, file,
                          lambda limit: int(lines[pred.drop_duplicates().index[limit]]))
    preds = _schema_for(pred, part, arity, lines, file, schema)
    parts: Parts = {}
    groups = pd.DataFrame({"p": pred.array, "q": part.array}).groupby(["p", "q"], sort=False)
    for (p_name, q), idx in groups.indices.items():
        k = preds[p_name].arity
        add(parts, p_name, q, atom_frame([args[j].array.take(idx) for j in range(k)],
                                        None if values is None else values.array.take(idx), file, lines[idx]))
    return build_dataset(list(preds.values()), parts, name, description)


def _header_positions(header: list[str], file: str, line: int) -> dict:
    pos: dict = {"args": []}
    numbered: dict[int, int] = {}
    for i, h in enumerate(header):
        m = _ARG_RE.match(h)
        if m:
            if int(m[1]) in numbered:
                raise DataError(f"column {h!r} appears twice in the header", file=file, line=line)
            numbered[int(m[1])] = i
        elif h in ("predicate", "value", "partition"):
            if h in pos:
                raise DataError(f"column {h!r} appears twice in the header", file=file, line=line)
            pos[h] = i
        else:
            raise DataError(f"unknown column {h!r}: the header must be predicate,arg1,...,argN,"
                            f"value,partition", file=file, line=line)
    if "predicate" not in pos:
        raise DataError("the header has no 'predicate' column", file=file, line=line)
    if len(numbered) > MAX_ARITY:
        raise DataError(f"{len(numbered)} argument columns; at most {MAX_ARITY} are supported",
                        file=file, line=line)
    if sorted(numbered) != list(range(1, len(numbered) + 1)):
        raise DataError(f"argument columns must be arg1..arg{len(numbered)}", file=file, line=line)
    pos["args"] = [numbered[j] for j in range(1, len(numbered) + 1)]
    return pos


def _first_bad(mask: np.ndarray, lines: np.ndarray, file: str, problem) -> None:
    if mask.any():
        i = int(np.flatnonzero(mask)[0])
        raise DataError(problem(i), file=file, line=int(lines[i]))


def _schema_for(pred: pd.Series, part: pd.Series, arity: np.ndarray, lines: np.ndarray, file: str,
                schema: Schema | None) -> dict[str, Predicate]:
    if schema is not None:
        known = pred.isin(schema.names).to_numpy()
        _first_bad(~known, lines, file, lambda i: f"predicate {pred.iloc[i]!r} is not in the schema")
        expected = pred.map({p.name: p.arity for p in schema}).to_numpy(dtype=np.int64)
        _first_bad(expected != arity, lines, file,
                   lambda i: f"{pred.iloc[i]} has arity {expected[i]} but this row has {arity[i]} arguments")
        return dict(schema.predicates)
    frame = pd.DataFrame({"p": pred.array, "k": arity, "line": lines})
    first = frame.groupby("p", sort=False).first()
    ref = frame["p"].map(first["k"]).to_numpy()
    _first_bad(ref != arity, lines, file,
               lambda i: f"{pred.iloc[i]} has {arity[i]} arguments here but {ref[i]} on line "
                         f"{int(first.loc[pred.iloc[i], 'line'])}")
    has_targets = set(pred[(part == "targets").to_numpy()])
    return {p: Predicate(p, int(k), closed=p not in has_targets) for p, k in first["k"].items()}


def write_long_csv(ds: RelationalDataset, path: str | os.PathLike) -> Path:
    """Write every atom as one CSV row: predicate, arg1..argN, value, partition."""
    path = Path(path)
    n = max((p.arity for p in ds.predicates), default=0)
    frames = []
    for p in ds.predicates:
        for part in PARTITIONS:
            t = ds.table(p.name, part)
            if not len(t):
                continue
            check_constants(p, t, "\n\r", "a long CSV")
            out = {"predicate": np.full(len(t), p.name, dtype=object)}
            for j in range(n):
                out[f"arg{j + 1}"] = t[f"a{j}"].astype(str).to_numpy(dtype=object) if j < p.arity \
                    else np.full(len(t), "", dtype=object)
            out["value"] = value_text(t["value"])
            out["partition"] = np.full(len(t), part, dtype=object)
            frames.append(pd.DataFrame(out))
    cols = ["predicate", *[f"arg{j + 1}" for j in range(n)], "value", "partition"]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
    table.to_csv(path, index=False, lineterminator="\n", encoding="utf-8")
    return path
