"""ESMS structure search (Algorithm 1), train/validation splits and the explainability (gamma) sweep.

Algorithm 1: for N iterations, draw a candidate model of L_M rules with Algorithm 2
(`xcore.psl.templates.sample_rules`), give every rule its PPLL weight learned on the training data
(each rule learned once: `PPLLCache`), run MAP inference on the validation data, score the
predictions V(M) (MSE/RMSE/MAE, or AUPR/AUROC for 0/1 targets) and keep the best model.

How it is computed. All N candidate models are drawn first from one seeded generator (so the
draws do not depend on scheduling); rules are then grounded once per dataset (a batch per round)
and their hinge blocks cached, so a candidate model is just a stack of cached blocks. Candidates
are evaluated in parallel (`n_jobs`, threads or processes); each evaluation is a pure function of
its rules, so results are identical for any `n_jobs`. Ties keep the earliest iteration.
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
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import GroundingTooLarge, XcoreError
from xcore.logic.ast import Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.estimate import estimate_groundings
from xcore.logic.grounding import GroundRules, ground
from xcore.psl.explain import mep_from_program
from xcore.psl.inference import map_inference
from xcore.psl.model import (
    PPLLCache,
    PSLModel,
    RuleForm,
    assemble_program,
    dataset_fingerprint,
    metric_sense,
    prediction_metrics,
    rule_form,
)
from xcore.psl.ppll import learn_weight
from xcore.runtime import Progress, limited_threads
from xcore.psl.templates import (
    DEFAULT_TEMPLATES,
    MetaTemplate,
    fill_templates,
    is_alpha_explainable,
    prior_rules,
    rule_key,
    sample_rules,
)

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

    def store(self, dataset: RelationalDataset, fp: str) -> AtomStore:
        if fp not in self.stores:
            self.stores[fp] = AtomStore.from_dataset(dataset)
        return self.stores[fp]


@dataclass
class _Candidate:
    iteration: int
    rules: list[Rule]


def _evaluate(task: tuple) -> dict:
    """Evaluate one candidate: MAP on the validation program, metrics and MEP@1..3 (pure function)."""
    prog, truth, row_expl, inference, metric = task
    t0 = time.perf_counter()
    res = map_inference(prog, inference)
    t1 = time.perf_counter()
    m = prediction_metrics(res.y, truth)
    m.update(mep_from_program(prog, res.y, row_expl, (1, 2, 3)))
    return {"metrics": m, "map_seconds": t1 - t0, "score_seconds": time.perf_counter() - t1,
            "map_iterations": res.iterations, "converged": res.converged, "score": m[metric]}


# ---------------------------------------------------------------------- the search
class ESMSSearch:
    """Explainable Structured Model Search (Embar, Srinivasan, Getoor, UAI 2022), Algorithm 1.

    `gamma` in [0, 1] biases towards alpha-explainable rules (0: no bias, 1: only explainable);
    `rules_per_model` is L_M, `iterations` N; `metric` is V(M) on the validation data; `block`
    an optional block predicate for the target; `counterparts=True` adds the negative counterpart
    of every template (`xcore.psl.templates`, HyPER-style rules pulling T down). After `fit`: `best_model_` (weights learned,
    grounded on the validation data, MAP done), `best_score_`, `history_`, `cache_`.
    """

    def __init__(self, target: str, gamma: float = 0.0, alpha: float = 0.25, rules_per_model: int = 15,
                 iterations: int = 100, metric: str = "mse", block: str | None = None, n_jobs: int = 2,
                 seed: int = 0, templates: Sequence[MetaTemplate] = DEFAULT_TEMPLATES,
                 always_priors: bool = False, squared: bool = True, inference: str = "auto",
                 w_max: float = 100.0, ground_limit: int | None = 1_000_000, executor: str = "thread",
                 cache: SearchCache | None = None, counterparts: bool = False,
                 start_rules: Sequence[Rule] = ()) -> None:
        if not 0.0 <= gamma <= 1.0:
            raise XcoreError(f"gamma must be in [0, 1], got {gamma}")
        if iterations < 1 or rules_per_model < 0:
            raise XcoreError("iterations must be >= 1 and rules_per_model >= 0")
        if executor not in ("thread", "process"):
            raise XcoreError(f"executor must be 'thread' or 'process', got {executor!r}")
        metric_sense(metric)
        self.target, self.gamma, self.alpha = target, float(gamma), float(alpha)
        self.rules_per_model, self.iterations, self.metric = int(rules_per_model), int(iterations), metric
        self.block, self.n_jobs, self.seed = block, n_jobs, seed
        self.templates, self.always_priors, self.squared = tuple(templates), always_priors, squared
        self.inference, self.w_max, self.ground_limit, self.executor = inference, w_max, ground_limit, executor
        self.counterparts = bool(counterparts)
        self.start_rules = tuple(start_rules)
        """A starting model (e.g. a PSL project's rules): one more candidate, scored with its own
        weights and hard rules as written, kept when it beats every drawn model."""
        self.cache_ = cache if cache is not None else SearchCache()

    def get_params(self) -> dict:
        """Constructor arguments (sklearn style), without the cache."""
        keys = ("target", "gamma", "alpha", "rules_per_model", "iterations", "metric", "block", "n_jobs",
                "seed", "templates", "always_priors", "squared", "inference", "w_max", "ground_limit",
                "executor", "counterparts", "start_rules")
        return {k: getattr(self, k) for k in keys}

    # ------------------------------------------------------------------ candidates
    def candidates(self, schema) -> list[Rule]:
        """All rules the templates allow for the target (priors excluded when always included)."""
        return fill_templates(schema, self.target, self.block, self.templates, self.squared,
                              include_priors=not self.always_priors, counterparts=self.counterparts)

    def draw_models(self, schema) -> list[_Candidate]:
        """The N candidate models of Algorithm 1, drawn with Algorithm 2 from one seeded generator."""
        cands = self.candidates(schema)
        base = prior_rules(self.target, schema[self.target].arity, self.squared) if self.always_priors else []
        rng = np.random.default_rng(self.seed)
        return [_Candidate(i, base + sample_rules(cands, self.rules_per_model, self.gamma, self.alpha, rng,
                                                  schema, self.block, exclude=base))
                for i in range(self.iterations)]

    # ------------------------------------------------------------------ fit
    def fit(self, train_ds: RelationalDataset, valid_ds: RelationalDataset,
            progress: Progress | None = None) -> "ESMSSearch":
        """Run Algorithm 1; sets `best_model_`, `best_score_`, `best_rules_`, `history_`.

        Progress: drawing and grounding up to 0.45, PPLL up to 0.6, evaluating candidates up to 1.
        """
        t_start = time.perf_counter()
        report = progress or (lambda f, m: None)
        schema = train_ds.schema
        schema[self.target]
        if self.target not in valid_ds.schema:
            raise XcoreError(f"the validation dataset has no predicate {self.target}")
        cache = self.cache_
        train_fp, valid_fp = dataset_fingerprint(train_ds), dataset_fingerprint(valid_ds)
        train_store, valid_store = cache.store(train_ds, train_fp), cache.store(valid_ds, valid_fp)
        if not np.isfinite(train_store.truth).any():
            raise XcoreError(f"the training dataset has no labelled targets of {self.target} to learn weights from")
        truth = valid_store.truth
        if not np.isfinite(truth).any():
            raise XcoreError(f"the validation dataset has no labelled targets of {self.target} to score models on")
        sense = metric_sense(self.metric)
        labelled = truth[np.isfinite(truth)]
        if sense > 0 and not (np.all((labelled == 0) | (labelled == 1)) and 0 < labelled.sum() < len(labelled)):
            raise XcoreError(f"metric {self.metric} needs 0/1 validation labels with both classes present; "
                             "use mse, rmse or mae for continuous targets")
        report(0.0, f"drawing {self.iterations} candidate models")
        models = self.draw_models(schema)
        expl_of: dict[str, bool] = {}
        for c in models:
            for r in c.rules:
                expl_of.setdefault(rule_key(r), is_alpha_explainable(r, schema, self.alpha, self.block))
        n_workers = max(1, os.cpu_count() or 1) if self.n_jobs in (-1, None) else max(1, int(self.n_jobs))
        pool: Executor | None = None
        if n_workers > 1:
            pool = (ThreadPoolExecutor(n_workers) if self.executor == "thread"
                    else ProcessPoolExecutor(n_workers, mp_context=_mp_context(), initializer=_worker_init))
        blas = limited_threads(1)
        blas.__enter__()
        rows: list[dict] = []
        try:
            weights, timing = self._prepare_rules(models, train_store, train_fp, valid_store, valid_fp, report)
            tasks, meta = [], []
            for c in models:
                rules = [r.with_weight(weights[rule_key(r)]) for r in c.rules
                         if rule_key(r) in weights and (valid_fp, rule_key(r)) in cache.forms]
                forms = [cache.forms[(valid_fp, rule_key(r))] for r in rules]
                prog = assemble_program(forms, rules, valid_store.n_targets)
                rule_expl = np.array([expl_of[rule_key(r)] for r in rules], dtype=bool)
                row_expl = rule_expl[prog.rule_index] if len(rules) else np.zeros(0, bool)
                tasks.append((prog, truth, row_expl, self.inference, self.metric))
                meta.append((c, rules, rule_expl))
            if self.start_rules:
                start = _Candidate(self.iterations, list(self.start_rules))
                models.append(start)
                tasks.append(self._start_task(start.rules, schema, valid_store, truth))
                meta.append((start, start.rules, np.array([is_alpha_explainable(r, schema, self.alpha, self.block)
                                                           for r in start.rules], dtype=bool)))
            results = _map_in_order(pool, _evaluate, tasks, lambda done: report(
                0.6 + 0.4 * done / len(tasks), f"ESMS candidate {done}/{len(tasks)} evaluated"))
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
        finally:
            if pool is not None:
                pool.shutdown()
            blas.__exit__(None, None, None)
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
            [r.with_weight(weights[rule_key(r)]) for r in best.rules
             if rule_key(r) in weights and (valid_fp, rule_key(r)) in cache.forms]
        self.skipped_rules_ = sorted({cache.failed[key] for key in cache.failed if key[0] in (train_fp, valid_fp)})
        model = PSLModel(self.best_rules_, inference=self.inference, alpha=self.alpha, block=self.block,
                         limit=self.ground_limit)
        model.ground(valid_store)
        model.infer()
        self.best_model_ = model
        self.seconds_ = time.perf_counter() - t_start
        report(1.0, f"ESMS done: best {self.metric} {self.best_score_:.4g} at iteration {self.best_iteration_}")
        return self

    def _start_task(self, rules: list[Rule], schema, valid_store: AtomStore, truth: np.ndarray) -> tuple:
        """The evaluation task of the starting model: its rules grounded on the validation data."""
        gp = ground(rules, valid_store, limit=self.ground_limit)
        prog = assemble_program([rule_form(g, valid_store) for g in gp], rules, valid_store.n_targets)
        rule_expl = np.array([is_alpha_explainable(r, schema, self.alpha, self.block) for r in rules], dtype=bool)
        row_expl = rule_expl[prog.rule_index] if len(prog.rule_index) else np.zeros(0, bool)
        return (prog, truth, row_expl, self.inference, self.metric)

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

        def charge(k: str, what: str, seconds: float) -> None:
            d = timing.setdefault(first_user[k], {})
            d[what] = d.get(what, 0.0) + seconds

        weights: dict[str, float] = {}
        need_w = []
        for k, r in rule_of.items():
            if (train_fp, k) in cache.failed:
                continue
            w = cache.ppll.get(r, train_fp, self.w_max)
            if w is None:
                need_w.append(k)
            else:
                weights[k] = w
        report(0.02, f"grounding {len(need_w)} new rules on the training data")
        grounded = self._ground_many([rule_of[k] for k in need_w], need_w, train_store, train_fp,
                                     lambda f: report(0.02 + 0.2 * f, "grounding rules on the training data"))
        t0 = time.perf_counter()
        for i, (k, g, secs) in enumerate(grounded):
            charge(k, "ground", secs)
            t1 = time.perf_counter()
            A, b = g.linear_form(train_store)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # log(0) in far tails
                w = learn_weight(A, b, g.rule.squared, train_store.truth, w_max=self.w_max).weight
            cache.ppll.put(g.rule, train_fp, self.w_max, w)
            weights[k] = w
            charge(k, "ppll", time.perf_counter() - t1)
            if time.perf_counter() - t0 > 0.5 or i + 1 == len(grounded):
                t0 = time.perf_counter()
                report(0.22 + 0.18 * (i + 1) / len(grounded), f"PPLL weights: {i + 1}/{len(grounded)} rules")
        del grounded
        need_f = [k for k in rule_of if k in weights and (valid_fp, k) not in cache.forms
                  and (valid_fp, k) not in cache.failed]
        grounded = self._ground_many([rule_of[k] for k in need_f], need_f, valid_store, valid_fp,
                                     lambda f: report(0.4 + 0.2 * f, "grounding rules on the validation data"))
        for k, g, secs in grounded:
            t1 = time.perf_counter()
            cache.forms[(valid_fp, k)] = rule_form(g, valid_store)
            charge(k, "ground", secs + time.perf_counter() - t1)
        return weights, timing

    def _ground_many(self, rules: list[Rule], keys: list[str], store: AtomStore, fp: str,
                     progress: Callable[[float], None]) -> list[tuple[str, GroundRules, float]]:
        """Ground rules in one DuckDB session; rules above the size limit are recorded and skipped."""
        if not rules:
            return []
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


def _map_in_order(pool: Executor | None, fn, tasks: list, tick: Callable[[int], None]) -> list:
    """fn over tasks, in a pool when given; results in task order; tick(done) as results arrive."""
    out = []
    if pool is None:
        for t in tasks:
            out.append(fn(t))
            tick(len(out))
        return out
    for res in pool.map(fn, tasks):
        out.append(res)
        tick(len(out))
    return out


_WORKER_LIMIT: list = []
"""The entered thread limit of a process worker, kept referenced (a dropped one would be undone)."""


def _worker_init() -> None:
    """Process workers: one BLAS thread each for the worker's life (see `limited_threads`)."""
    limit = limited_threads(1)
    limit.__enter__()
    _WORKER_LIMIT.append(limit)


def _mp_context():
    import multiprocessing as mp

    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
