"""A generated Titanic-like passenger table (Kaggle's 12 columns, fake people) for a freely shipped sample."""

from __future__ import annotations

import numpy as np
import pandas as pd

TITANIC_COLUMNS = ["PassengerId", "Survived", "Pclass", "Name", "Sex", "Age", "SibSp", "Parch",
                   "Ticket", "Fare", "Cabin", "Embarked"]
"""The columns of Kaggle Titanic's train.csv, in order."""


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
