"""Predictions a user brings from their own model, attached to a dataset so that a surrogate method
fits to them instead of the truth labels (issue 28).

A predictions file is CSV with the columns ``target,prediction[,score]`` (a header row with those
names is optional): ``target`` is a ground atom of the data (``street(s3_t1)``, quoted when it has a
comma: ``"knows(a, b)"``) or, for a table, a row id (``row 17`` or ``17``, the table's row index as
the classifier page names rows); ``prediction`` is the model's output (relational data: a truth value,
``0``/``1``/``true``/``false`` for classes or a number in [0, 1]; a table: a class of its label
column); ``score`` is optional, a number (the model's probability that the atom is true, or of the
class the classifier explains). Every problem is a `DataError` naming the file, the line and the column.

`with_predictions(dataset, predictions)` is the one place where labels are swapped: every labelled
atom (or row) the file names takes the model's prediction as its label, truth rows (table rows) of
those predicates that the file does not name are left unlabelled, and the result carries the predictions
(with the data's own truth kept beside them) as `dataset.user_predictions`, so `run_method` knows the
run is a surrogate and reports its fidelity.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import DataError

COLUMNS = ("target", "prediction", "score")
TRUE_WORDS = {"1", "1.0", "true", "yes", "t", "y"}
FALSE_WORDS = {"0", "0.0", "false", "no", "f", "n"}
MAX_BYTES = 200 * 1024 * 1024
_ATOM = re.compile(r"^\s*([A-Za-z_][\w\-]*)\s*\((.*)\)\s*$", re.S)
_ROW = re.compile(r"^\s*(?:row\s+)?(\S+)\s*$", re.I)


@dataclass
class UserPredictions:
    """A user's model's outputs for targets of one dataset.

    `frame` has one row per target: ``target`` (canonical text: ``pred(a, b)`` or ``row 17``),
    ``prediction`` (relational: a float truth value; table: the class as text), ``score`` (float or
    NaN), ``truth`` (the data's own label before the swap, NaN / None where it has none), ``line``
    (the file line). `kind` is ``class`` (0/1 truth values, or a table's classes) or ``score`` (truth
    values strictly between 0 and 1: a soft or regression output).
    """

    frame: pd.DataFrame
    file: str
    kind: str
    tabular: bool
    digest: str = ""
    model: Any = None
    """The user's model itself when it was given as a file (`xcore.explain.model_file.OnnxTableModel`)."""

    @property
    def has_score(self) -> bool:
        return bool(self.frame["score"].notna().any())

    def __len__(self) -> int:
        return len(self.frame)

    def fingerprint(self) -> str:
        """A content hash of the predictions (targets, predictions, scores)."""
        if not self.digest:
            text = self.frame[["target", "prediction", "score"]].to_csv(index=False)
            self.digest = hashlib.sha256(text.encode()).hexdigest()[:24]
        return self.digest


# ---------------------------------------------------------------------- reading
def read_predictions(source: str | Path | tuple[str, bytes], dataset: "RelationalDataset") -> UserPredictions:
    """Read and validate a predictions file (a path, or (file name, bytes) from an upload) against `dataset`."""
    if isinstance(source, tuple):
        file, data = str(source[0]), source[1]
    else:
        file = str(source)
        p = Path(source)
        if not p.is_file():
            raise DataError("no such predictions file", file=file)
        if p.stat().st_size > MAX_BYTES:
            raise DataError(f"the predictions file is larger than {MAX_BYTES // 2**20} MiB", file=file)
        data = p.read_bytes()
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"the predictions file is not UTF-8 text (byte {e.start})", file=file) from None
    rows = _records(text, file)
    return predictions_from_rows(rows, dataset, file)


def _records(text: str, file: str) -> list[tuple[int, list[str]]]:
    """(physical line, fields) of every non-blank record; a header row naming the columns is dropped."""
    if not text.strip():
        raise DataError("the predictions file is empty: expected lines 'target,prediction[,score]'", file=file)
    sep = "\t" if "\t" in text.split("\n", 1)[0] and "," not in text.split("\n", 1)[0] else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    out: list[tuple[int, list[str]]] = []
    line = 1
    try:
        for fields in reader:
            start, line = line, reader.line_num + 1
            if not fields or all(not f.strip() for f in fields):
                continue
            out.append((start, fields))
    except csv.Error as e:
        raise DataError(f"not valid CSV: {e}", file=file, line=reader.line_num) from None
    if out and [f.strip().lower() for f in out[0][1]] in (list(COLUMNS[:2]), list(COLUMNS)):
        out = out[1:]
    if not out:
        raise DataError("the predictions file has a header but no predictions", file=file, line=1)
    return out


