"""Formula importance for Markov logic (M-Explain) and its `Explanation` objects.

For a ground formula (clause) f containing query atom Q,
``I(f, Q) = E_Q[n_f] - E[n_f]``: the expected truth of f given Q true minus its expected truth,
both under P(. | evidence). By Proposition 1, ``I(f, Q) = d log P(Q | E) / d w_f``. With
``E_Q[n_f] = E[n_f x_Q] / P(Q)`` all three expectations come from one set of samples (a ratio
estimator) or from exact enumeration. The Monte Carlo error uses batch means of the linearised
ratio (delta method). Gibbs results carry Rao-Blackwellised sums (the sampler's own conditionals
P(Q | rest) and each clause's truth with Q set either way), so the estimate
``I = E[n_f x_Q] (1 - P(Q)) / P(Q) - E[n_f (1 - x_Q)]`` stays informative when every sample had Q
true (or false): a plain sampled P(Q) of exactly 1 would make every I(f, Q) 0 and the ranking fall
back to clause order. Only when P(Q | rest) itself is 0, I(f, Q) is not estimable: it is
reported as NaN in tables and as score 0 with ``extras["estimable"] = False`` in explanations.
An explanation of Q ranks the ground formulas containing Q by importance (|I| descending; ties,
e.g. all the unit clauses Q folds into, broken by |w_f I(f, Q)|, see `rank_by_importance`).
Ground formulas already satisfied by the evidence are constant (I = 0) and not listed.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pandas as pd

from xcore.explain.types import Explanation, ExplanationItem
from xcore.logic.atom_text import ground_rule_texts
from xcore.mln.gibbs import GibbsResult
from xcore.mln.network import GroundMLN


class Expectations(Protocol):
    """Anything with the three expectation arrays (`GibbsResult`, `ExactResult`)."""

    marginals: np.ndarray
    clause_means: np.ndarray
    entry_means: np.ndarray


def conditional_expectations(mln: GroundMLN, result: Expectations) -> tuple[np.ndarray, np.ndarray]:
    """(E_Q[n_f], E[n_f]) per literal (clause f, query atom Q) in CSR order: Rao-Blackwellised when
    the result has the sums (Gibbs), else the plain ratio estimator (exact results are exact)."""
    rb = getattr(result, "rao_blackwell", None)
    if rb is not None:
        p1 = rb["p1"][mln.entry_atom]
        with np.errstate(divide="ignore", invalid="ignore"):
            cond = np.where(p1 > 0, rb["a"] / p1, np.nan)
        return cond, rb["a"] + rb["b"]
    p = np.asarray(result.marginals)[mln.entry_atom]
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(p > 0, np.asarray(result.entry_means) / p, np.nan)
    return cond, np.asarray(result.clause_means)[mln.entry_clause]


def importance(mln: GroundMLN, result: Expectations) -> np.ndarray:
    """(nnz,) I(c, q) for every literal (clause c, query atom q) in CSR order; NaN where P(q) = 0."""
    rb = getattr(result, "rao_blackwell", None)
    if rb is not None:  # a (1 - P) / P - b keeps full precision when P is close to 1
        p1, p0 = rb["p1"][mln.entry_atom], rb["p0"][mln.entry_atom]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(p1 > 0, rb["a"] * p0 / p1 - rb["b"], np.nan)
    cond, expected = conditional_expectations(mln, result)
    return cond - expected


def importance_se(mln: GroundMLN, result: GibbsResult) -> np.ndarray:
    """(nnz,) Monte Carlo standard error of `importance` from batch means (delta method)."""
    ec, ea = mln.entry_clause, mln.entry_atom
    p = result.marginals[ea]
    a = result.entry_means
    bm_p = result.batch_means(result.atom_counts.sum(axis=2))[:, ea]  # batches pooled over chains
    bm_a = result.batch_means(result.entry_counts)
    bm_m = result.batch_means(result.clause_counts)[:, ec]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (bm_a - (a / p) * bm_p) / p - bm_m
        k = z.shape[0]
        se = z.std(axis=0, ddof=1) / np.sqrt(k) if k > 1 else np.full(z.shape[1], np.nan)
    return np.where(p > 0, se, np.nan)


def importance_frame(mln: GroundMLN, result: Expectations) -> pd.DataFrame:
    """One row per (query atom, ground formula containing it): atom, clause, rule, sign, weight,
    E[n_f], E_Q[n_f], importance and (for Gibbs results) its standard error."""
    imp = importance(mln, result)
    ec, ea = mln.entry_clause, mln.entry_atom
    cond, expected = conditional_expectations(mln, result)
    frame = pd.DataFrame({
        "atom": ea, "clause": ec, "rule": mln.rule[ec], "sign": mln.entry_sign.astype(np.int8),
        "weight": mln.weights[ec], "hard": mln.hard[ec],
        "expected": expected, "expected_given_atom": cond, "importance": imp,
    })
    frame["se"] = importance_se(mln, result) if isinstance(result, GibbsResult) else 0.0
    return frame


class FormulaTexts:
    """Canonical and natural text, atom texts, roles and observed flags of the network's clauses
    (computed per rule, vectorised, on first use)."""

    def __init__(self, mln: GroundMLN) -> None:
        self.mln = mln
        self._cache: dict[int, dict[str, object]] = {}

    def rule_texts(self, rule: int) -> dict[str, object]:
        """Canonical and natural texts of every ground clause of lifted `rule` (cached per rule)."""
        if rule not in self._cache:
            sel = np.flatnonzero(self.mln.rule == rule)
            g = self.mln.program[int(rule)]
            t = ground_rule_texts(g, self.mln.store, self.mln.ground_row[sel])
            t["clauses"] = sel
            self._cache[rule] = t
        return self._cache[rule]

    def clause(self, c: int) -> dict[str, object]:
        """Texts of one clause: text, natural, atoms (list), atom_ids, observed, roles, rule."""
        r = int(self.mln.rule[c])
        t = self.rule_texts(r)
        i = int(np.searchsorted(t["clauses"], c))  # type: ignore[arg-type]
        g = self.mln.program[r]
        roles = ["body"] * len(g.rule.body) + ["head"] * len(g.rule.head)
        return {"text": str(t["text"][i]), "natural": str(t["natural"][i]),  # type: ignore[index]
                "atoms": [str(a) for a in t["atoms"][i]], "atom_ids": np.asarray(t["atom_ids"][i]),  # type: ignore[index]
                "observed": [bool(o) for o in t["observed"][i]], "roles": roles,  # type: ignore[index]
                "rule": g.rule.text("mln")}


def formula_direction(weight: float, sign: int) -> int:
    """Which way a ground formula pushes P(Q): sign(w_f) x the sign of Q's literal in it.

    Exact, not a heuristic: with Q's literal positive, I(f, Q) = 1 - E[n_f] >= 0 at every weight, so
    P(Q) rises monotonically in w_f and P(Q | w_f) - P(Q | 0) has the sign of w_f (a negative literal
    flips it). I(f, Q) itself has the literal's sign whatever the weight: it says what *raising* the
    weight would do, not which way the formula pushes at its weight.
    """
    return int(np.sign(float(weight)) * np.sign(int(sign)))


def rank_by_importance(importance: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Order of formulas by |I(f, Q)| descending (non-estimable last); ties broken by |w_f I(f, Q)|,
    the formula's first-order effect on log P(Q), then by position.

    Why the tie-break: a formula whose other literals are all fixed by evidence folds into the unit
    clause of Q itself (e.g. ``has_word(r, 'great') => positive(r)`` with the word observed), so
    I(f, Q) = 1 - P(Q) for every such formula of Q whatever its weight; among them the weight is
    what tells a strong word from a neutral one.
    """
    imp = np.asarray(importance, dtype=np.float64)
    primary = np.nan_to_num(np.abs(imp), nan=-1.0)
    secondary = np.nan_to_num(np.abs(imp * np.asarray(weight, dtype=np.float64)), nan=-1.0)
    return np.lexsort((np.arange(len(imp)), -secondary, -primary))


