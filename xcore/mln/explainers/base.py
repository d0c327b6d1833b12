"""`FormulaExplainer`: what the Markov-logic explainers share — support checks, the workflow call,
verification by intervention. Each explainer is a subclass in its own module."""

from __future__ import annotations

from typing import ClassVar

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationSet
from xcore.methods.base import Explainer, Measurement, Run
from xcore.mln.estimator import MLNEstimator
from xcore.mln.explainer_names import WORD_EXPLAINERS
from xcore.mln.verify import measure_formulas, measure_words
from xcore.mln.workflow import available_methods, run_explainers
from xcore.runtime import Progress

IMPORTANCE = "I(f, Q)"
IMPORTANCE_MEANING = ("E_Q[n_f] − E[n_f] = ∂ log P(Q | E) / ∂ w_f: how much raising the formula's weight would raise "
                      "the query's log-probability (its size ranks the formulas; which way a formula pushes the "
                      "query at its weight is its weight's sign times the sign of the query's literal in it)")

class FormulaExplainer(Explainer):
    """One of the workflow's explanation methods (`label`) under its registry name."""

    label: ClassVar[str] = ""
    """The workflow's method label (`xcore.mln.workflow.METHODS`)."""

    def supports(self, model: object) -> str | None:
        if not isinstance(model, MLNEstimator):
            return "explains Markov-logic models only"
        if not model.is_fitted():
            return "the model is not fitted"
        if model.setting_ is None and self.name != "mln:m-explain":
            return "needs an open query predicate with query atoms (only M-Explain works on any atom)"
        if model.setting_ is not None and self.label not in available_methods(model.setting_):
            return "needs word evidence (a binary predicate from the query's objects to words)"
        return None

    def measure(self, run: Run, data: RelationalDataset | None, explanation: Explanation,
                k: int) -> Measurement | None:
        """Formulas: P(Q) with minus without the ground formula (weight 0); words: the classifier's
        output with minus without the word (`xcore.mln.verify`)."""
        if self.name in WORD_EXPLAINERS:
            return measure_words(run, explanation, k, log_odds=self.name == "mln:shap")
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
            one = model.settings.explain_settings((self.name,))
            exps = run_explainers(model.model_, data, model.setting_, one, progress=progress).explanations[self.label]
        if targets is not None:
            exps = ExplanationSet([exps[t] for t in targets if t in exps], method=exps.method, meta=exps.meta)
        return self.finish(exps)
