"""What the classifier's explanations are called and what their scores mean, and when a set of features
decides a row (the ω(POS) interval of its sub-query lies on one side of 0.5)."""

from __future__ import annotations

from xcore.explain.types import ExplanationItem, ScoreSpec

DECISIVE = "plkb:decisive"
SHAPLEY = "plkb:shapley"
MODEL_SHAP = "plkb:your-model-shap"
UNDECIDED_TOL = 1e-6
"""An interval within this of [0, 1] decides nothing."""

DECISIVE_SCORE = ScoreSpec(
    label="ω(POS) midpoint − 0.5",
    measures="how far this set of the row's features alone decides the prediction: the midpoint of the LP's "
             "probability interval for POS when only these features are known, minus the undecided 0.5 "
             "(±0.5: decides it outright; 0: decides nothing); the first item is the set that decides the "
             "prediction most firmly on the predicted side.",
    signed=True, unit="probability")

SHAPLEY_SCORE = ScoreSpec(
    label="Shapley value φ",
    measures="the feature's average marginal change of the ω(POS) midpoint over coalitions of known "
             "features (exact up to 12 features, else sampled permutations).",
    signed=True, unit="probability")

MODEL_SHAP_SCORE = ScoreSpec(
    label="Shapley value φ of your model",
    measures="the feature's average marginal change of your model's probability of its positive class over "
             "coalitions of known features, the others drawn from 50 background rows (interventional; exact up to "
             "12 features), computed on your ONNX model with onnxruntime.",
    signed=True, unit="probability")

CLAUSE_SCORE = ScoreSpec(label="clause probability",
                         measures="the probability the knowledge base gives the clause.", signed=False,
                         unit="probability", directed=False)


def undecided_note(items: list[ExplanationItem], k: int) -> dict[str, object]:
    """A note when no k-feature set decides the row (the best sub-query leaves ω(POS) anywhere in [0, 1])."""
    if items and items[0].extras.get("omega_lo", 1.0) <= UNDECIDED_TOL \
            and items[0].extras.get("omega_hi", 0.0) >= 1.0 - UNDECIDED_TOL:
        return {"undecided": True, "note": f"No set of {k} features decides this prediction: every {k}-feature "
                                           "sub-query leaves ω(POS) anywhere in [0, 1]. Try a larger k."}
    return {}


def decides(items: list[ExplanationItem]) -> bool:
    """True when the best set's ω(POS) interval lies on one side of 0.5: those features alone decide."""
    if not items:
        return False
    lo, hi = items[0].extras.get("omega_lo", 0.0), items[0].extras.get("omega_hi", 1.0)
    return bool(lo >= 0.5 or hi <= 0.5) and not (lo <= UNDECIDED_TOL and hi >= 1.0 - UNDECIDED_TOL)
