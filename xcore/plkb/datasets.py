"""Small readers for the classifier's benchmark tables, and a Titanic-shaped generator.

Each reader takes a path and returns ``(X, y)``: a DataFrame of features and the label Series.
Malformed files raise `DataError` naming the file and line. Folder layout and licences:
``/work/shared/data/README.md`` (Titanic is for tests and benchmarks only; ship
`make_titanic_like` output instead).
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
TITANIC_COLUMNS = ["PassengerId", "Survived", "Pclass", "Name", "Sex", "Age", "SibSp", "Parch",
                   "Ticket", "Fare", "Cabin", "Embarked"]


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


def make_titanic_like(n: int = 891, seed: int = 0) -> pd.DataFrame:
    """A generated table with Kaggle Titanic's 12 columns (fake names and tickets) and a
    survival label driven by sex, class and age, for a bundled sample that ships freely."""
    rng = np.random.default_rng(seed)
    pclass = rng.choice([1, 2, 3], size=n, p=[0.24, 0.21, 0.55])
    sex = np.where(rng.random(n) < 0.35, "female", "male")
    age = np.clip(rng.normal(np.select([pclass == 1, pclass == 2], [38, 30], 25), 13), 0.4, 80).round(1)
    age_missing = rng.random(n) < 0.2
    sibsp = rng.choice([0, 1, 2, 3, 4], size=n, p=[0.68, 0.23, 0.04, 0.03, 0.02])
    parch = rng.choice([0, 1, 2, 3], size=n, p=[0.76, 0.13, 0.09, 0.02])
    fare = np.round(np.exp(rng.normal(np.select([pclass == 1, pclass == 2], [4.3, 3.0], 2.2), 0.45)), 4)
    embarked = rng.choice(["S", "C", "Q"], size=n, p=[0.72, 0.19, 0.09]).astype(object)
    embarked[rng.random(n) < 0.003] = np.nan
    logit = -1.2 + 2.5 * (sex == "female") + np.select([pclass == 1, pclass == 2], [1.0, 0.4], -0.6) \
        - 0.02 * (age - 30) + 0.8 * (age < 10) - 0.3 * (sibsp > 2)
    survived = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    title = np.where(sex == "female", np.where(age < 18, "Miss.", "Mrs."), np.where(age < 14, "Master.", "Mr."))
    names = [f"Passenger{i + 1}, {t} Person" for i, t in enumerate(title)]
    cabin = np.where((pclass == 1) & (rng.random(n) < 0.8),
                     [f"{d}{k}" for d, k in zip(rng.choice(list("ABCDE"), n), rng.integers(1, 130, n))], None)
    df = pd.DataFrame({
        "PassengerId": np.arange(1, n + 1), "Survived": survived, "Pclass": pclass, "Name": names,
        "Sex": sex, "Age": np.where(age_missing, np.nan, age), "SibSp": sibsp, "Parch": parch,
        "Ticket": [f"T{100000 + i}" for i in rng.permutation(n)], "Fare": fare, "Cabin": cabin,
        "Embarked": embarked,
    })
    return df[TITANIC_COLUMNS]
