"""Interventions that check Markov-logic explanations against the fitted network (`xcore verify`).

A ground formula's claim is checked by setting its weight to 0 and re-inferring P(Q): exactly, for
every checked formula at once from one enumeration of the worlds (log-weights minus each formula's
term), when the network is small enough; otherwise from one warm Gibbs run that keeps the query atoms and
the checked formulas at every sample: each intervention reweights those same samples by
exp(-w_f n_f) (self-normalised importance sampling), so all of them cost one run and the with/without
difference is measured on common samples. A word item of LIME or SHAP is checked by
removing the word from the review and asking the bag-of-words classifier again.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from xcore.explain.types import Explanation
from xcore.methods.base import Measurement, Run
from xcore.mln.exact import WORLD_BLOCK, check_enumerable, worlds
from xcore.mln.gibbs import gibbs
from xcore.mln.network import GroundMLN

EXACT_TOLERANCE = 1e-9
"""Changes of an exactly computed probability below this count as not moved."""


def _clauses(exp: Explanation, k: int) -> np.ndarray:
    """The ground-formula (clause) index of each top-`k` item; -1 where the item records none."""
    return np.array([int(it.extras.get("clause", -1)) for it in exp.top(k)], dtype=np.int64)


def exact_without(mln: GroundMLN, atom: int, clauses: np.ndarray) -> np.ndarray:
    """P(atom) with all weights, minus P(atom) with each clause's weight set to 0, for every clause at
    once: one enumeration of the worlds, the clause's term subtracted from each world's log-weight."""
    check_enumerable(mln)
    n, w = mln.n_atoms, mln.weights
    total = 1 << n
    lw_all, sat_all, bit_all = [], [], []
    for lo in range(0, total, WORLD_BLOCK):  # vectorised per block of worlds, all interventions together
        x = worlds(n, lo, min(total, lo + WORLD_BLOCK))
        sat = mln.satisfied(x)
        lw_all.append(sat.astype(np.float64) @ w)
        sat_all.append(sat[:, clauses].astype(np.float64))
        bit_all.append(x[:, atom] > 0)
    lw, sat_c, bit = np.concatenate(lw_all), np.concatenate(sat_all), np.concatenate(bit_all)
    variants = lw[:, None] - sat_c * w[clauses][None, :]  # worlds x interventions
    base = np.exp(logsumexp(lw[bit]) - logsumexp(lw))
    without = np.exp(logsumexp(variants[bit], axis=0) - logsumexp(variants, axis=0))
    return base - without


MIN_EFFECTIVE_SAMPLES = 50.0
"""Below this effective sample size a reweighted estimate is not trusted (the item is not measured)."""


def reweighted_without(watched: tuple[np.ndarray, np.ndarray], atom_pos: int, clause_pos: np.ndarray,
                       weights: np.ndarray, n_batches: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """P(atom) minus P(atom) with each clause's weight set to 0, from one set of Gibbs samples by
    self-normalised importance reweighting (sample weight exp(-w_c n_c)), for all clauses at once;
    returns the changes and their Monte Carlo standard errors (batch means). NaN where the weights
    leave too few effective samples (a hard or very heavy formula)."""
    xs, sats = watched
    S, _, C = xs.shape
    x = xs[:, atom_pos, :].reshape(S * C).astype(np.float64)                     # samples
    n = sats[:, clause_pos, :].transpose(0, 2, 1).reshape(S * C, len(clause_pos)).astype(np.float64)
    logw = -n * weights[None, :]
    logw -= logw.max(axis=0, keepdims=True)
    w = np.exp(logw)
    ess = w.sum(axis=0) ** 2 / (w ** 2).sum(axis=0)
    batch = (np.arange(S * C) // C * n_batches) // S                               # batches of kept samples
    num = np.stack([np.bincount(batch, w[:, j] * x, n_batches) for j in range(w.shape[1])], axis=1)
    den = np.stack([np.bincount(batch, w[:, j], n_batches) for j in range(w.shape[1])], axis=1)
    xb = np.bincount(batch, x, n_batches) / np.bincount(batch, minlength=n_batches)
    with np.errstate(invalid="ignore", divide="ignore"):
        change = x.mean() - num.sum(axis=0) / den.sum(axis=0)
        per_batch = xb[:, None] - num / den
        se = np.nanstd(per_batch, axis=0, ddof=1) / np.sqrt(n_batches)
    bad = ess < MIN_EFFECTIVE_SAMPLES
    return np.where(bad, np.nan, change), np.where(bad, np.nan, se)


def _trace(run: Run, model, clauses: np.ndarray):
    """One warm Gibbs run of the fitted network watching every query atom and `clauses` (cached on the
    run, grown when new clauses are asked for): the samples every intervention reweights."""
    cache = run.extras.setdefault("verify_trace", {})
    have = cache.get("clauses")
    if have is not None and np.isin(clauses, have).all():
        return cache
    wanted = np.union1d(clauses, have) if have is not None else np.unique(clauses)
    mln = model.mln_
    opts = {k: v for k, v in getattr(model, "options_", {}).items() if k in ("n_samples", "n_chains", "seed")}
    init = getattr(model.result_, "state", None)
    if init is not None and init.shape[0] == mln.n_atoms:
        opts.update(init=init, n_chains=init.shape[1], burn_in=20)
    res = gibbs(mln, watch=(np.arange(mln.n_atoms), wanted), **opts)
    cache.update(clauses=wanted, watched=res.watched)
    return cache


def measure_formulas(run: Run, exp: Explanation, k: int) -> Measurement | None:
    """Change of P(Q) when each top-`k` ground formula's weight is set to 0 (exact or Gibbs)."""
    model = run.model.model_
    mln = model.mln_
    clauses = _clauses(exp, k)
    if mln is None or not len(clauses) or (clauses < 0).all():
        return None
    atom = model.atom_column(exp.target)
    ok = clauses >= 0
    change = np.full(len(clauses), np.nan)
    if model.method_ == "exact":
        change[ok] = exact_without(mln, atom, clauses[ok])
        return Measurement(change, EXACT_TOLERANCE, "formula weight set to 0, exact enumeration")
    wanted = _formula_clauses(run, k) if "verify_trace" not in run.extras else clauses[ok]
    trace = _trace(run, model, np.union1d(wanted, clauses[ok]).astype(np.int64))
    pos = np.searchsorted(trace["clauses"], clauses[ok])
    change[ok], se = reweighted_without(trace["watched"], atom, pos, mln.weights[clauses[ok]])
    tol = float(3.0 * np.nanmax(se)) if np.isfinite(se).any() else 1e-2
    return Measurement(change, tol, "formula weight set to 0, Gibbs samples reweighted (one warm run)")


