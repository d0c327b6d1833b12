"""Small readers for the PLKB classifier's benchmark tables (UCI Mushroom, Nursery, HIV-1; Kaggle Titanic).

Each reader takes a path and returns ``(X, y)``: a DataFrame of features and the label Series.
Malformed files raise `DataError` naming the file and line. Folder layout and licences:
``/work/shared/data/README.md`` (Titanic is for tests and benchmarks only; ship
`xcore.data.generators.titanic.make_titanic_like` output instead).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from xcore.errors import DataError

MUSHROOM_LABEL = "edibility"
NURSERY_LABEL = "classification"
TITANIC_FEATURES = ["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked"]


def _read_text(path: str | Path) -> str:
    p = Path(path)
    if not p.is_file():
        raise DataError("file not found", str(p))
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not UTF-8 text ({e.reason} at byte {e.start})", str(p)) from None


def _read_csv(path: str | Path, expected: int | None = None, **kw) -> pd.DataFrame:
    """A header CSV of strings; a row with the wrong number of fields names its line."""
    text = _read_text(path)
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, **kw)
    except pd.errors.ParserError as e:
        m = re.search(r"line (\d+)", str(e))
        raise DataError(f"malformed CSV: {e}", str(path), int(m.group(1)) if m else None) from None
    except pd.errors.EmptyDataError:
        raise DataError("the file is empty", str(path)) from None
    if expected is not None and df.shape[1] != expected:
        raise DataError(f"expected {expected} columns, found {df.shape[1]}", str(path), 1)
    empty = (df == "").to_numpy()
    if expected is not None and empty.any():
        r, c = np.argwhere(empty)[0]
        raise DataError(f"empty value in column {df.columns[c]!r}", str(path), int(r) + 2)
    return df


def read_mushroom(path: str | Path) -> tuple[pd.DataFrame, pd.Series]:
    """UCI Mushroom (header line added by the mirror): 22 features, label 'e'/'p' (edibility)."""
    df = _read_csv(path, expected=23)
    if MUSHROOM_LABEL not in df.columns:
        raise DataError(f"no {MUSHROOM_LABEL!r} column in the header", str(path), 1)
    return df.drop(columns=[MUSHROOM_LABEL]), df[MUSHROOM_LABEL].rename("edibility")


def read_nursery(path: str | Path) -> tuple[pd.DataFrame, pd.Series]:
    """UCI Nursery: 8 features, 5-class label 'classification' (choose one class as positive)."""
    df = _read_csv(path, expected=9)
    if NURSERY_LABEL not in df.columns:
        raise DataError(f"no {NURSERY_LABEL!r} column in the header", str(path), 1)
    return df.drop(columns=[NURSERY_LABEL]), df[NURSERY_LABEL]


_OCTAMER = re.compile(r"^([ACDEFGHIKLMNPQRSTVWY]{8}),(-1|1)$")


def read_hiv1(path: str | Path, skip: int = 9) -> tuple[pd.DataFrame, pd.Series]:
    """One UCI HIV-1 protease file (first `skip` lines are a header): positions P1..P8, label 1/-1.

    A directory reads all ``*.txt`` files in it (sorted) and drops repeated octamers, keeping the
    first label seen.
    """
    p = Path(path)
    if p.is_dir():
        parts = [read_hiv1(f, skip) for f in sorted(p.glob("*.txt"))]
        if not parts:
            raise DataError("no .txt files in the folder", str(p))
        X = pd.concat([x for x, _ in parts], ignore_index=True)
        y = pd.concat([y for _, y in parts], ignore_index=True)
        keep = ~X.duplicated().to_numpy()
        return X[keep].reset_index(drop=True), y[keep].reset_index(drop=True)
    lines = _read_text(p).splitlines()
    body = [(i + 1, ln.strip()) for i, ln in enumerate(lines) if i >= skip and ln.strip()]
    if not body:
        raise DataError("no data lines after the header", str(p))
    s = pd.Series([b for _, b in body])
    parsed = s.str.extract(_OCTAMER)
    bad = parsed[0].isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"expected OCTAMER,LABEL (8 amino-acid letters, label 1 or -1), got {body[i][1]!r}",
                        str(p), body[i][0])
    letters = parsed[0].str.split("", expand=True).iloc[:, 1:9]
    letters.columns = [f"P{i}" for i in range(1, 9)]
    return letters.reset_index(drop=True), parsed[1].astype(int).rename("cleaved")


def read_titanic(path: str | Path, features: list[str] | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """Kaggle Titanic train.csv: the usual features (numeric ones as numbers), label Survived."""
    text = _read_text(path)
    try:
        df = pd.read_csv(io.StringIO(text))
    except pd.errors.ParserError as e:
        m = re.search(r"line (\d+)", str(e))
        raise DataError(f"malformed CSV: {e}", str(path), int(m.group(1)) if m else None) from None
    missing = [c for c in ["Survived", *(features or TITANIC_FEATURES)] if c not in df.columns]
    if missing:
        raise DataError(f"missing column(s) {', '.join(missing)}", str(path), 1)
    return df[features or TITANIC_FEATURES].copy(), df["Survived"].astype(int)
