"""Synthetic friends-and-smokers data of any size (benchmarks, tests, demos), from a seed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema


def friends_smokers_dataset(n_people: int = 2000, avg_friends: float = 10.0, observed: float = 0.2,
                            seed: int = 0) -> RelationalDataset:
    """People with random symmetric friendships (about `avg_friends` each); a fraction `observed`
    of smokes/cancer atoms is evidence (from a planted process), the rest are query atoms."""
    rng = np.random.default_rng(seed)
    people = np.array([f"p{i}" for i in range(n_people)], dtype=object)
    m = int(n_people * avg_friends / 2)
    a = rng.integers(0, n_people, m)
    b = rng.integers(0, n_people, m)
    keep = a != b
    pairs = np.unique(np.sort(np.column_stack([a[keep], b[keep]]), axis=1), axis=0)
    both = np.concatenate([pairs, pairs[:, ::-1]])
    smokes = rng.random(n_people) < 0.3
    cancer = rng.random(n_people) < np.where(smokes, 0.6, 0.1)

    def split(values: np.ndarray) -> dict[str, pd.DataFrame]:
        obs = rng.random(n_people) < observed
        return {"obs": pd.DataFrame({"a0": people[obs], "value": values[obs].astype(float)}),
                "targets": pd.DataFrame({"a0": people[~obs], "value": np.nan}),
                "truth": pd.DataFrame({"a0": people[~obs], "value": values[~obs].astype(float)})}

    schema = Schema.of([
        Predicate("friends", 2, ("person", "person"), closed=True, template="{0} is friends with {1}"),
        Predicate("smokes", 1, ("person",), closed=False, template="{0} smokes"),
        Predicate("cancer", 1, ("person",), closed=False, template="{0} has cancer"),
    ])
    tables = {
        "friends": {"obs": pd.DataFrame({"a0": people[both[:, 0]], "a1": people[both[:, 1]], "value": 1.0})},
        "smokes": split(smokes),
        "cancer": split(cancer),
    }
    return RelationalDataset(schema, tables, name=f"friends_smokers_{n_people}",
                             description=f"synthetic friends and smokers, {n_people} people (seed {seed})")
