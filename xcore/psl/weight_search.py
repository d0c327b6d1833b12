"""PSL's search-based weight learners (``GridSearch``, ``RandomGridSearch``, ``GuidedRandomGridSearch``)
and the evaluators they score locations with (``AUCEvaluator``, ``ContinuousEvaluator``,
``DiscreteEvaluator``, ``CategoricalEvaluator``), as PSL 2.4 defines them.

Every location is a choice of one weight per soft rule from ``gridsearch.weights`` (default
``0.001:0.01:0.1:1:10``); a location's objective is minus the evaluator's normalised representative
metric (higher-is-better metrics as they are, MSE/MAE negated) on the MAP state of the learn split;
the best location wins (the first of equals). ``GridSearch`` visits all locations (odometer order,
from all-lowest); ``RandomGridSearch`` up to ``randomgridsearch.maxlocations`` (150) distinct random
ones; ``GuidedRandomGridSearch`` ``guidedrandomgridsearch.seedlocations`` (25) random ones, then the
neighbours (one weight one step up or down) of the ``guidedrandomgridsearch.explorelocations`` (10)
best. The random choices use ``random.seed`` (PSL draws a seed per run when it is not set; we use
`DEFAULT_SEED` so runs repeat). Only inference and an evaluator are needed: MAP states are exact and
warm-started from the previous location.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from xcore.errors import ConfigError
from xcore.optional_deps import import_optional
from xcore.psl.inference import map_inference

SEARCH_METHODS = ("GridSearch", "RandomGridSearch", "GuidedRandomGridSearch")
EVALUATORS = ("AUCEvaluator", "ContinuousEvaluator", "DiscreteEvaluator", "CategoricalEvaluator")
DEFAULT_SEED = 4
EVAL_PACKAGE = "org.linqs.psl.evaluation.statistics"


def _option(options: Mapping[str, Any] | None, key: str, default: Any) -> Any:
    for k, v in (options or {}).items():
        if str(k).lower() == key:
            return v
    return default


def _int_option(options, key: str, default: int) -> int:
    raw = _option(options, key, default)
    try:
        value = int(float(str(raw)))
    except ValueError:
        raise ConfigError(f"option {key}={raw!r}: expected a whole number") from None
    if value <= 0:
        raise ConfigError(f"option {key} must be positive, got {raw!r}")
    return value


def grid_weights(options: Mapping[str, Any] | None) -> np.ndarray:
    """``gridsearch.weights``: the possible weights, ``:``-separated (PSL's delimiter)."""
    raw = str(_option(options, "gridsearch.weights", "0.001:0.01:0.1:1:10"))
    try:
        values = np.array([float(x) for x in raw.replace(",", ":").split(":") if x.strip()])
    except ValueError:
        raise ConfigError(f"option gridsearch.weights={raw!r}: expected numbers separated by ':'") from None
    if not len(values) or (values < 0).any() or not np.isfinite(values).all():
        raise ConfigError(f"option gridsearch.weights={raw!r}: give one or more weights >= 0")
    return values


# ---------------------------------------------------------------------- evaluators
@dataclass
class Evaluator:
    """One PSL evaluator on one predicate's atoms (None: every labelled target)."""

    name: str
    predicate: str | None = None
    options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        short = str(self.name).rsplit(".", 1)[-1]
        match = next((e for e in EVALUATORS if e.lower() == short.lower()), None)
        if match is None:
            raise ConfigError(f"unknown evaluator {self.name!r}; supported: {', '.join(EVALUATORS)}")
        self.name = match
        self.representative = str(_option(self.options, f"{match.lower()}.representative",
                                          {"AUCEvaluator": "AUROC", "ContinuousEvaluator": "MSE",
                                           "DiscreteEvaluator": "F1", "CategoricalEvaluator": "ACCURACY"}[match])).upper()
        allowed = {"AUCEvaluator": ("AUROC", "POSITIVE_AUPRC", "NEGATIVE_AUPRC"), "ContinuousEvaluator": ("MSE", "MAE"),
                   "DiscreteEvaluator": ("F1", "ACCURACY", "POSITIVE_PRECISION", "NEGATIVE_PRECISION",
                                         "POSITIVE_RECALL", "NEGATIVE_RECALL"),
                   "CategoricalEvaluator": ("ACCURACY",)}[match]
        if self.representative not in allowed:
            raise ConfigError(f"{match}: representative metric {self.representative!r} is not one of {', '.join(allowed)}")

    def normalized(self, store, y: np.ndarray) -> float:
        """The representative metric with higher always better (PSL's getNormalizedRepMetric)."""
        cols = np.arange(store.n_targets)
        if self.predicate is not None:
            p = store.predicates[self.predicate]
            cols = store.target_index[p.ids[p.n_obs:]]
        truth = store.truth[cols]
        keep = np.isfinite(truth)
        cols, pred, truth = cols[keep], np.asarray(y)[cols[keep]], truth[keep]
        if self.name == "ContinuousEvaluator":
            err = pred - truth
            value = float(np.mean(err * err) if self.representative == "MSE" else np.mean(np.abs(err))) if len(err) else 0.0
            return -value
        if self.name == "AUCEvaluator":
            return self._auc(pred, truth)
        if self.name == "DiscreteEvaluator":
            return self._discrete(pred, truth)
        return self._categorical(store, cols, pred, truth)

    def _auc(self, pred: np.ndarray, truth: np.ndarray) -> float:
        metrics = import_optional("sklearn.metrics")  # start-up: scikit-learn is heavy
        thr = float(_option(self.options, "aucevaluator.threshold", 0.5))
        pos = truth >= thr
        if pos.all() or not pos.any():
            return 0.0
        if self.representative == "AUROC":
            return float(metrics.roc_auc_score(pos, pred))
        if self.representative == "POSITIVE_AUPRC":
            return float(metrics.average_precision_score(pos, pred))
        return float(metrics.average_precision_score(~pos, -pred))

    def _discrete(self, pred: np.ndarray, truth: np.ndarray) -> float:
        thr = float(_option(self.options, "discreteevaluator.threshold", 0.5))
        p, t = pred >= thr, truth >= thr
        tp, fp, fn, tn = (p & t).sum(), (p & ~t).sum(), (~p & t).sum(), (~p & ~t).sum()
        div = lambda a, b: float(a / b) if b else 0.0  # noqa: E731
        return {"F1": div(2 * tp, 2 * tp + fp + fn), "ACCURACY": div(tp + tn, len(p)),
                "POSITIVE_PRECISION": div(tp, tp + fp), "NEGATIVE_PRECISION": div(tn, tn + fn),
                "POSITIVE_RECALL": div(tp, tp + fn), "NEGATIVE_RECALL": div(tn, tn + fp)}[self.representative]

    def _categorical(self, store, cols: np.ndarray, pred: np.ndarray, truth: np.ndarray) -> float:
        """Accuracy over entities (the arguments that are not categories): the top predicted category is true."""
        if not len(cols):
            return 0.0
        raw = str(_option(self.options, "categoricalevaluator.categoryindexes", "-1"))
        ids = store.target_ids[cols]
        args = store.args[ids]
        arity = int((args[0] >= 0).sum())
        cats = {int(x) % arity for x in raw.replace(",", ":").split(":") if x.strip()}
        entity = [i for i in range(arity) if i not in cats]
        keys = np.column_stack([store.pred[ids]] + [args[:, i] for i in entity])
        _, group = np.unique(keys, axis=0, return_inverse=True)
        group = group.ravel()
        order = np.lexsort((-pred, group))
        first = order[np.r_[True, group[order][1:] != group[order][:-1]]]
        return float(np.mean(truth[first] >= 0.5)) if len(first) else 0.0


def evaluator_from_project(project, options: Mapping[str, Any] | None) -> Evaluator | None:
    """The evaluator a search learner scores with: the config's primary evaluation (JSON layout), else
    the ``weightlearning.evaluator`` option (PSL 2.x's CLI, default ContinuousEvaluator there)."""
    for name, evals in project.evaluations.items():
        for e in evals:
            if isinstance(e, Mapping) and e.get("primary") is True:
                return Evaluator(str(e.get("evaluator", "")), name, dict(e.get("options") or {}))
    explicit = _option(options, "weightlearning.evaluator", None)
    if explicit is not None:
        return Evaluator(str(explicit), None, dict(options or {}))
    return None


# ---------------------------------------------------------------------- the search
@dataclass
class SearchResult:
    weights: np.ndarray
    objective: float
    locations: int
    history: list[np.ndarray]
    seed: int


def search_weights(method: str, n_rules: int, score: Callable[[np.ndarray], float],
                   options: Mapping[str, Any] | None) -> SearchResult:
    """Run one of `SEARCH_METHODS`; `score(weights)` returns the objective to minimise."""
    possible = grid_weights(options)
    k = len(possible)
    seed = _int_option(options, "random.seed", DEFAULT_SEED) if _option(options, "random.seed", None) is not None \
        else DEFAULT_SEED
    rng = np.random.default_rng(seed)
    total = k ** n_rules if n_rules * np.log(max(k, 2)) < 60 else np.inf
    objectives: dict[tuple, float] = {}
    history: list[np.ndarray] = []
    best: tuple | None = None

    def visit(loc: tuple) -> None:
        nonlocal best
        weights = possible[list(loc)]
        obj = float(score(weights))
        objectives[loc] = obj
        history.append(weights)
        if best is None or obj < objectives[best]:
            best = loc

    def random_new() -> tuple:
        while True:
            loc = tuple(int(i) for i in rng.integers(0, k, n_rules))
            if loc not in objectives:
                return loc

    if method == "GridSearch":
        if total > 1_000_000:
            raise ConfigError(f"GridSearch would visit {k}^{n_rules} locations; use RandomGridSearch")
        for idx in np.ndindex(*([k] * n_rules)):
            visit(tuple(int(i) for i in idx))
    else:
        limit = min(total, _int_option(options, "randomgridsearch.maxlocations", 150))
        if method == "RandomGridSearch":
            while len(objectives) < limit:
                visit(random_new())
        else:
            seeds = _int_option(options, "guidedrandomgridsearch.seedlocations", 25)
            explore = _int_option(options, "guidedrandomgridsearch.explorelocations", 10)
            limit = min(limit, seeds + explore * 2 ** min(n_rules, 60))
            while len(objectives) < min(seeds, limit):
                visit(random_new())
            ranked = sorted(objectives, key=lambda loc: objectives[loc])[:explore]
            todo: list[tuple] = []
            for loc in ranked:
                for i in range(n_rules):
                    for step in (1, -1):
                        if 0 <= loc[i] + step < k:
                            nb = loc[:i] + (loc[i] + step,) + loc[i + 1:]
                            if nb not in objectives and nb not in todo:
                                todo.append(nb)
            for loc in todo:
                if len(objectives) >= limit:
                    break
                visit(loc)
    assert best is not None
    return SearchResult(possible[list(best)], objectives[best], len(objectives), history, seed)


def learn_by_search(model, method: str, options: Mapping[str, Any] | None, evaluator: Evaluator | None,
                    map_method: str):
    """Search the soft rules' weights of a grounded `model` (its learn split) and set the best ones."""
    if evaluator is None:
        raise ConfigError(f"{method} needs an evaluator to score weights: mark one evaluation of the config "
                          "\"primary\": true, or give -D weightlearning.evaluator=AUCEvaluator "
                          f"(supported: {', '.join(EVALUATORS)})")
    if evaluator.predicate is not None and evaluator.predicate not in model.store_.predicates:
        raise ConfigError(f"the evaluator's predicate {evaluator.predicate} is not in the learn split")
    t0 = time.perf_counter()
    prog, store = model.program_, model.store_
    soft = np.flatnonzero([not r.is_hard for r in model.rules])
    state = {"y": None}

    def score(weights: np.ndarray) -> float:
        w = np.zeros(len(model.rules))
        w[soft] = weights
        prog.w = w[prog.rule_index] if prog.n_potentials else np.zeros(0)
        y = map_inference(prog, map_method, y0=state["y"]).y
        state["y"] = y
        return -evaluator.normalized(store, y)

    res = search_weights(method, len(soft), score, options)
    return res, soft, time.perf_counter() - t0