def predictions_from_rows(rows: list[tuple[int, list[str]]], dataset: "RelationalDataset",
                          file: str) -> UserPredictions:
    """Validated predictions from (line, fields) records: known targets, no duplicates, numeric scores."""
    tabular = dataset.tabular is not None and dataset.label is not None
    targets, preds, scores, lines = [], [], [], []
    for line, fields in rows:
        if len(fields) not in (2, 3):
            raise DataError(f"expected 2 or 3 fields (target,prediction[,score]), found {len(fields)}",
                            file=file, line=line)
        target = fields[0].strip()
        if not target:
            raise DataError("column target: empty target", file=file, line=line)
        score = float("nan")
        if len(fields) == 3 and fields[2].strip():
            score = _number(fields[2], "score", file, line)
        targets.append(target)
        preds.append(fields[1].strip())
        scores.append(score)
        lines.append(line)
    frame = pd.DataFrame({"raw": targets, "prediction": preds, "score": np.array(scores, dtype=float),
                          "line": np.array(lines, dtype=np.int64)})
    if tabular:
        frame, kind = _table_targets(frame, dataset, file)
    else:
        frame, kind = _atom_targets(frame, dataset, file)
    dup = frame["target"].duplicated(keep="first")
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        t = frame["target"].iloc[i]
        first = int(frame.loc[frame["target"] == t, "line"].iloc[0])
        raise DataError(f"column target: duplicate target {t!r} (first given on line {first})",
                        file=file, line=int(frame["line"].iloc[i]))
    frame = frame[["target", "prediction", "score", "truth", "line"]].reset_index(drop=True)
    return UserPredictions(frame, file=file, kind=kind, tabular=tabular)


def _number(text: str, column: str, file: str, line: int) -> float:
    try:
        v = float(text.strip())
    except ValueError:
        raise DataError(f"column {column}: {text.strip()!r} is not a number", file=file, line=line) from None
    if not math.isfinite(v):
        raise DataError(f"column {column}: {text.strip()!r} is not a finite number", file=file, line=line)
    return v


def _labelled_atoms(dataset: "RelationalDataset", pred: str) -> pd.DataFrame:
    """Every atom of `pred` a model could predict (targets, truth, and observations of a predicate that has
    targets or truth), with the data's label (NaN where it has none)."""
    p = dataset.schema[pred]
    cols = list(p.columns)
    frames = []
    has_labels = len(dataset.tables[pred]["targets"]) or len(dataset.tables[pred]["truth"])
    for part in ("truth", "obs", "targets") if has_labels else ():
        t = dataset.tables[pred][part]
        if not len(t):
            continue
        f = t[cols].astype(str)
        f["truth"] = np.nan if part == "targets" else t["value"].to_numpy(dtype=float)
        frames.append(f)
    if not frames:
        return pd.DataFrame(columns=[*cols, "truth"])
    return pd.concat(frames, ignore_index=True).drop_duplicates(cols, keep="first")


def _first_bad(frame: pd.DataFrame, bad: np.ndarray, problem: str, file: str) -> None:
    """Raise a `DataError` for the first row flagged in `bad` (`problem` may use {raw} and {prediction})."""
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(problem.format(raw=str(frame["raw"].iloc[i]).strip(),
                                       prediction=str(frame["prediction"].iloc[i]).strip()),
                        file=file, line=int(frame["line"].iloc[i]))


def _truth_values(frame: pd.DataFrame, file: str) -> np.ndarray:
    """Relational predictions as truth values in [0, 1] (words true/false, numbers), vectorised."""
    low = frame["prediction"].astype(str).str.strip().str.lower()
    words = low.map(lambda w: 1.0 if w in TRUE_WORDS else 0.0 if w in FALSE_WORDS else np.nan)
    num = pd.to_numeric(low, errors="coerce")
    values = words.fillna(num).to_numpy(dtype=float)
    _first_bad(frame, np.isnan(values), "column prediction: {prediction!r} is not a number", file)
    _first_bad(frame, ~np.isfinite(values), "column prediction: {prediction!r} is not a finite number", file)
    _first_bad(frame, (values < 0) | (values > 1), "column prediction: {prediction!r} is outside [0, 1] (a truth "
               "value: 0/1, true/false, or a number in [0, 1])", file)
    return values


