"""Joint PPLL: the weights of several PSL rules learned together (a candidate model with its priors).

PPLL per rule (`xcore.psl.ppll`) compares each rule with the uniform base measure on [0, 1], so on a
binary unary target a rule only gets weight when its potential is below the uniform expectation,
and weights learned one at a time do not compose (the prior alone outweighs every rule). Learned
jointly with the priors ``~T`` and ``T``, a rule's weight measures what it adds to the base rate,
which is the signal on such targets (bench/RESULTS.md, "ESMS on a unary target").

For scored atom i, Phi_{r,i}(t) is rule r's potential with y_i = t and every other atom at its true
value; the joint pseudo-log-likelihood
    L(w) = sum_i [ -sum_r w_r Phi_{r,i}(y*_i) - log int_0^1 exp(-sum_r w_r Phi_{r,i}(t)) dt ]
is concave in w. The integral is taken by the midpoint rule on `GRID` points (Phi is piecewise
quadratic and smooth enough; the test compares with the exact one-rule PPLL), and L is maximised
over 0 <= w <= w_max with L-BFGS-B using its exact gradient (expected minus observed potential).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

GRID = 65
"""Midpoints on [0, 1] the partition function is integrated on."""


@dataclass(frozen=True)
class GridPotential:
    """One rule's Phi_{r,i}(t) on the grid for every scored atom (`values`, atoms x GRID) and at the truth."""

    values: np.ndarray
    observed: np.ndarray
    truth: np.ndarray | None = None
    """The scored atoms' true values."""


def grid_points(n: int = GRID) -> np.ndarray:
    """The midpoints of n equal cells of [0, 1]."""
    return (np.arange(n) + 0.5) / n


def grid_potential(A: sp.csr_matrix, b: np.ndarray, squared: np.ndarray | bool, y_true: np.ndarray,
                   scored: np.ndarray, n: int = GRID) -> GridPotential:
    """Phi_{r,i} of one rule's ground rules (distance max(0, A y + b)) for the atoms in `scored`."""
    A = sp.csr_matrix(A, dtype=np.float64)
    m = A.shape[0]
    sq_rows = np.broadcast_to(np.asarray(squared, dtype=bool), (m,))
    y = np.asarray(y_true, dtype=np.float64)
    ctx = np.where(np.isfinite(y), y, 0.0)
    atoms = np.flatnonzero(scored)
    pos = np.full(A.shape[1], -1)
    pos[atoms] = np.arange(len(atoms))
    coo = A.tocoo()
    keep = np.asarray(scored, dtype=bool)[coo.col] & (coo.data != 0)
    row, col, a = coo.row[keep], coo.col[keep], coo.data[keep]
    c = (A @ ctx + b)[row] - a * ctx[col]  # each term is a * t + c with y_i = t
    sq = sq_rows[row]
    t = grid_points(n)
    d = np.maximum(a[:, None] * t[None, :] + c[:, None], 0.0)
    d = np.where(sq[:, None], d * d, d)
    at_truth = np.maximum(a * ctx[col] + c, 0.0)
    at_truth = np.where(sq, at_truth ** 2, at_truth)
    S = sp.csr_matrix((np.ones(len(a)), (pos[col], np.arange(len(a)))), shape=(len(atoms), len(a)))
    return GridPotential(np.asarray(S @ d), np.bincount(pos[col], at_truth, minlength=len(atoms)), ctx[atoms])


def joint_objective(w: np.ndarray, F: np.ndarray, O: np.ndarray) -> tuple[float, np.ndarray]:
    """L(w) and its gradient for stacked potentials F (rules x atoms x grid) and O (rules x atoms)."""
    r, a, g = F.shape
    flat = F.reshape(r, a * g)
    energy = (w @ flat).reshape(a, g)
    low = energy.min(axis=1, keepdims=True)
    e = np.exp(low - energy)
    z = e.sum(axis=1, keepdims=True)
    log_z = np.log(z[:, 0] / g) - low[:, 0]
    expected = flat @ (e / z).ravel()
    observed = O.sum(axis=1)
    return float(-(w @ observed) - log_z.sum()), expected - observed


def learn_joint_weights(potentials: Sequence[GridPotential], w_max: float = 100.0) -> np.ndarray:
    """argmax_{0 <= w <= w_max} L(w): the rules' weights learned together."""
    if not potentials:
        return np.zeros(0)
    F = np.stack([p.values for p in potentials])
    O = np.stack([p.observed for p in potentials])
    if F.shape[1] == 0:
        return np.zeros(len(potentials))

    def neg(w: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = joint_objective(w, F, O)
        return -value, -grad

    res = minimize(neg, np.zeros(len(potentials)), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, w_max)] * len(potentials), options={"maxiter": 500, "gtol": 1e-8})
    return np.clip(res.x, 0.0, w_max)


__all__ = ["GRID", "GridPotential", "grid_points", "grid_potential", "joint_objective", "learn_joint_weights"]


SHARPNESS = 400.0
"""Energy scale at which `local_map` reads the conditional's mean as its mode (sd about 1/sqrt(2 * 400))."""


def local_map(w: np.ndarray, F: np.ndarray, sharpness: float = SHARPNESS) -> np.ndarray:
    """Each scored atom's MAP value with every other atom at its truth (the squared-hinge energy's
    minimiser on the grid, smoothed: the mean of exp(-sharpness * E / sum(w)))."""
    r, a, g = F.shape
    energy = (w @ F.reshape(r, a * g)).reshape(a, g) * (sharpness / max(float(w.sum()), 1e-12))
    e = np.exp(energy.min(axis=1, keepdims=True) - energy)
    return (e / e.sum(axis=1, keepdims=True)) @ grid_points(g)


def learn_calibrated_weights(potentials: Sequence[GridPotential], truth: np.ndarray, fixed: Sequence[bool],
                             w_max: float = 100.0) -> np.ndarray:
    """Weights whose local MAP values fit the truth in squared error (MAP is what PSL predicts, and
    for squared hinges it depends on the weights' ratios only): `fixed` rules (the priors) start at 1,
    the others at 0; the result is scaled so that the largest weight is 10."""
    if not potentials:
        return np.zeros(0)
    F = np.stack([p.values for p in potentials])
    if F.shape[1] == 0:
        return np.zeros(len(potentials))
    y = np.asarray(truth, dtype=float)
    w0 = np.where(np.asarray(fixed, dtype=bool), 1.0, 0.0)
    if not w0.any():
        w0[:] = 1.0

    def loss(w: np.ndarray) -> float:
        return float(np.mean((local_map(w, F) - y) ** 2)) if w.sum() > 1e-9 else 1.0

    res = minimize(loss, w0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(potentials),
                   options={"maxiter": 200, "eps": 1e-4})
    w = np.clip(res.x, 0.0, None)
    w[w < 1e-3 * max(w.max(), 1e-12)] = 0.0
    return np.minimum(w * (10.0 / max(w.max(), 1e-12)), w_max)
