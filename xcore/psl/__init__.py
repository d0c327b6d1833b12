"""Probabilistic Soft Logic: hinge-loss MRFs, MAP inference, and (ESMS) explainable learning."""

from xcore.psl.explain import explanation_frame, explanation_scores, mep_from_frame, mep_scores
from xcore.psl.inference import MAPResult, map_inference
from xcore.psl.model import PPLLCache, PSLModel, dataset_fingerprint, prediction_metrics
from xcore.psl.program import HingeProgram
from xcore.psl.search import (
    DEFAULT_GAMMA_GRID,
    ESMSSearch,
    SearchCache,
    gamma_sweep,
    split_targets,
    three_way_split,
)
from xcore.psl.stability import StabilityReport, relational_stability, stability_table
from xcore.psl.templates import (
    DEFAULT_TEMPLATES,
    CandidateRules,
    MetaTemplate,
    explainable_fraction,
    fill_templates,
    is_alpha_explainable,
    prior_rules,
    rule_key,
    sample_rules,
)

__all__ = [
    "CandidateRules", "DEFAULT_GAMMA_GRID", "DEFAULT_TEMPLATES", "ESMSSearch", "HingeProgram",
    "MAPResult", "MetaTemplate", "PPLLCache", "PSLModel", "SearchCache", "StabilityReport",
    "dataset_fingerprint", "explainable_fraction", "explanation_frame", "explanation_scores",
    "fill_templates", "gamma_sweep", "is_alpha_explainable", "map_inference", "mep_from_frame",
    "mep_scores", "prediction_metrics", "prior_rules", "relational_stability", "rule_key",
    "sample_rules", "split_targets", "stability_table", "three_way_split",
]