def _atom_targets(frame: pd.DataFrame, dataset: "RelationalDataset", file: str) -> tuple[pd.DataFrame, str]:
    """Relational predictions: each target an atom of a labelled predicate; predictions as truth values.
    Parsing, lookups and checks are column operations (one merge per predicate), not a loop per atom."""
    parts = frame["raw"].str.extract(_ATOM.pattern, flags=re.S)
    no_atom = parts[0].isna().to_numpy()
    if no_atom.any():
        i = int(np.flatnonzero(no_atom)[0])
        raw = str(frame["raw"].iloc[i])
        hint = " (quote an atom with a comma: \"knows(a, b)\")" if "(" in raw and ")" not in raw else ""
        raise DataError(f"column target: {raw!r} is not a ground atom such as pred(a){hint}", file=file,
                        line=int(frame["line"].iloc[i]))
    pred = parts[0]
    args = parts[1].str.strip().str.split(",").map(lambda xs: tuple(a.strip().strip("'\"") for a in xs))
    names = set(dataset.schema.names)
    unknown = ~pred.isin(names).to_numpy()
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise DataError(f"column target: unknown predicate {pred.iloc[i]!r} in {str(frame['raw'].iloc[i]).strip()!r} "
                        f"(predicates with targets: {', '.join(dataset.target_predicates) or ', '.join(sorted(names))})",
                        file=file, line=int(frame["line"].iloc[i]))
    arity = pred.map(lambda p: dataset.schema[p].arity).to_numpy()
    n_args = args.map(len).to_numpy()
    if (arity != n_args).any():
        i = int(np.flatnonzero(arity != n_args)[0])
        raise DataError(f"column target: {pred.iloc[i]} has arity {arity[i]}, {str(frame['raw'].iloc[i]).strip()!r} "
                        f"has {n_args[i]} arguments", file=file, line=int(frame["line"].iloc[i]))
    truth = np.full(len(frame), np.nan)
    known = np.zeros(len(frame), dtype=bool)
    for p in pd.unique(pred):  # one merge per predicate
        rows = np.flatnonzero((pred == p).to_numpy())
        cols = list(dataset.schema[p].columns)
        given = pd.DataFrame(args.iloc[rows].tolist(), columns=cols).assign(_row=rows)
        hit = given.merge(_labelled_atoms(dataset, p), on=cols, how="inner")
        known[hit["_row"].to_numpy()] = True
        truth[hit["_row"].to_numpy()] = hit["truth"].to_numpy(dtype=float)
    _first_bad(frame, ~known, "column target: unknown target {raw!r}: not a target, labelled or observed atom "
               "of its predicate in the data", file)
    targets = pred + "(" + args.map(", ".join) + ")"
    values = _truth_values(frame, file)
    out = frame.assign(target=targets.to_numpy(dtype=object), prediction=values, truth=truth)
    kind = "class" if np.isin(values, (0.0, 1.0)).all() else "score"
    return out, kind


