"""Direct KB: one clause per combination of k feature-value pairs seen in the data (k = 1..max_k).

``p: POS | ~a1_v1 | ... | ~ak_vk`` with p the positive ratio among the rows matching all k
pairs and support = that row count. Counting is one pandas group-by per k over a long table
(row x feature-combination), built in chunks of combinations so memory stays bounded; there
is no Python loop over value combinations or rows.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.plkb.kb import KB, clauses_from_conjunctions
from xcore.plkb.literals import Domain

CHUNK_CELLS = 4_000_000
"""Rows x combinations counted per group-by (bounds the long table's memory)."""


def count_combinations(codes: np.ndarray, y: np.ndarray, k: int) -> pd.DataFrame:
    """Every k-combination of feature-value pairs present in the rows, with its counts.

    Columns: f0..f{k-1} (feature indices, increasing), v0..v{k-1} (value indices), n, n_pos.
    """
    codes = np.asarray(codes, dtype=np.int64)
    n_rows, F = codes.shape
    if k < 1 or k > F:
        return pd.DataFrame(columns=[*(f"f{j}" for j in range(k)), *(f"v{j}" for j in range(k)), "n", "n_pos"])
    combos = np.array(list(combinations(range(F), k)), dtype=np.int64).reshape(-1, k)
    per_chunk = max(1, CHUNK_CELLS // max(n_rows, 1))
    yf = y.astype(np.int64)
    parts = []
    for s in range(0, len(combos), per_chunk):
        ch = combos[s:s + per_chunk]
        m = len(ch)
        long = {"combo": np.repeat(np.arange(s, s + m), n_rows)}
        for j in range(k):
            long[f"v{j}"] = codes[:, ch[:, j]].T.ravel()
        long["y"] = np.tile(yf, m)
        df = pd.DataFrame(long)
        valid = np.ones(len(df), dtype=bool)
        for j in range(k):
            valid &= df[f"v{j}"].to_numpy() >= 0
        if not valid.all():
            df = df[valid]
        g = df.groupby(["combo", *(f"v{j}" for j in range(k))], sort=True)["y"].agg(["size", "sum"]).reset_index()
        parts.append(g)
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    combo_idx = out["combo"].to_numpy()
    res = {f"f{j}": combos[combo_idx, j] for j in range(k)}
    res.update({f"v{j}": out[f"v{j}"].to_numpy(dtype=np.int64) for j in range(k)})
    res["n"] = out["size"].to_numpy(dtype=np.int64)
    res["n_pos"] = out["sum"].to_numpy(dtype=np.int64)
    return pd.DataFrame(res)


def estimate_direct_size(domain: Domain, max_k: int) -> int:
    """Upper bound on the Direct KB size: sum over k of the value combinations of k features."""
    cards = domain.cardinalities
    total = 0
    for k in range(1, max_k + 1):
        if comb(len(cards), k) > 200_000:
            return -1
        total += int(sum(np.prod(cards[list(c)]) for c in combinations(range(len(cards)), k)))
    return total


def direct_kb(codes: np.ndarray, y: np.ndarray, domain: Domain, max_k: int = 2,
              min_support: int | float = 1, source: str = "direct", progress=None) -> KB:
    """The Direct KB for k = 1..max_k; `min_support` is a row count (int) or a fraction (< 1)."""
    codes = np.asarray(codes, dtype=np.int64)
    y = np.asarray(y, dtype=bool)
    if codes.ndim != 2 or codes.shape[1] != domain.n_features or len(codes) != len(y):
        raise XcoreError("direct_kb: codes must be (rows, features) matching the domain and labels")
    if max_k < 1:
        raise XcoreError(f"max_k must be at least 1, got {max_k}")
    max_k = min(int(max_k), domain.n_features)
    if isinstance(min_support, float) and 0 < min_support < 1:
        min_n = int(np.ceil(min_support * len(y)))
    else:
        min_n = int(min_support)
    min_n = max(min_n, 1)
    kbs = []
    for k in range(1, max_k + 1):
        t = count_combinations(codes, y, k)
        t = t[t["n"] >= min_n]
        feat = np.stack([t[f"f{j}"].to_numpy() for j in range(k)], axis=1).ravel()
        val = np.stack([t[f"v{j}"].to_numpy() for j in range(k)], axis=1).ravel()
        n = t["n"].to_numpy()
        kbs.append(clauses_from_conjunctions(domain, feat, val, np.full(len(t), k), t["n_pos"].to_numpy() / n,
                                             n, f"{source}{k}"))
        if progress is not None:
            progress(k / max_k, f"k = {k}: {len(t):,} clauses")
    return KB.concat(kbs)
