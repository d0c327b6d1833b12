"""R-Explain: formula importance averaged over random coalitions (the paper's baseline)."""

from __future__ import annotations

from xcore.explain.types import ScoreSpec
from xcore.mln.explainers.base import IMPORTANCE, IMPORTANCE_MEANING, FormulaExplainer


class RExplain(FormulaExplainer):
    """Ranks each query's formulas over coalitions of random ground formulas sized like I-Explain's."""

    name = "mln:r-explain"
    title = "R-Explain"
    label = "R-Explain"
    score_spec = ScoreSpec(IMPORTANCE, IMPORTANCE_MEANING + ", averaged over random coalitions of objects "
                           "(ranked by weighted rank aggregation).", False, "log-probability per unit weight")
    settings_fields = ("C", "S", "T", "top_k", "aggregation", "work")