def class_text(value: object) -> str:
    """A class as text, numbers without a trailing .0 (``1.0`` and ``1`` are one class)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    text = str(value).strip()
    try:
        v = float(text)
        if v.is_integer() and re.fullmatch(r"[+-]?\d+(\.0*)?", text):
            return str(int(v))
    except ValueError:
        pass
    return text


def _table_targets(frame: pd.DataFrame, dataset: "RelationalDataset", file: str) -> tuple[pd.DataFrame, str]:
    """Table predictions: each target a row id of the table; predictions as class texts (column operations)."""
    table = dataset.tabular
    ids = frame["raw"].str.extract(_ROW.pattern, flags=re.I)[0]
    index = pd.Series(table.index, index=pd.Index(table.index.map(str)))
    index = index[~index.index.duplicated()]
    found = ids.isin(index.index).to_numpy()
    _first_bad(frame, ~found, "column target: unknown target {raw!r}: not a row id of the table "
               f"(rows 0..{len(table) - 1}, written '17' or 'row 17')", file)
    rows = index.loc[ids.to_numpy()].to_numpy()
    labels = table[dataset.label]
    truth = labels.loc[rows].map(lambda v: None if pd.isna(v) else class_text(v)).to_numpy(dtype=object)
    preds = frame["prediction"].map(class_text)
    _first_bad(frame, (preds == "").to_numpy(), "column prediction: empty prediction", file)
    if pd.api.types.is_numeric_dtype(labels):
        _first_bad(frame, pd.to_numeric(preds, errors="coerce").isna().to_numpy(),
                   "column prediction: {prediction!r} is not a class of the label column "
                   f"{dataset.label!r} (its classes are numbers)", file)
    out = frame.assign(target=[f"row {ix}" for ix in rows], prediction=preds.to_numpy(dtype=object),
                       truth=pd.Series(truth, index=frame.index, dtype=object))
    return out, "class"


# ---------------------------------------------------------------------- the label swap
def with_predictions(dataset: "RelationalDataset", predictions: UserPredictions) -> "RelationalDataset":
    """The dataset whose labels are the user's model's predictions (the one place labels are swapped).

    Relational data: for every predicate the predictions name, each named atom's label (its truth row, or
    its observation when the predicate's labelled examples are observations) becomes the prediction; named
    targets without a truth row get one; truth rows not named are dropped (the surrogate is scored on the
    user's model only), observations not named stay as they are (they are evidence too). Tables: the label column holds the predicted classes, rows not named
    are left unlabelled. The result carries `user_predictions`.
    """
    if predictions.tabular != (dataset.tabular is not None and dataset.label is not None):
        raise DataError("these predictions were read for another kind of data (table rows vs atoms)",
                        file=predictions.file)
    if dataset.tabular is not None and dataset.label is not None:
        return _swap_table(dataset, predictions)
    tables = {p: dict(parts) for p, parts in dataset.tables.items()}
    frame = predictions.frame
    parts = frame["target"].str.extract(_ATOM.pattern, flags=re.S)  # canonical texts: pred(a, b)
    args = parts[1].str.split(", ")
    for pred in pd.unique(parts[0]):
        rows = np.flatnonzero((parts[0] == pred).to_numpy())
        p = dataset.schema[pred]
        cols = list(p.columns)
        given = pd.DataFrame(args.iloc[rows].tolist(), columns=cols)
        given["_new"] = frame["prediction"].to_numpy(dtype=float)[rows]
        for part in ("obs", "truth"):
            t = tables[pred][part]
            if not len(t):
                continue
            keys = t[cols].astype(str)
            merged = keys.merge(given, on=cols, how="left")
            named = merged["_new"].notna().to_numpy()
            keep = named if part == "truth" else np.ones(len(t), dtype=bool)  # observations stay evidence
            new = t.loc[keep].copy()
            new["value"] = np.where(named, merged["_new"].to_numpy(), t["value"].to_numpy(dtype=float))[keep]
            tables[pred][part] = new.reset_index(drop=True)
        targets = tables[pred]["targets"]
        if len(targets):
            truth = tables[pred]["truth"]
            have = truth[cols].astype(str).merge(given[cols], on=cols, how="inner") if len(truth) else given[cols][:0]
            obs = tables[pred]["obs"]
            in_obs = obs[cols].astype(str).merge(given[cols], on=cols, how="inner") if len(obs) else given[cols][:0]
            tgt = targets[cols].astype(str)
            add = given.merge(tgt, on=cols, how="inner")
            done = pd.concat([have, in_obs], ignore_index=True)
            if len(done):
                add = add.merge(done.drop_duplicates(), on=cols, how="left", indicator=True)
                add = add[add["_merge"] == "left_only"].drop(columns="_merge")
            if len(add):
                extra = add[cols].copy()
                extra["value"] = add["_new"].to_numpy(dtype=float)
                base = tables[pred]["truth"][[*cols, "value"]] if len(tables[pred]["truth"]) else None
                tables[pred]["truth"] = pd.concat([t for t in (base, extra) if t is not None], ignore_index=True)
    out = RelationalDataset(dataset.schema, tables, name=dataset.name, description=dataset.description,
                            rules=dataset.rules)
    out.user_predictions = predictions
    return out


def _swap_table(dataset: "RelationalDataset", predictions: UserPredictions) -> "RelationalDataset":
    """A table whose label column holds the predicted classes (rows not named: no label)."""
    table = dataset.tabular.copy()
    label = dataset.label
    original = table[label]
    rows = [int(t[4:]) if t[4:].lstrip("-").isdigit() else t[4:] for t in predictions.frame["target"]]
    values = pd.Series([None] * len(table), index=table.index, dtype=object)
    preds = predictions.frame["prediction"].to_numpy(dtype=object)
    if pd.api.types.is_numeric_dtype(original):
        conv = [float(p) for p in preds]
        preds = np.array([int(v) if float(v).is_integer() else v for v in conv], dtype=object)
    values.loc[rows] = preds
    table[label] = values
    tables = {p: dict(parts) for p, parts in dataset.tables.items()}
    if label in tables:
        t = tables[label]["truth"]
        if len(t):
            row_of = {f"r{i + 1}": ix for i, ix in enumerate(dataset.tabular.index)}
            ids = t["a0"].astype(str).map(row_of)
            cls = ids.map(lambda ix: None if ix is None or pd.isna(values.get(ix)) else class_text(values.get(ix)))
            keep = cls.notna().to_numpy()
            new = pd.DataFrame({"a0": t["a0"].astype(str)[keep].to_numpy(), "a1": cls[keep].to_numpy(),
                                "value": 1.0})
            tables[label] = {**tables[label], "truth": new,
                             "targets": new.assign(value=np.nan)}
    out = RelationalDataset(dataset.schema, tables, name=dataset.name, description=dataset.description,
                            tabular=table, label=label, rules=dataset.rules)
    out.user_predictions = predictions
    return out


