"""The ESMS page's workflow as plain functions: split, search, apply to held-out data, re-infer.

A notebook gets exactly what the page shows: `run_esms(dataset, ESMSSettings(...))` returns an
`ESMSRun` with the search history, the best model applied to the test split, its predictions,
explanations and MEP@K; `apply_rules(run, text)` re-infers after rules are edited by hand.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.metrics import mep_at_k
from xcore.explain.types import ExplanationSet
from xcore.logic.ast import Rule
from xcore.logic.parser import parse_rules
from xcore.psl.model import PSLModel
from xcore.psl.search import DEFAULT_GAMMA_GRID, ESMSSearch, gamma_sweep, three_way_split
from xcore.runtime import Progress


@dataclass(frozen=True)
class ESMSSettings:
    """Everything that decides an ESMS run (hashable: the page caches runs by it)."""

    target: str
    block: str | None = None
    explainable: tuple[str, ...] | None = None
    """Predicates to mark explainable (None keeps the dataset's flags)."""
    gamma: float = 0.0
    alpha: float = 0.25
    rules_per_model: int = 15
    iterations: int = 100
    metric: str = "mse"
    seed: int = 0
    n_jobs: int = 2
    valid_fraction: float = 0.2
    test_fraction: float = 0.2
    counterparts: bool = False
    """Add HyPER-style counterpart templates (pull the target down when the evidence is low)."""

    def search_kwargs(self) -> dict:
        return dict(gamma=self.gamma, alpha=self.alpha, rules_per_model=self.rules_per_model,
                    iterations=self.iterations, metric=self.metric, block=self.block,
                    n_jobs=self.n_jobs, seed=self.seed, counterparts=self.counterparts)


DEMO_SETTINGS = ESMSSettings(target="rating", block="rated", gamma=0.5, rules_per_model=10,
                             iterations=20)
"""The page's demo button: the bundled LastFM-shaped sample, runs end to end in seconds."""


@dataclass
class ESMSRun:
    """The outcome of one ESMS run, as the page shows it."""

    settings: ESMSSettings
    search: ESMSSearch
    train: RelationalDataset
    valid: RelationalDataset
    test: RelationalDataset
    model: PSLModel
    predictions: pd.DataFrame
    explanations: ExplanationSet
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def history(self) -> pd.DataFrame:
        return self.search.history_

    def mep(self, ks: Sequence[int] = (1, 2, 3)) -> dict[int, float]:
        """MEP@K of the test predictions' explanations."""
        return {k: mep_at_k(self.explanations, k) for k in ks}

    def predictions_csv(self) -> str:
        return self.predictions.to_csv(index=False)


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


def run_esms(ds: RelationalDataset, settings: ESMSSettings, progress: Progress | None = None) -> ESMSRun:
    """Split the labelled targets, search on train/validation, apply the best model to the test split."""
    report = progress or (lambda f, m: None)
    ds = with_explainable(ds, settings.explainable)
    if settings.target not in candidate_targets(ds):
        raise XcoreError(f"{settings.target} has no labelled target atoms to learn from; "
                         f"choose one of: {', '.join(candidate_targets(ds)) or 'none'}")
    train, valid, test = three_way_split(ds, settings.target, settings.valid_fraction,
                                         settings.test_fraction, settings.seed)
    search = ESMSSearch(settings.target, **settings.search_kwargs())
    search.fit(train, valid, progress=lambda f, m: report(0.9 * f, m))
    report(0.92, "applying the best model to the test split")
    run = _apply(settings, search, train, valid, test, search.best_rules_)
    report(1.0, "done")
    return run


def _apply(settings: ESMSSettings, search: ESMSSearch, train, valid, test,
           rules: Sequence[Rule]) -> ESMSRun:
    model = PSLModel(list(rules), alpha=settings.alpha, block=settings.block)
    model.ground(test)
    model.infer()
    predictions = model.predict()
    explanations = model.explain_all()
    return ESMSRun(settings, search, train, valid, test, model, predictions, explanations,
                   model.evaluate())


def apply_rules(run: ESMSRun, text: str, learn_missing_weights: bool = True) -> ESMSRun:
    """Re-infer on the test split with hand-edited rule text (weights as written).

    A rule written without a weight is an error unless it ends in `.` (hard); with
    `learn_missing_weights`, rules whose weight is written as 0 get a PPLL weight on the training split.
    """
    rules = parse_rules(text, dialect="psl", source="edited rules")
    if not rules:
        raise XcoreError("the edited model has no rules")
    if learn_missing_weights and any(r.weight == 0 for r in rules):
        zero = [r for r in rules if r.weight == 0]
        learned = PSLModel(zero, alpha=run.settings.alpha, block=run.settings.block)
        learned.fit_weights(run.train, cache=run.search.cache_.ppll)
        it = iter(learned.rules)
        rules = [next(it) if r.weight == 0 else r for r in rules]
    return _apply(run.settings, run.search, run.train, run.valid, run.test, rules)


def sweep(ds: RelationalDataset, settings: ESMSSettings, grid: Sequence[float] = DEFAULT_GAMMA_GRID,
          progress: Progress | None = None) -> pd.DataFrame:
    """The gamma sweep on the same splits as `run_esms` (paper Fig. 1 and Fig. 2 data)."""
    ds = with_explainable(ds, settings.explainable)
    train, valid, test = three_way_split(ds, settings.target, settings.valid_fraction,
                                         settings.test_fraction, settings.seed)
    kwargs = settings.search_kwargs()
    kwargs.pop("gamma")
    return gamma_sweep(train, valid, settings.target, grid=list(grid), test_ds=test,
                       progress=progress, **kwargs)


def settings_dict(settings: ESMSSettings) -> dict:
    return asdict(settings)


def as_float_grid(text: str) -> list[float]:
    """Parse a user's gamma grid like '0, 0.25, 0.5' (each in [0, 1])."""
    try:
        grid = [float(x) for x in text.replace(";", ",").split(",") if x.strip()]
    except ValueError:
        raise XcoreError(f"gamma grid {text!r}: write numbers separated by commas") from None
    if not grid or any(not 0 <= g <= 1 or np.isnan(g) for g in grid):
        raise XcoreError(f"gamma grid {text!r}: every value must be in [0, 1]")
    return grid
