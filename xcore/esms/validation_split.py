"""ESMS's validation split: the labelled targets divided with a seed into the data rules learn weights
on and the data candidate models are scored on (the search's own model selection, inside `fit`).

The training dataset keeps the training targets (truth for PPLL) and drops the validation ones; the
validation dataset observes the training labels (they become evidence, as PSL's learn/eval partitions
do) and has the validation atoms as targets with their truth. A held-out test split is the shared
`xcore.data.splits.holdout` (the same transductive split); `three_way_split` composes the two for the
benchmarks that evaluate a search outside the registry.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError


def split_targets(dataset: RelationalDataset, target: str, valid_fraction: float = 0.25,
                  seed: int = 0) -> tuple[RelationalDataset, RelationalDataset]:
    """Split the labelled targets of `target` into a training and a validation dataset (seeded).

    Training: the training targets with their truth (validation atoms removed). Validation: the
    training labels become observations, the validation atoms are the targets with their truth.
    Unlabelled targets are dropped from training and stay targets of the validation dataset.
    """
    if not 0.0 < valid_fraction < 1.0:
        raise XcoreError(f"valid_fraction must be in (0, 1), got {valid_fraction}")
    pred = dataset.predicate(target)
    cols = pred.columns
    tab = dataset.tables[target]
    labelled = tab["targets"][cols].merge(tab["truth"][[*cols, "value"]], on=cols, how="inner")
    unlabelled = tab["targets"][cols].merge(tab["truth"][cols], on=cols, how="left", indicator=True)
    unlabelled = unlabelled[unlabelled["_merge"] == "left_only"][cols]
    n = len(labelled)
    if n < 2:
        raise XcoreError(f"{target} has {n} labelled target atoms; a train/validation split needs at least 2")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    n_valid = min(max(int(round(valid_fraction * n)), 1), n - 1)
    valid = labelled.iloc[np.sort(perm[:n_valid])].reset_index(drop=True)
    train = labelled.iloc[np.sort(perm[n_valid:])].reset_index(drop=True)
    train_tables = {**dataset.tables, target: {
        "obs": tab["obs"], "targets": train[cols], "truth": train}}
    valid_tables = {**dataset.tables, target: {
        "obs": pd.concat([tab["obs"], train], ignore_index=True),
        "targets": pd.concat([valid[cols], unlabelled], ignore_index=True), "truth": valid}}
    mk = lambda tables, suffix: RelationalDataset(  # noqa: E731
        dataset.schema, tables, name=f"{dataset.name} ({suffix})", description=dataset.description)
    return mk(train_tables, "train"), mk(valid_tables, "validation")


def three_way_split(dataset: RelationalDataset, target: str, valid_fraction: float = 0.2,
                    test_fraction: float = 0.2, seed: int = 0
                    ) -> tuple[RelationalDataset, RelationalDataset, RelationalDataset]:
    """Train / validation / test datasets from the labelled targets (fractions of all labelled atoms).

    The test dataset observes the train and validation labels; validation observes the train labels.
    """
    if not (valid_fraction > 0 and test_fraction > 0 and valid_fraction + test_fraction < 1):
        raise XcoreError("valid_fraction and test_fraction must be > 0 with a sum below 1")
    rest, test = split_targets(dataset, target, test_fraction, seed)
    train, valid = split_targets(rest, target, valid_fraction / (1.0 - test_fraction), seed + 1)
    return train, valid, test
