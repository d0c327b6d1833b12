"""Exact inference on a small `GroundMLN` by enumerating all 2^n query-atom worlds (n <= 20).

Worlds are processed in blocks (one matrix product per block), so 2^20 worlds take about a
second. Gives marginals, E[n_c], E[n_c x_q] per literal and hence the exact formula importance
``I(c, q) = E[n_c x_q] / P(q) - E[n_c]``; `log_prob` gives log P(q | E) for any weights (used to
check Proposition 1, I = d log P(q|E) / d w_c, by finite differences).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xcore.errors import XcoreError
from xcore.mln.network import GroundMLN

MAX_EXACT_ATOMS = 20
"""Largest number of query atoms `exact` enumerates."""
WORLD_BLOCK = 1 << 14


@dataclass
class ExactResult:
    """Exact expectations under P(query atoms | evidence)."""

    marginals: np.ndarray
    """(n_atoms,) P(atom true | E)."""
    clause_means: np.ndarray
    """(n_clauses,) E[n_c]."""
    entry_means: np.ndarray
    """(nnz,) E[n_c x_q] per literal (clause c, atom q), CSR order of ``mln.S``."""
    log_z: float
    """log of the partition function over the query worlds."""


def check_enumerable(mln: GroundMLN) -> None:
    if mln.n_atoms > MAX_EXACT_ATOMS:
        raise XcoreError(f"exact inference enumerates 2^n worlds and allows at most {MAX_EXACT_ATOMS} "
                         f"query atoms; this network has {mln.n_atoms} (use Gibbs sampling)")


def worlds(n: int, start: int, stop: int) -> np.ndarray:
    """(stop-start, n) int8 bit patterns of worlds start..stop-1."""
    idx = np.arange(start, stop, dtype=np.int64)
    return ((idx[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(np.int8)


def _log_weights(mln: GroundMLN, weights: np.ndarray) -> np.ndarray:
    n = mln.n_atoms
    total = 1 << n
    out = np.empty(total)
    for lo in range(0, total, WORLD_BLOCK):
        hi = min(total, lo + WORLD_BLOCK)
        out[lo:hi] = mln.log_weight(worlds(n, lo, hi), weights)
    return out


def exact(mln: GroundMLN, weights: np.ndarray | None = None) -> ExactResult:
    """Enumerate all worlds: marginals, E[n_c] and E[n_c x_q] (raises if more than 20 query atoms)."""
    check_enumerable(mln)
    w = mln.weights if weights is None else np.asarray(weights, dtype=np.float64)
    n = mln.n_atoms
    lw = _log_weights(mln, w)
    log_z = float(np.logaddexp.reduce(lw))
    p = np.exp(lw - log_z)
    ec, ea = mln.entry_clause, mln.entry_atom
    marg = np.zeros(n)
    cm = np.zeros(mln.n_clauses)
    em = np.zeros(mln.nnz)
    total = 1 << n
    for lo in range(0, total, WORLD_BLOCK):
        hi = min(total, lo + WORLD_BLOCK)
        x = worlds(n, lo, hi)
        sat = mln.satisfied(x)
        pb = p[lo:hi]
        marg += pb @ x
        cm += pb @ sat
        em += pb @ (sat[:, ec] & (x[:, ea] > 0))
    return ExactResult(marg, cm, em, log_z)


def log_prob(mln: GroundMLN, atom: int, weights: np.ndarray | None = None) -> float:
    """Exact log P(query atom column `atom` true | E) under `weights` (default: the network's)."""
    check_enumerable(mln)
    w = mln.weights if weights is None else np.asarray(weights, dtype=np.float64)
    lw = _log_weights(mln, w)
    bit = (np.arange(1 << mln.n_atoms, dtype=np.int64) >> int(atom)) & 1
    return float(np.logaddexp.reduce(lw[bit == 1]) - np.logaddexp.reduce(lw))
