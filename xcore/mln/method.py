"""Markov logic (I-Explain) as a registered method: settings, estimator (learn weights, ground, infer),
the formula-importance explainers (M-/I-/R-Explain) and the bag-of-words baselines (LIME, SHAP)."""

from __future__ import annotations

import time
from typing import ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from xcore.data.dataset import RelationalDataset
from xcore.errors import ConfigError, XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.methods.base import Estimator, Explainer, Measurement, MethodSpec, Run, Settings, prediction_frame
from xcore.methods.driver import explain, fitted_for
from xcore.mln.learning import learn_weights
from xcore.mln.model import MLNModel
from xcore.mln.queries import matching_atoms, parse_query, split_atom_texts
from xcore.mln.verify import measure_formulas, measure_words
from xcore.mln.workflow import (
    WORD_METHODS,
    ExplainerRun,
    ExplainSettings,
    TextSetting,
    available_methods,
    detect_setting,
    run_explainers,
    starting_rules,
)
from xcore.runtime import Progress, scaled

EXACT_LIMIT = 20
"""Exact enumeration handles up to this many query atoms; `inference="auto"` samples above it."""

IMPORTANCE = "I(f, Q)"
_IMPORTANCE_MEANING = ("E_Q[n_f] − E[n_f] = ∂ log P(Q | E) / ∂ w_f: how much raising the formula's weight would raise "
                       "the query's log-probability (its size ranks the formulas; which way a formula pushes the "
                       "query at its weight is its weight's sign times the sign of the query's literal in it)")

SCORES: dict[str, ScoreSpec] = {
    "mln:m-explain": ScoreSpec(IMPORTANCE, _IMPORTANCE_MEANING + ", on the whole ground network.", False,
                               "log-probability per unit weight"),
    "mln:i-explain": ScoreSpec(IMPORTANCE, _IMPORTANCE_MEANING + ", averaged over coalitions of similar objects "
                               "(ranked by weighted rank aggregation).", False, "log-probability per unit weight"),
    "mln:r-explain": ScoreSpec(IMPORTANCE, _IMPORTANCE_MEANING + ", averaged over random coalitions of objects "
                               "(ranked by weighted rank aggregation).", False, "log-probability per unit weight"),
    "lime": ScoreSpec("LIME coefficient", "the word's coefficient in a locally weighted linear model of the "
                      "bag-of-words classifier's probability.", True, "probability"),
    "shap": ScoreSpec("SHAP value", "the word's Shapley value for the bag-of-words classifier's log-odds (exact "
                      "for the linear model).", True, "log-odds"),
}
LEGACY: dict[str, str] = {"mln:m-explain": "M-Explain", "mln:i-explain": "I-Explain", "mln:r-explain": "R-Explain",
                          "lime": "LIME", "shap": "SHAP"}
"""Registry name -> the workflow's method label."""
NAMES: dict[str, str] = {v: k for k, v in LEGACY.items()}

WEIGHT_SCORE = ScoreSpec("weight", "the formula's Markov-logic weight (log-odds of a world where it holds).",
                         True, "log-odds")


