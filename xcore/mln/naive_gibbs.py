"""The naive reference Gibbs sampler: one chain, one atom at a time, in plain Python lists. It is the
benchmark's baseline for the vectorised sampler (`xcore.mln.gibbs`), not used by any run."""

from __future__ import annotations

import math
import random
import time

import numpy as np

from xcore.mln.network import GroundMLN


def naive_gibbs(mln: GroundMLN, n_sweeps: int, seed: int = 0) -> tuple[np.ndarray, float, int]:
    """One chain, one atom at a time, in plain Python lists (benchmark baseline only).

    Returns (marginals over all sweeps, seconds, atom updates).
    """
    rnd = random.Random(seed)
    n = mln.n_atoms
    clauses_of = [[] for _ in range(n)]  # per atom: (clause, sign, weight)
    for c, a, s in zip(mln.entry_clause.tolist(), mln.entry_atom.tolist(), mln.entry_sign.tolist()):
        clauses_of[a].append((c, s, float(mln.weights[c])))
    x = [rnd.random() < 0.5 for _ in range(n)]
    xs = np.array(x, dtype=np.int32)
    t = (mln.S.astype(np.int32) @ xs + mln.n_negative).tolist()
    counts = [0] * n
    t0 = time.perf_counter()
    for _ in range(n_sweeps):
        for i in range(n):
            xi = x[i]
            logit = 0.0
            for c, s, w in clauses_of[i]:
                lit = xi if s > 0 else not xi
                if t[c] - lit == 0:
                    logit += w * s
            p = 1.0 / (1.0 + math.exp(-logit)) if logit > -700 else 0.0
            new = rnd.random() < p
            if new != xi:
                x[i] = new
                for c, s, _w in clauses_of[i]:
                    t[c] += s if new else -s
            counts[i] += new
    seconds = time.perf_counter() - t0
    return np.array(counts, dtype=np.float64) / max(n_sweeps, 1), seconds, n * n_sweeps