def _formula_clauses(run: Run, k: int) -> np.ndarray:
    """Every clause any formula explanation of the run names in its top `k` items (watched at once)."""
    found = [int(it.extras["clause"]) for exps in run.explanations.values() for e in exps
             for it in e.top(k) if "clause" in it.extras]
    return np.unique(np.array(found, dtype=np.int64))


def measure_words(run: Run, exp: Explanation, k: int, log_odds: bool) -> Measurement | None:
    """Change of the bag-of-words classifier's output (log-odds for SHAP, probability for LIME) when
    each top-`k` word is removed from (or, for an absent word, added to) the review."""
    workflow = getattr(run.model, "explainer_run_", None)
    clf = getattr(workflow, "classifier", None)
    if clf is None:
        return None
    review = exp.target[exp.target.index("(") + 1: exp.target.rindex(")")].strip().strip("'\"")
    cols = clf.word_columns(review)
    vocab = {str(w): i for i, w in enumerate(clf.vocabulary_)}
    top = exp.top(k)
    rows = [np.isin(np.arange(len(vocab)), cols).astype(np.float64)]
    for it in top:
        x = rows[0].copy()
        j = vocab.get(str(it.extras.get("word")), -1)
        if j >= 0:
            x[j] = 0.0 if it.extras.get("present", True) else 1.0
        rows.append(x)
    X = sp.csr_matrix(np.vstack(rows))
    out = clf.decision_matrix(X) if log_odds else clf.proba_matrix(X)
    return Measurement(out[0] - out[1:], 1e-12, "word removed from the review, classifier asked again")
