"""How ESMS reads a dataset: which predicates are explainable, which can be targets, the rules that came
with the data, and the closed-world reading of a target (absent atoms of its domain labelled 0)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.logic.ast import Rule
from xcore.logic.parser import parse_rules


def with_explainable(ds: RelationalDataset, explainable: Sequence[str] | None) -> RelationalDataset:
    """The dataset with exactly the given predicates flagged explainable (None: unchanged)."""
    if explainable is None:
        return ds
    wanted = set(explainable)
    unknown = wanted - set(ds.schema.names)
    if unknown:
        raise XcoreError(f"unknown predicates marked explainable: {', '.join(sorted(unknown))}")
    for p in ds.predicates:
        if p.explainable != (p.name in wanted):
            ds = ds.with_flags(p.name, explainable=p.name in wanted)
    return ds


def candidate_targets(ds: RelationalDataset) -> list[str]:
    """Predicates that can be ESMS targets: some target atoms with truth labels."""
    return [p.name for p in ds.predicates if len(ds.targets(p.name)) and len(ds.truth(p.name))]


def project_rules(ds: RelationalDataset) -> list[Rule]:
    """The rules that came with the data (e.g. a PSL project's model), parsed; an error if none."""
    if not ds.rules:
        raise XcoreError(f"{ds.name!r} carries no rules: load a PSL project (config or .data + .psl) "
                         "to start from its model")
    return parse_rules("\n".join(ds.rules), dialect="psl", source=f"rules of {ds.name}")


def binary_unary(ds: RelationalDataset, target: str) -> bool:
    """True for a target T(A) whose truth labels are 0/1 with both classes present."""
    if ds.predicate(target).arity != 1:
        return False
    truth = ds.truth(target)["value"]
    return bool(len(truth)) and bool(truth.isin([0.0, 1.0]).all()) and truth.nunique() == 2


def all_positive(ds: RelationalDataset, target: str) -> bool:
    """True when the target has truth labels and every one is 1.0 (no negative examples)."""
    truth = ds.truth(target)["value"]
    return bool(len(truth)) and bool((truth == 1.0).all())


def closed_world(ds: RelationalDataset, target: str, block: str | None = None,
                 limit: int = 200_000) -> RelationalDataset:
    """The dataset with every absent atom of the target's domain added as a target labelled 0.

    The domain is the block predicate's observed atoms when one is given, else the cross product of
    the constants seen in each argument position of the target's atoms; more than `limit` new atoms
    is an error naming the size (choose a block predicate).
    """
    pred = ds.predicate(target)
    cols = pred.columns
    known = pd.concat([ds.observations(target)[cols], ds.targets(target)[cols], ds.truth(target)[cols]],
                      ignore_index=True).drop_duplicates()
    if block is not None:
        candidates = ds.observations(block)[cols].drop_duplicates()
    else:
        domains = [pd.unique(known[c]) for c in cols]
        size = int(np.prod([len(d) for d in domains], dtype=np.float64))
        if size - len(known) > limit:
            raise XcoreError(f"the closed-world reading of {target} would add about {size - len(known):,} atoms "
                             f"(the product of its argument domains), above the limit of {limit:,}: choose a "
                             "block predicate that lists the candidate atoms")
        grid = pd.MultiIndex.from_product(domains, names=cols)
        candidates = grid.to_frame(index=False)
    merged = candidates.merge(known, on=cols, how="left", indicator=True)
    new = merged.loc[merged["_merge"] == "left_only", cols].reset_index(drop=True)
    if len(new) > limit:
        raise XcoreError(f"the closed-world reading of {target} would add {len(new):,} atoms, above the limit "
                         f"of {limit:,}")
    tables = {name: dict(parts) for name, parts in ds.tables.items()}
    tables[target]["targets"] = pd.concat([ds.targets(target), new.assign(value=np.nan)], ignore_index=True)
    tables[target]["truth"] = pd.concat([ds.truth(target), new.assign(value=0.0)], ignore_index=True)
    return RelationalDataset(ds.schema, tables, name=ds.name, description=ds.description, tabular=ds.tabular,
                             label=ds.label)
