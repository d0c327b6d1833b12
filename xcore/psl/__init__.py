"""Probabilistic Soft Logic, the engine: hinge-loss MRFs, MAP inference, weight learning, PSL projects.

The ESMS method that learns explainable PSL models lives in `xcore.esms` and imports this engine; the
engine never imports it. Names load on first use (`xcore.lazy`): ``import xcore.psl`` imports no
numerical library, so the command ``python -m xcore.psl`` pays only for the modules it runs.
"""

from xcore.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "xcore.psl.explain": ["explanation_frame", "explanation_scores", "mep_from_frame", "mep_scores"],
    "xcore.psl.explainable_rules": ["explainable_fraction", "is_alpha_explainable"],
    "xcore.psl.inference": ["map_inference"],
    "xcore.psl.map_problem": ["MAPResult"],
    "xcore.psl.data_keys": ["PPLLCache", "dataset_fingerprint"],
    "xcore.psl.model": ["PSLModel"],
    "xcore.psl.scores": ["prediction_metrics"],
    "xcore.psl.program": ["HingeProgram"],
    "xcore.psl.weight_learning": ["LearningResult", "learn_weights"],
})
