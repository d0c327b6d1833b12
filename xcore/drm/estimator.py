"""The deep relational machine as an estimator: random first-order features drawn from the mode
language, then one network on them, its architecture and epochs chosen on inner validation splits."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.drm.explain import LocalExplanation, explain_instance, feature_intervals
from xcore.drm.features import Evaluator, Feature, distinct_columns, features_and_matrix
from xcore.drm.linear import LinearBaseline, fit_linear
from xcore.drm.network import TrainedNet, train_network
from xcore.drm.problem import Problem, build_problem, new_examples_problem, target_predicate
from xcore.drm.relevance import Relevance, parse_relevance
from xcore.drm.settings import DRMSettings
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ScoreSpec
from xcore.methods.base import Estimator, prediction_frame
from xcore.runtime import Progress, null_progress, scaled

COVERAGE_SCORE = ScoreSpec(label="coverage", measures="the share of all examples for which the feature is true.",
                           signed=False, unit="fraction of examples", directed=False)

Rows = tuple[list[str], np.ndarray, np.ndarray]
"""(target texts, 0/1 feature rows, truth (NaN where unknown)) of a dataset's examples."""


def input_candidates(X: np.ndarray, distinct: bool) -> tuple[np.ndarray, ...]:
    """The column sets the inner validation chooses the network's inputs from: every feature, and with
    `distinct` (when some extensions repeat) one column per distinct extension."""
    every = np.arange(X.shape[1], dtype=np.int64)
    if not distinct:
        return (every,)
    once = distinct_columns(X)
    return (every, once) if len(once) < len(every) else (every,)


