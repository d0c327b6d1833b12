"""Hinge-loss MRF as sparse arrays: the energy PSL minimises, with its gradient.

Soft potentials: phi_j(y) = max(0, A_j y + b_j), squared when `squared[j]`; energy
E(y) = sum_j w_j phi_j(y). Hard constraints: C y + d <= 0 (rows with `equality` are = 0).
`y` ranges over [0, 1]^n (the open atoms).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from xcore.errors import XcoreError


@dataclass
class HingeProgram:
    """Ground hinge-loss MRF over n open atoms: one sparse row per ground rule."""

    A: sp.csr_matrix
    b: np.ndarray
    w: np.ndarray
    squared: np.ndarray
    C: sp.csr_matrix | None = None
    d: np.ndarray | None = None
    equality: np.ndarray | None = None
    rule_index: np.ndarray | None = field(default=None)
    """Optional: which (lifted) rule each ground row came from."""

    def __post_init__(self) -> None:
        self.A = sp.csr_matrix(self.A, dtype=np.float64)
        m, n = self.A.shape
        self.b = np.asarray(self.b, dtype=np.float64).reshape(m)
        self.w = np.broadcast_to(np.asarray(self.w, dtype=np.float64), (m,)).copy()
        self.squared = np.broadcast_to(np.asarray(self.squared, dtype=bool), (m,)).copy()
        if np.any(self.w < 0) or not np.all(np.isfinite(self.w)):
            raise XcoreError("rule weights must be finite and >= 0")
        if self.C is None:
            self.C = sp.csr_matrix((0, n))
            self.d = np.zeros(0)
            self.equality = np.zeros(0, dtype=bool)
        else:
            self.C = sp.csr_matrix(self.C, dtype=np.float64)
            k = self.C.shape[0]
            self.d = np.asarray(self.d, dtype=np.float64).reshape(k)
            self.equality = (np.zeros(k, dtype=bool) if self.equality is None
                             else np.asarray(self.equality, dtype=bool).reshape(k))
            if self.C.shape[1] != n:
                raise XcoreError("hard constraints and potentials disagree on the number of atoms")

    @property
    def n_atoms(self) -> int:
        return self.A.shape[1]

    @property
    def n_potentials(self) -> int:
        return self.A.shape[0]

    @property
    def smooth(self) -> bool:
        """True when every potential is squared and there are no hard constraints."""
        return bool(self.squared.all()) and self.C.shape[0] == 0

    def distances(self, y: np.ndarray) -> np.ndarray:
        """Distance to satisfaction of every ground rule: max(0, A y + b)."""
        return np.maximum(self.A @ y + self.b, 0.0)

    def potentials(self, y: np.ndarray) -> np.ndarray:
        """phi_j(y) per ground rule (squared where marked)."""
        h = self.distances(y)
        return np.where(self.squared, h * h, h)

    def energy(self, y: np.ndarray) -> float:
        return float(self.w @ self.potentials(y))

    def energy_and_gradient(self, y: np.ndarray) -> tuple[float, np.ndarray]:
        """Energy and a (sub)gradient; exact gradient when the program is smooth."""
        h = np.maximum(self.A @ y + self.b, 0.0)
        phi = np.where(self.squared, h * h, h)
        dphi = np.where(self.squared, 2.0 * h, (h > 0).astype(np.float64))
        return float(self.w @ phi), self.A.T @ (self.w * dphi)

    def potential_derivatives(self, y: np.ndarray) -> sp.csr_matrix:
        """d phi_j / d y_i for every ground rule j and atom i (same sparsity as A)."""
        h = np.maximum(self.A @ y + self.b, 0.0)
        dphi = np.where(self.squared, 2.0 * h, (h > 0).astype(np.float64))
        return sp.csr_matrix(sp.diags(dphi) @ self.A)

    def constraint_violation(self, y: np.ndarray) -> float:
        """Largest violation of a hard constraint (0 when all hold)."""
        if self.C.shape[0] == 0:
            return 0.0
        r = self.C @ y + self.d
        viol = np.where(self.equality, np.abs(r), np.maximum(r, 0.0))
        return float(viol.max(initial=0.0))

    def kkt_residual(self, y: np.ndarray, lower: np.ndarray | float = 0.0, upper: np.ndarray | float = 1.0) -> float:
        """Largest projected-gradient component on the box: 0 at the optimum of a smooth program."""
        _, g = self.energy_and_gradient(y)
        fixed = np.asarray(upper) - np.asarray(lower) <= 1e-12
        pg = np.where(y <= np.asarray(lower) + 1e-9, np.minimum(g, 0.0),
                      np.where(y >= np.asarray(upper) - 1e-9, np.maximum(g, 0.0), g))
        pg = np.where(fixed, 0.0, pg)
        return float(np.abs(pg).max(initial=0.0))
