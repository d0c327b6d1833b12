"""LIME on the words: a locally weighted linear model of the bag-of-words classifier (paper baseline)."""

from __future__ import annotations

from xcore.explain.types import ScoreSpec
from xcore.mln.explainers.base import FormulaExplainer


class LimeWords(FormulaExplainer):
    """Explains the bag-of-words classifier's probability, not the network's marginal."""

    name = "mln:lime"
    title = "LIME"
    label = "LIME"
    score_spec = ScoreSpec("LIME coefficient", "the word's coefficient in a locally weighted linear model of the "
                           "bag-of-words classifier's probability.", True, "probability")
    settings_fields = ("top_k", "lime_samples")
    prediction_column = None
