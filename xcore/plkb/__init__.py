"""Probabilistic-logic KB classifier (Fan, Liu, Henderson, "Explainable AI for Classification
using Probabilistic Logic Inference"): learn clauses ``p: POS | ~a_v | ...`` from a table (ID3
Tree KB or Direct KB, plus domain knowledge), answer a query by the LP interval of omega(POS),
and explain with the k most decisive features and Shapley values over partial queries.

Algorithm: `literals` (Domain, atoms, queries), `kb` / `kbtext` (KB and its text format), `tree`,
`direct` (learners), `lp_matrix` (the LP matrices, presolved), `lp` (HiGHS fast path), `lp_pulp`
(readable pulp model, .lp/.mps), `inference` (Reasoner: scope and solver, cache), `explain` (decisive
features, Shapley), `classifier` (PLKBClassifier), `discretize`, `experiments`, `shap_compare`
(optional `shap`). Registered method: `settings`, `estimator`, `explainers/`, `runs` (the held-out
run), `method` (the spec), `tables`, `scores`, `verify`.
"""

from xcore.plkb.classifier import PLKBClassifier, PLKBExplanation, choose_positive_class
from xcore.plkb.direct import direct_kb
from xcore.plkb.discretize import Discretizer
from xcore.plkb.explain import (
    SCORE_TOL,
    DecisiveResult,
    ShapleyResult,
    decisive_features,
    explanation_accuracy,
    shapley_values,
    tie_order,
    top_k,
    topk_agreement,
)
from xcore.plkb.inference import Reasoner
from xcore.plkb.kb import KB, Clause, parse_kb
from xcore.plkb.kbtext import parse_clauses, write_kb
from xcore.plkb.literals import ABSENT, POS, UNSEEN, Domain, Lit
from xcore.plkb.lp import TIE_TOL, HighsLP, Interval
from xcore.plkb.lp_matrix import build_lp
from xcore.plkb.tree import forest_kb, id3, tree_kb

__all__ = [
    "ABSENT", "KB", "POS", "SCORE_TOL", "TIE_TOL", "UNSEEN", "Clause", "DecisiveResult", "Discretizer", "Domain",
    "HighsLP", "Interval", "Lit", "PLKBClassifier", "PLKBExplanation", "Reasoner", "ShapleyResult",
    "build_lp", "choose_positive_class", "decisive_features", "direct_kb",
    "explanation_accuracy", "forest_kb", "id3", "parse_clauses", "parse_kb",
    "shapley_values", "tie_order", "top_k", "topk_agreement", "tree_kb", "write_kb",
]