class MLNSettings(Settings):
    """Everything that decides a Markov-logic run: rules, weight learning, inference, explainers."""

    method_key: ClassVar[str] = "mln"
    explainer_fields: ClassVar[frozenset[str]] = frozenset(
        {"explainers", "C", "S", "T", "top_k", "lime_samples", "aggregation", "work"})

    target: str | None = Field(None, title='Query predicate to explain')
    """The query predicate to explain (any arity, e.g. advisedBy(x, y)); None picks the program's
    declared query predicate, else an open one with query atoms."""
    query: str | None = Field(None, title='Query atoms')
    """Tuffy-style query: which atoms to explain, a predicate (``advisedBy``) or atom patterns of one
    predicate (``advisedBy(Person380, y)``); its predicate overrides `target`. None: every atom."""
    rules: str = Field("", title='Weighted first-order clauses')
    """Weighted clauses (Alchemy syntax); empty uses the sample's model or rules built from the data."""
    learn: Literal["none", "pll", "linear+pll"] = Field("none", title='Weight learning')
    """none: weights as written. linear+pll: word formulas from a logistic regression on the words (the
    paper uses an SVM), relational formulas by pseudo-likelihood. pll: every weight by pseudo-likelihood."""
    inference: Literal["auto", "exact", "gibbs"] = Field("auto", title='Inference')
    """exact enumeration (up to 20 query atoms), Gibbs sampling, or auto: exact when it fits."""
    n_samples: int = Field(1000, ge=10, le=1_000_000, title='Samples per chain')
    burn_in: int = Field(200, ge=0, le=1_000_000, title='Burn-in sweeps')
    n_chains: int = Field(4, ge=2, le=256, title='Chains')
    explainers: tuple[str, ...] = Field(("mln:m-explain", "mln:i-explain", "mln:r-explain", "lime", "shap"),
                                        title='Explainers')
    """LIME and SHAP explain a bag-of-words classifier and need word evidence."""
    C: float = Field(0.2, gt=0.0, le=1.0, title='C (clusters per object)')
    S: float = Field(0.5, gt=0.0, le=1.0, title='S (share sampled per cluster)')
    T: int = Field(10, ge=1, le=1000, title='T (coalitions)')
    top_k: int = Field(10, ge=1, le=1000, title='Top-k per query')
    lime_samples: int = Field(1000, ge=10, le=1_000_000, title='LIME samples')
    aggregation: Literal["cemc", "exact_footrule"] = Field("exact_footrule", title='Rank aggregation')
    """How I-/R-Explain merge coalition lists: the exact weighted-footrule optimum, or CEMC (the paper)."""
    work: Literal["equal", "per_coalition"] = Field("equal", title='Sampling work')
    """Sampling work: "equal" gives M-Explain and all coalitions together the same atom updates;
    "per_coalition" runs the Gibbs options in every coalition (the paper; several times M-Explain's)."""
    seed: int = Field(0, ge=0, title='Seed')

    def model_post_init(self, context: object) -> None:
        if self.query is not None:
            parse_query(self.query)  # a ConfigError names the field and column
        unknown = [e for e in self.explainers if e not in LEGACY]
        if unknown:
            from xcore.errors import ConfigError

            raise ConfigError(f"unknown explainer {unknown[0]!r}; use any of {', '.join(LEGACY)}", field="explainers")

    def query_target(self) -> str | None:
        """The query predicate to run: the query's predicate when there is a query, else `target`."""
        return parse_query(self.query)[0].predicate if self.query is not None else self.target

    def explain_settings(self) -> ExplainSettings:
        """The workflow's explainer parameters for these settings."""
        return ExplainSettings(methods=tuple(LEGACY[e] for e in self.explainers), C=self.C, S=self.S, T=self.T,
                               top_k=self.top_k, n_samples=self.n_samples, burn_in=self.burn_in,
                               n_chains=self.n_chains, lime_samples=self.lime_samples,
                               aggregation=self.aggregation, work=self.work, seed=self.seed)



def text_setting(dataset: RelationalDataset, target: str | None) -> TextSetting | None:
    """The data's query/object/word/link setting, or None when it has no open query predicate."""
    try:
        return detect_setting(dataset, target)
    except XcoreError:
        if target is not None and not any_arity_query(dataset, target):
            raise
        return None


def any_arity_query(dataset: RelationalDataset, target: str) -> bool:
    """True when `target` is an open predicate with query atoms (of any arity: M-Explain explains them)."""
    return target in dataset.schema.names and not dataset.predicate(target).closed and len(dataset.targets(target)) > 0


def declared_query(dataset: RelationalDataset) -> str | None:
    """The first query predicate a loaded Markov logic program names (Tuffy query.db, pracmln query.conf)."""
    return next((p.name for p in dataset.predicates if p.description == "query predicate"
                 and any_arity_query(dataset, p.name)), None)


def applicable(dataset: RelationalDataset) -> str | None:
    """Why Markov-logic explanation cannot run on `dataset`, or None when it can."""
    if not any(len(dataset.targets(p.name)) for p in dataset.predicates):
        return "no predicate has query (target) atoms to infer"
    return None


def default_settings(dataset: RelationalDataset) -> MLNSettings:
    """The data's first query predicate, its sample model or generated rules, every explainer it supports."""
    setting = text_setting(dataset, None)
    if setting is None:
        return MLNSettings(target=declared_query(dataset), explainers=("mln:m-explain",))
    return MLNSettings(target=setting.target, explainers=default_explainers(dataset, setting.target))


