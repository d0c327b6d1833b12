"""Registry names of the Markov-logic explainers, their titles, and the old names files may still hold.

Names are stored in run bundles, study files and settings; ``lime`` and ``shap`` were renamed
``mln:lime`` and ``mln:shap`` (every explainer name carries its method's prefix), so settings read
either (`canonical_explainer`)."""

from __future__ import annotations

LEGACY: dict[str, str] = {"mln:m-explain": "M-Explain", "mln:i-explain": "I-Explain", "mln:r-explain": "R-Explain",
                          "mln:lime": "LIME", "mln:shap": "SHAP"}
"""Registry name -> the workflow's method label (also the explainer's title)."""
NAMES: dict[str, str] = {v: k for k, v in LEGACY.items()}
"""The workflow's method label -> registry name."""
ALIASES: dict[str, str] = {"lime": "mln:lime", "shap": "mln:shap"}
"""Old registry names (bundles and studies written before the rename) -> today's."""
WORD_EXPLAINERS: tuple[str, ...] = ("mln:lime", "mln:shap")
"""The bag-of-words baselines: they explain a classifier of the words, not the network's marginal."""


def canonical_explainer(name: str) -> str:
    """Today's registry name of `name` (an old name is mapped; others are returned as given)."""
    return ALIASES.get(name, name)
