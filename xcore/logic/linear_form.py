"""Ground rules as linear forms ``(A, b)`` over the target atoms: Lukasiewicz distance to satisfaction
``max(0, b + A @ y)`` of a clause, an arithmetic rule's ``A y + b`` (sparse, one build per rule)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from xcore.logic.ast import ArithmeticRule
from xcore.logic.atoms import AtomStore

if TYPE_CHECKING:
    from xcore.logic.grounding import GroundRules


def linear_form(ground: "GroundRules", store: AtomStore) -> tuple[sp.csr_matrix, np.ndarray]:
    """Lukasiewicz distance to satisfaction of each ground rule as ``max(0, b + A @ y)``.

    ``d = max(0, 1 - sum_j truth(lit_j))`` with ``truth = y`` for clause-positive and ``1 - y`` for
    clause-negative literals, so coefficient ``-sign_j`` and constant ``1 - #negative``. Observed
    atoms (value) and missing atoms (0) fold into ``b``; targets are columns of ``A`` (shape
    ``(n, n_targets)``); an atom occurring twice in one ground rule has its coefficients summed.

    An `ArithmeticRule` ``sum c_j a_j + k  rel  0`` gives its expression ``A y + b`` oriented as
    ``<= 0`` (negated for ``>=``; for ``=`` the caller adds the other direction or an equality).
    """
    n, L = ground.atom_ids.shape
    if ground.flat is not None:
        return _summation_form(ground, store)
    if isinstance(ground.rule, ArithmeticRule):
        flip = -1.0 if ground.rule.relation == ">=" else 1.0
        coef = flip * np.asarray(ground.rule.coefficients, dtype=np.float64)
        return _sparse_form(ground.atom_ids, coef, np.full(n, flip * ground.rule.constant), store)
    coef = -np.asarray(ground.signs, dtype=np.float64)
    b = np.full(n, 1.0 - float(np.sum(np.asarray(ground.signs) < 0)))
    return _sparse_form(ground.atom_ids, coef, b, store)


def _sparse_form(ids: np.ndarray, coef: np.ndarray, b: np.ndarray, store: AtomStore) -> tuple[sp.csr_matrix, np.ndarray]:
    """``(A, b)`` of ``b + sum_j coef_j * atom_j`` per row of atom ids (observed atoms fold into b)."""
    n, L = ids.shape
    observed, tindex = store.observed_value_ext, store.target_index_ext  # index -1 = missing atom
    tcol = np.empty((n, L), dtype=tindex.dtype)
    data = np.empty((n, L), dtype=np.float64)
    for j in range(L):  # loop over the rule's literals, not over ground rules
        col = ids[:, j]
        t = np.take(tindex, col)
        if coef[j] != 0:
            b += coef[j] * np.take(observed, col)
        tcol[:, j] = t
        np.multiply(t >= 0, coef[j], out=data[:, j])
    for j in range(L):
        for k in range(j + 1, L):
            dup = (tcol[:, k] >= 0) & (tcol[:, k] == tcol[:, j])
            if dup.any():
                data[dup, j] += data[dup, k]
                tcol[dup, k] = -1
    mask = (tcol >= 0) & (data != 0.0)
    counts = mask.sum(axis=1)
    indptr = np.zeros(n + 1, dtype=tindex.dtype if n * L < 2**31 - 1 else np.int64)
    np.cumsum(counts, out=indptr[1:])
    A = sp.csr_matrix((data[mask], tcol[mask], indptr), shape=(n, store.n_targets))
    return A, b


def _summation_form(ground: "GroundRules", store: AtomStore) -> tuple[sp.csr_matrix, np.ndarray]:
    """``(A, b)`` of a summation rule's ground rules from their flat entries (one sparse build)."""
    f = ground.flat
    flip = -1.0 if ground.rule.relation == ">=" else 1.0
    n = len(f.constant)
    observed, tindex = store.observed_value_ext, store.target_index_ext
    b = flip * f.constant + np.bincount(f.row, flip * f.coef * np.take(observed, f.atom), minlength=n)
    col = np.take(tindex, f.atom)
    t = col >= 0
    A = sp.csr_matrix((flip * f.coef[t], (f.row[t], col[t])), shape=(n, store.n_targets))
    A.sum_duplicates()
    A.eliminate_zeros()
    return A, b
