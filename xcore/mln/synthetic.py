"""Friends-and-smokers MLN rules and random ground networks (tests, benchmarks, demos).

The data generator is `xcore.data.generators.friends_smokers`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xcore.mln.network import GroundMLN

FRIENDS_SMOKERS_RULES = """\
1.5 smokes(x) => cancer(x)
1.1 friends(x, y) ^ smokes(x) => smokes(y)
-0.4 smokes(x)
-0.8 cancer(x)
"""
"""Alchemy-style rules of the classic example (negative unit weights act as priors)."""


def random_ground_mln(n_atoms: int, n_clauses: int, seed: int = 0, max_len: int = 3,
                      scale: float = 1.5) -> GroundMLN:
    """A random ground network without a store (for tests and teaching demos): clauses of
    1..`max_len` distinct atoms with random signs and weights uniform in [-scale, scale]."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.integers(1, max_len + 1, n_clauses), n_atoms)
    rows = np.repeat(np.arange(n_clauses), lengths)
    keys = rng.random((n_clauses, n_atoms)).argsort(axis=1)  # a random permutation per clause
    cols = keys[np.arange(n_atoms)[None, :] < lengths[:, None]]
    vals = rng.choice(np.array([-1, 1], dtype=np.int8), size=len(rows))
    S = sp.csr_matrix((vals, (rows, cols)), shape=(n_clauses, n_atoms), dtype=np.int8)
    S.sort_indices()
    w = rng.uniform(-scale, scale, n_clauses)
    return GroundMLN(None, None, S, w, np.zeros(n_clauses, np.int32), np.arange(n_clauses),
                     np.zeros(n_clauses, bool))
