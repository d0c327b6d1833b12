"""DRM's explainers, one per module: maximal-fidelity clauses and their structured alternatives."""

from xcore.drm.explainers.fidelity import FIDELITY, FIDELITY_SCORE, FidelityExplainer
from xcore.drm.explainers.structured import STRUCTURED, StructuredExplainer

__all__ = ["FIDELITY", "FIDELITY_SCORE", "STRUCTURED", "FidelityExplainer", "StructuredExplainer"]
