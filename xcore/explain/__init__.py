"""The shared explanation type (`Explanation`, `ExplanationItem`, `ExplanationSet`) and its metrics.

Every explanation method in xcore returns these, so the dashboard, the metrics and the
figures in `xcore.viz` work the same for ground rules, formulas, feature clauses and feature sets.
Names load on first use (`xcore.lazy`): the types do not import the rank aggregation's scipy.optimize.
"""

from xcore.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "xcore.explain.metrics": ["explainable_at_k", "mean_precision_at_k", "mep_at_k", "precision_at_k"],
    "xcore.explain.types": ["ATOM_ROLES", "EXPLANATION_COLUMNS", "ITEM_COLUMNS", "ITEM_KINDS", "ORDERINGS",
                            "Explanation", "ExplanationError", "ExplanationItem", "ExplanationSet", "ItemKind",
                            "json_safe"],
    "xcore.explain.rank_aggregation": ["Aggregation", "aggregate_objective", "borda", "brute_force_aggregate",
                                       "cemc", "coalition_weights", "footrule_assignment"],
})
