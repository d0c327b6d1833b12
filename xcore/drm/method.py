"""The deep relational machine as a registered method: settings, estimator (random features +
cross-validated MLP), the maximal-fidelity and structured explainers, and its `Run`."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import Field, field_validator

from xcore.data.dataset import RelationalDataset
from xcore.drm.explain import (
    LocalExplanation,
    clause_text,
    explain_instance,
    feature_intervals,
    structured_text,
    unfolded,
)
from xcore.drm.features import Evaluator, Feature, distinct_columns, features_and_matrix
from xcore.drm.network import TrainedNet, train_network
from xcore.drm.problem import Problem, applicable, build_problem, new_examples_problem, target_predicate
from xcore.drm.relevance import Relevance, default_relevance, parse_relevance
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.methods.base import Estimator, Explainer, MethodSpec, Run, Settings, prediction_frame
from xcore.methods.driver import explain, fitted_for
from xcore.runtime import Progress, null_progress, scaled

FIDELITY = "drm:fidelity"
STRUCTURED = "drm:structured"

FIDELITY_SCORE = ScoreSpec(
    label="fidelity",
    measures="the share of the instance's Hamming neighbourhood (training instances within radius k, widened "
             "until it holds the settings' number of neighbours; the instance itself included) on which the "
             "clause agrees with the network: covered neighbours the network puts in the same class plus "
             "uncovered ones it "
             "puts in the other class. Items are the maximal-fidelity clauses, the relevance choice first.",
    signed=False, unit="fraction of neighbours", directed=False)
COVERAGE_SCORE = ScoreSpec(label="coverage", measures="the share of all examples for which the feature is true.",
                           signed=False, unit="fraction of examples", directed=False)


class DRMSettings(Settings):
    """Settings of a DRM run: feature drawing, the network search, and the explanations."""

    seed: int = Field(0, ge=0, title="Seed")
    max_draws: int = Field(2000, ge=1, le=200_000, title="Draws (MaxDraws)", description="DrawFeatures' MaxDraws")
    max_literals: int = Field(4, ge=1, le=10, title="Longest feature body", description="longest drawn feature body")
    depth: int = Field(0, ge=0, le=5, title="Depth i (0: the modes' set(i))",
                       description="bottom-clause layers (0: the modes' set(i), else 2)")
    modes: str = Field("", title="Mode declarations (Aleph syntax; empty: derived from the data)",
                       description="Aleph mode directives; empty: derived from the data")
    relevance: str = Field("", title="Relevance levels",
                           description="relevance levels, least relevant first ('label: pred, pred')")
    folds: int = Field(10, ge=2, le=50, title="Cross-validation folds",
                       description="folds of the outer cross-validation (at most the size of the smallest class)")
    fold_predicate: str = Field("", title="Fold predicate", description=(
        "a binary predicate (example, fold) giving the folds, left out of the background; empty: seeded folds"))
    hidden: tuple[tuple[int, ...], ...] = ((32,),)
    learning_rates: tuple[float, ...] = Field((0.01,), title="Learning rates")
    weight_decays: tuple[float, ...] = Field((0.001, 0.01, 0.03), title="Weight decays",
                                             description="L2 penalties tried on the inner validation splits")
    dropout: float = Field(0.2, ge=0.0, lt=1.0, title="Dropout")
    distinct_inputs: bool = Field(False, title="One network input per distinct feature extension", description=(
        "network and linear model take one column per distinct feature extension (Mutagenesis 188: 0.867 -> "
        "0.904); off: every feature, repeats included (better on small planted trains)"))
    max_epochs: int = Field(100, ge=1, le=5000, title="Max epochs",
                            description="epochs of each validation run (retraining: at most 2x)")
    inner_folds: int = Field(3, ge=2, le=10, title="Inner validation splits",
                             description="validation splits whose loss curves choose the network")
    hamming: int = Field(5, ge=0, le=10_000, title="Neighbourhood radius k (Hamming)",
                         description="neighbourhood radius k (Hamming distance)")
    min_neighbours: int = Field(30, ge=0, le=10_000, title="Neighbours: widen k until n training instances (0: fixed k)",
                                description=(
        "n > 0: widen the radius from `hamming` until it holds n training instances (the n nearest, ties "
        "included); 0: the paper's fixed radius, which on thousands of features is usually empty"))
    beam: int = Field(5, ge=1, le=100, title="Beam width")
    max_body: int = Field(6, ge=1, le=20, title="Most features per explanation",
                          description="most features in an explanation clause")
    explain_rows: int = Field(20, ge=1, le=100_000, title="Predictions explained up front")

    @field_validator("hidden")
    @classmethod
    def _sizes(cls, v: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
        if not v or any(not layer or any(h < 1 for h in layer) for layer in v):
            raise ValueError("hidden must list at least one architecture of positive layer sizes")
        return v

    @field_validator("learning_rates")
    @classmethod
    def _lrs(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(not (0 < x < 10) for x in v):
            raise ValueError("learning rates must be in (0, 10)")
        return v

    @field_validator("weight_decays")
    @classmethod
    def _wds(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(not (0 <= x < 10) for x in v):
            raise ValueError("weight decays must be in [0, 10)")
        return v

    @field_validator("relevance")
    @classmethod
    def _relevance(cls, v: str) -> str:
        parse_relevance(v)
        return v

    explainer_fields: ClassVar[frozenset[str]] = frozenset(
        {"hamming", "min_neighbours", "beam", "max_body", "explain_rows"})

    def estimator(self) -> "DRMEstimator":
        return DRMEstimator(self)


def default_neighbours(n: int) -> int:
    """Training instances each neighbourhood holds by default: half the examples, between 4 and 30.

    With hundreds of random features almost no training instance lies within the paper's Hamming
    radius 5 or 10 (99.5% of 80 random trains have none), and an empty neighbourhood leaves fidelity
    undefined; 30 neighbours recover a planted rule in most explanations (issue 31)."""
    return int(min(30, max(4, n // 2)))


def default_settings(dataset: RelationalDataset) -> DRMSettings:
    """Default settings; the paper's relevance levels when the data has their predicates; neighbourhoods
    widened from the paper's radius 5 until they hold `default_neighbours` training instances."""
    target = target_predicate(dataset)
    n = len(dataset.truth(target)) if target else 0
    names = {p.name for p in dataset.predicates}
    settings = DRMSettings(relevance=default_relevance(names), min_neighbours=default_neighbours(n),
                           fold_predicate="cv_fold" if "cv_fold" in names else "")
    folds, _ = fold_count(dataset, settings)  # the form shows the folds that run (capped by the smallest class)
    return settings.replace(folds=min(max(folds, 2), 50))


