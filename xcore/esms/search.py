"""ESMS structure search (Algorithm 1) and the explainability (gamma) sweep.

Algorithm 1: for N iterations, draw a candidate model of L_M rules with Algorithm 2
(`xcore.esms.templates.sample_rules`), give every rule its PPLL weight learned on the training data
(each rule learned once: `PPLLCache`), run MAP inference on the validation data, score the
predictions V(M) (MSE/RMSE/MAE, or AUPR/AUROC for 0/1 targets) and keep the best model.

How it is computed. All N candidate models are drawn first from one seeded generator (so the
draws do not depend on scheduling); every distinct rule is then grounded once per dataset and its
hinge block cached (`xcore.esms.rule_preparation`), so a candidate model is just a stack of cached
blocks. Candidates are evaluated in parallel (`n_jobs`, threads, processes or a Dask cluster:
`xcore.cluster.map_shared`, the blocks shipped to each worker once) by
`xcore.esms.candidate_scoring.evaluate_candidate`, a pure function of its rules, so results are
identical for any `n_jobs` or executor. The chosen model's `best_score_` is recomputed exactly as
the reference path computes it. `reference=True` keeps the pre-issue-13 path (all rules grounded in
full at once, cold starts) to compare with. Ties keep the earliest iteration.
The priors (``~T`` and ``T``, not explainable: empty body) are candidates of the prior template,
drawn like any rule, as in the paper; with `always_priors=True` both are added to every model
outside the L_M sampled rules (MAP is then strongly convex, which the stability bound of
`xcore.esms.stability` needs). Rules too large to ground (`GroundingTooLarge`) are skipped and
reported. The validation data come from `xcore.esms.validation_split`.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from xcore.cluster import is_dask_client, map_shared
from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.esms.candidate_scoring import (
    FAST_MAP_TOL,
    REFERENCE_MAP_TOL,
    WARM_START,
    EvalData,
    Task,
    evaluate_candidate,
    history_row,
    union_start,
)
from xcore.esms.rule_preparation import Charges, RulePreparation, SearchCache
from xcore.esms.templates import (
    DEFAULT_TEMPLATES,
    MetaTemplate,
    fill_templates,
    prior_rules,
    sample_rules,
)
from xcore.logic.ast import Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.rule_identity import rule_key
from xcore.psl.data_keys import dataset_fingerprint, target_labels
from xcore.psl.explain import mep_scores
from xcore.psl.explainable_rules import is_alpha_explainable
from xcore.psl.model import PSLModel
from xcore.psl.scores import metric_sense
from xcore.runtime import Progress, limited_threads

WEIGHT_LEARNING = ("per_rule", "joint", "calibrated")
"""How candidate rules get weights: "per_rule" is the paper's PPLL of each rule on its own (learned once,
cached; what the LastFM benchmark uses); "joint" learns every candidate model's weights together with
the priors (`xcore.psl.joint_ppll`), so a rule's weight is what it adds to the base rate."""

DEFAULT_GAMMA_GRID: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(11))
"""0, 0.1, ..., 1: the paper's sweep of the explainability bias."""

HISTORY_COLUMNS: tuple[str, ...] = (
    "iteration", "score", "best_score", "mse", "rmse", "mae", "aupr", "auroc", "mep1", "mep2", "mep3",
    "n_rules", "n_explainable", "n_skipped", "ground_seconds", "ppll_seconds", "map_seconds",
    "score_seconds", "map_iterations", "converged", "rules")
"""Columns of `ESMSSearch.history_` (one row per candidate model)."""


@dataclass
class _Candidate:
    iteration: int
    rules: list[Rule]


