"""Markov logic: ground networks with evidence folded in, vectorised Gibbs sampling, exact
enumeration for small networks, weight learning, and explanations of inference — M-Explain
(formula importance), I-Explain (embedding coalitions merged by CEMC), R-Explain, and the LIME /
SHAP word baselines — with the planted review data and metrics to judge them."""

from xcore.mln.embeddings import ObjectEmbedding, embed_objects
from xcore.mln.evaluation import (
    AccuracyCurve,
    accuracy_curve,
    explanation_precision,
    formula_kind,
    item_log_odds,
    precision_table,
)
from xcore.mln.exact import ExactResult, exact, log_prob
from xcore.mln.gibbs import GibbsResult, gibbs
from xcore.mln.iexplain import IExplainer
from xcore.mln.importance import explain_atom, importance, importance_frame, importance_se
from xcore.mln.learning import learn_weights, pseudo_log_likelihood
from xcore.mln.model import MLNModel
from xcore.mln.naive_gibbs import naive_gibbs
from xcore.mln.network import GroundMLN, build_ground_mln, colour_classes
from xcore.mln.reviews import review_rules
from xcore.mln.rexplain import RExplainer
from xcore.mln.run_evaluation import evaluation_table, sweep_coalitions
from xcore.mln.word_baselines import (
    BagOfWordsClassifier,
    lime_explain,
    lime_explain_all,
    shap_explain,
    shap_explain_all,
    shap_values,
)
from xcore.mln.workflow import ExplainerRun, ExplainSettings, TextSetting, detect_setting, run_explainers

__all__ = [
    "AccuracyCurve", "BagOfWordsClassifier", "ExactResult", "ExplainSettings", "ExplainerRun", "GibbsResult",
    "GroundMLN", "IExplainer", "MLNModel", "ObjectEmbedding", "RExplainer",
    "TextSetting", "accuracy_curve", "build_ground_mln", "colour_classes", "detect_setting", "embed_objects",
    "evaluation_table", "exact", "explain_atom", "explanation_precision", "formula_kind", "gibbs", "importance", "importance_frame", "importance_se", "item_log_odds", "learn_weights",
    "lime_explain", "lime_explain_all", "log_prob", "naive_gibbs", "precision_table",
    "pseudo_log_likelihood", "review_rules", "run_explainers", "shap_explain", "shap_explain_all", "shap_values",
    "sweep_coalitions",
]
