"""M-Explain: formula importance I(f, Q) on the whole ground network."""

from __future__ import annotations

from xcore.explain.types import ScoreSpec
from xcore.mln.explainers.base import IMPORTANCE, IMPORTANCE_MEANING, FormulaExplainer


class MExplain(FormulaExplainer):
    """Ranks each query's ground formulas by I(f, Q) from one inference run on the full network."""

    name = "mln:m-explain"
    title = "M-Explain"
    label = "M-Explain"
    score_spec = ScoreSpec(IMPORTANCE, IMPORTANCE_MEANING + ", on the whole ground network.", False,
                           "log-probability per unit weight")
    settings_fields = ("top_k",)