class ESMSSearch:
    """Explainable Structured Model Search (Embar, Srinivasan, Getoor, UAI 2022), Algorithm 1.

    `gamma` in [0, 1] biases towards alpha-explainable rules (0: no bias, 1: only explainable);
    `rules_per_model` is L_M, `iterations` N; `metric` is V(M) on the validation data; `block`
    an optional block predicate for the target; `counterparts=True` adds the negative counterpart
    of every template (`xcore.esms.templates`, HyPER-style rules pulling T down). After `fit`: `best_model_` (weights learned,
    grounded on the validation data, MAP done), `best_score_`, `history_`, `cache_`, and `rule_stats_`
    (ground rules and grounding seconds of each rule grounded in this fit, on train and validation),
    `timings_` (wall seconds: atom stores, grounding + PPLL, warm start, evaluating candidates, best model),
    `skip_seconds_` (fast path: seconds spent finding that rules exceed the ground limit).

    `reference=True` runs the reference path (every ground rule grounded, all rules of a dataset at once,
    MAP at tolerance 1e-10 from 0.5); the default fast path grounds only ground rules with a target
    atom, in batches, and uses `map_tol` (default `FAST_MAP_TOL`). `executor`: "thread", "process", a
    `concurrent.futures.Executor` or a Dask `distributed.Client` (`xcore.cluster.map_shared`).
    """

    def __init__(self, target: str, gamma: float = 0.0, alpha: float = 0.25, rules_per_model: int = 15,
                 iterations: int = 100, metric: str = "mse", block: str | None = None, n_jobs: int = 2,
                 seed: int = 0, templates: Sequence[MetaTemplate] = DEFAULT_TEMPLATES,
                 always_priors: bool = False, squared: bool = True, inference: str = "auto",
                 w_max: float = 100.0, ground_limit: int | None = 1_000_000, executor: Any = "thread",
                 cache: SearchCache | None = None, counterparts: bool = False, reference: bool = False,
                 map_tol: float | None = None, start_rules: Sequence[Rule] = (),
                 weight_learning: str = "per_rule") -> None:
        if not 0.0 <= gamma <= 1.0:
            raise XcoreError(f"gamma must be in [0, 1], got {gamma}")
        if iterations < 1 or rules_per_model < 0:
            raise XcoreError("iterations must be >= 1 and rules_per_model >= 0")
        if not (executor in ("thread", "process") or isinstance(executor, Executor) or is_dask_client(executor)):
            raise XcoreError(f"executor must be 'thread', 'process', a concurrent.futures Executor or a Dask "
                             f"distributed Client, got {executor!r}")
        if map_tol is not None and not 0.0 < map_tol < 1.0:
            raise XcoreError(f"map_tol must be in (0, 1), got {map_tol}")
        metric_sense(metric)
        if weight_learning not in WEIGHT_LEARNING:
            raise XcoreError(f"weight_learning must be one of {', '.join(WEIGHT_LEARNING)}, got {weight_learning!r}")
        self.weight_learning = weight_learning
        always_priors = always_priors or weight_learning != "per_rule"  # joint weights are relative to the priors
        self.target, self.gamma, self.alpha = target, float(gamma), float(alpha)
        self.rules_per_model, self.iterations, self.metric = int(rules_per_model), int(iterations), metric
        self.block, self.n_jobs, self.seed = block, n_jobs, seed
        self.templates, self.always_priors, self.squared = tuple(templates), always_priors, squared
        self.inference, self.w_max, self.ground_limit, self.executor = inference, w_max, ground_limit, executor
        self.counterparts = bool(counterparts)
        self.reference, self.map_tol = bool(reference), map_tol
        self.start_rules = tuple(start_rules)
        """A starting model (e.g. a PSL project's rules): one more candidate, scored with its own
        weights and hard rules as written, kept when it beats every drawn model."""
        self.cache_ = cache if cache is not None else SearchCache()

    def get_params(self) -> dict:
        """Constructor arguments (sklearn style), without the cache."""
        keys = ("target", "gamma", "alpha", "rules_per_model", "iterations", "metric", "block", "n_jobs",
                "seed", "templates", "always_priors", "squared", "inference", "w_max", "ground_limit",
                "executor", "counterparts", "reference", "map_tol", "start_rules", "weight_learning")
        return {k: getattr(self, k) for k in keys}

    # ------------------------------------------------------------------ candidates
    def candidates(self, schema) -> list[Rule]:
        """All rules the templates allow for the target (priors excluded when always included)."""
        return fill_templates(schema, self.target, self.block, self.templates, self.squared,
                              include_priors=not self.always_priors, counterparts=self.counterparts)

    def draw_models(self, schema, progress: Progress | None = None) -> list[_Candidate]:
        """The N candidate models of Algorithm 1, drawn with Algorithm 2 from one seeded generator.

        `progress` hears of every draw (a cancel stops a long draw there)."""
        cands = self.candidates(schema)
        base = prior_rules(self.target, schema[self.target].arity, self.squared) if self.always_priors else []
        rng = np.random.default_rng(self.seed)
        models = []
        for i in range(self.iterations):
            models.append(_Candidate(i, base + sample_rules(cands, self.rules_per_model, self.gamma, self.alpha,
                                                            rng, schema, self.block, exclude=base)))
            if progress is not None:
                progress(0.0, f"drawing {self.iterations} candidate models ({i + 1} drawn)")
        return models

    # ------------------------------------------------------------------ fit
    def fit(self, train_ds: RelationalDataset, valid_ds: RelationalDataset,
            progress: Progress | None = None) -> "ESMSSearch":
        """Run Algorithm 1; sets `best_model_`, `best_score_`, `best_rules_`, `history_`.

        Progress: drawing and grounding up to 0.45, PPLL up to 0.6, evaluating candidates up to 1.
        """
        t_start = time.perf_counter()
        report = progress or (lambda f, m: None)
        train_ds.schema[self.target]
        if self.target not in valid_ds.schema:
            raise XcoreError(f"the validation dataset has no predicate {self.target}")
        train_fp, valid_fp = dataset_fingerprint(train_ds), dataset_fingerprint(valid_ds)
        train_store, valid_store = self.cache_.store(train_ds, train_fp), self.cache_.store(valid_ds, valid_fp)
        clock = {"stores": time.perf_counter() - t_start}
        truth = self._validation_truth(train_store, valid_store)
        report(0.0, f"drawing {self.iterations} candidate models")
        models = self.draw_models(train_ds.schema, report)
        prep = RulePreparation(self.cache_, self.target, self.w_max, self.ground_limit, self.reference,
                               self.weight_learning)
        with limited_threads(1):
            t = time.perf_counter()
            tasks, charges = self._tasks(models, prep, train_ds.schema, (train_store, train_fp),
                                         (valid_store, valid_fp), report)
            clock["ground_and_ppll"] = time.perf_counter() - t
            t = time.perf_counter()
            data = self._eval_data(tasks, valid_store, valid_fp, truth)
            clock["warm_start"] = time.perf_counter() - t
            t = time.perf_counter()
            results = map_shared(self.executor, evaluate_candidate, data, tasks, lambda done: report(
                0.6 + 0.4 * done / len(tasks), f"ESMS candidate {done}/{len(tasks)} evaluated"),
                n_workers=self._workers())
            clock["evaluate"] = time.perf_counter() - t
        self.skip_seconds_ = prep.skip_seconds
        self.rule_stats_ = pd.DataFrame(list(prep.stats.values()),
                                        columns=["rule", "train_ground_rules", "train_seconds",
                                                 "valid_ground_rules", "valid_seconds"])
        drawn = [len(c.rules) for c in models] + ([len(self.start_rules)] if self.start_rules else [])
        t = time.perf_counter()
        self._choose(tasks, drawn, results, charges, data, valid_store)
        self.skipped_rules_ = sorted({why for key, why in self.cache_.failed.items() if key[0] in (train_fp, valid_fp)})
        clock["best_model"] = time.perf_counter() - t
        self.seconds_ = time.perf_counter() - t_start
        clock["other"] = self.seconds_ - sum(clock.values())
        self.timings_ = clock
        report(1.0, f"ESMS done: best {self.metric} {self.best_score_:.4g} at iteration {self.best_iteration_}")
        return self

    def _workers(self) -> int:
        """Candidates evaluated at once (`n_jobs`; -1 or None: every CPU)."""
        return max(1, os.cpu_count() or 1) if self.n_jobs in (-1, None) else max(1, int(self.n_jobs))

    def _validation_truth(self, train_store: AtomStore, valid_store: AtomStore) -> np.ndarray:
        """The target's validation labels (what candidates are scored on); an error when a split has no
        labels of the target or the metric needs 0/1 labels that are not there."""
        if not np.isfinite(target_labels(train_store, self.target)).any():
            raise XcoreError(f"the training dataset has no labelled targets of {self.target} to learn weights from")
        truth = target_labels(valid_store, self.target)  # scored on the target's labels only
        if not np.isfinite(truth).any():
            raise XcoreError(f"the validation dataset has no labelled targets of {self.target} to score models on")
        labelled = truth[np.isfinite(truth)]
        if metric_sense(self.metric) > 0 and not (np.all((labelled == 0) | (labelled == 1))
                                                  and 0 < labelled.sum() < len(labelled)):
            raise XcoreError(f"metric {self.metric} needs 0/1 validation labels with both classes present; "
                             "use mse, rmse or mae for continuous targets")
        return truth

    def _tasks(self, models: list[_Candidate], prep: RulePreparation, schema, train: tuple[AtomStore, str],
               valid: tuple[AtomStore, str], report: Progress) -> tuple[list[Task], Charges]:
        """Every candidate as a task (its weighted rules that could be grounded, their block keys and
        explainability; the starting model last) and the grounding / PPLL seconds of each iteration."""
        rule_of: dict[str, Rule] = {}
        first_user: dict[str, int] = {}
        expl_of: dict[str, bool] = {}
        for c in models:
            for r in c.rules:
                k = rule_key(r)
                expl_of.setdefault(k, is_alpha_explainable(r, schema, self.alpha, self.block))
                first_user.setdefault(k, c.iteration)
                rule_of.setdefault(k, r)
        weights, charges = prep.prepare(rule_of, first_user, *train, *valid, report)
        valid_fp = valid[1]
        tasks: list[Task] = []
        for c in models:
            rules = [r.with_weight(weights[rule_key(r)]) for r in c.rules
                     if rule_key(r) in weights and (valid_fp, rule_key(r)) in self.cache_.forms]
            if self.weight_learning != "per_rule":
                rules = prep.joint(rules, train[1])
            keys = [rule_key(r) for r in rules]
            tasks.append((rules, keys, np.array([expl_of[k] for k in keys], dtype=bool)))
        if self.start_rules:
            start = list(self.start_rules)
            expl = np.array([is_alpha_explainable(r, schema, self.alpha, self.block) for r in start], dtype=bool)
            tasks.append((start, prep.ground_start(start, *valid), expl))
        return tasks, charges

    def _choose(self, tasks: list[Task], drawn: list[int], results: list[dict], charges: Charges,
                data: EvalData, valid_store: AtomStore) -> None:
        """The history and the best candidate (ties: the earliest), its model grounded on the validation
        data and its reference-path score."""
        rows = [history_row(i, drawn[i], rules, expl, res, charges.get(i, {}))
                for i, ((rules, _, expl), res) in enumerate(zip(tasks, results))]
        hist = pd.DataFrame(rows, columns=[c for c in HISTORY_COLUMNS if c != "best_score"])
        sense = metric_sense(self.metric)
        scores = hist["score"].to_numpy(dtype=float)
        keyed = np.where(np.isfinite(scores), -sense * scores, np.inf)
        hist.insert(2, "best_score", -sense * np.minimum.accumulate(keyed))
        best_i = int(np.argmin(keyed))
        self.history_ = hist
        self.best_iteration_ = int(hist["iteration"].iloc[best_i])
        self.best_score_ = float(scores[best_i])
        self.best_rules_ = list(tasks[best_i][0])
        model = PSLModel(self.best_rules_, inference=self.inference, alpha=self.alpha, block=self.block,
                         limit=self.ground_limit)
        model.ground(valid_store, only_targets=not self.reference)
        model.infer()
        self.best_model_ = model
        if not self.reference and (data.tol != REFERENCE_MAP_TOL or data.y0 is not None):
            # candidates were ranked at `map_tol` / from a warm start: the chosen one's score as the reference
            exact = EvalData(data.forms, data.truth, data.n_targets, data.inference, data.metric, REFERENCE_MAP_TOL)
            self.best_score_ = float(evaluate_candidate(exact, tasks[best_i])["score"])

    def _eval_data(self, tasks: list[Task], valid_store: AtomStore, valid_fp: str,
                   truth: np.ndarray) -> EvalData:
        """The blocks the candidates use, the scored truth and the MAP settings (reference: cold start, tol 1e-10)."""
        used = {k for _, keys, _ in tasks for k in keys}
        forms = {k: self.cache_.forms[(valid_fp, k)] for k in sorted(used)}
        tol = REFERENCE_MAP_TOL if self.reference else (self.map_tol or FAST_MAP_TOL)
        data = EvalData(forms, truth, valid_store.n_targets, self.inference, self.metric, tol)
        if not self.reference and WARM_START == "union" and forms:
            data.y0 = union_start(data, tasks)
        return data

    # ------------------------------------------------------------------ gamma sweep
    def gamma_sweep(self, train_ds: RelationalDataset, valid_ds: RelationalDataset,
                    grid: Sequence[float] | None = None, test_ds: RelationalDataset | None = None,
                    progress: Progress | None = None) -> pd.DataFrame:
        """Run the search for each gamma (sharing the PPLL and grounding caches); one row per gamma.

        Each best model is evaluated on `test_ds` when given (weights from training, MAP on the test
        targets), else on the validation data: gamma, score, mse, rmse, mae, aupr, auroc, mep1..3,
        n_rules, n_explainable, rules, model_text, seconds, evaluated_on.
        """
        grid = list(DEFAULT_GAMMA_GRID if grid is None else grid)
        rows = []
        for gi, g in enumerate(grid):
            sub = ESMSSearch(**{**self.get_params(), "gamma": float(g)}, cache=self.cache_)
            inner = (lambda f, msg, gi=gi: progress((gi + f) / len(grid), f"gamma={grid[gi]:g}: {msg}")) \
                if progress else None
            sub.fit(train_ds, valid_ds, progress=inner)
            model = sub.best_model_
            where = "validation"
            if test_ds is not None:
                model = PSLModel(sub.best_rules_, inference=self.inference, alpha=self.alpha, block=self.block,
                                 limit=self.ground_limit)
                model.ground(test_ds)
                model.infer()
                where = "test"
            m = model.evaluate()
            expl = model.rule_explainable()
            rows.append({"gamma": float(g), "score": m[self.metric],
                         **{k: m[k] for k in ("mse", "rmse", "mae", "aupr", "auroc")},
                         **mep_scores(model), "n_rules": len(model.rules), "n_explainable": int(expl.sum()),
                         "rules": [r.text("psl") for r in model.rules], "model_text": model.to_text(),
                         "valid_score": sub.best_score_, "seconds": sub.seconds_, "evaluated_on": where})
        if progress:
            progress(1.0, "gamma sweep done")
        return pd.DataFrame(rows)


def gamma_sweep(train_ds: RelationalDataset, valid_ds: RelationalDataset, target: str,
                grid: Sequence[float] | None = None, test_ds: RelationalDataset | None = None,
                progress: Progress | None = None, **search_kwargs) -> pd.DataFrame:
    """`ESMSSearch(target, **search_kwargs).gamma_sweep(...)`: the paper's Fig. 1 / Fig. 2 data."""
    return ESMSSearch(target, **search_kwargs).gamma_sweep(train_ds, valid_ds, grid, test_ds, progress)
