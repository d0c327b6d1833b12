"""ESMS as an estimator: `fit(data)` runs the structure search on the labelled targets of `data`,
`predict(data)` infers the target atoms of any data of the schema with the learned rules.

Inside `fit` the labelled targets are split once more, into the part the rules' weights are learned
on and the validation part the candidate models are scored on: that split is the search's own model
selection (Algorithm 1 of the paper), not a test. A held-out test is the caller's: the registered
`run` (`xcore.esms.runs`) and `xcore.methods.evaluate` hold out labelled targets with `holdout`.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import pandas as pd

from xcore.cluster import connect
from xcore.data import splits
from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.esms.data_reading import candidate_targets, closed_world, project_rules, with_explainable
from xcore.esms.search import ESMSSearch
from xcore.esms.settings import ESMSSettings
from xcore.esms.validation_split import split_targets
from xcore.explain.global_view import item_group
from xcore.explain.types import Explanation, ExplanationItem, ScoreSpec
from xcore.logic.ast import Rule
from xcore.logic.atoms import AtomStore
from xcore.methods.base import Estimator, prediction_frame
from xcore.psl.model import PSLModel
from xcore.runtime import Progress

RULE_WEIGHT_SCORE = ScoreSpec(
    label="weight", measures="the rule's learned weight (PPLL); larger weights cost more when violated.",
    signed=False, unit="", directed=False)


def rule_without_weight(text: str) -> str:
    """A PSL rule's text without its leading weight (the weight is the item's score)."""
    return item_group("", {"rule": text})


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


class ESMSEstimator(Estimator):
    """Explainable Structured Model Search (Embar, Srinivasan & Getoor, UAI 2022) as an estimator.

    Parameters
    ----------
    settings : ESMSSettings
        The target, the search's knobs and how the data are read (explainable flags, closed world).

    Attributes
    ----------
    search_ : ESMSSearch
        The fitted search: ``history_``, ``best_score_``, ``start_rules``, ``counterparts``, ``cache_``.
    history_ : pandas.DataFrame
        One row per candidate model (`xcore.esms.search.HISTORY_COLUMNS`), scored on the validation part.
    rules_ : list of Rule
        The chosen model's rules with their learned weights.
    model_ : PSLModel
        The chosen model grounded on the validation part, MAP done (what the search scored).
    train_ : RelationalDataset
        The part the weights were learned on (weights of hand-edited rules are learned there too).
    n_train_, n_valid_ : int
        Labelled target atoms of the training and validation parts inside `fit`.
    held_out_model_ : PSLModel or None
        The rules applied to held-out data (grounded, MAP done) by `apply_held_out`; None after `fit`.
    edited_ : bool
        True when `rules_` are hand-edited (`with_rules`) rather than the search's choice.
    """

    def __init__(self, settings: ESMSSettings) -> None:
        self.settings = settings

    # ------------------------------------------------------------------ reading the data
    def prepared(self, data: RelationalDataset) -> RelationalDataset:
        """`data` as ESMS reads it: the settings' explainable flags and, with `closed_world`, every absent
        atom of the target's domain as a target labelled 0 (without it, all-positive labels are an error)."""
        s = self.settings
        if s.target not in data.schema.names:
            raise XcoreError(f"target {s.target!r} is not a predicate of {data.name!r}")
        if s.block is not None and s.block not in data.schema.names:
            raise XcoreError(f"block predicate {s.block!r} is not a predicate of {data.name!r}")
        ds = with_explainable(data, s.explainable)
        if s.closed_world:
            return closed_world(ds, s.target, s.block, s.closed_world_limit)
        truth = ds.truth(s.target)["value"]
        if len(truth) and bool((truth == 1.0).all()):
            raise XcoreError(
                f"every truth value of {s.target} is 1.0: there are no negative labels, so predicting 1 "
                "everywhere would score MSE 0 and no rule would have anything to explain. Turn on the closed-world "
                "reading (closed_world: absent atoms of the target's domain count as 0).")
        return ds

    def units(self, data: RelationalDataset) -> pd.DataFrame:
        """The labelled target atoms of the prepared data (closed-world negatives included)."""
        return splits.units(self.prepared(data), [self.settings.target])

    def holdout(self, data: RelationalDataset, test_units: list[str]) -> tuple[RelationalDataset, RelationalDataset]:
        """(training, test) parts of the prepared data; `fit` reads the training part as it is (its
        held-out atoms are unknown there, not closed-world negatives)."""
        train, test = splits.holdout(self.prepared(data), test_units, [self.settings.target])
        self._prepared_part = train
        return train, test

    def inner_valid_fraction(self) -> float:
        """The validation share inside `fit`: `valid_fraction` is a share of all labelled atoms, of which
        `test_fraction` are held out before `fit` sees the data."""
        return self.settings.valid_fraction / (1.0 - self.settings.test_fraction)

    # ------------------------------------------------------------------ learning
    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "ESMSEstimator":
        """Search a model on the labelled targets of `data` (split inside into training and validation)."""
        s = self.settings
        start = project_rules(data) if s.project_rules else []
        ds = data if data is getattr(self, "_prepared_part", None) else self.prepared(data)
        if s.target not in candidate_targets(ds):
            raise XcoreError(f"{s.target} has no labelled target atoms to learn from; "
                             f"choose one of: {', '.join(candidate_targets(ds)) or 'none'}")
        train, valid = split_targets(ds, s.target, self.inner_valid_fraction(), s.seed + 1)
        with executor_for(s) as executor:
            search = ESMSSearch(s.target, **s.search_kwargs(), executor=executor, start_rules=start)
            search.fit(train, valid, progress=progress)
        self.search_ = search
        self.history_: pd.DataFrame = search.history_
        self.rules_: list[Rule] = list(search.best_rules_)
        self.model_: PSLModel = search.best_model_
        self.train_ = train
        self.n_train_ = len(train.truth(s.target))
        self.n_valid_ = len(valid.truth(s.target))
        self.held_out_model_: PSLModel | None = None
        self.edited_ = False
        self.__dict__.pop("_prepared_part", None)
        return self

    # ------------------------------------------------------------------ applying
    def apply(self, data: RelationalDataset | AtomStore, rules: list[Rule] | None = None) -> PSLModel:
        """The learned rules (or `rules`) grounded on `data` (with the settings' explainable flags; an
        `AtomStore` as it is), MAP done."""
        self.check_fitted()
        model = PSLModel(list(self.rules_ if rules is None else rules), alpha=self.settings.alpha,
                         block=self.settings.block)
        model.ground(data if isinstance(data, AtomStore) else with_explainable(data, self.settings.explainable))
        model.infer()
        return model

    def apply_held_out(self, data: RelationalDataset) -> "ESMSEstimator":
        """A copy of this fitted estimator whose `held_out_model_` is its rules applied to `data`."""
        out = self._copy()
        out.held_out_model_ = self.apply(data)
        return out

    def with_rules(self, rules: list[Rule]) -> "ESMSEstimator":
        """A copy of this fitted estimator with hand-edited rules (`edited_`; the search's history kept);
        nothing is applied yet (`held_out_model_` is None)."""
        out = self._copy()
        out.rules_, out.edited_, out.held_out_model_ = list(rules), True, None
        return out

    def _copy(self) -> "ESMSEstimator":
        """A shallow copy of this fitted estimator (the shared fit is left as it was)."""
        self.check_fitted()
        out = ESMSEstimator(self.settings)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_prepared_part"})
        return out

    def applied(self, data: RelationalDataset | None) -> PSLModel:
        """The grounded model predictions come from: on `data`, else on the held-out data the run applied
        it to, else on the validation part."""
        if data is not None:
            return self.apply(data)
        self.check_fitted()
        return self.held_out_model_ if self.held_out_model_ is not None else self.model_

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """MAP values of the target's atoms of `data` (None: of the held-out data the run applied the model
        to, else of the validation part), one prediction frame."""
        frame = self.applied(data).predict()
        frame = frame[frame["predicate"] == self.settings.target]
        return prediction_frame(frame["atom"], frame["prediction"], frame["truth"], error=frame["error"])

    def rules_summary(self) -> Explanation:
        """The learned model as one explanation: each lifted rule with its weight."""
        self.check_fitted()
        frame = PSLModel(self.rules_, alpha=self.settings.alpha, block=self.settings.block).rules_frame(
            self.model_.store_.schema if self.model_.store_ is not None else None)
        items = [ExplanationItem(kind="rule", text=rule_without_weight(str(r.rule)),
                                 natural=rule_without_weight(str(r.rule)), score=float(r.weight),
                                 explainable=bool(r.explainable),
                                 extras={"template": str(r.template), "squared": bool(r.squared), "hard": bool(r.hard)})
                 for r in frame.itertuples(index=False)]
        return Explanation(target="model", target_text=f"ESMS model for {self.settings.target}", method="esms",
                           items=items, score_spec=RULE_WEIGHT_SCORE)
