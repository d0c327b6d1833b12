"""ESMS structure search (Algorithm 1), train/validation splits and the explainability (gamma) sweep.

Algorithm 1: for N iterations, draw a candidate model of L_M rules with Algorithm 2
(`xcore.psl.templates.sample_rules`), give every rule its PPLL weight learned on the training data
(each rule learned once: `PPLLCache`), run MAP inference on the validation data, score the
predictions V(M) (MSE/RMSE/MAE, or AUPR/AUROC for 0/1 targets) and keep the best model.

How it is computed. All N candidate models are drawn first from one seeded generator (so the
draws do not depend on scheduling); every distinct rule is then grounded once per dataset and its
hinge block cached, so a candidate model is just a stack of cached blocks. The fast path (default;
issue 13) grounds each rule on its own with `ground(..., only_targets=True)`: a count capped at the
ground limit decides, exactly as the reference path does, whether the rule is too large, and only
the ground rules with a target atom (the only ones PPLL and MAP use) are materialised; training
ground rules are learned and dropped a batch at a time. Candidates are evaluated in parallel
(`n_jobs`, threads, processes or a Dask cluster: `xcore.cluster.map_shared`, the blocks shipped to
each worker once), each MAP warm-started from the union model's state (`WARM_START`); each
evaluation is a pure function of its rules, so results are identical for any `n_jobs` or executor.
The chosen model's `best_score_` is recomputed exactly as the reference path computes it.
`reference=True` keeps the pre-issue-13 path (all rules grounded in full at once, cold starts) to
compare with. Ties keep the earliest iteration.
The priors (``~T`` and ``T``, not explainable: empty body) are candidates of the prior template,
drawn like any rule, as in the paper; with `always_priors=True` both are added to every model
outside the L_M sampled rules (MAP is then strongly convex, which the stability bound of
`xcore.psl.stability` needs). Rules too large to ground (`GroundingTooLarge`) are skipped and
reported.

Validation data (`split_targets`): the labelled target atoms of the target predicate are split
with a seed; the training dataset keeps the training targets (truth for PPLL) and drops the
validation ones; the validation dataset observes the training labels (they become evidence, as
PSL's learn/eval partitions do) and has the validation atoms as targets with their truth.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from xcore.cluster import is_dask_client, map_shared
from xcore.data.dataset import RelationalDataset
from xcore.errors import GroundingTooLarge, XcoreError
from xcore.logic.ast import Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.estimate import estimate_groundings
from xcore.logic.grounding import GroundRules, ground
from xcore.psl.explain import mep_from_program
from xcore.psl.inference import map_inference
from xcore.psl.joint_ppll import GridPotential, grid_potential, learn_calibrated_weights, learn_joint_weights
from xcore.psl.model import (
    PPLLCache,
    PSLModel,
    RuleForm,
    assemble_program,
    dataset_fingerprint,
    metric_sense,
    ppll_data_key,
    prediction_metrics,
    rule_form,
    target_labels,
)
from xcore.psl.ppll import learn_weight
from xcore.psl.templates import (
    DEFAULT_TEMPLATES,
    MetaTemplate,
    fill_templates,
    is_alpha_explainable,
    prior_rules,
    rule_key,
    sample_rules,
)
from xcore.runtime import Progress, limited_threads

REFERENCE_MAP_TOL = 1e-10
"""L-BFGS-B gradient tolerance of the reference path (as `map_inference`'s default)."""
FAST_MAP_TOL = 1e-10
"""L-BFGS-B gradient tolerance of the fast path. Kept at the reference value: on the LastFM-size
candidates, 1e-8 .. 1e-6 saved 1% of the iterations (the squared-hinge restarts dominate) for a
change of up to 1.7e-9 in a candidate's MSE (bench/RESULTS.md, "ESMS search")."""
WARM_START = "none"
"""Fast path: "union" starts every candidate's MAP from the MAP state of the union of all candidates'
rules (one solve, the same start for every candidate, so results do not depend on scheduling);
"none" from 0.5, as the reference. Off: on LastFM size "union" saved 17% of the L-BFGS-B iterations
but moved candidate MSEs by up to 1e-8, which flips near-ties (on the planted data of
tests/methods/esms/test_psl_search.py it chose another model), so the choice would no longer be
the reference's."""
_BATCH = 16
WEIGHT_LEARNING = ("per_rule", "joint", "calibrated")
"""How candidate rules get weights: "per_rule" is the paper's PPLL of each rule on its own (learned once,
cached; what the LastFM benchmark uses); "joint" learns every candidate model's weights together with
the priors (`xcore.psl.joint_ppll`), so a rule's weight is what it adds to the base rate."""
"""Rules whose training ground rules are held at once in the fast path (then learned and dropped)."""

DEFAULT_GAMMA_GRID: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(11))
"""0, 0.1, ..., 1: the paper's sweep of the explainability bias."""

