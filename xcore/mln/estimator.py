"""`MLNEstimator`: Markov logic as an estimator — learn the weights (optionally) from the labelled
query atoms, then ground the rules on any data of the schema and infer its query atoms' marginals."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xcore.data import splits
from xcore.data.dataset import RelationalDataset
from xcore.errors import ConfigError, XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ScoreSpec
from xcore.methods.base import Estimator, prediction_frame
from xcore.mln.learning import learn_weights
from xcore.mln.model import MLNModel, read_rules
from xcore.mln.settings import EXACT_LIMIT, MLNSettings
from xcore.mln.targets import declared_query, n_query_atoms, text_setting
from xcore.mln.workflow import TextSetting, starting_rules
from xcore.runtime import Progress, scaled

if TYPE_CHECKING:  # the workflow's run object, only named in annotations here
    from xcore.mln.workflow import ExplainerRun

WEIGHT_SCORE = ScoreSpec("weight", "the formula's Markov-logic weight (log-odds of a world where it holds).",
                         True, "log-odds")


class MLNEstimator(Estimator):
    """Learns weights (optional), grounds the rules on the data and infers every query's marginal.

    Parameters
    ----------
    settings : MLNSettings
        Rules, weight learning, inference options and the explainers' knobs.

    Attributes
    ----------
    rules_text_ : str
        The rules as fitted: the settings' rules (or the data's starting rules) with learned weights.
    setting_ : TextSetting or None
        The query predicate's text setting (object type, word and link predicates) on the fitted
        data; None when the data has no open query predicate for I-/R-Explain.
    model_ : MLNModel
        The rules grounded on the fitted data with its inference run (what the explainers explain).
    data_ : RelationalDataset
        The data the model is grounded on (the held-out part in the method's run).
    notes_ : list of str
        Sentences for the user about the inference (whether the Gibbs chains converged).
    split_sizes_ : tuple of int
        (training, held-out) labelled query atoms of the method's run; (all, 0) without a held-out part.
    explainer_run_ : ExplainerRun or None
        The explanation workflow of the method's run (coalitions, classifier, timings); set on the
        run's own copy of the estimator by `xcore.mln.runs.run`, None after a bare `fit`.
    """

    def __init__(self, settings: MLNSettings) -> None:
        self.settings = settings

    def _checked_target(self, data: RelationalDataset) -> str | None:
        """The settings' query predicate; a `ConfigError` naming the field when `data` has no such predicate."""
        s = self.settings
        target = s.query_target()
        if target is not None and target not in data.schema.names:
            raise ConfigError(f"no predicate {target!r} in {data.name!r} (predicates: "
                              f"{', '.join(data.schema.names)})", field="query" if s.query else "target")
        return target

    def split_predicates(self, data: RelationalDataset) -> list[str] | None:
        """The query predicate whose labelled atoms a held-out split divides (the one the run explains)."""
        target = self._checked_target(data)
        if target is None:
            setting = text_setting(data, None)
            target = setting.target if setting is not None else declared_query(data)
        return [target] if target else None

    def units(self, data: RelationalDataset) -> pd.DataFrame:
        """The labelled query atoms a held-out split divides (none when the query predicate has no truth:
        a program's query atoms)."""
        predicates = self.split_predicates(data)
        if predicates and not any(len(data.table(p, "truth")) for p in predicates):
            return pd.DataFrame(columns=list(splits.UNIT_COLUMNS))  # `splits.units` needs one labelled atom
        return splits.units(data, predicates)

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "MLNEstimator":
        """Learn the weights from `data`'s labelled query atoms (``learn`` != none), then ground and infer on it."""
        s = self.settings
        report = scaled(progress, 0.0, 1.0)
        target = self._checked_target(data)
        setting = text_setting(data, target)
        rules = s.rules.strip() or starting_rules(data, setting).strip()
        if not rules:
            raise XcoreError(f"no rules to run on {data.name!r}: write weighted clauses such as "
                             "`1.5 smokes(x) => cancer(x)`")
        if s.learn != "none":
            report(0.05, "learning weights by pseudo-likelihood")
            learned = learn_weights(rules, data, method=s.learn,
                                    target=setting.target if setting is not None else "positive",
                                    word_predicate=(setting.word_predicate if setting is not None else None)
                                    or "has_word")
            rules = "\n".join(r.text("mln") for r in learned) + "\n"
        parsed, program = read_rules(rules)
        if not parsed and not (program is not None and program.formulas):
            raise XcoreError("the rules contain no clause (only comments or blank lines): inference without "
                             "rules would only report 0.5 everywhere")
        self.rules_text_ = rules
        self._infer_on(data, setting, scaled(report, 0.3, 1.0))
        report(1.0, "inferred")
        return self

    def _infer_on(self, data: RelationalDataset, setting: TextSetting | None, progress: Progress | None) -> None:
        """Ground `rules_text_` on `data` and run the settings' inference (exact when ``auto`` and it fits)."""
        s = self.settings
        method = s.inference if s.inference != "auto" else ("exact" if n_query_atoms(data) <= EXACT_LIMIT else "gibbs")
        if method == "gibbs":  # sampling: by the sampler setting ("sample": decided on the grounded network)
            method = "sample" if s.sampler == "auto" else s.sampler
        if progress is not None:
            progress(0.0, f"grounding and {'sampling' if method == 'sample' else method} inference")
        options = {} if method == "exact" else {"n_samples": s.n_samples, "burn_in": s.burn_in,
                                                "n_chains": s.n_chains, "seed": s.seed}
        self.setting_: TextSetting | None = setting
        self.data_: RelationalDataset = data
        self.model_: MLNModel = MLNModel(self.rules_text_).ground(data).infer(
            method, progress=progress if method != "exact" else None, **options)
        self.notes_: list[str] = [convergence_note(self.model_)] if self.model_.method_ != "exact" else []
        self.explainer_run_: ExplainerRun | None = None
        self.split_sizes_: tuple[int, int] = getattr(self, "split_sizes_", (0, 0))

    def ground_on(self, data: RelationalDataset, progress: Progress | None = None) -> "MLNEstimator":
        """A copy of this fitted model (its rules and weights) grounded on `data` with inference run on
        it: new data's query atoms inferred from its evidence, its truth never read."""
        self.check_fitted()
        other = MLNEstimator(self.settings)
        other.rules_text_ = self.rules_text_
        target = self.setting_.target if self.setting_ is not None else self.settings.query_target()
        other._infer_on(data, text_setting(data, target), progress)
        return other

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """Every query atom (of the target predicate when there is one): marginal, truth, se, rhat;
        with `data`, those of `data` inferred from its evidence by the fitted rules."""
        self.check_fitted()
        est = self if data is None else self.ground_on(data)
        m = est.model_.marginals()
        query = est.setting_.target if est.setting_ is not None else self.settings.query_target()
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


def convergence_note(model: MLNModel) -> str:
    """One sentence on whether the sampler's chains mixed (split-chain R-hat <= 1.1 for every atom), for
    the command's output and the page: unconverged marginals and importances are not to be trusted."""
    d = model.result_.diagnostics()
    frozen = int(np.isinf(model.result_.rhat).sum())
    mcsat = d.get("sampler") == "mcsat"
    run = f"{'MC-SAT' if mcsat else 'Gibbs'} {d['n_chains']} chains x {d['n_samples']:,} samples (burn-in {d['burn_in']:,})"
    if d["converged"]:
        return f"{run}: converged (max R-hat {d['max_rhat']:.3f}, largest Monte Carlo error {d['max_se']:.3f})"
    head = (f"{run}: NOT converged: {d['atoms_above_threshold']:,} of {model.mln_.n_atoms:,} query atoms have "
            f"R-hat > 1.1 (max {d['max_rhat']:.3g}); the marginals and importances are not trustworthy")
    if frozen and mcsat and d.get("hard_violated_at_start", 0):  # rc1000: the hard clauses contradict the evidence
        return (head + f". For {frozen:,} atoms the chains never moved and disagree: no world found satisfies every "
                f"hard formula ({d['hard_violated_at_start']:,} hard ground clauses violated at the start), so the "
                "mass sits on the worlds violating the fewest and each chain stays in the local optimum it starts "
                "in; check the hard formulas against the evidence")
    if frozen and mcsat:  # MC-SAT moves inside hard clauses; what still freezes is heavy soft weight on a block
        return (head + f". For {frozen:,} atoms the chains never moved and disagree: a group of atoms tied by hard "
                "formulas whose soft weights add up to a steep barrier (MC-SAT leaves it with probability about "
                "exp(-total weight)); more samples help only slowly")
    if frozen:  # chains that never moved and disagree: typical of hard clauses under single-site Gibbs
        return (head + f". For {frozen:,} atoms the chains never moved and disagree (hard formulas freeze "
                "single-site Gibbs): more samples will not help; use sampler='mcsat', soften the hard "
                "formulas or use exact inference on a smaller domain")
    return head + ": raise n_samples and burn_in"