def default_explainers(dataset: RelationalDataset, target: str | None) -> tuple[str, ...]:
    """The explainers offered by default for a query predicate: M-Explain on any; I-/R-Explain on an open
    unary one; LIME and SHAP where there are words and observed labels of both classes."""
    setting = text_setting(dataset, target) if target is not None else None
    if setting is None:
        return ("mln:m-explain",)
    return tuple(NAMES[m] for m in available_methods(setting)
                 if m not in WORD_METHODS or labelled_both_ways(dataset, setting.target))


def explainer_choices(dataset: RelationalDataset, target: str | None) -> list[str]:
    """Every explainer that can run for a query predicate (registry names)."""
    setting = text_setting(dataset, target) if target is not None else None
    return [NAMES[m] for m in available_methods(setting)] if setting is not None else ["mln:m-explain"]


def labelled_both_ways(dataset: RelationalDataset, target: str) -> bool:
    """True when the query predicate has observed atoms of both classes: the bag-of-words baselines
    (LIME, SHAP) train a classifier on them, so by default they are offered only then."""
    observed = dataset.table(target, "obs")["value"].to_numpy(dtype=float) >= 0.5
    return bool(observed.any() and not observed.all())


def n_query_atoms(dataset: RelationalDataset) -> int:
    return sum(len(dataset.targets(p.name)) for p in dataset.predicates)


class MLNEstimator(Estimator):
    """Learns weights (optional), grounds the rules on the data and infers every query's marginal."""

    def __init__(self, settings: MLNSettings) -> None:
        self.settings = settings

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "MLNEstimator":
        s = self.settings
        report = scaled(progress, 0.0, 1.0)
        target = s.query_target()
        if target is not None and target not in data.schema.names:
            raise ConfigError(f"no predicate {target!r} in {data.name!r} (predicates: "
                              f"{', '.join(data.schema.names)})", field="query" if s.query else "target")
        self.setting_: TextSetting | None = text_setting(data, target)
        rules = s.rules.strip() or starting_rules(data, self.setting_).strip()
        if not rules:
            raise XcoreError(f"no rules to run on {data.name!r}: write weighted clauses such as "
                             "`1.5 smokes(x) => cancer(x)`")
        if s.learn != "none":
            report(0.05, "learning weights by pseudo-likelihood")
            target = self.setting_.target if self.setting_ is not None else "positive"
            word = (self.setting_.word_predicate if self.setting_ is not None else None) or "has_word"
            learned = learn_weights(rules, data, method=s.learn, target=target, word_predicate=word)
            rules = "\n".join(r.text("mln") for r in learned) + "\n"
        from xcore.mln.model import read_rules

        parsed, program = read_rules(rules)
        if not parsed and not (program is not None and program.formulas):
            raise XcoreError("the rules contain no clause (only comments or blank lines): inference without "
                             "rules would only report 0.5 everywhere")
        self.rules_text_ = rules
        method = s.inference if s.inference != "auto" else \
            ("exact" if n_query_atoms(data) <= EXACT_LIMIT else "gibbs")
        report(0.3, f"grounding and {method} inference")
        options = {} if method == "exact" else {"n_samples": s.n_samples, "burn_in": s.burn_in,
                                                "n_chains": s.n_chains, "seed": s.seed}
        self.model_: MLNModel = MLNModel(rules).ground(data).infer(
            method, progress=scaled(report, 0.3, 1.0) if method == "gibbs" else None, **options)
        report(1.0, "inferred")
        return self

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """Every query atom (of the target predicate when there is one): marginal, truth, se, rhat."""
        self.check_fitted()
        model = self.model_ if data is None else MLNModel(self.rules_text_).ground(data).infer(self.model_.method_)
        m = model.marginals()
        query = self.setting_.target if self.setting_ is not None else self.settings.query_target()
        if query is not None:
            m = m[m["atom"].str.startswith(query + "(")].reset_index(drop=True)
        return prediction_frame(m["atom"], m["marginal"], m["truth"], se=m["se"], rhat=m["rhat"])

    def rules_summary(self) -> Explanation:
        """The (learned) model as one explanation: each clause with its weight."""
        self.check_fitted()
        items = [ExplanationItem(kind="rule", text=r.text("mln"), natural=r.text("mln"),
                                 score=float(r.weight if r.weight is not None and not r.is_hard else 0.0),
                                 direction=int(np.sign(r.weight)) if r.weight is not None and not r.is_hard else 0,
                                 extras={"hard": bool(r.is_hard)})
                 for r in self.model_.rules]
        return Explanation(target="model", target_text="Markov logic network", method="mln", items=items,
                           ordering="given", score_spec=WEIGHT_SCORE)


