"""Weight learning for Markov logic rule sets: pseudo-log-likelihood (PLL) and a linear-model start.

PLL of a fully observed world x over the query atoms of a `GroundMLN`, with clause weights tied
per rule (clause c has weight ``theta[rule[c]]``; hard clauses keep ``hard_weight``)::

    PLL(theta) = sum_i log P(x_i | x_-i) = -sum_i softplus(-d_i),   d_i = sum_c w_c delta_ci

where ``delta_ci = n_c(x) - n_c(x with atom i flipped)`` in {-1, 0, 1} (only clauses containing i
can change). PLL is concave in theta; the gradient is ``sum_{c in rule} sum_i sigmoid(-d_i)
delta_ci``. Everything is computed on the literal (entry) arrays of the sparse incidence.

Learning on a dataset (`learn_weights`): the TRAINING labels become the variables. `training_world`
turns the observed rows of the target predicate(s) into targets with truth and removes the
held-out items (constants that only occur in target rows) from every table, so x = the training
labels. Hard clauses keep their (large, finite) weight throughout.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.linear_model import LogisticRegression  # loaded with the method anyway (word_baselines, runs)

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.logic.ast import Constant, Rule, Variable
from xcore.logic.grounding import DEFAULT_LIMIT, ground
from xcore.logic.parser import parse_rules
from xcore.mln.network import DEFAULT_HARD_WEIGHT, GroundMLN, build_ground_mln
from xcore.runtime import limited_threads

METHODS: tuple[str, ...] = ("linear+pll", "pll")


# ---------------------------------------------------------------------- PLL
def _world_matrix(mln: GroundMLN, x: np.ndarray) -> np.ndarray:
    """x as (n_worlds, n_atoms) int32 0/1, checked."""
    x = np.asarray(x)
    X = x[None, :] if x.ndim == 1 else x
    if X.ndim != 2 or X.shape[1] != mln.n_atoms:
        raise XcoreError(f"world must have shape (n_atoms,) or (n_worlds, n_atoms) with n_atoms = "
                         f"{mln.n_atoms}, got {x.shape}")
    if not np.isin(X, (0, 1)).all():
        raise XcoreError("world values must be 0 or 1")
    return X.astype(np.int32)


@dataclass
class _PLLTerms:
    """The weight-independent part of the PLL of fixed worlds: per (world, literal) the change of
    its clause's truth when the literal's atom flips, and where that change is added up."""

    delta: np.ndarray     # (W * nnz,) n_c(x) - n_c(x with atom i flipped)
    slot: np.ndarray      # (W * nnz,) world * n_atoms + atom: the conditional the literal feeds
    clause: np.ndarray    # (W * nnz,) clause of the literal
    soft: np.ndarray      # (W * nnz,) bool: the clause is soft (hard ones get no gradient)
    n_slots: int


def _pll_terms(mln: GroundMLN, x: np.ndarray) -> _PLLTerms:
    X = _world_matrix(mln, x)
    ec, ea, es = mln.entry_clause, mln.entry_atom, mln.entry_sign
    T = (mln.S.astype(np.int32) @ X.T).T + mln.n_negative               # (W, n_clauses) true literals
    lit_true = (X[:, ea] > 0) == (es > 0)                                # (W, nnz)
    t = T[:, ec]
    delta = (t > 0).astype(np.float64) - ((t + np.where(lit_true, -1, 1)) > 0)
    W = X.shape[0]
    slot = (np.arange(W)[:, None] * mln.n_atoms + ea[None, :]).ravel()
    return _PLLTerms(delta.ravel(), slot, np.tile(ec, W), np.tile(~mln.hard[ec], W), W * mln.n_atoms)


def _pll_value_and_grad(mln: GroundMLN, terms: _PLLTerms, theta: np.ndarray) -> tuple[float, np.ndarray]:
    w = np.where(mln.hard, mln.hard_weight, theta[mln.rule]) if mln.n_clauses else np.zeros(0)
    d = np.bincount(terms.slot, weights=terms.delta * w[terms.clause], minlength=terms.n_slots)
    value = -float(np.logaddexp(0.0, -d).sum())
    g_entry = expit(-d)[terms.slot] * terms.delta * terms.soft
    grad = np.bincount(mln.rule[terms.clause], weights=g_entry, minlength=len(theta))
    return value, grad


def _check_theta(mln: GroundMLN, rule_weights: np.ndarray) -> np.ndarray:
    theta = np.asarray(rule_weights, dtype=np.float64)
    n_rules = int(mln.rule.max(initial=-1)) + 1
    if theta.ndim != 1 or len(theta) < n_rules:
        raise XcoreError(f"rule_weights needs one weight per rule ({n_rules}), got shape {theta.shape}")
    return theta


def pseudo_log_likelihood(mln: GroundMLN, x: np.ndarray, rule_weights: np.ndarray) -> tuple[float, np.ndarray]:
    """PLL of world(s) `x` ((n_atoms,) or (n_worlds, n_atoms), summed over worlds) and its gradient
    with respect to the per-rule weights (clause weight = ``rule_weights[mln.rule]``; hard clauses
    use ``mln.hard_weight`` and get gradient 0)."""
    theta = _check_theta(mln, rule_weights)
    return _pll_value_and_grad(mln, _pll_terms(mln, x), theta)


def fit_pll(mln: GroundMLN, x: np.ndarray, init: np.ndarray, free: np.ndarray | None = None,
            l2: float = 1.0, max_iter: int = 1000) -> np.ndarray:
    """Per-rule weights maximising ``PLL - l2/2 * ||free weights||^2`` with L-BFGS (concave problem);
    weights not in `free` (bool mask over rules, default all) stay at `init`."""
    theta0 = _check_theta(mln, init).copy()
    free = np.ones(len(theta0), dtype=bool) if free is None else np.asarray(free, dtype=bool)
    if free.shape != theta0.shape:
        raise XcoreError(f"free mask must have one entry per rule ({len(theta0)}), got {free.shape}")
    if not np.isfinite(l2) or l2 < 0:
        raise XcoreError(f"l2 must be a finite number >= 0, got {l2}")
    if not free.any():
        return theta0
    terms = _pll_terms(mln, x)  # computed once: the PLL is a function of the weights through these

    def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
        theta = theta0.copy()
        theta[free] = z
        v, g = _pll_value_and_grad(mln, terms, theta)
        return -v + 0.5 * l2 * float(z @ z), -g[free] + l2 * z

    res = minimize(objective, theta0[free], jac=True, method="L-BFGS-B",
                   options={"maxiter": int(max_iter), "gtol": 1e-7})
    if not np.all(np.isfinite(res.x)):
        raise XcoreError("PLL weight learning diverged (weights not finite); raise l2")
    out = theta0.copy()
    out[free] = res.x
    return out


# ---------------------------------------------------------------------- training world
def training_world(dataset: RelationalDataset, target: str | Sequence[str] = "positive",
                   allow_partial: bool = False) -> RelationalDataset:
    """The dataset learning sees: observed rows of the target predicate(s) become targets with
    truth (value >= 0.5 is true), and every row mentioning a held-out item (a constant in some
    target row and in no observed row of the target predicates) is removed, so the world is fully
    observed.

    Target rows whose constants are all kept (partially observed items) would silently become
    false (closed world); they raise XcoreError unless ``allow_partial=True`` (then they are dropped).
    """
    targets = _targets(target)
    preds = [dataset.predicate(t) for t in targets]
    for p in preds:
        if p.closed:
            raise XcoreError(f"target predicate {p.name!r} is closed; learning needs an open predicate")
    if not any(len(dataset.table(t, "obs")) for t in targets):
        raise XcoreError(f"no observed {' or '.join(repr(t) for t in targets)} atoms to learn from")

    def constants(part: str) -> np.ndarray:
        vals = [dataset.table(p.name, part)[p.columns].to_numpy().ravel() for p in preds if p.arity]
        return np.unique(np.concatenate(vals).astype(str)) if vals else np.zeros(0, dtype=str)

    held = np.setdiff1d(constants("targets"), constants("obs"))

    def keep(t: pd.DataFrame, arity: int) -> pd.DataFrame:
        if not arity or not len(held):
            return t
        mask = np.zeros(len(t), dtype=bool)
        for c in range(arity):
            mask |= t[f"a{c}"].astype(str).isin(held).to_numpy()
        return t[~mask].reset_index(drop=True)

    for p in preds:
        partial = keep(dataset.table(p.name, "targets"), p.arity)
        if len(partial) and not allow_partial:
            atom = p.atom_text([partial.iloc[0][c] for c in p.columns])
            raise XcoreError(f"{len(partial)} unobserved {p.name!r} atoms (e.g. {atom}) belong to items that also "
                             f"have observed atoms; learning needs a fully observed world "
                             f"(pass allow_partial=True to drop them)")
    tables: dict[str, dict[str, pd.DataFrame]] = {}
    for q in dataset.predicates:
        if q.name in targets:
            obs = dataset.table(q.name, "obs")
            truth = obs.assign(value=(obs["value"].to_numpy() >= 0.5).astype(float))
            tables[q.name] = {"targets": truth[q.columns].copy(), "truth": truth}
        else:
            tables[q.name] = {part: keep(dataset.table(q.name, part), q.arity)
                              for part in ("obs", "targets", "truth")}
    return RelationalDataset(dataset.schema, tables, name=f"{dataset.name}_training",
                             description=f"training world of {dataset.name}: observed {', '.join(targets)} "
                                         f"atoms as variables")


def _targets(target: str | Sequence[str]) -> list[str]:
    out = [target] if isinstance(target, str) else [str(t) for t in target]
    if not out:
        raise XcoreError("name at least one target predicate")
    return out


def ground_training_world(rules: Sequence[Rule], dataset: RelationalDataset, target: str | Sequence[str] = "positive",
                          hard_weight: float = DEFAULT_HARD_WEIGHT, limit: int | None = DEFAULT_LIMIT,
                          allow_partial: bool = False) -> tuple[GroundMLN, np.ndarray]:
    """Ground `rules` on `training_world(dataset)`: the network and its world x (training labels)."""
    world = training_world(dataset, target, allow_partial)
    mln = build_ground_mln(ground(list(rules), world, limit=limit, domain_variables=True), hard_weight)
    truth = mln.store.truth
    if np.isnan(truth).any():  # other open predicates with unlabelled targets
        raise XcoreError("the training world has query atoms without a label (another open predicate "
                         "with targets?); learning needs a fully observed world")
    return mln, (truth >= 0.5).astype(np.int8)


# ---------------------------------------------------------------------- linear start
def word_rule_words(rules: Sequence[Rule], target: str = "positive", word_predicate: str = "has_word"
                    ) -> dict[int, tuple[str, int]]:
    """Rule index -> (word, polarity) for rules of the shape ``has_word(r, 'w') => [!]positive(r)``
    (polarity +1 when the clause has ``positive(r)``, -1 for ``!positive(r)``). A word used by
    several such rules counts only for the first (the others are left to PLL)."""
    out: dict[int, tuple[str, int]] = {}
    used: set[str] = set()
    for i, rule in enumerate(rules):
        if rule.is_hard:
            continue
        lits = rule.clause_literals()
        words = [l for l in lits if l.atom.predicate == word_predicate]
        heads = [l for l in lits if l.atom.predicate == target]
        if len(lits) != 2 or len(words) != 1 or len(heads) != 1:
            continue
        wl, tl = words[0], heads[0]
        args = wl.atom.args
        if (not wl.negated or len(args) != 2 or not isinstance(args[0], Variable)
                or not isinstance(args[1], Constant) or tl.atom.args != (args[0],)):
            continue
        word = args[1].value
        if word in used:
            continue
        used.add(word)
        out[i] = (word, -1 if tl.negated else 1)
    return out


def bag_of_words(dataset: RelationalDataset, words: Sequence[str], items: Sequence[str],
                 word_predicate: str = "has_word") -> sp.csr_matrix:
    """(len(items), len(words)) 0/1 matrix: item has the word (observed value >= 0.5)."""
    t = dataset.table(word_predicate, "obs")
    t = t[t["value"].to_numpy() >= 0.5]
    r = pd.Index([str(i) for i in items]).get_indexer(t["a0"].astype(str))
    c = pd.Index([str(w) for w in words]).get_indexer(t["a1"].astype(str))
    ok = (r >= 0) & (c >= 0)
    m = sp.csr_matrix((np.ones(int(ok.sum())), (r[ok], c[ok])), shape=(len(items), len(words)))
    m.data[:] = 1.0  # duplicates (impossible in a validated table) would sum
    return m


def linear_word_weights(rules: Sequence[Rule], dataset: RelationalDataset, target: str = "positive",
                        word_predicate: str = "has_word", C: float = 1.0, seed: int = 0) -> dict[int, float]:
    """Rule index -> weight of each word rule from an L2 logistic regression (inverse strength `C`)
    on the bag of words of the training items (observed `target` rows)."""

    spec = word_rule_words(rules, target, word_predicate)
    if not spec:
        return {}
    p = dataset.predicate(target)
    if p.arity != 1:
        raise XcoreError(f"the linear start needs a unary target (got {target}/{p.arity}); use method='pll'")
    obs = dataset.table(target, "obs")
    items = obs["a0"].astype(str).to_numpy()
    y = (obs["value"].to_numpy() >= 0.5).astype(int)
    if len(np.unique(y)) < 2:
        raise XcoreError(f"the training labels of {target!r} are all {y[0]}: a classifier cannot be fitted")
    words = [w for w, _ in spec.values()]
    X = bag_of_words(dataset, words, items, word_predicate)
    with limited_threads(1):
        clf = LogisticRegression(C=C, max_iter=5000, random_state=seed).fit(X, y)
    coef = clf.coef_[0]
    return {i: float(coef[k] * pol) for k, (i, (_, pol)) in enumerate(spec.items())}


# ---------------------------------------------------------------------- learning
def learn_weights(rules: str | Sequence[Rule | str], dataset: RelationalDataset, method: str = "linear+pll",
                  l2: float = 1.0, fixed: Collection[int] | None = None, target: str | Sequence[str] = "positive",
                  word_predicate: str = "has_word", C: float = 1.0, hard_weight: float = DEFAULT_HARD_WEIGHT,
                  limit: int | None = DEFAULT_LIMIT, allow_partial: bool = False) -> list[Rule]:
    """The rules with learned weights (hard rules and rule indices in `fixed` keep theirs).

    ``"linear+pll"`` (the I-Explain recipe): word formulas ``has_word(r, 'w') => positive(r)`` get
    the coefficients of an L2 logistic regression on the training items' bag of words (the paper
    uses a linear SVM; a logistic regression gives calibrated log-odds, which is what an MLN weight
    is) and stay fixed; the remaining (relational, prior) weights maximise the L2-regularised PLL
    of the training world. ``"pll"``: all free weights by PLL. `target` may name several open
    predicates (each gets its own word regression). See the module docstring.
    """
    if method not in METHODS:
        raise XcoreError(f"unknown learning method {method!r}; use one of {', '.join(METHODS)}")
    rule_list = parse_rules(rules, dialect="mln") if isinstance(rules, str) else \
        [r if isinstance(r, Rule) else parse_rules(r, dialect="mln")[0] for r in rules]
    fixed_set = set(int(i) for i in (fixed or ()))
    bad = [i for i in fixed_set if not 0 <= i < len(rule_list)]
    if bad:
        raise XcoreError(f"fixed rule index {bad[0]} out of range (0..{len(rule_list) - 1})")
    theta = np.array([0.0 if r.is_hard else float(r.weight) for r in rule_list])  # type: ignore[arg-type]
    free = np.array([not r.is_hard and i not in fixed_set for i, r in enumerate(rule_list)])
    if method == "linear+pll":
        for t in _targets(target):
            for i, w in linear_word_weights(rule_list, dataset, t, word_predicate, C).items():
                if free[i]:
                    theta[i], free[i] = w, False
    free_init = np.where(free, 0.0, theta)
    if free.any():
        mln, x = ground_training_world(rule_list, dataset, target, hard_weight, limit, allow_partial)
        theta = fit_pll(mln, x, free_init, free, l2)
    return [r if r.is_hard else r.with_weight(float(theta[i])) for i, r in enumerate(rule_list)]