HISTORY_COLUMNS: tuple[str, ...] = (
    "iteration", "score", "best_score", "mse", "rmse", "mae", "aupr", "auroc", "mep1", "mep2", "mep3",
    "n_rules", "n_explainable", "n_skipped", "ground_seconds", "ppll_seconds", "map_seconds",
    "score_seconds", "map_iterations", "converged", "rules")
"""Columns of `ESMSSearch.history_` (one row per candidate model)."""


# ---------------------------------------------------------------------- splits
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


# ---------------------------------------------------------------------- shared caches
@dataclass
class SearchCache:
    """What ESMS reuses across iterations and across a gamma sweep: PPLL weights and rule blocks."""

    ppll: PPLLCache = field(default_factory=PPLLCache)
    forms: dict[tuple[str, str], RuleForm] = field(default_factory=dict)
    """(validation fingerprint, rule_key) -> the rule's hinge block on the validation data."""
    failed: dict[tuple[str, str], str] = field(default_factory=dict)
    """(fingerprint, rule_key) -> why the rule could not be grounded."""
    stores: dict[str, AtomStore] = field(default_factory=dict)
    grids: dict[tuple[str, str], GridPotential] = field(default_factory=dict)
    """(PPLL data key, rule_key) -> the rule's potentials on the grid (joint weight learning)."""

    def store(self, dataset: RelationalDataset, fp: str) -> AtomStore:
        if fp not in self.stores:
            self.stores[fp] = AtomStore.from_dataset(dataset)
        return self.stores[fp]


@dataclass
class _Candidate:
    iteration: int
    rules: list[Rule]


@dataclass
class EvalData:
    """What every candidate evaluation reads (shipped once per worker): cached validation blocks,
    the validation truth and how MAP is run. `y0` is the warm start shared by all candidates."""

    forms: dict[str, RuleForm]
    truth: np.ndarray
    n_targets: int
    inference: str
    metric: str
    tol: float
    y0: np.ndarray | None = None


def _evaluate(data: EvalData, task: tuple) -> dict:
    """Evaluate one candidate: stack its cached blocks, MAP on the validation program, metrics, MEP@1..3.

    A pure function of (data, task): results do not depend on where or in which order it runs.
    """
    rules, keys, rule_expl = task
    prog = assemble_program([data.forms[k] for k in keys], rules, data.n_targets)
    row_expl = rule_expl[prog.rule_index] if len(rules) else np.zeros(0, bool)
    t0 = time.perf_counter()
    res = map_inference(prog, data.inference, y0=data.y0, tol=data.tol)
    t1 = time.perf_counter()
    m = prediction_metrics(res.y, data.truth)
    m.update(mep_from_program(prog, res.y, row_expl, (1, 2, 3)))
    return {"metrics": m, "map_seconds": t1 - t0, "score_seconds": time.perf_counter() - t1,
            "map_iterations": res.iterations, "converged": res.converged, "score": m[data.metric]}


