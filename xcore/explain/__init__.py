"""The shared explanation type (`Explanation`, `ExplanationItem`, `ExplanationSet`) and its metrics.

Every explanation method in xcore returns these, so the dashboard, the metrics and the
figures in `xcore.viz` work the same for ground rules, formulas, feature clauses and feature sets.
"""

from xcore.explain.metrics import (
    explainable_at_k,
    mean_precision_at_k,
    mep_at_k,
    precision_at_k,
)
from xcore.explain.types import (
    ATOM_ROLES,
    EXPLANATION_COLUMNS,
    ITEM_COLUMNS,
    ITEM_KINDS,
    ORDERINGS,
    Explanation,
    ExplanationError,
    ExplanationItem,
    ExplanationSet,
    ItemKind,
    json_safe,
)

__all__ = [
    "ATOM_ROLES", "EXPLANATION_COLUMNS", "ITEM_COLUMNS", "ITEM_KINDS", "ORDERINGS",
    "Explanation", "ExplanationError", "ExplanationItem", "ExplanationSet", "ItemKind",
    "explainable_at_k", "json_safe", "mean_precision_at_k", "mep_at_k", "precision_at_k",
]

from xcore.explain.rank_aggregation import (  # noqa: E402  (weighted top-k rank aggregation)
    Aggregation,
    aggregate_objective,
    borda,
    brute_force_aggregate,
    cemc,
    coalition_weights,
    footrule_assignment,
)

__all__ += [
    "Aggregation", "aggregate_objective", "borda", "brute_force_aggregate", "cemc",
    "coalition_weights", "footrule_assignment",
]
