"""How many labelled target atoms each of an ESMS run's parts gets (training, validation, test), said on
the page before the search, and when they are too few for the figures to mean anything."""

from __future__ import annotations

from xcore.data.dataset import RelationalDataset


def split_sizes(ds: RelationalDataset, target: str, valid_fraction: float = 0.2,
                test_fraction: float = 0.2) -> dict[str, int]:
    """Labelled target atoms in each part of a run, without splitting: the held-out test part
    (`xcore.methods.evaluate.held_out_parts` with ``Holdout(test_fraction)``) and, of the rest, the
    search's training and validation parts (`xcore.esms.validation_split.split_targets` at
    ``valid_fraction / (1 - test_fraction)``, so `valid_fraction` is a share of all labelled atoms)."""
    cols = ds.predicate(target).columns
    n = len(ds.targets(target)[cols].merge(ds.truth(target)[cols], on=cols, how="inner"))
    n_test = min(max(int(round(test_fraction * n)), 1), n - 1) if n >= 2 else 0
    rest = n - n_test
    frac = valid_fraction / (1.0 - test_fraction)
    n_valid = min(max(int(round(frac * rest)), 1), rest - 1) if rest >= 2 else 0
    return {"labelled": n, "train": rest - n_valid, "validation": n_valid, "test": n_test}


MIN_SPLIT_ATOMS = 10
"""Fewest labelled atoms in a split for its figures to mean anything (fewer: the page says so)."""


def too_few_labels(ds: RelationalDataset, target: str, valid_fraction: float = 0.2,
                   test_fraction: float = 0.2) -> str | None:
    """Why the labelled targets are too few to learn and test on, or None."""
    sizes = split_sizes(ds, target, valid_fraction, test_fraction)
    if min(sizes["train"], sizes["validation"], sizes["test"]) >= MIN_SPLIT_ATOMS:
        return None
    return (f"{target} has {sizes['labelled']} labelled target atoms: {sizes['train']} to train on, "
            f"{sizes['validation']} to choose the model and {sizes['test']} to test it. With fewer than "
            f"{MIN_SPLIT_ATOMS} in a split the weights, the choice and the test figures are noise.")