class FormulaExplainer(Explainer):
    """One of the workflow's explanation methods under its registry name."""

    def __init__(self, name: str) -> None:
        self.name = name  # type: ignore[misc]
        self.title = LEGACY[name]  # type: ignore[misc]
        self.score_spec = SCORES[name]  # type: ignore[misc]
        # LIME and SHAP explain the bag-of-words classifier's probability, not the network's marginal
        self.prediction_column = None if name in ("lime", "shap") else "prediction"  # type: ignore[misc]
        self.settings_fields = {"mln:m-explain": ("top_k",), "lime": ("top_k", "lime_samples"),  # type: ignore[misc]
                                "shap": ("top_k",)}.get(name, ("C", "S", "T", "top_k", "aggregation", "work"))

    def supports(self, model: object) -> str | None:
        if not isinstance(model, MLNEstimator):
            return "explains Markov-logic models only"
        if not model.is_fitted():
            return "the model is not fitted"
        if model.setting_ is None and self.name != "mln:m-explain":
            return "needs an open query predicate with query atoms (only M-Explain works on any atom)"
        if model.setting_ is not None and LEGACY[self.name] not in available_methods(model.setting_):
            return "needs word evidence (a binary predicate from the query's objects to words)"
        return None

    def measure(self, run: Run, data: RelationalDataset | None, explanation: Explanation,
                k: int) -> Measurement | None:
        """Formulas: P(Q) with minus without the ground formula (weight 0); words: the classifier's
        output with minus without the word (`xcore.mln.verify`)."""
        if self.name in ("lime", "shap"):
            return measure_words(run, explanation, k, log_odds=self.name == "shap")
        return measure_formulas(run, explanation, k)

    def explain(self, model: MLNEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        reason = self.supports(model)
        if reason is not None:
            raise XcoreError(f"{self.title}: {reason}")
        if self.name == "mln:m-explain" and model.setting_ is None:
            exps = model.model_.explain_all(top_k=model.settings.top_k)
        else:
            if data is None:
                raise XcoreError(f"{self.title} needs the dataset the model was fitted on")
            one = model.settings.explain_settings()
            one = ExplainSettings(**{**one.__dict__, "methods": (LEGACY[self.name],)})
            exps = run_explainers(model.model_, data, model.setting_, one, progress=progress) \
                .explanations[LEGACY[self.name]]
        if targets is not None:
            exps = ExplanationSet([exps[t] for t in targets if t in exps], method=exps.method, meta=exps.meta)
        return self.finish(exps)


EXPLAINERS: dict[str, Explainer] = {name: FormulaExplainer(name) for name in LEGACY}


def run(dataset: RelationalDataset, settings: MLNSettings, progress: Progress | None = None,
        estimator: MLNEstimator | None = None) -> Run:
    """Fit (learn, ground, infer) or reuse `estimator` (a cached fit of the same model), then explain
    every query with each chosen explainer that applies (I- and R-Explain share their coalitions)."""
    t0 = time.perf_counter()
    est = fitted_for(settings, dataset, scaled(progress, 0.0, 0.3), estimator)
    t1 = time.perf_counter()
    explanations: dict[str, ExplanationSet] = {}
    workflow: ExplainerRun | None = None
    timings = {"fit": t1 - t0}
    if est.setting_ is not None:
        wanted = [e for e in settings.explainers if EXPLAINERS[e].supports(est) is None]
        one = settings.explain_settings()
        one = ExplainSettings(**{**one.__dict__, "methods": tuple(LEGACY[e] for e in wanted)})
        workflow = run_explainers(est.model_, dataset, est.setting_, one, progress=scaled(progress, 0.3, 1.0))
        for label, exps in workflow.explanations.items():
            explanations[NAMES[label]] = EXPLAINERS[NAMES[label]].finish(exps)
        timings.update({f"explain.{NAMES[k]}": v for k, v in workflow.seconds.items()})
    elif "mln:m-explain" in settings.explainers:
        explanations["mln:m-explain"] = explain(est, "mln:m-explain", dataset)
        timings["explain.mln:m-explain"] = time.perf_counter() - t1
    predictions = est.predict()
    if settings.query is not None:
        predictions, explanations = select_query(settings.query, dataset, predictions, explanations)
    from sklearn.metrics import accuracy_score, brier_score_loss

    metrics: dict[str, float] = {}
    labelled = predictions.dropna(subset=["truth"])
    if len(labelled) and set(labelled["truth"].unique()) <= {0.0, 1.0}:
        truth = labelled["truth"].astype(int).to_numpy()
        metrics["accuracy"] = float(accuracy_score(truth, (labelled["prediction"] >= 0.5).astype(int)))
        metrics["brier"] = float(brier_score_loss(truth, labelled["prediction"].clip(0, 1)))
    notes: list[str] = []
    if est.model_.method_ == "gibbs":
        d = est.model_.result_.diagnostics()
        metrics.update({"max_rhat": float(d["max_rhat"]), "max_se": float(d["max_se"]),
                        "rhat_above_1.1": float(d["atoms_above_threshold"]), "converged": float(bool(d["converged"]))})
        frozen = int(np.isinf(est.model_.result_.rhat).sum())
        notes.append(convergence_note(d, est.model_.mln_.n_atoms, frozen))
    return Run(method="mln", settings=settings, fingerprint=dataset.fingerprint(), predictions=predictions,
               explanations=explanations, summary=est.rules_summary(), metrics=metrics, timings=timings,
               dataset=dataset.name, model=est, extras={"workflow": workflow, "setting": est.setting_, "notes": notes})


def convergence_note(d: dict, n_atoms: int, frozen: int = 0) -> str:
    """One sentence on whether the Gibbs chains mixed (split-chain R-hat <= 1.1 for every atom), for
    the command's output and the page: unconverged marginals and importances are not to be trusted."""
    run = f"Gibbs {d['n_chains']} chains x {d['n_samples']:,} samples (burn-in {d['burn_in']:,})"
    if d["converged"]:
        return f"{run}: converged (max R-hat {d['max_rhat']:.3f}, largest Monte Carlo error {d['max_se']:.3f})"
    head = (f"{run}: NOT converged: {d['atoms_above_threshold']:,} of {n_atoms:,} query atoms have R-hat > 1.1 "
            f"(max {d['max_rhat']:.3g}); the marginals and importances are not trustworthy")
    if frozen:  # chains that never moved and disagree: typical of hard clauses under single-site Gibbs
        return (head + f". For {frozen:,} atoms the chains never moved and disagree (hard formulas freeze "
                "single-site Gibbs): more samples will not help; soften the hard formulas or use exact "
                "inference on a smaller domain")
    return head + ": raise n_samples and burn_in"


def select_query(query: str, dataset: RelationalDataset, predictions: pd.DataFrame,
                 explanations: dict[str, ExplanationSet]) -> tuple[pd.DataFrame, dict[str, ExplanationSet]]:
    """The predictions and explanations of the atoms the query selects (`xcore.mln.queries`);
    `ConfigError` when a pattern has the wrong arity or nothing matches."""
    patterns = parse_query(query)
    arity = dataset.predicate(patterns[0].predicate).arity
    bad = next((p for p in patterns if p.args is not None and len(p.args) != arity), None)
    if bad is not None:
        raise ConfigError(f"{bad.predicate} takes {arity} argument(s), the query gives {len(bad.args or ())}",
                          field="query")
    constants = {str(c) for t in dataset.types() for c in dataset.constants(t)}
    keep = matching_atoms(split_atom_texts(predictions["target"].tolist()), patterns, constants)
    if not keep.any():
        raise ConfigError(f"the query {query!r} matches none of the {len(predictions)} query atoms", field="query")
    chosen = predictions["target"][keep].tolist()
    predictions = predictions[keep].reset_index(drop=True)
    picked = {k: ExplanationSet([e[t] for t in chosen if t in e], method=e.method, meta={**e.meta, "query": query})
              for k, e in explanations.items()}
    return predictions, picked


SPEC = MethodSpec(
    key="mln", title="I-Explain — Markov logic", settings_type=MLNSettings, explainers=tuple(LEGACY),
    run=run, applicable=applicable, default_settings=default_settings, sample="reviews_demo",
    page="app_pages/iexplain.py", icon=":material/hub:", estimator_type=MLNEstimator, explainer_map=EXPLAINERS,
    paper="Al Farabi, Sarkhel, Dey & Venugopal, Interpretable Explanations for Probabilistic Inference in "
          "Markov Logic (2021)")