def capped_folds(y: np.ndarray, k: int) -> int:
    """The folds that run for k asked: at most the size of the smallest class (each fold needs one of each)."""
    return max(2, min(k, int(np.bincount(y).min()) if len(np.unique(y)) > 1 else k))


def fold_count(dataset: RelationalDataset, settings: "DRMSettings") -> tuple[int, str | None]:
    """(folds the run will use, why they differ from `settings.folds`, or None): a fold predicate's own
    folds, else `settings.folds` capped by the smallest class (what `stratified_folds` does)."""
    target = target_predicate(dataset)
    if target is None:
        return settings.folds, None
    if settings.fold_predicate and settings.fold_predicate in dataset.schema.names:
        n = int(dataset.observations(settings.fold_predicate)["a1"].nunique())
        return n, f"the folds of {settings.fold_predicate} ({n})"
    y = (dataset.truth(target)["value"].to_numpy(dtype=float) >= 0.5).astype(np.int64)
    k = capped_folds(y, settings.folds) if len(y) else settings.folds
    return k, None if k == settings.folds else f"the smallest class has {int(np.bincount(y).min())} examples"


def stratified_folds(y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """A fold id per example, classes spread evenly over k folds (k capped by the smallest class)."""
    rng = np.random.default_rng(seed)
    k = capped_folds(y, k)
    folds = np.zeros(len(y), dtype=np.int64)
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        folds[idx] = np.arange(len(idx)) % k
    return folds


def _folds_from(data: RelationalDataset, name: str, problem: Problem) -> np.ndarray:
    """Fold ids 0..k-1 of each example from a (example, fold) predicate."""
    try:
        table = data.observations(name)
    except XcoreError:
        raise XcoreError(f"fold_predicate {name!r} is not a predicate of {data.name!r}") from None
    if data.predicate(name).arity != 2:
        raise XcoreError(f"fold_predicate {name!r} must be binary: (example, fold)")
    of = dict(zip(table["a0"].astype(str), table["a1"].astype(str)))
    missing = [e for e in problem.examples if e not in of]
    if missing:
        raise XcoreError(f"{len(missing)} examples have no fold in {name} (e.g. {missing[0]})")
    ids = pd.factorize(pd.Series([of[e] for e in problem.examples]), sort=True)[0]
    return ids.astype(np.int64)


def linear_out_of_fold(X: np.ndarray, y: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """Out-of-fold P(class 1) of L2 logistic regression (C = 1) on the network's inputs and folds:
    the baseline the network should at least match."""
    from sklearn.linear_model import LogisticRegression

    out = np.zeros(len(y))
    for k in np.unique(folds):
        tr, te = folds != k, folds == k
        if len(np.unique(y[tr])) < 2:
            out[te] = float(y[tr][0])
            continue
        model = LogisticRegression(C=1.0, max_iter=5000).fit(X[tr], y[tr])
        out[te] = model.predict_proba(X[te])[:, 1]
    return out


class DRMEstimator(Estimator):
    """Draws features, then trains one network per cross-validation fold and predicts each example
    with the network that did not see it (the paper's 10-fold protocol). The network's inputs (and the
    linear baseline's) are `inputs_`: every feature, or with `distinct_inputs` the first feature of each
    distinct extension over all examples (labels unused); explanations use every feature."""

    def __init__(self, settings: DRMSettings) -> None:
        self.settings = settings

    def fit(self, data: RelationalDataset, progress: Progress | None = None,
            folds: np.ndarray | None = None) -> "DRMEstimator":
        """Fit on `data`; `folds` (a fold id per example) overrides the seeded stratified folds."""
        s = self.settings
        progress = progress or null_progress
        t0 = time.perf_counter()
        exclude = (s.fold_predicate,) if s.fold_predicate else ()
        problem = build_problem(data, s.modes, exclude)
        if folds is None and s.fold_predicate:
            folds = _folds_from(data, s.fold_predicate, problem)
        depth = s.depth or (problem.language.depth if s.modes.strip() else 2)
        key = (data.fingerprint(), problem.language.text())
        feats, X = features_and_matrix(problem, key, s.max_draws, s.seed, s.max_literals, depth,
                                       progress=scaled(progress, 0.0, 0.4))
        t1 = time.perf_counter()
        y = problem.labels
        inputs = distinct_columns(X) if s.distinct_inputs else np.arange(X.shape[1], dtype=np.int64)
        Xin = X[:, inputs].astype(np.float32)
        fold = stratified_folds(y, s.folds, s.seed) if folds is None else np.asarray(folds, dtype=np.int64)
        nets: list[TrainedNet] = []
        proba = np.zeros(len(y))
        predicted = np.zeros((int(fold.max()) + 1, len(y)), dtype=np.int64)
        for k in range(int(fold.max()) + 1):
            tr = np.flatnonzero(fold != k)
            share = 0.6 / (int(fold.max()) + 1)
            net = train_network(Xin[tr], y[tr], s.hidden, s.learning_rates, s.dropout,
                                s.max_epochs, s.seed + k, s.weight_decays, s.inner_folds,
                                progress=scaled(lambda f, m, k=k: progress(f, f"fold {k + 1}: {m}"),
                                                0.4 + share * k, 0.4 + share * (k + 1)))
            nets.append(net)
            p = net.proba(Xin)
            predicted[k] = (p >= 0.5).astype(np.int64)
            proba[fold == k] = p[fold == k]
            progress(0.4 + 0.6 * (k + 1) / (int(fold.max()) + 1), f"trained the network of fold {k + 1}")
        self.linear_proba_: np.ndarray = linear_out_of_fold(Xin, y, fold)
        self.inputs_: np.ndarray = inputs
        self.exclude_: tuple[str, ...] = exclude
        self.problem_: Problem = problem
        self.features_: list[Feature] = feats
        self.X_: np.ndarray = X
        self.folds_: np.ndarray = fold
        self.nets_: list[TrainedNet] = nets
        self.fold_predictions_: np.ndarray = predicted
        self.proba_: np.ndarray = proba
        self.relevance_: Relevance = parse_relevance(s.relevance)
        self.timings_ = {"features": t1 - t0, "networks": time.perf_counter() - t1}
        return self

    # ------------------------------------------------------------------ predictions
    def target_of(self, i: int) -> str:
        return f"{self.problem_.target}({self.problem_.examples[i]})"

    def index_of(self, target: str) -> int:
        self.check_fitted()
        prefix = f"{self.problem_.target}("
        name = target[len(prefix):-1] if target.startswith(prefix) and target.endswith(")") else target
        return self.problem_.index_of(name)

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """Predictions: without `data`, out-of-fold predictions of every training example (class 1/0,
        P(class 1), truth, fold); with new `data`, the fold-network ensemble's predictions of its
        examples (see `predict_new`)."""
        self.check_fitted()
        if data is not None:
            return self.predict_new(data)
        n = len(self.problem_.examples)
        pred = (self.proba_ >= 0.5).astype(np.int64)
        return prediction_frame([self.target_of(i) for i in range(n)], pred, self.problem_.labels,
                                probability=np.round(self.proba_, 12), fold=self.folds_,
                                active_features=self.X_.sum(axis=1).astype(np.int64))

    def features_of(self, data: RelationalDataset) -> tuple[Problem, np.ndarray]:
        """The examples of new data under the fitted language and their 0/1 matrix over the drawn features."""
        self.check_fitted()
        problem = new_examples_problem(data, self.problem_.target, self.problem_.language, self.exclude_)
        return problem, Evaluator(problem).matrix(self.features_)

    def predict_new(self, data: RelationalDataset) -> pd.DataFrame:
        """Predictions for the examples of new data: the drawn features evaluated on its facts, then
        P(class 1) = the mean of the fold networks' probabilities (an ensemble of the k networks of the
        cross-validation, each trained on k-1 folds; no network is refitted). Truth is NaN where the
        data has none; `fold_votes` is how many fold networks say class 1."""
        problem, X = self.features_of(data)
        Xin = X[:, self.inputs_].astype(np.float32)
        probs = np.stack([net.proba(Xin) for net in self.nets_])
        proba = probs.mean(axis=0)
        truth = np.where(problem.labels >= 0, problem.labels.astype(float), np.nan)
        return prediction_frame([f"{problem.target}({e})" for e in problem.examples],
                                (proba >= 0.5).astype(np.int64), truth, probability=np.round(proba, 12),
                                fold_votes=(probs >= 0.5).sum(axis=0).astype(np.int64),
                                active_features=X.sum(axis=1).astype(np.int64))

    def metrics(self) -> dict[str, float]:
        pred = (self.proba_ >= 0.5).astype(np.int64)
        linear = (self.linear_proba_ >= 0.5).astype(np.int64)
        return {"accuracy": float(np.mean(pred == self.problem_.labels)),
                "linear_accuracy": float(np.mean(linear == self.problem_.labels)),
                "features": float(len(self.features_)), "network_inputs": float(len(self.inputs_)),
                "folds": float(self.folds_.max() + 1), "examples": float(len(pred))}

    # ------------------------------------------------------------------ explanations
    def local(self, target: str, hamming: int | None = None, relevance: Relevance | None = None,
              min_neighbours: int | None = None) -> LocalExplanation:
        """The local explanation of one example's out-of-fold prediction (arguments override the settings)."""
        self.check_fitted()
        s = self.settings
        i = self.index_of(target)
        k = int(self.folds_[i])
        train = np.flatnonzero(self.folds_ != k)
        c = int(self.fold_predictions_[k, i])
        intervals = feature_intervals(self.features_, relevance or self.relevance_)
        radius = s.hamming if hamming is None else hamming
        wanted = (s.min_neighbours if hamming is None else 0) if min_neighbours is None else min_neighbours
        if wanted:
            d = np.sort(np.count_nonzero(self.X_[train] != self.X_[i][None, :], axis=1))
            if len(d):
                radius = max(radius, int(d[min(wanted, len(d)) - 1]))
        out = explain_instance(self.X_, i, train, self.fold_predictions_[k], c, intervals, radius, s.beam,
                               s.max_body)
        out.radius = radius
        return out

    def feature_summary(self) -> Explanation:
        """Every drawn feature with its definition and coverage."""
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


def _targets(model: DRMEstimator, targets: list[str] | None) -> list[str]:
    if targets is not None:
        return list(targets)
    n = len(model.problem_.examples)
    return [model.target_of(i) for i in range(min(n, model.settings.explain_rows))]


def _definitions(model: DRMEstimator, feats: tuple[int, ...]) -> dict[str, str]:
    return {model.features_[f].name: model.features_[f].definition() for f in feats}


class FidelityExplainer(Explainer):
    """The maximal-fidelity unstructured feature clauses for a prediction, relevance choice first."""

    name = FIDELITY
    title = "Maximal-fidelity clauses"
    score_spec = FIDELITY_SCORE
    settings_fields = ("hamming", "min_neighbours", "beam", "max_body", "explain_rows")

    def supports(self, model: Any) -> str | None:
        if not isinstance(model, DRMEstimator):
            return "explains a deep relational machine only"
        return None if model.is_fitted() else "the model is not fitted"

    def explain(self, model: DRMEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        model.check_fitted()
        wanted = _targets(model, targets)
        report = scaled(progress, 0.0, 1.0)
        exps = []
        for n, target in enumerate(wanted):
            exps.append(self.one(model, target, model.local(target)))
            report((n + 1) / max(len(wanted), 1), f"explained {target}")
        return self.finish(ExplanationSet(exps, method=self.name, meta={"hamming": model.settings.hamming}))

    def one(self, model: DRMEstimator, target: str, loc: LocalExplanation,
            relevance: Relevance | None = None) -> Explanation:
        """The explanation of one instance from its `LocalExplanation` (relevance labels from `relevance`)."""
        t, rel = model.problem_.target, relevance or model.relevance_
        order = list(range(len(loc.clauses)))
        if loc.chosen >= 0:
            order.remove(loc.chosen)
            order.insert(0, loc.chosen)
        items = []
        for j in order:
            u = loc.clauses[j]
            items.append(ExplanationItem(
                kind="feature_clause", text=clause_text(t, loc.prediction, u.features, model.features_),
                natural=unfolded(t, loc.prediction, u.features, model.features_), score=u.fidelity,
                atoms=[model.features_[f].name for f in u.features],
                extras={"relevance": rel.show(u.relevance) if u.relevance else "",
                        "relevance_intervals": [list(iv) for iv in u.relevance],
                        "definitions": _definitions(model, u.features), "chosen_by_relevance": j == loc.chosen,
                        "chosen_by_fidelity_alone": j == loc.plain, "structured": len(loc.structured.get(j, []))}))
        nb = loc.neighbourhood
        note = ("" if loc.fidelity_defined else
                f"fidelity undefined: no training instance within Hamming distance {loc.radius}")
        return Explanation(
            target=target, target_text=target, method=self.name,
            prediction=float(loc.prediction), prediction_kind="class",
            truth=float(model.problem_.labels[loc.index]), items=items, ordering="given", score_spec=self.score_spec,
            meta={"hamming": int(loc.radius), "neighbours": int(len(nb.members)), "e_plus": int(nb.positive.sum()) + 1,
                  "e_minus": int((~nb.positive).sum()), "active_features": int(model.X_[loc.index].sum()),
                  "relevance_changes_choice": loc.relevance_changes_choice,
                  "fidelity_defined": loc.fidelity_defined, "note": note})


class StructuredExplainer(Explainer):
    """Structured alternatives (two invented features) of the maximal-fidelity clauses that raise relevance."""

    name = STRUCTURED
    title = "Structured explanations"
    score_spec = FIDELITY_SCORE
    settings_fields = ("hamming", "min_neighbours", "beam", "max_body", "explain_rows")

    def supports(self, model: Any) -> str | None:
        return FidelityExplainer().supports(model)

    def explain(self, model: DRMEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        model.check_fitted()
        wanted = _targets(model, targets)
        exps = []
        t, rel = model.problem_.target, model.relevance_
        for target in wanted:
            loc = model.local(target)
            items = []
            for j, structs in loc.structured.items():
                u = loc.clauses[j]
                for s in structs:
                    feats = s.blocks[0] + s.blocks[1]
                    items.append(ExplanationItem(
                        kind="rule", text=structured_text(t, loc.prediction, s, model.features_),
                        natural=unfolded(t, loc.prediction, u.features, model.features_), score=s.fidelity,
                        atoms=[model.features_[f].name for f in feats],
                        extras={"relevance": rel.show(s.relevance), "unstructured_relevance": rel.show(u.relevance),
                                "unstructured": clause_text(t, loc.prediction, u.features, model.features_),
                                "definitions": _definitions(model, feats),
                                "blocks": [[model.features_[f].name for f in b] for b in s.blocks]}))
            exps.append(Explanation(target=target, target_text=target,
                                    method=self.name, prediction=float(loc.prediction), prediction_kind="class",
                                    truth=float(model.problem_.labels[loc.index]), items=items, ordering="given",
                                    score_spec=self.score_spec))
        return self.finish(ExplanationSet(exps, method=self.name))


EXPLAINERS: dict[str, Explainer] = {FIDELITY: FidelityExplainer(), STRUCTURED: StructuredExplainer()}


def run(dataset: RelationalDataset, settings: DRMSettings, progress: Progress | None = None,
        estimator: DRMEstimator | None = None) -> Run:
    """Draw features, cross-validate the networks (or reuse `estimator`, a cached fit of the same
    model), explain the first `explain_rows` predictions through the explain driver."""
    t0 = time.perf_counter()
    est = fitted_for(settings, dataset, scaled(progress, 0.0, 0.8), estimator)
    t1 = time.perf_counter()
    preds = est.predict()
    exps = {name: explain(est, e, dataset, progress=scaled(progress, 0.8 + 0.1 * i, 0.9 + 0.1 * i),
                          predictions=preds)
            for i, (name, e) in enumerate(EXPLAINERS.items())}
    t2 = time.perf_counter()
    fid = exps[FIDELITY]
    tops = [e.items[0].score for e in fid if e.items]
    metrics = est.metrics()
    if len(fid):
        metrics["mean_neighbours"] = float(np.mean([e.meta["neighbours"] for e in fid]))
        metrics["fidelity_undefined"] = float(np.mean([not e.meta["fidelity_defined"] for e in fid]))
    if tops:
        metrics["mean_fidelity"] = float(np.mean(tops))
        metrics["relevance_changes_choice"] = float(np.mean([bool(e.meta.get("relevance_changes_choice"))
                                                             for e in fid]))
    return Run(method="drm", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations=exps, summary=est.feature_summary(), metrics=metrics,
               timings={**est.timings_, "explain": t2 - t1, "total": t2 - t0}, dataset=dataset.name, model=est,
               extras={"drm": est})


SPEC = MethodSpec(
    key="drm", title="Deep relational machine", settings_type=DRMSettings, explainers=(FIDELITY, STRUCTURED),
    run=run, applicable=applicable, default_settings=default_settings, sample="trains_michalski10",
    page="app_pages/drm.py", icon=":material/hub:", estimator_type=DRMEstimator, explainer_map=EXPLAINERS, surrogate="DRM feature clauses",
    paper="Srinivasan, Vig & Bain, Logical Explanations for Deep Relational Machines Using Relevance Information")

__all__ = ["DRMEstimator", "DRMSettings", "EXPLAINERS", "FIDELITY", "SPEC", "STRUCTURED", "run", "target_predicate"]


def neighbourhood_rows(model: DRMEstimator, loc: LocalExplanation) -> tuple[np.ndarray, list[str], list[int]]:
    """The instance and its neighbours (instance first): feature vectors, example names, and the class each
    is predicted by the network of the instance's fold (the network the explanation is about)."""
    idx = np.concatenate([[loc.index], loc.neighbourhood.members]).astype(int)
    k = int(model.folds_[loc.index])
    return (model.X_[idx].astype(float), [model.target_of(i) for i in idx],
            [int(model.fold_predictions_[k, i]) for i in idx])


def network_tables(model: DRMEstimator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per fold network: its architecture, learning rate, weight decay, epochs and losses;
    the training loss per epoch of each, long form)."""
    rows, curves = [], []
    for k, net in enumerate(model.nets_):
        rows.append({"fold": k + 1, "hidden": str(net.hidden), "learning rate": net.lr,
                     "weight decay": net.weight_decay, "epochs": net.epochs,
                     "validation-time training loss": round(net.target_loss, 4),
                     "final training loss": round(net.train_loss[-1], 4) if net.train_loss else None})
        curves += [{"fold": str(k + 1), "epoch": e + 1, "training loss": v} for e, v in enumerate(net.train_loss)]
    return pd.DataFrame(rows), pd.DataFrame(curves, columns=["fold", "epoch", "training loss"])


def feature_table(model: DRMEstimator, relevance: list[str]) -> pd.DataFrame:
    """One row per drawn feature: name, Prolog definition, coverage (share of all examples it holds for),
    body literals and the relevance of its predicates (from the run's summary)."""
    feats = model.features_
    return pd.DataFrame({"feature": [f.name for f in feats], "definition": [f.definition() for f in feats],
                         "coverage": np.round(model.X_.mean(axis=0), 4), "literals": [len(f.clause.body) for f in feats],
                         "relevance": relevance})
