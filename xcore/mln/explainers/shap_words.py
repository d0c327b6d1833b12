"""SHAP on the words: Shapley values of the bag-of-words classifier's log-odds (paper baseline)."""

from __future__ import annotations

from xcore.explain.types import ScoreSpec
from xcore.mln.explainers.base import FormulaExplainer


class ShapWords(FormulaExplainer):
    """Explains the bag-of-words classifier's log-odds (exact for the linear model), not the network's marginal."""

    name = "mln:shap"
    title = "SHAP"
    label = "SHAP"
    score_spec = ScoreSpec("SHAP value", "the word's Shapley value for the bag-of-words classifier's log-odds "
                           "(exact for the linear model).", True, "log-odds")
    settings_fields = ("top_k",)
    prediction_column = None
