"""I-Explain: formula importance averaged over coalitions of similar objects (Al Farabi et al. 2021)."""

from __future__ import annotations

from xcore.explain.types import ScoreSpec
from xcore.mln.explainers.base import IMPORTANCE, IMPORTANCE_MEANING, FormulaExplainer


class IExplain(FormulaExplainer):
    """Ranks each query's formulas over embedding coalitions merged by weighted rank aggregation."""

    name = "mln:i-explain"
    title = "I-Explain"
    label = "I-Explain"
    score_spec = ScoreSpec(IMPORTANCE, IMPORTANCE_MEANING + ", averaged over coalitions of similar objects "
                           "(ranked by weighted rank aggregation).", False, "log-probability per unit weight")
    settings_fields = ("C", "S", "T", "top_k", "aggregation", "work")
