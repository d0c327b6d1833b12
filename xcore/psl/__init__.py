"""Probabilistic Soft Logic: hinge-loss MRFs, MAP inference, and (ESMS) explainable learning.

Names load on first use (`xcore.lazy`): ``import xcore.psl`` imports no numerical library, so the
command ``python -m xcore.psl`` pays only for the modules it runs.
"""

from xcore.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "xcore.psl.explain": ["explanation_frame", "explanation_scores", "mep_from_frame", "mep_scores"],
    "xcore.psl.inference": ["map_inference"],
    "xcore.psl.map_problem": ["MAPResult"],
    "xcore.psl.data_keys": ["PPLLCache", "dataset_fingerprint"],
    "xcore.psl.model": ["PSLModel"],
    "xcore.psl.rule_preparation": ["SearchCache"],
    "xcore.psl.scores": ["prediction_metrics"],
    "xcore.psl.program": ["HingeProgram"],
    "xcore.psl.search": ["DEFAULT_GAMMA_GRID", "ESMSSearch", "gamma_sweep"],
    "xcore.psl.stability": ["StabilityReport", "relational_stability", "stability_table"],
    "xcore.psl.validation_split": ["split_targets", "three_way_split"],
    "xcore.psl.templates": ["DEFAULT_TEMPLATES", "CandidateRules", "MetaTemplate", "explainable_fraction",
                            "fill_templates", "is_alpha_explainable", "prior_rules", "rule_key", "sample_rules"],
    "xcore.psl.weight_learning": ["LearningResult", "learn_weights"],
})
