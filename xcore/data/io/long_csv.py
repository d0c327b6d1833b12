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
    if rec.bad is not None:
        raise DataError(f"expected {len(header)} comma-separated fields (as in the header), "
                        f"found {rec.bad[1]}", file=file, line=rec.bad[0])
    body = rec.drop_first()
    lines = body.lines
    if not len(body):
        raise DataError("the file has a header but no facts", file=file, line=rec.first_line())
    cols = [strings(c) for c in body.columns]  # Arrow-backed, stripped
    del rec, body
    pred_codes, pred_names, part_codes, part_names = _names(cols, pos, lines, file)
    arity = _arities(cols, pos["args"], lines, file)
    firsts = np.unique(pred_codes, return_index=True)[1]  # first row of each predicate, in file order
    check_predicate_count(len(pred_names), limits, file, lambda limit: int(lines[firsts[limit]]))
    preds = _schema_for(pred_codes, pred_names, firsts, part_codes, part_names, arity, lines, file, schema)
    key = pred_codes.astype(np.int64) * len(part_names) + part_codes
    order = np.argsort(key, kind="stable")
    wanted = [*pos["args"], *([pos["value"]] if "value" in pos else [])]
    sorted_cols = {}
    for c in wanted:  # one column at a time sorted by group, the unsorted one dropped at once (memory)
        sorted_cols[c] = cols[c].array.take(order)
        cols[c] = None
    del cols
    sorted_lines = lines[order]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(key[order])) + 1, [len(order)]))
    parts: Parts = {}
    for lo, hi in zip(starts[:-1], starts[1:]):
        p_name, q = str(pred_names[pred_codes[order[lo]]]), str(part_names[part_codes[order[lo]]])
        k = preds[p_name].arity
        add(parts, p_name, q, atom_frame([sorted_cols[pos["args"][j]][lo:hi] for j in range(k)],
                                        sorted_cols[pos["value"]][lo:hi] if "value" in pos else None,
                                        file, sorted_lines[lo:hi]))
    del sorted_cols
    return build_dataset(list(preds.values()), parts, name, description)

def _names(cols: list, pos: dict, lines: np.ndarray,
           file: str) -> tuple[np.ndarray, pd.Series, np.ndarray, pd.Series]:
    """(predicate codes, names, partition codes, names) of the rows, names checked: predicates and
    partitions are few, so their codes are checked and grouped, not a string per row."""
    pred_codes, pred_names = pd.factorize(cols[pos["predicate"]])
    pred_names = pd.Series(pred_names, dtype="str")
    bad_name = ~pred_names.str.match(_NAME_RE).to_numpy(dtype=bool)
    _first_bad(bad_name[pred_codes], lines, file,
               lambda i: f"predicate name {pred_names[pred_codes[i]]!r} is not valid (letters, digits and _ only)")
    if "partition" in pos:
        part_codes, part_names = pd.factorize(cols[pos["partition"]])
        part_names = pd.Series(part_names, dtype="str").str.lower().replace("", "obs")
        _first_bad(~part_names.isin(PARTITIONS).to_numpy()[part_codes], lines, file,
                   lambda i: f"partition {part_names[part_codes[i]]!r} is not one of {', '.join(PARTITIONS)}")
    else:
        part_codes, part_names = np.zeros(len(lines), dtype=np.intp), pd.Series(["obs"], dtype="str")
    return pred_codes, pred_names, part_codes, part_names


def _arities(cols: list, arg_positions: list[int], lines: np.ndarray, file: str) -> np.ndarray:
    """Each row's arity: its filled argument columns, which must come first (no gap before a filled one)."""
    filled = np.column_stack([(cols[c] != "").to_numpy(dtype=bool) for c in arg_positions]) if arg_positions \
        else np.zeros((len(lines), 0), dtype=bool)
    if len(arg_positions) > 1:
        gap = ~filled[:, :-1] & filled[:, 1:]
        _first_bad(gap.any(axis=1), lines, file,
                   lambda i: f"arg{int(np.argmax(gap[i])) + 1} is empty but a later argument is not")
    return filled.sum(axis=1)



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


def _schema_for(pred_codes: np.ndarray, pred_names: pd.Series, firsts: np.ndarray, part_codes: np.ndarray,
                part_names: pd.Series, arity: np.ndarray, lines: np.ndarray, file: str,
                schema: Schema | None) -> dict[str, Predicate]:
    """The predicates: the given schema's (checked against the rows) or inferred from the rows."""
    names = pred_names.tolist()
    if schema is not None:
        known = pred_names.isin(schema.names).to_numpy()
        _first_bad(~known[pred_codes], lines, file, lambda i: f"predicate {names[pred_codes[i]]!r} is not in the schema")
        expected = np.array([schema[n].arity if n in schema.names else -1 for n in names], dtype=np.int64)[pred_codes]
        _first_bad(expected != arity, lines, file,
                   lambda i: f"{names[pred_codes[i]]} has arity {expected[i]} but this row has {arity[i]} arguments")
        return dict(schema.predicates)
    first_arity = arity[firsts]
    ref = first_arity[pred_codes]
    _first_bad(ref != arity, lines, file,
               lambda i: f"{names[pred_codes[i]]} has {arity[i]} arguments here but {ref[i]} on line "
                         f"{int(lines[firsts[pred_codes[i]]])}")
    targets = np.flatnonzero((part_names == "targets").to_numpy())
    has_targets = set(np.unique(pred_codes[np.isin(part_codes, targets)]).tolist())
    return {n: Predicate(n, int(first_arity[c]), closed=c not in has_targets) for c, n in enumerate(names)}


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
