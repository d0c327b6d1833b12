"""The classifier's explainers, one per module: the decisive features (the paper's explanation), Shapley
values of the KB classifier, and Shapley values of the user's own model."""

from xcore.methods.base import Explainer
from xcore.plkb.explainers.decisive import DecisiveExplainer
from xcore.plkb.explainers.shapley import ShapleyExplainer
from xcore.plkb.explainers.your_model_shap import YourModelShapExplainer

EXPLAINERS: dict[str, Explainer] = {DecisiveExplainer.name: DecisiveExplainer(), ShapleyExplainer.name: ShapleyExplainer(),
              YourModelShapExplainer.name: YourModelShapExplainer()}
"""The registered explainers by name (the spec's `explainer_map`)."""

__all__ = ["EXPLAINERS", "DecisiveExplainer", "ShapleyExplainer", "YourModelShapExplainer"]
