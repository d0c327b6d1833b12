"""The ESMS page's workflow as plain functions: split, search, apply to held-out data, re-infer.

A notebook gets exactly what the page shows: `run_esms(dataset, ESMSSettings(...))` returns an
`ESMSRun` with the search history, the best model applied to the test split, its predictions,
explanations and MEP@K; `apply_rules(run, text)` re-infers after rules are edited by hand.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Iterator, Literal, Sequence

import numpy as np
import pandas as pd
from pydantic import Field

from xcore.cluster import connect
from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.metrics import mep_at_k
from xcore.explain.types import ExplanationSet
from xcore.logic.ast import Rule
from xcore.logic.parser import parse_rules
from xcore.methods.base import Settings
from xcore.psl.model import PSLModel
from xcore.psl.scores import prediction_metrics
from xcore.psl.search import DEFAULT_GAMMA_GRID, ESMSSearch, gamma_sweep
from xcore.psl.templates import rule_key
from xcore.psl.validation_split import three_way_split
from xcore.runtime import Progress


class ESMSSettings(Settings):
    """Everything that decides an ESMS run (frozen and validated; runs are cached by its key)."""

    method_key: ClassVar[str] = "esms"

    target: str = Field(min_length=1, title="Target predicate")
    """The predicate whose labelled atoms the rules learn to predict (T(A) or T(A, B))."""
    block: str | None = Field(None, title="Block predicate (optional)")
    """Conjoined to every rule so only relevant pairs ground."""
    explainable: tuple[str, ...] | None = Field(None, title="Explainable predicates")
    """Predicates to mark explainable (None keeps the dataset's flags)."""
    gamma: float = Field(0.0, ge=0.0, le=1.0, title="Explainability bias γ")
    """How much the search prefers models with explainable rules (0: accuracy only)."""
    alpha: float = Field(0.25, ge=0.0, le=1.0, title="α (explainable share)")
    """Share of each drawn model's rules taken from explainable templates."""
    rules_per_model: int = Field(15, ge=1, le=200, title="Rules per model L_M")
    iterations: int = Field(100, ge=1, le=100_000, title="Iterations N")
    """Candidate models drawn and scored on the validation split."""
    metric: Literal["mse", "mae", "rmse", "aupr", "auroc"] = Field("mse", title="Validation metric")
    seed: int = Field(0, ge=0, title="Seed")
    n_jobs: int = Field(2, ge=1, le=256, title="Parallel workers")
    """Candidate models scored at once on this machine."""
    valid_fraction: float = Field(0.2, gt=0.0, lt=0.5, title="Validation share")
    test_fraction: float = Field(0.2, gt=0.0, lt=0.5, title="Test share")
    counterparts: bool = Field(False, title="Add counterpart templates (¬evidence → ¬target, as HyPER does)")
    """The paper's templates only push the target up; counterparts also pull it down when the evidence is
    low (HyPER-style)."""
    weight_learning: Literal["per_rule", "joint", "calibrated"] = Field("per_rule", title="Rule weights")
    """"per_rule": the paper's PPLL of each rule on its own (what the LastFM benchmark uses); "joint":
    each candidate model's weights learned together with the priors by joint PPLL; "calibrated": each
    candidate's weights (with the priors) chosen so that every training atom's MAP value, the others at
    their truth, fits its label in squared error, so a rule's weight is what it adds to the base rate
    (0/1 targets T(A) need one of the joint ways; `xcore.psl.joint_ppll`)."""
    closed_world: bool = Field(False, title="Closed world: absent atoms of the target's domain are 0")
    """Read absent atoms of the target's domain as 0 (needed when every truth value is 1)."""
    closed_world_limit: int = Field(200_000, ge=1, title="Closed world: most atoms added")
    """Most negative atoms the closed-world reading may add (else a block predicate is needed)."""
    project_rules: bool = Field(False, title="Use the project's rules as a starting model")
    """Also score the rules that came with the data (a PSL project's model) as a starting model:
    one more candidate with its own weights and hard rules, kept when it scores best."""
    scheduler: str = Field("", max_length=500, title="Dask scheduler address")
    """Dask scheduler address (``tcp://host:8786``) to evaluate candidates on; empty: this machine."""

    def search_kwargs(self) -> dict:
        return dict(gamma=self.gamma, alpha=self.alpha, rules_per_model=self.rules_per_model,
                    iterations=self.iterations, metric=self.metric, block=self.block,
                    n_jobs=self.n_jobs, seed=self.seed, counterparts=self.counterparts,
                    weight_learning=self.weight_learning)



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
    start = project_rules(ds) if settings.project_rules else []
    if settings.target not in ds.schema.names:
        raise XcoreError(f"target {settings.target!r} is not a predicate of {ds.name!r}")
    if settings.block is not None and settings.block not in ds.schema.names:
        raise XcoreError(f"block predicate {settings.block!r} is not a predicate of {ds.name!r}")
    truth = ds.truth(settings.target)["value"] if settings.target in ds.schema.names else None
    if settings.closed_world:
        ds = closed_world(ds, settings.target, settings.block, settings.closed_world_limit)
    elif truth is not None and len(truth) and bool((truth == 1.0).all()):
        raise XcoreError(
            f"every truth value of {settings.target} is 1.0: there are no negative labels, so predicting 1 "
            "everywhere would score MSE 0 and no rule would have anything to explain. Turn on the closed-world "
            "reading (closed_world: absent atoms of the target's domain count as 0).")
    if settings.target not in candidate_targets(ds):
        raise XcoreError(f"{settings.target} has no labelled target atoms to learn from; "
                         f"choose one of: {', '.join(candidate_targets(ds)) or 'none'}")
    train, valid, test = three_way_split(ds, settings.target, settings.valid_fraction,
                                         settings.test_fraction, settings.seed)
    with executor_for(settings) as executor:
        search = ESMSSearch(settings.target, **settings.search_kwargs(), executor=executor, start_rules=start)
        search.fit(train, valid, progress=lambda f, m: report(0.9 * f, m))
    report(0.92, "applying the best model to the test split")
    run = _apply(settings, search, train, valid, test, search.best_rules_)
    report(1.0, "done")
    return run


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


def split_sizes(ds: RelationalDataset, target: str, valid_fraction: float = 0.2,
                test_fraction: float = 0.2) -> dict[str, int]:
    """Labelled target atoms in each split of `three_way_split` (train, validation, test), without splitting."""
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


def _apply(settings: ESMSSettings, search: ESMSSearch, train, valid, test,
           rules: Sequence[Rule]) -> ESMSRun:
    """The rules applied to the test split: predictions, explanations and metrics of the target's atoms
    (other open predicates the rules mention are inferred too, but are not what ESMS learned)."""
    model = PSLModel(list(rules), alpha=settings.alpha, block=settings.block)
    model.ground(test)
    model.infer()
    predictions = model.predict()
    keep = (predictions["predicate"] == settings.target).to_numpy()
    predictions = predictions[keep].reset_index(drop=True)
    explanations = model.explain_all()
    shown = set(predictions["atom"])  # once, not once per explanation
    explanations = ExplanationSet([e for e in explanations if e.target in shown],
                                  method=explanations.method, meta=explanations.meta)
    metrics = prediction_metrics(predictions["prediction"].to_numpy(), predictions["truth"].to_numpy(dtype=float))
    return ESMSRun(settings, search, train, valid, test, model, predictions, explanations, metrics)


def apply_rules(run: ESMSRun, text: str, learn_missing_weights: bool = True) -> ESMSRun:
    """Re-infer on the test split with hand-edited rule text (weights as written).

    A rule written without a weight is an error unless it ends in `.` (hard); with
    `learn_missing_weights`, rules whose weight is written as 0 get a PPLL weight on the training split.
    """
    rules = parse_rules(text, dialect="psl", source="edited rules")
    if not rules:
        raise XcoreError("the edited model has no rules")
    rules = _keep_template_names(rules, run.model.rules)
    if learn_missing_weights and any(r.weight == 0 for r in rules):
        zero = [r for r in rules if r.weight == 0]
        learned = PSLModel(zero, alpha=run.settings.alpha, block=run.settings.block)
        learned.fit_weights(run.train, cache=run.search.cache_.ppll, target=run.settings.target)
        it = iter(learned.rules)
        rules = [next(it) if r.weight == 0 else r for r in rules]
    return _apply(run.settings, run.search, run.train, run.valid, run.test, rules)


def _keep_template_names(rules: Sequence[Rule], before: Sequence[Rule]) -> list[Rule]:
    """Edited rules keep the template name of the searched rule they equal (up to weight and renaming)."""
    names = {rule_key(r): r.name for r in before if r.name}
    return [r if r.name or rule_key(r) not in names else replace(r, name=names[rule_key(r)]) for r in rules]


def sweep(ds: RelationalDataset, settings: ESMSSettings, grid: Sequence[float] = DEFAULT_GAMMA_GRID,
          progress: Progress | None = None) -> pd.DataFrame:
    """The gamma sweep on the same splits as `run_esms` (paper Fig. 1 and Fig. 2 data)."""
    ds = with_explainable(ds, settings.explainable)
    train, valid, test = three_way_split(ds, settings.target, settings.valid_fraction,
                                         settings.test_fraction, settings.seed)
    kwargs = settings.search_kwargs()
    kwargs.pop("gamma")
    with executor_for(settings) as executor:
        return gamma_sweep(train, valid, settings.target, grid=list(grid), test_ds=test,
                           progress=progress, executor=executor, **kwargs)


@contextmanager
def executor_for(settings: ESMSSettings) -> Iterator[Any]:
    """"thread" for a local run, else a Dask Client on `settings.scheduler` (closed afterwards);
    a scheduler that cannot be reached is a `ConfigError` naming the address."""
    if not settings.scheduler.strip():
        yield "thread"
        return
    client = connect(settings.scheduler)
    try:
        yield client
    finally:
        client.close()


def settings_dict(settings: ESMSSettings) -> dict:
    return settings.to_dict()


def as_float_grid(text: str) -> list[float]:
    """Parse a user's gamma grid like '0, 0.25, 0.5' (each in [0, 1])."""
    try:
        grid = [float(x) for x in text.replace(";", ",").split(",") if x.strip()]
    except ValueError:
        raise XcoreError(f"gamma grid {text!r}: write numbers separated by commas") from None
    if not grid or any(not 0 <= g <= 1 or np.isnan(g) for g in grid):
        raise XcoreError(f"gamma grid {text!r}: every value must be in [0, 1]")
    return grid
