"""Metrics of the I-Explain paper against planted truth: precision@k of word and relational
formulas, and Top-Exp-Acc / Peak-Acc (how well the explanation formulas alone predict the query).

Precision@k (`explanation_precision`). Among the top-k items of one kind of an explanation of
``positive(r)``:
- a WORD item (a ``has_word`` atom) is correct when its word is planted and its polarity, the
  direction it pushes the target towards true (`item_direction`), equals the planted polarity
  (+1 drives positive, -1 negative); with ``use_polarity=False`` any planted word counts;
- a RELATIONAL item (a ``same_user``/``same_restaurant``/``cites`` atom) is correct when every
  link atom of it, read as (predicate, r, other review), is a true (homophilous) link.
A wrong prediction (P >= 0.5 vs the annotated label) scores 0 however good its items are. The
denominator is always k: fewer than k items of the kind leave the missing slots incorrect.

Predicting from formulas alone (`accuracy_curve`). The local log-odds of the target Q given the
kept items is the sum of their contributions, and Q is predicted positive when it is >= 0 (the
same threshold as P >= 0.5):
- a weighted ground formula f contributes ``w_f * (n_f(Q=1) - n_f(Q=0))`` with its other atoms
  fixed: evidence atoms at their observed value and other query atoms at their predicted state
  (marginal >= 0.5). Without the network, evidence literals are taken as false, which holds for
  every clause `build_ground_mln` keeps (a clause with a true evidence literal is constant and
  dropped); with ``mln=`` and ``marginals=`` the clause is read from the network itself;
- a word item of the bag-of-words classifier contributes ``coef * x`` and the explanation adds the
  classifier's intercept once (``meta["intercept"]``): the classifier restricted to the kept words.
F1 (sklearn) of these predictions against the labels, for m = 1..M kept items, gives the curve;
Top-Exp-Acc is the F1 with the whole explanation (m = M), Peak-Acc the best F1 over m.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score

from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, check_k
from xcore.logic.ast import Rule
from xcore.logic.parser import parse_rules
from xcore.mln.network import GroundMLN

WORD_PREDICATES: tuple[str, ...] = ("has_word",)
"""Predicates that make a formula a word formula."""
LINK_PREDICATES: tuple[str, ...] = ("same_user", "same_restaurant", "cites")
"""Predicates that make a formula a relational formula."""

_ATOM_RE = re.compile(r"^\s*!?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$")


# ---------------------------------------------------------------------- atoms and items
def parse_atom(text: str) -> tuple[str, tuple[str, ...]]:
    """``has_word(r2, great)`` -> ("has_word", ("r2", "great")); quotes around constants dropped."""
    m = _ATOM_RE.match(str(text))
    if not m:
        raise XcoreError(f"{text!r} is not a ground atom of the form pred(a, b)")
    inner = m.group(2).strip()
    args = tuple(a.strip().strip("'\"") for a in inner.split(",")) if inner else ()
    return m.group(1), args


def formula_kind(item: ExplanationItem, word_predicates: Iterable[str] = WORD_PREDICATES,
                 link_predicates: Iterable[str] = LINK_PREDICATES) -> str:
    """"word" if the item has a word atom (or is of kind "word"), "relational" if it has a link
    atom, else "other"."""
    preds = {str(a).split("(", 1)[0].lstrip("!").strip() for a in item.atoms}
    if item.kind == "word" or preds & set(word_predicates):
        return "word"
    if preds & set(link_predicates):
        return "relational"
    return "other"


def item_direction(item: ExplanationItem) -> int:
    """Direction (+1/-1/0) in which an item pushes its target towards true: ``extras["direction"]``
    if given, else sign(weight * sign) for a weighted formula (the effect of the formula when the
    target's literal decides it), else the sign of the score."""
    ex = item.extras
    if ex.get("direction") is not None:
        return int(np.sign(float(ex["direction"])))
    if ex.get("weight") is not None and ex.get("sign") is not None:
        return int(np.sign(float(ex["weight"]) * float(ex["sign"])))
    return int(np.sign(item.score))


def target_review(exp: Explanation) -> str:
    """The review of an explanation's target atom (its first argument): ``positive(r12)`` -> r12."""
    args = parse_atom(exp.target)[1]
    if not args:
        raise XcoreError(f"target {exp.target!r} has no argument naming a review")
    return args[0]


def _label(labels: Any, exp: Explanation) -> int:
    """0/1 true label of an explanation's target from an annotation-like object (``.labels`` by
    review), a mapping (by target text or review) or, when `labels` is None, ``exp.truth``."""
    if labels is None:
        if exp.truth is None:
            raise XcoreError(f"no label for {exp.target}: the explanation has no truth; pass labels=")
        return int(exp.truth >= 0.5)
    table = getattr(labels, "labels", labels)
    if not isinstance(table, Mapping):
        raise XcoreError(f"labels must be an annotation with .labels or a mapping, not {type(labels).__name__}")
    for key in (exp.target, target_review(exp)):
        if key in table:
            return int(float(table[key]) >= 0.5)
    raise XcoreError(f"no label for {exp.target} (review {target_review(exp)!r}) in the annotation")


def prediction_correct(exp: Explanation, annotation: Any) -> bool:
    """True when the explained prediction (P >= 0.5) equals the annotated label of its review."""
    if exp.prediction is None:
        raise XcoreError(f"explanation of {exp.target} has no prediction to check against the label")
    return int(exp.prediction >= 0.5) == _label(annotation, exp)


# ---------------------------------------------------------------------- precision@k
def _word_of(item: ExplanationItem, word_predicates: Iterable[str]) -> str | None:
    if item.extras.get("word") is not None:
        return str(item.extras["word"])
    wp = set(word_predicates)
    for a in item.atoms:
        pred, args = parse_atom(a)
        if pred in wp and len(args) >= 2:
            return args[1]
    return None


def _links_true(item: ExplanationItem, review: str, true_links: frozenset | set,
                link_predicates: Iterable[str]) -> bool:
    lp = set(link_predicates)
    links = [parse_atom(a) for a in item.atoms if a.split("(", 1)[0].lstrip("!").strip() in lp]
    if not links:
        return False
    for pred, args in links:
        if len(args) != 2:
            return False
        a, b = args
        key = (pred, review, b if a == review else a) if review in args else (pred, a, b)
        if key not in true_links:
            return False
    return True


def explanation_precision(exp: Explanation, annotation: Any, k: int = 5, kind: str = "word",
                          use_polarity: bool = True, word_predicates: Iterable[str] = WORD_PREDICATES,
                          link_predicates: Iterable[str] = LINK_PREDICATES) -> float:
    """Fraction of the top-k items of `kind` ("word" or "relational") that the annotation confirms
    (see the module docstring); 0 for a wrong prediction; the denominator is always k."""
    k = check_k(k)
    if kind not in ("word", "relational"):
        raise XcoreError(f"kind must be 'word' or 'relational', got {kind!r}")
    if not prediction_correct(exp, annotation):
        return 0.0
    items = [it for it in exp.items if formula_kind(it, word_predicates, link_predicates) == kind][:k]
    review = target_review(exp)
    if kind == "word":
        planted = annotation.planted_words
        hits = 0
        for it in items:
            word = _word_of(it, word_predicates)
            pol = planted.get(word) if word is not None else None
            hits += pol is not None and (not use_polarity or int(pol) == item_direction(it))
    else:
        hits = sum(_links_true(it, review, annotation.true_links, link_predicates) for it in items)
    return hits / k


def precision_table(explanation_sets: Mapping[str, ExplanationSet | Iterable[Explanation]], annotation: Any,
                    k: int = 5, use_polarity: bool = True) -> pd.DataFrame:
    """One row per method: mean word and relational precision@k over its explanations, and the
    number of queries. A method with no item of a kind in any explanation gets NaN for that kind
    (not applicable, e.g. relational precision of LIME), rather than 0."""
    rows = []
    for method, exps in explanation_sets.items():
        exps = list(exps)
        row: dict[str, object] = {"method": method}
        for kind in ("word", "relational"):
            has_kind = any(formula_kind(it) == kind for e in exps for it in e.items)
            row[f"{kind}_precision"] = (float(np.mean([explanation_precision(e, annotation, k, kind, use_polarity)
                                                      for e in exps])) if has_kind and exps else float("nan"))
        row["n_queries"] = len(exps)
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", "word_precision", "relational_precision", "n_queries"])


# ---------------------------------------------------------------------- predicting from formulas
@dataclass
class AccuracyCurve:
    """F1 of predicting every query from its top-m explanation items, m = 1..M (`f1_by_m[m-1]`)."""

    f1_by_m: np.ndarray
    top_exp_acc: float
    """F1 with the whole explanation (m = M)."""
    peak_acc: float
    """Best F1 over m."""
    peak_m: int
    """Smallest m reaching `peak_acc` (0 when there are no items)."""


@lru_cache(maxsize=512)
def _rule_signs(rule_text: str) -> tuple[int, ...]:
    """Clause sign (+1/-1) of each literal of a rule, in body-then-head order."""
    rule: Rule = parse_rules(rule_text, dialect="mln")[0]
    nb = len(rule.body)
    return tuple((-1 if i < nb else 1) * (-1 if lit.negated else 1) for i, lit in enumerate(rule.literals))


def _formula_contribution(item: ExplanationItem, target: str, states: Mapping[str, float]) -> float:
    """``w * (n_f(Q=1) - n_f(Q=0))`` of one formula item from its rule, atoms and observed flags."""
    ex = item.extras
    if item.target_index is None:
        return 0.0  # the formula does not involve the target: its truth does not depend on Q
    if ex.get("weight") is None or ex.get("rule") is None:
        raise XcoreError(f"item {item.text!r} of {target} has no weight/rule in its extras: cannot predict "
                         f"from it (pass mln= and marginals= for items with a clause index)")
    signs = _rule_signs(str(ex["rule"]))
    if len(signs) != len(item.atoms):
        raise XcoreError(f"item {item.text!r} has {len(item.atoms)} atoms but its rule {ex['rule']!r} "
                         f"{len(signs)} literals")
    q = item.target_index
    sq = signs[q]
    for j, (atom, s) in enumerate(zip(item.atoms, signs)):
        if j == q:
            continue
        if atom == item.atoms[q]:
            if s != sq:
                return 0.0  # Q and not Q: a tautology
            continue
        query = (atom in states) if item.observed is None else not item.observed[j]
        if not query:
            continue  # evidence literal: false in every clause kept by the network
        if atom not in states:
            raise XcoreError(f"state of query atom {atom} (in {item.text!r}) is unknown: pass states= "
                             f"(atom -> marginal) or mln= and marginals=")
        if (float(states[atom]) >= 0.5) == (s > 0):
            return 0.0  # another literal is true: the formula holds whatever Q is
    return float(ex["weight"]) * sq


def _network_contributions(mln: GroundMLN, marginals: np.ndarray, clauses: np.ndarray,
                           atoms: np.ndarray) -> np.ndarray:
    """Vectorised ``w_c * (n_c(Q=1) - n_c(Q=0))`` of clauses `clauses` for query columns `atoms`,
    other query atoms at their predicted state (evidence is already folded into the network)."""
    x = (np.asarray(marginals, dtype=np.float64) >= 0.5).astype(np.int32)
    if len(x) != mln.n_atoms:
        raise XcoreError(f"marginals have {len(x)} entries, the network {mln.n_atoms} query atoms")
    if len(clauses) and (clauses.min() < 0 or clauses.max() >= mln.n_clauses):
        raise XcoreError("an item's clause index is outside the network: wrong mln= for these explanations")
    S = mln.S[clauses].astype(np.int32)
    sq = np.asarray(S[np.arange(len(clauses)), atoms]).ravel()
    if (sq == 0).any():
        bad = int(np.flatnonzero(sq == 0)[0])
        raise XcoreError(f"clause {int(clauses[bad])} does not contain query atom {int(atoms[bad])}: "
                         f"wrong mln= for these explanations")
    true_lits = (S > 0).astype(np.int32) @ x + (S < 0).astype(np.int32) @ (1 - x)
    own = np.where(sq > 0, x[atoms], 1 - x[atoms])
    return np.where(true_lits - own == 0, mln.weights[clauses] * sq, 0.0)


def item_log_odds(explanations: Explanation | ExplanationSet | Iterable[Explanation],
                  states: Mapping[str, float] | None = None, mln: GroundMLN | None = None,
                  marginals: np.ndarray | None = None, kind: str | None = None) -> list[np.ndarray]:
    """Per explanation, the log-odds contribution of each ranked item (of `kind`, if given) to its
    target (see the module docstring); the intercept is not included."""
    exps = [explanations] if isinstance(explanations, Explanation) else list(explanations)
    known: dict[str, float] = {e.target: e.prediction for e in exps if e.prediction is not None}
    if mln is not None and marginals is not None:
        known.update(zip(mln.atoms_text().tolist(), np.asarray(marginals, dtype=float).tolist()))
    known.update(states or {})
    kept = [[it for it in e.items if kind is None or formula_kind(it) == kind] for e in exps]
    out = [np.zeros(len(items)) for items in kept]
    net: list[tuple[int, int, int, int]] = []  # (explanation, rank, clause, atom column)
    column: dict[str, int] = {}
    if mln is not None:
        if mln.store is None:
            raise XcoreError("mln= needs a network built from a dataset (it has no atom store)")
        if marginals is None:
            marginals = np.array([known.get(a, np.nan) for a in mln.atoms_text().tolist()])
            if np.isnan(marginals).any():
                raise XcoreError("pass marginals= with mln=: some query atoms have no prediction")
        column = {a: i for i, a in enumerate(mln.atoms_text().tolist())}
    for i, (e, items) in enumerate(zip(exps, kept)):
        for r, it in enumerate(items):  # items are objects: one pass to read their extras
            ex = it.extras
            if ex.get("coef") is not None and ex.get("value") is not None:
                out[i][r] = float(ex["coef"]) * float(ex["value"])
            elif mln is not None and ex.get("clause") is not None:
                if e.target not in column:
                    raise XcoreError(f"{e.target} is not a query atom of the given network")
                net.append((i, r, int(ex["clause"]), column[e.target]))
            else:
                out[i][r] = _formula_contribution(it, e.target, known)
    if net:
        arr = np.array(net, dtype=np.int64)
        vals = _network_contributions(mln, marginals, arr[:, 2], arr[:, 3])  # type: ignore[arg-type]
        for (i, r, _, _), v in zip(net, vals.tolist()):
            out[i][r] = v
    return out


def accuracy_curve(explanations: ExplanationSet | Iterable[Explanation], labels: Any = None,
                   max_m: int | None = None, states: Mapping[str, float] | None = None,
                   mln: GroundMLN | None = None, marginals: np.ndarray | None = None,
                   kind: str | None = None) -> AccuracyCurve:
    """F1 of predicting each query from its top-m items alone, m = 1..M (M = `max_m` or the longest
    explanation); Top-Exp-Acc = F1 at m = M, Peak-Acc = best F1. `labels`: an annotation (``.labels``
    by review), a mapping, or None for each explanation's truth."""
    exps = [explanations] if isinstance(explanations, Explanation) else list(explanations)
    if not exps:
        raise XcoreError("accuracy_curve needs at least one explanation")
    contrib = item_log_odds(exps, states, mln, marginals, kind)
    M = max((len(c) for c in contrib), default=0) if max_m is None else check_k(max_m)
    if M == 0:
        return AccuracyCurve(np.zeros(0), float("nan"), float("nan"), 0)
    C = np.zeros((len(exps), M))
    for i, c in enumerate(contrib):
        C[i, :min(len(c), M)] = c[:M]
    offset = np.array([float(e.meta.get("intercept", 0.0)) for e in exps])
    log_odds = np.cumsum(C, axis=1) + offset[:, None]  # (n, M): top-m items kept
    pred = (log_odds >= 0).astype(np.int64)
    y = np.array([_label(labels, e) for e in exps], dtype=np.int64)
    f1 = np.array([f1_score(y, pred[:, m], zero_division=0.0) for m in range(M)])
    peak = int(np.argmax(f1))
    return AccuracyCurve(f1, float(f1[-1]), float(f1[peak]), peak + 1)
