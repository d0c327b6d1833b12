"""The coalitions' ranked formula lists and their plumbing: per-query top-k tables, formula
substitution for borrowed lists, per-coalition sampling budgets, argument checks."""

from __future__ import annotations

import math

import numpy as np

from xcore.errors import XcoreError
from xcore.mln.coalitions import Coalition
from xcore.mln.network import GroundMLN
from xcore.mln.network_index import NetworkIndex

TABLE_KEYS = ("atom", "rank", "clause", "importance", "expected", "expected_given_atom", "lender")


AGGREGATIONS: tuple[str, ...] = ("cemc", "exact_footrule")
"""How the coalition lists are merged: CEMC (the paper's choice) or the exact footrule optimum."""
WORK_MODES: tuple[str, ...] = ("per_coalition", "equal")
"""Sampling work of the coalitions: every coalition gets the Gibbs options as given (the paper: T
times the sweeps of a smaller network), or "equal": all coalitions together make as many atom
updates as one run of those options on the full network (fewer sweeps per coalition)."""
GIBBS_DEFAULTS = {"n_samples": 1000, "burn_in": 200, "n_chains": 4}


def coalition_atom_count(mln: GroundMLN, coalition: Coalition) -> int:
    """Query atoms of the coalition's network (those occurring in its kept clauses)."""
    return int(len(np.unique(mln.S[coalition.clauses].indices)))


def budgeted_options(options: dict | None, sizes: list[int], n_full: int, work: str) -> list[dict]:
    """Per-coalition Gibbs options. "equal": every coalition runs the same number of sweeps, scaled
    by n_full / sum(sizes) (burn-in and kept samples alike), so the total atom updates equal one run
    of `options` on the `n_full`-atom network (up to rounding; at least 1 kept sample)."""
    base = {**GIBBS_DEFAULTS, **(options or {})}
    if work == "per_coalition":
        return [dict(options or {}) for _ in sizes]
    scale = n_full / max(sum(sizes), 1)
    n_s = max(1, int(round(base["n_samples"] * scale)))
    b_in = int(round(base["burn_in"] * scale))
    return [{**(options or {}), "n_samples": n_s, "burn_in": b_in} for _ in sizes]

def check_fraction(name: str, v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v) \
            or not 0 < v <= 1:
        raise XcoreError(f"{name} must be a number in (0, 1], got {v!r}")
    return float(v)


def check_int(name: str, v: object, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise XcoreError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def need_mln(model) -> GroundMLN:
    mln = getattr(model, "mln_", None)
    if mln is None or mln.store is None or mln.program is None:
        raise XcoreError("ground the model first: MLNModel(...).ground(dataset)")
    return mln


def ranked_table(coalition: Coalition, mln: GroundMLN, top_k: int) -> dict[str, np.ndarray]:
    """Per query atom of the coalition, its top-k formulas by |importance| (non-estimable last,
    ties by |weight x importance| as in `xcore.mln.importance.rank_by_importance`, then clause
    index), as arrays sorted by (atom, rank); ``lender`` = -1 (own list)."""
    e = coalition.entries
    atom, clause = mln.entry_atom[e], mln.entry_clause[e]
    score = np.nan_to_num(np.abs(coalition.importance), nan=-1.0)
    effect = np.nan_to_num(np.abs(coalition.importance * mln.weights[clause]), nan=-1.0)
    order = np.lexsort((clause, -effect, -score, atom))
    a = atom[order]
    first = np.ones(len(a), dtype=bool)
    first[1:] = a[1:] != a[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(len(a)), 0))
    rank = np.arange(len(a)) - start
    rows = order[rank < top_k]
    return {"atom": atom[rows], "rank": rank[rank < top_k], "clause": clause[rows],
            "importance": coalition.importance[rows], "expected": coalition.expected[rows],
            "expected_given_atom": coalition.expected_given_atom[rows],
            "lender": np.full(len(rows), -1, dtype=np.int64)}


def substitute_formulas(index: NetworkIndex, clauses: np.ndarray, lenders: np.ndarray,
                        borrowers: np.ndarray) -> np.ndarray:
    """Map each ground formula `clauses[j]` of query atom `lenders[j]` to the ground formula of
    `borrowers[j]` obtained by replacing, in every atom, the lender's embedded-domain arguments by
    the borrower's (argument position by position). -1 where that formula is not a ground formula
    of the borrower in the full folded network. Vectorised (hash lookups)."""
    clauses = np.asarray(clauses, dtype=np.int64)
    lenders, borrowers = np.asarray(lenders, dtype=np.int64), np.asarray(borrowers, dtype=np.int64)
    if not len(clauses):
        return np.zeros(0, dtype=np.int64)
    B = index.bindings[clauses]
    vd = index.var_domain[clauses]
    src, dst = index.atom_args[lenders], index.atom_args[borrowers]
    dom = index.atom_domain[lenders]
    out = B.copy()
    for p in range(src.shape[1]):  # loop over argument positions, not formulas
        hit = vd & dom[:, p, None] & (B == src[:, p, None])
        out = np.where(hit, dst[:, p, None], out)
    mapped = index.clause_lookup(index.mln.rule[clauses], out)
    ok = mapped >= 0
    ok[ok] = index.entry_lookup(mapped[ok], borrowers[ok]) >= 0
    return np.where(ok, mapped, -1)




def weighted_mean(values: np.ndarray, weights: np.ndarray) -> float:
    """Weighted mean; equal weights when the weights sum to 0; 0.0 for no values."""
    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return 0.0
    w = np.asarray(weights, dtype=np.float64)
    if w.sum() <= 0:
        w = np.ones(len(values))
    return float(np.dot(values, w) / w.sum())