class DRMEstimator(Estimator):
    """Draws features from the labelled examples of `data`, then trains one network on all of them.

    The network's architecture, weight decay and epochs are chosen on `inner_folds` validation splits
    of the training examples (the algorithm's own model selection), then it is retrained on all of
    them. Test figures come from held-out data (`xcore.methods.evaluate`, or the run's held-out fold).

    Parameters
    ----------
    settings : DRMSettings
        Feature drawing, network search and explanation settings.

    Attributes
    ----------
    problem_ : Problem
        The training examples, their labels, the coded background and the mode language.
    features_ : list of Feature
        The drawn features (first-order clauses), in drawing order.
    X_ : numpy.ndarray
        Training examples x features, 0/1.
    inputs_ : numpy.ndarray
        Feature columns the network and the linear model take: every feature, or (with `distinct_inputs`,
        where the inner validation prefers it) the first feature of each distinct extension over the
        training examples.
    net_ : TrainedNet
        The network retrained on every training example, with the validation choices.
    linear_ : LinearBaseline
        L2 logistic regression on the same inputs (the baseline the network should match).
    train_predictions_ : numpy.ndarray
        The network's class of each training example (neighbourhoods of explanations use these).
    relevance_ : Relevance
        The parsed relevance levels.
    exclude_ : tuple of str
        Predicates left out of the background (the fold predicate).
    timings_ : dict of str to float
        Seconds spent drawing features and training the network.
    """

    def __init__(self, settings: DRMSettings) -> None:
        self.settings = settings

    def split_predicates(self, data: RelationalDataset) -> list[str] | None:
        """DRM's units are the labelled examples of its one target predicate."""
        target = target_predicate(data)
        return [target] if target else None

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "DRMEstimator":
        """Draw features and train the network on every labelled example of `data`."""
        s = self.settings
        progress = progress or null_progress
        t0 = time.perf_counter()
        exclude = (s.fold_predicate,) if s.fold_predicate else ()
        problem = build_problem(data, s.modes, exclude)
        depth = s.depth or (problem.language.depth if s.modes.strip() else 2)
        key = (data.fingerprint(), problem.language.text())
        feats, X = features_and_matrix(problem, key, s.max_draws, s.seed, s.max_literals, depth,
                                       progress=scaled(progress, 0.0, 0.4))
        t1 = time.perf_counter()
        y = problem.labels
        net = train_network(X.astype(np.float32), y, s.hidden, s.learning_rates, s.dropout, s.max_epochs, s.seed,
                            s.weight_decays, s.inner_folds, progress=scaled(progress, 0.4, 0.95),
                            column_sets=input_candidates(X, s.distinct_inputs))
        inputs = net.columns if net.columns is not None else np.arange(X.shape[1], dtype=np.int64)
        Xin = X[:, inputs].astype(np.float32)
        self.linear_: LinearBaseline = fit_linear(Xin, y)
        self.problem_: Problem = problem
        self.features_: list[Feature] = feats
        self.X_: np.ndarray = X
        self.inputs_: np.ndarray = inputs
        self.net_: TrainedNet = net
        self.train_predictions_: np.ndarray = (net.proba(Xin) >= 0.5).astype(np.int64)
        self.relevance_: Relevance = parse_relevance(s.relevance)
        self.exclude_: tuple[str, ...] = exclude
        self.timings_: dict[str, float] = {"features": t1 - t0, "networks": time.perf_counter() - t1}
        progress(1.0, "trained the network")
        return self

    # ------------------------------------------------------------------ predictions
    def target_of(self, i: int) -> str:
        """The target text of training example i."""
        return f"{self.problem_.target}({self.problem_.examples[i]})"

    def features_of(self, data: RelationalDataset) -> tuple[Problem, np.ndarray]:
        """The examples of new data under the fitted language and their 0/1 matrix over the drawn features."""
        self.check_fitted()
        problem = new_examples_problem(data, self.problem_.target, self.problem_.language, self.exclude_)
        return problem, Evaluator(problem).matrix(self.features_)

    def rows(self, data: RelationalDataset | None = None) -> Rows:
        """(target texts, feature rows, truth) of the examples of `data` (None: the training examples)."""
        self.check_fitted()
        if data is None:
            problem, X = self.problem_, self.X_
        else:
            problem, X = self.features_of(data)
        truth = np.where(problem.labels >= 0, problem.labels.astype(float), np.nan)
        return [f"{problem.target}({e})" for e in problem.examples], X, truth

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """The network's class of each example of `data` (None: the training examples, in sample), with
        P(class 1), the linear baseline's P(class 1) and the active features; truth NaN where unknown."""
        texts, X, truth = self.rows(data)
        Xin = X[:, self.inputs_].astype(np.float32)
        proba = self.net_.proba(Xin)
        return prediction_frame(texts, (proba >= 0.5).astype(np.int64), truth, probability=np.round(proba, 12),
                                linear_probability=np.round(self.linear_.proba(Xin), 12),
                                active_features=X.sum(axis=1).astype(np.int64))

    def for_target(self, target: str) -> "DRMEstimator":
        """The model that predicts and explains `target`: this one (a cross-fitted run has one per fold)."""
        return self

    def fold_models(self) -> list["DRMEstimator"]:
        """The fitted networks' models the views list: this one."""
        return [self]

    # ------------------------------------------------------------------ explanations
    def local(self, target: str, data: RelationalDataset | None = None, hamming: int | None = None,
              relevance: Relevance | None = None, min_neighbours: int | None = None,
              rows: Rows | None = None) -> LocalExplanation:
        """The local explanation of the network's prediction of `target`, an example of `data` (None: a
        training example) among the training instances; `rows` (from `rows(data)`) saves recomputing
        the features of `data`. Arguments override the settings."""
        texts, X, truth = rows if rows is not None else self.rows(data)
        if target not in texts:
            where = "a training example" if data is None and rows is None else "an example of the data"
            raise XcoreError(f"{target!r} is not {where} of this model (targets look like {texts[0]!r})")
        j = texts.index(target)
        x = X[j]
        c = int(self.net_.proba(x[None, self.inputs_].astype(np.float32))[0] >= 0.5)
        radius = self._radius(x, hamming, min_neighbours)
        n = len(self.X_)
        stacked = np.vstack([self.X_, x[None, :]])
        own = self._training_index(target)  # an instance is never its own neighbour
        train = np.arange(n)[np.arange(n) != own]
        s = self.settings
        out = explain_instance(stacked, n, train, np.append(self.train_predictions_, c), c,
                               feature_intervals(self.features_, relevance or self.relevance_), radius, s.beam,
                               s.max_body)
        out.radius, out.target, out.instance, out.truth = radius, target, x, float(truth[j])
        return out

    def _training_index(self, target: str) -> int:
        """The position of `target` among the training examples, or -1."""
        prefix = f"{self.problem_.target}("
        name = target[len(prefix):-1] if target.startswith(prefix) and target.endswith(")") else target
        hits = np.flatnonzero(self.problem_.examples == name)
        return int(hits[0]) if len(hits) else -1

    def _radius(self, x: np.ndarray, hamming: int | None, min_neighbours: int | None) -> int:
        """The Hamming radius: `hamming`, widened until it holds the wanted number of training instances."""
        s = self.settings
        radius = s.hamming if hamming is None else hamming
        wanted = (s.min_neighbours if hamming is None else 0) if min_neighbours is None else min_neighbours
        if wanted and len(self.X_):
            d = np.sort(np.count_nonzero(self.X_ != x[None, :], axis=1))
            radius = max(radius, int(d[min(wanted, len(d)) - 1]))
        return radius

    def feature_summary(self) -> Explanation:
        """Every drawn feature with its definition and coverage of the training examples."""
        self.check_fitted()
        cov = self.X_.mean(axis=0)
        items = [ExplanationItem(kind="feature", text=f.definition(), natural=f.clause.body_text(), score=float(cov[j]),
                                 atoms=[f.name], extras={"predicates": f.predicates,
                                                         "relevance": _interval_text(self.relevance_, f)})
                 for j, f in enumerate(self.features_)]
        return Explanation(target="model", target_text=f"{len(items)} features of {self.problem_.target}",
                           method="drm", items=items, ordering="given", score_spec=COVERAGE_SCORE)


def _interval_text(rel: Relevance, f: Feature) -> str:
    iv = rel.interval(f.predicates)
    return "" if iv is None else rel.show([iv])