# ---------------------------------------------------------------------- the search
class ESMSSearch:
    """Explainable Structured Model Search (Embar, Srinivasan, Getoor, UAI 2022), Algorithm 1.

    `gamma` in [0, 1] biases towards alpha-explainable rules (0: no bias, 1: only explainable);
    `rules_per_model` is L_M, `iterations` N; `metric` is V(M) on the validation data; `block`
    an optional block predicate for the target; `counterparts=True` adds the negative counterpart
    of every template (`xcore.psl.templates`, HyPER-style rules pulling T down). After `fit`: `best_model_` (weights learned,
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
        self.skip_seconds_ = 0.0
        report = progress or (lambda f, m: None)
        schema = train_ds.schema
        schema[self.target]
        if self.target not in valid_ds.schema:
            raise XcoreError(f"the validation dataset has no predicate {self.target}")
        cache = self.cache_
        train_fp, valid_fp = dataset_fingerprint(train_ds), dataset_fingerprint(valid_ds)
        train_store, valid_store = cache.store(train_ds, train_fp), cache.store(valid_ds, valid_fp)
        clock = {"stores": time.perf_counter() - t_start}
        if not np.isfinite(target_labels(train_store, self.target)).any():
            raise XcoreError(f"the training dataset has no labelled targets of {self.target} to learn weights from")
        truth = target_labels(valid_store, self.target)  # scored on the target's labels only
        if not np.isfinite(truth).any():
            raise XcoreError(f"the validation dataset has no labelled targets of {self.target} to score models on")
        sense = metric_sense(self.metric)
        labelled = truth[np.isfinite(truth)]
        if sense > 0 and not (np.all((labelled == 0) | (labelled == 1)) and 0 < labelled.sum() < len(labelled)):
            raise XcoreError(f"metric {self.metric} needs 0/1 validation labels with both classes present; "
                             "use mse, rmse or mae for continuous targets")
        report(0.0, f"drawing {self.iterations} candidate models")
        models = self.draw_models(schema, report)
        expl_of: dict[str, bool] = {}
        for c in models:
            for r in c.rules:
                expl_of.setdefault(rule_key(r), is_alpha_explainable(r, schema, self.alpha, self.block))
        n_workers = max(1, os.cpu_count() or 1) if self.n_jobs in (-1, None) else max(1, int(self.n_jobs))
        blas = limited_threads(1)
        blas.__enter__()
        rows: list[dict] = []
        try:
            t = time.perf_counter()
            weights, timing = self._prepare_rules(models, train_store, train_fp, valid_store, valid_fp, report)
            clock["ground_and_ppll"] = time.perf_counter() - t
            self.rule_stats_ = pd.DataFrame(list(self.rule_stats_.values()),
                                            columns=["rule", "train_ground_rules", "train_seconds",
                                                     "valid_ground_rules", "valid_seconds"])
            tasks, meta = [], []
            for c in models:
                rules = [r.with_weight(weights[rule_key(r)]) for r in c.rules
                         if rule_key(r) in weights and (valid_fp, rule_key(r)) in cache.forms]
                if self.weight_learning != "per_rule":
                    rules = self._joint(rules, train_fp)
                keys = [rule_key(r) for r in rules]
                rule_expl = np.array([expl_of[k] for k in keys], dtype=bool)
                tasks.append((rules, keys, rule_expl))
                meta.append((c, rules, rule_expl))
            if self.start_rules:
                start = _Candidate(self.iterations, list(self.start_rules))
                models.append(start)
                start_expl = np.array([is_alpha_explainable(r, schema, self.alpha, self.block)
                                       for r in start.rules], dtype=bool)
                tasks.append((start.rules, self._ground_start(start.rules, valid_store, valid_fp), start_expl))
                meta.append((start, start.rules, start_expl))
            t = time.perf_counter()
            data = self._eval_data(tasks, valid_store, valid_fp, truth)
            clock["warm_start"] = time.perf_counter() - t
            t = time.perf_counter()
            results = map_shared(self.executor, _evaluate, data, tasks, lambda done: report(
                0.6 + 0.4 * done / len(tasks), f"ESMS candidate {done}/{len(tasks)} evaluated"), n_workers=n_workers)
            for (c, rules, rule_expl), res in zip(meta, results):
                first = timing.get(c.iteration, {})
                m = res["metrics"]
                rows.append({
                    "iteration": c.iteration, "score": res["score"],
                    **{k: m[k] for k in ("mse", "rmse", "mae", "aupr", "auroc", "mep1", "mep2", "mep3")},
                    "n_rules": len(rules), "n_explainable": int(rule_expl.sum()),
                    "n_skipped": len(c.rules) - len(rules),
                    "ground_seconds": first.get("ground", 0.0), "ppll_seconds": first.get("ppll", 0.0),
                    "map_seconds": res["map_seconds"], "score_seconds": res["score_seconds"],
                    "map_iterations": res["map_iterations"], "converged": res["converged"],
                    "rules": [r.text("psl") for r in rules]})
            clock["evaluate"] = time.perf_counter() - t
        finally:
            blas.__exit__(None, None, None)
        t = time.perf_counter()
        hist = pd.DataFrame(rows, columns=[c for c in HISTORY_COLUMNS if c != "best_score"])
        scores = hist["score"].to_numpy(dtype=float)
        keyed = np.where(np.isfinite(scores), -sense * scores, np.inf)
        hist.insert(2, "best_score", -sense * np.minimum.accumulate(keyed))
        best_i = int(np.argmin(keyed))
        self.history_ = hist
        self.best_iteration_ = int(hist["iteration"].iloc[best_i])
        self.best_score_ = float(scores[best_i])
        best = models[best_i]
        self.best_rules_ = list(best.rules) if best.iteration == self.iterations and self.start_rules else \
            list(meta[best_i][1])
        self.skipped_rules_ = sorted({cache.failed[key] for key in cache.failed if key[0] in (train_fp, valid_fp)})
        model = PSLModel(self.best_rules_, inference=self.inference, alpha=self.alpha, block=self.block,
                         limit=self.ground_limit)
        model.ground(valid_store, only_targets=not self.reference)
        model.infer()
        self.best_model_ = model
        if not self.reference and (data.tol != REFERENCE_MAP_TOL or data.y0 is not None):
            # candidates were ranked at `map_tol` / from a warm start: the chosen one's score as the reference
            exact = EvalData(data.forms, data.truth, data.n_targets, data.inference, data.metric, REFERENCE_MAP_TOL)
            self.best_score_ = float(_evaluate(exact, tasks[best_i])["score"])
        clock["best_model"] = time.perf_counter() - t
        self.seconds_ = time.perf_counter() - t_start
        clock["other"] = self.seconds_ - sum(clock.values())
        self.timings_ = clock
        report(1.0, f"ESMS done: best {self.metric} {self.best_score_:.4g} at iteration {self.best_iteration_}")
        return self

    def _joint(self, rules: list[Rule], train_fp: str) -> list[Rule]:
        """The rules of one candidate with weights learned together (`xcore.psl.joint_ppll`)."""
        key = ppll_data_key(train_fp, self.target)
        grids = [self.cache_.grids.get((key, rule_key(r))) for r in rules]
        learnable = [i for i, g in enumerate(grids) if g is not None and not rules[i].is_hard]
        if self.weight_learning == "calibrated" and learnable:
            w = learn_calibrated_weights([grids[i] for i in learnable], grids[learnable[0]].truth,
                                         [not rules[i].body for i in learnable], self.w_max)
        else:
            w = learn_joint_weights([grids[i] for i in learnable], self.w_max)
        out = list(rules)
        for i, wi in zip(learnable, w):
            out[i] = rules[i].with_weight(float(wi))
        return out

    def _ground_start(self, rules: list[Rule], valid_store: AtomStore, valid_fp: str) -> list[str]:
        """Ground the starting model's rules on the validation data into the block cache; their keys."""
        keys = [f"start:{rule_key(r)}" for r in rules]
        todo = [i for i, k in enumerate(keys) if (valid_fp, k) not in self.cache_.forms]
        if todo:
            gp = ground([rules[i] for i in todo], valid_store, limit=self.ground_limit)
            for i, g in zip(todo, gp):
                self.cache_.forms[(valid_fp, keys[i])] = rule_form(g, valid_store)
        return keys

    def _prepare_rules(self, models: list[_Candidate], train_store: AtomStore, train_fp: str,
                       valid_store: AtomStore, valid_fp: str, report: Progress):
        """PPLL weights (cached per training data) and validation hinge blocks (cached) of every rule.

        All new rules are grounded in one DuckDB session per dataset. Returns the weights by
        `rule_key` and the grounding / PPLL seconds charged to the first iteration using each rule.
        """
        cache = self.cache_
        first_user: dict[str, int] = {}
        rule_of: dict[str, Rule] = {}
        for c in models:
            for r in c.rules:
                k = rule_key(r)
                first_user.setdefault(k, c.iteration)
                rule_of.setdefault(k, r)
        timing: dict[int, dict[str, float]] = {}
        stats: dict[str, dict] = {}
        self.rule_stats_ = stats

        def charge(k: str, what: str, seconds: float) -> None:
            d = timing.setdefault(first_user[k], {})
            d[what] = d.get(what, 0.0) + seconds

        weights: dict[str, float] = {}
        ppll_key = ppll_data_key(train_fp, self.target)
        scored = np.isfinite(target_labels(train_store, self.target))
        need_w = []
        for k, r in rule_of.items():
            if (train_fp, k) in cache.failed:
                continue
            w = cache.ppll.get(r, ppll_key, self.w_max)
            if w is None or (self.weight_learning != "per_rule" and (ppll_key, k) not in cache.grids):
                need_w.append(k)
            else:
                weights[k] = w
        report(0.02, f"grounding {len(need_w)} new rules on the training data")
        # Ground rules in batches and learn their weights before grounding the next batch: only one
        # batch of ground rules is in memory. (The reference path grounds all rules first.)
        for k, g, secs in self._batches(need_w, rule_of, train_store, train_fp, report, 0.02, 0.4, "training"):
            charge(k, "ground", secs)
            stats[k] = {"rule": k, "train_ground_rules": g.n, "train_seconds": secs}
            t1 = time.perf_counter()
            A, b = g.linear_form(train_store)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # log(0) in far tails
                w = learn_weight(A, b, g.rule.squared, train_store.truth, scored=scored, w_max=self.w_max).weight
            if self.weight_learning != "per_rule":
                cache.grids[(ppll_key, k)] = grid_potential(A, b, g.rule.squared, train_store.truth, scored)
            cache.ppll.put(g.rule, ppll_key, self.w_max, w)
            weights[k] = w
            charge(k, "ppll", time.perf_counter() - t1)
        need_f = [k for k in rule_of if k in weights and (valid_fp, k) not in cache.forms
                  and (valid_fp, k) not in cache.failed]
        for k, g, secs in self._batches(need_f, rule_of, valid_store, valid_fp, report, 0.4, 0.6, "validation"):
            t1 = time.perf_counter()
            cache.forms[(valid_fp, k)] = rule_form(g, valid_store)
            charge(k, "ground", secs + time.perf_counter() - t1)
            stats.setdefault(k, {"rule": k}).update(valid_ground_rules=g.n, valid_seconds=secs)
        return weights, timing

    def _batches(self, keys: list[str], rule_of: dict[str, Rule], store: AtomStore, fp: str, report: Progress,
                 lo: float, hi: float, what: str):
        """(key, ground rules, seconds) of each rule that fits the limit, grounded a batch at a time
        (all at once in the reference path); progress from `lo` to `hi`."""
        step = max(len(keys) if self.reference else _BATCH, 1)
        for start in range(0, len(keys), step):
            batch = keys[start:start + step]
            yield from self._ground_many(
                [rule_of[k] for k in batch], batch, store, fp,
                lambda f, start=start, n=len(batch): report(lo + (hi - lo) * (start + f * n) / len(keys),
                                                            f"grounding rules on the {what} data"))
            report(lo + (hi - lo) * min(start + step, len(keys)) / len(keys),
                   f"{what} data: {min(start + step, len(keys))}/{len(keys)} rules grounded")

    def _eval_data(self, tasks: list[tuple], valid_store: AtomStore, valid_fp: str,
                   truth: np.ndarray) -> EvalData:
        """The blocks the candidates use, the scored truth and the MAP settings (reference: cold start, tol 1e-10)."""
        used = {k for _, keys, _ in tasks for k in keys}
        forms = {k: self.cache_.forms[(valid_fp, k)] for k in sorted(used)}
        tol = REFERENCE_MAP_TOL if self.reference else (self.map_tol or FAST_MAP_TOL)
        data = EvalData(forms, truth, valid_store.n_targets, self.inference, self.metric, tol)
        if not self.reference and WARM_START == "union" and forms:
            data.y0 = _union_start(data, tasks)
        return data

    def _ground_many(self, rules: list[Rule], keys: list[str], store: AtomStore, fp: str,
                     progress: Callable[[float], None]) -> list[tuple[str, GroundRules, float]]:
        """Ground rules in one DuckDB session; rules above the size limit are recorded and skipped."""
        if not rules:
            return []
        if not self.reference:  # one rule per call: a rule over the limit costs only its own capped count
            out = []
            for i, rule in enumerate(rules):
                t0 = time.perf_counter()
                try:
                    g = ground([rule], store, limit=self.ground_limit, only_targets=True)[0]
                except GroundingTooLarge as e:
                    self.cache_.failed[(fp, keys[i])] = str(e)
                    self.skip_seconds_ = getattr(self, "skip_seconds_", 0.0) + time.perf_counter() - t0
                else:
                    out.append((keys[i], g, g.seconds))
                progress((i + 1) / len(rules))
            return out
        keep = list(range(len(rules)))
        for _attempt in range(2):
            try:
                gp = ground([rules[i] for i in keep], store, limit=self.ground_limit,
                            progress=lambda f, msg: progress(f))
                return [(keys[i], g, g.seconds) for i, g in zip(keep, gp)]
            except GroundingTooLarge:
                ok = []
                for i in keep:  # only when some rule is too large: estimate all once, drop the big ones
                    est = estimate_groundings(rules[i], store)
                    if self.ground_limit is not None and est > self.ground_limit:
                        self.cache_.failed[(fp, keys[i])] = str(GroundingTooLarge(rules[i].text(), est,
                                                                                  self.ground_limit))
                    else:
                        ok.append(i)
                keep = ok
        out = []
        for i in keep:  # the estimate was too low for some rule: ground one by one
            try:
                g = ground([rules[i]], store, limit=self.ground_limit)[0]
            except GroundingTooLarge as e:
                self.cache_.failed[(fp, keys[i])] = str(e)
                continue
            out.append((keys[i], g, g.seconds))
        return out

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
            from xcore.psl.explain import mep_scores

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


def _union_start(data: EvalData, tasks: list[tuple]) -> np.ndarray:
    """The MAP state of the union of all candidates' rules: every candidate's warm start (deterministic)."""
    seen: dict[str, Rule] = {}
    for rules, keys, _ in tasks:
        for r, k in zip(rules, keys):
            seen.setdefault(k, r)
    keys = sorted(seen)
    soft = [k for k in keys if not seen[k].is_hard]
    prog = assemble_program([data.forms[k] for k in soft], [seen[k] for k in soft], data.n_targets)
    return map_inference(prog, data.inference, tol=data.tol).y
