"""Predicates derived from a ratings matrix, as the PSL LastFM model uses them: top-k cosine, Pearson and
Jaccard similarities of items and users, biased low-rank predictions and observed means (scipy sparse,
no per-rating loop)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.linalg import svds

Pairs = Callable[..., pd.DataFrame]
"""``pairs(a, b, names_a, names_b, values=None)``: a two-argument predicate table."""


def derived_tables(R: sp.csr_matrix, users: np.ndarray, items: np.ndarray, uname: np.ndarray, iname: np.ndarray,
                   k_sim: int, seed: int, pairs: Pairs) -> dict[str, dict[str, pd.DataFrame]]:
    """The similarity, predictor and mean tables of the observed ratings `R` (users x items) for the
    rated pairs (`users`, `items`)."""
    tables: dict[str, dict[str, pd.DataFrame]] = {}
    Rb = R.copy()
    Rb.data[:] = 1.0
    item_sims = {
        "sim_cosine_items": cosine(R.T.tocsr()),
        "sim_pearson_items": cosine(centre_rows(R.T.tocsr())),
        "sim_jaccard_items": jaccard(Rb.T.tocsr()),
    }
    for pred, S in item_sims.items():
        a, b, v = top_k(S, k_sim)
        tables[pred] = {"obs": pairs(a, b, iname, iname, v)}
    a, b, v = top_k(cosine(R), k_sim)
    tables["sim_cosine_users"] = {"obs": pairs(a, b, uname, uname, v)}

    mu, bu, bi = biases(R, shrink=5.0)
    tables["sgd_rating"] = {"obs": pairs(users, items, uname, iname,
                                         low_rank_predict(R, mu, bu, bi, users, items, rank=10, scale=1.0, seed=seed))}
    mu2, bu2, bi2 = biases(R, shrink=25.0)
    tables["bpmf_rating"] = {"obs": pairs(users, items, uname, iname,
                                          low_rank_predict(R, mu2, bu2, bi2, users, items, rank=20, scale=0.6,
                                                           seed=seed + 1))}
    u_mean = row_means(R, default=mu)
    i_mean = row_means(R.T.tocsr(), default=mu)
    seen_u, seen_i = np.unique(users), np.unique(items)
    tables["avg_user_rating"] = {"obs": pd.DataFrame({"a0": uname.take(seen_u), "value": u_mean[seen_u].round(3)})}
    tables["avg_item_rating"] = {"obs": pd.DataFrame({"a0": iname.take(seen_i), "value": i_mean[seen_i].round(3)})}
    return tables


def l2_normalise_rows(M: sp.csr_matrix) -> sp.csr_matrix:
    """Rows scaled to unit Euclidean length (zero rows stay zero)."""
    norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
    return sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ M


def cosine(M: sp.csr_matrix) -> sp.csr_matrix:
    """Row-row cosine similarity (sparse product of row-normalised rows)."""
    N = l2_normalise_rows(M.tocsr())
    return (N @ N.T).tocsr()


def centre_rows(M: sp.csr_matrix) -> sp.csr_matrix:
    """Subtract each row's mean over its stored entries (so cosine becomes a Pearson correlation)."""
    M = M.tocsr(copy=True)
    counts = np.diff(M.indptr)
    means = np.asarray(M.sum(axis=1)).ravel() / np.maximum(counts, 1)
    M.data = M.data - np.repeat(means, counts)
    return M


def jaccard(B: sp.csr_matrix) -> sp.csr_matrix:
    """Row-row Jaccard overlap of binary rows."""
    inter = (B @ B.T).tocoo()
    size = np.asarray(B.sum(axis=1)).ravel()
    union = size[inter.row] + size[inter.col] - inter.data
    return sp.csr_matrix((inter.data / np.maximum(union, 1), (inter.row, inter.col)), shape=inter.shape)


def top_k(S: sp.spmatrix, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row the k largest positive off-diagonal entries (ties by column); values rounded to 3."""
    S = S.tocsr()
    S.sort_indices()
    C = S.tocoo()
    keep = (C.row != C.col) & (C.data > 1e-9)
    row, col, val = C.row[keep].astype(np.int64), C.col[keep].astype(np.int64), C.data[keep]
    # one int64 key: row, then descending value (quantised to 2^-30); stable sort keeps column order
    key = (row << 31) | (2**31 - 1 - np.round(np.clip(val, 0.0, 1.0) * 2**30).astype(np.int64))
    order = np.argsort(key, kind="stable")
    row, col, val = row[order], col[order], val[order]
    first = np.searchsorted(row, row, side="left")
    rank = np.arange(len(row)) - first
    sel = rank < k
    return row[sel], col[sel], np.clip(val[sel], 0.0, 1.0).round(3)


def biases(R: sp.csr_matrix, shrink: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Global mean and shrunk user and item biases of the observed ratings."""
    C = R.tocoo()
    mu = float(C.data.mean()) if C.nnz else 0.5
    n_u = np.bincount(C.row, minlength=R.shape[0])
    bu = np.bincount(C.row, weights=C.data - mu, minlength=R.shape[0]) / (n_u + shrink)
    res = C.data - mu - bu[C.row]
    n_i = np.bincount(C.col, minlength=R.shape[1])
    bi = np.bincount(C.col, weights=res, minlength=R.shape[1]) / (n_i + shrink)
    return mu, bu, bi


def low_rank_predict(R, mu, bu, bi, users, items, rank: int, scale: float, seed: int) -> np.ndarray:
    """Biases plus a rank-`rank` truncated SVD of the residuals, evaluated at (users, items)."""
    C = R.tocoo()
    E = sp.csr_matrix((C.data - mu - bu[C.row] - bi[C.col], (C.row, C.col)), shape=R.shape)
    pred = mu + bu[users] + bi[items]
    k = min(rank, min(R.shape) - 1)
    if k >= 1 and E.nnz:
        v0 = np.random.default_rng(seed).normal(size=min(R.shape))
        U, s, Vt = svds(E, k=k, v0=v0)
        pred = pred + scale * np.einsum("ij,ij->i", U[users] * s, Vt.T[items])
    return np.clip(pred, 0.0, 1.0).round(3)


def row_means(M: sp.csr_matrix, default: float) -> np.ndarray:
    """Each row's mean over its stored entries (`default` for an empty row)."""
    counts = np.diff(M.indptr)
    sums = np.asarray(M.sum(axis=1)).ravel()
    return np.where(counts > 0, sums / np.maximum(counts, 1), default)