def explain_atom(mln: GroundMLN, result: Expectations, atom: int, *, method: str = "M-Explain",
                 top_k: int | None = None, texts: FormulaTexts | None = None,
                 frame: pd.DataFrame | None = None) -> Explanation:
    """`Explanation` of query atom column `atom`: the ground formulas containing it, ranked by
    |importance|, as items of kind "ground_formula" (score = I(f, Q))."""
    texts = texts or FormulaTexts(mln)
    frame = importance_frame(mln, result) if frame is None else frame
    rows = frame.iloc[mln.entries_of(atom)]
    imp = rows["importance"].to_numpy()
    order = rank_by_importance(imp, rows["weight"].to_numpy())
    if top_k is not None:
        order = order[:top_k]
    store = mln.store
    atom_id = int(store.target_ids[atom])
    explainable = {p.name: bool(p.explainable) for p in store.schema}
    items = []
    for r in rows.iloc[order].itertuples(index=False):  # one object per explanation item
        t = texts.clause(int(r.clause))
        ids = t["atom_ids"]
        hit = np.flatnonzero(ids == atom_id)
        preds = [a.split("(", 1)[0] for a in t["atoms"]]
        estimable = bool(np.isfinite(r.importance))
        items.append(ExplanationItem(
            kind="ground_formula", text=t["text"], natural=t["natural"],
            score=float(r.importance) if estimable else 0.0, direction=formula_direction(r.weight, r.sign),
            atoms=t["atoms"],
            target_index=int(hit[0]) if len(hit) else None, roles=t["roles"], observed=t["observed"],
            explainable=all(explainable.get(p, True) for p in preds),
            extras={"rule": t["rule"], "rule_index": int(r.rule), "clause": int(r.clause),
                    "weight": float(r.weight), "hard": bool(r.hard), "sign": int(r.sign),
                    "expected": float(r.expected),
                    "expected_given_atom": float(r.expected_given_atom) if estimable else None,
                    "se": float(r.se) if np.isfinite(r.se) else None, "estimable": estimable}))
    target = str(store.atom_text([atom_id])[0])
    pred = store.schema[target.split("(", 1)[0]]
    args = [store.constants[store.args[atom_id, i]] for i in range(pred.arity)]
    truth = store.truth[atom]
    return Explanation(
        target=target, target_text=pred.render(args), method=method,
        prediction=float(np.asarray(result.marginals)[atom]), prediction_kind="probability",
        truth=None if not np.isfinite(truth) else float(truth), items=items,
        meta={"n_formulas": int(len(rows)), "importance": "I(f,Q) = E_Q[n_f] - E[n_f]"})
