"""The states weight learning solves for at every step, kept across steps (issue 26 item 4): the MAP
state under the current weights and the labelled state (latent atoms at their MAP values given the
labels). Only the weights change between steps, so the ground program, ADMM's blocks and the latent
sub-program are built once, and each solve starts from the last one's state."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from xcore.psl.admm import AdmmWarm, map_admm
from xcore.psl.inference import map_inference
from xcore.psl.program import HingeProgram


class MapSolver:
    """MAP states of one ground program under changing weights, as weight learning needs them: each
    solve starts from the last state; ADMM's blocks are built once and reweighted (`AdmmWarm`), its
    multipliers carried over. `admm` holds `map_admm` options (`admm_options`)."""

    def __init__(self, prog: HingeProgram, method: str = "auto", admm: Mapping[str, Any] | None = None) -> None:
        self.prog, self.method, self.admm = prog, method, dict(admm or {})
        self.warm = AdmmWarm.of(prog) if method == "admm" else None
        self.y: np.ndarray | None = None
        self.iterations = 0

    def solve(self, w: np.ndarray | None = None, y0: np.ndarray | None = None) -> np.ndarray:
        """The MAP state under potential weights `w` (default: the program's), from `y0` or the last state."""
        if w is not None:
            self.prog.w = w
        start = self.y if y0 is None else y0
        if self.warm is not None:
            res = map_admm(self.prog, start, **{"tol": 1e-9, **self.admm}, warm=self.warm)
        else:
            res = map_inference(self.prog, self.method, y0=start)
        self.y = res.y
        self.iterations += res.iterations
        return res.y


class LatentProblem:
    """The labelled state's problem: truth where known, the latent (unlabelled) atoms at their MAP values
    given the labels; the sub-program over the latent atoms is cut once, only its weights change."""

    def __init__(self, prog: HingeProgram, truth: np.ndarray, method: str = "auto",
                 admm: Mapping[str, Any] | None = None) -> None:
        truth = np.asarray(truth, dtype=np.float64)
        self.known = np.isfinite(truth)
        self.y = np.where(self.known, truth, 0.0)
        self.latent = np.flatnonzero(~self.known)
        self.solver = None
        if len(self.latent):
            known = self.known
            A, C = prog.A.tocsc(), prog.C.tocsc()
            b = prog.b + A[:, known] @ self.y[known]
            d = prog.d + C[:, known] @ self.y[known]
            C_lat = sp.csr_matrix(C[:, self.latent])
            active = np.diff(C_lat.indptr) > 0  # a hard row over labels only is the data's business, not ours
            sub = HingeProgram(A[:, self.latent], b, prog.w, prog.squared, C=C_lat[active], d=d[active],
                               equality=prog.equality[active], rule_index=prog.rule_index)
            self.solver = MapSolver(sub, method, admm)

    def state(self, w: np.ndarray, initial: np.ndarray | None = None) -> np.ndarray:
        """The labelled state under potential weights `w`; `initial` (all atoms) starts the latent ones."""
        y = self.y.copy()
        if self.solver is not None:
            y0 = None if initial is None else np.asarray(initial, dtype=np.float64)[self.latent]
            y[self.latent] = self.solver.solve(np.asarray(w, dtype=np.float64).copy(), y0)
        return y
