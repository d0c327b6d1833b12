"""Query answering on a KB: omega(POS) intervals with a choice of solver and scope, cached.

scope="relevant" (default, as in the paper): per query only the clauses whose features are all
fixed by the query and that the query does not already satisfy enter the LP (for clauses
``POS | ~a_v | ...``: those whose feature-value set is a subset of the query). scope="full": the
whole KB enters every LP. The two agree on complete queries; on partial queries clauses over
the left-out features still constrain POS under "full". With solver="highs" every LP goes
through `build_lp`'s exact presolve (fixed atoms substituted) and one reused `Highs` object;
`xcore.plkb.lp.FullKBLP` keeps one full model and changes bounds per query instead (warm
starts across queries; slower on large KBs, see bench/plkb_lp.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.plkb.kb import KB
from xcore.plkb.lp import DEFAULT_FACE_TOL, HighsLP, Interval
from xcore.plkb.lp_matrix import build_lp
from xcore.runtime import Progress, throttled

SOLVERS = ("highs", "pulp", "pulp-highs")
SCOPES = ("relevant", "full")


class Reasoner:
    """Answers queries on one KB; results are cached by query (a KB change needs a new Reasoner)."""

    def __init__(self, kb: KB, solver: str = "highs", scope: str = "relevant",
                 face_tol: float = DEFAULT_FACE_TOL, cache: bool = True) -> None:
        if solver not in SOLVERS:
            raise XcoreError(f"unknown solver {solver!r}; use one of {', '.join(SOLVERS)}")
        if scope not in SCOPES:
            raise XcoreError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
        self.kb, self.solver, self.scope, self.face_tol = kb, solver, scope, float(face_tol)
        self._highs: HighsLP | None = None
        self._cache: dict[bytes, Interval] | None = {} if cache else None
        self.n_lp = 0

    # ------------------------------------------------------------------ one query
    def _codes(self, codes: np.ndarray | None) -> np.ndarray:
        if codes is None:
            return np.full(self.kb.domain.n_features, -1, dtype=np.int64)
        codes = np.asarray(codes, dtype=np.int64).reshape(-1)
        if len(codes) != self.kb.domain.n_features:
            raise XcoreError(f"a query needs {self.kb.domain.n_features} codes, got {len(codes)}")
        return codes

    def query_kb(self, codes: np.ndarray | None) -> KB:
        """The KB that enters this query's LP (relevant clauses, or all of them)."""
        codes = self._codes(codes)
        return self.kb if self.scope == "full" else self.kb.relevant(codes)

    def interval(self, codes: np.ndarray | None) -> Interval:
        """[min, max] of omega(POS) on the optimal face of the query's LP."""
        codes = self._codes(codes)
        key = codes.tobytes()
        if self._cache is not None and key in self._cache:
            return self._cache[key]
        result = self._solve(codes, with_solutions=False)[0]
        if self._cache is not None:
            self._cache[key] = result
        return result

    def _solve(self, codes: np.ndarray, with_solutions: bool) -> tuple[Interval, dict | None]:
        self.n_lp += 1
        if self.solver == "highs":
            if self._highs is None:
                self._highs = HighsLP(self.face_tol)
            return self._highs.solve(build_lp(self.kb, codes, relevant_only=self.scope == "relevant"),
                                     with_solutions)
        from xcore.plkb.lp_pulp import solve_pulp  # pulp loads only when the pulp solver is chosen

        if with_solutions:
            raise XcoreError("clause-level solutions are available with solver='highs' only")
        name = "cbc" if self.solver == "pulp" else "highs"
        return solve_pulp(self.query_kb(codes), codes, name, self.face_tol), None

    # ------------------------------------------------------------------ many queries
    def intervals(self, codes: np.ndarray, progress: Progress | None = None) -> pd.DataFrame:
        """One row per query: lo, hi, mid, objective, n_clauses, positive."""
        codes = np.atleast_2d(np.asarray(codes, dtype=np.int64))
        n = len(codes)
        rows = []
        tick = throttled(progress)  # at most every 0.1 s: a cancel stops within one LP of that
        for i in range(n):
            rows.append(self.interval(codes[i]).as_dict())
            if tick is not None:
                tick((i + 1) / n, f"query {i + 1} of {n}")
        if progress is not None and n:
            progress(1.0, f"query {n} of {n}")
        cols = ["lo", "hi", "mid", "objective", "n_clauses", "positive"]
        return pd.DataFrame(rows, columns=cols)

    # ------------------------------------------------------------------ explanation support
    def clause_solution(self, codes: np.ndarray | None) -> pd.DataFrame:
        """The clauses in this query's LP with p, omega(c) at the min-POS and max-POS ends of the
        optimal face, their deviation |omega - p| and which way they pull ("higher"/"lower"/"met");
        for ``POS | ~a_v ...`` clauses omega(c) = omega(POS), so "higher" means "pushes to POS"."""
        codes = self._codes(codes)
        sub_idx = (np.arange(len(self.kb)) if self.scope == "full"
                   else np.flatnonzero(self.kb.relevant_mask(codes)))
        sub = self.kb.select(sub_idx)
        solver = HighsLP(self.face_tol)
        lp = build_lp(sub, codes)
        interval, sols = solver.solve(lp, with_solutions=True)
        assert sols is not None
        frame = sub.to_frame()
        frame.insert(0, "clause_id", sub_idx)
        frame["omega_at_lo"] = lp.clause_omega(sols["lo"])
        frame["omega_at_hi"] = lp.clause_omega(sols["hi"])
        omega = 0.5 * (frame["omega_at_lo"] + frame["omega_at_hi"])
        frame["deviation"] = np.abs(omega - frame["p"])
        # which way the clause would move its omega if it could: towards its p
        frame["wants"] = np.where(frame["p"] > omega + 1e-9, "higher",
                                  np.where(frame["p"] < omega - 1e-9, "lower", "met"))
        return frame

    def lp_size(self, codes: np.ndarray | None = None) -> dict[str, int]:
        """Rows, columns and non-zeros of the LP for a query (None: the full-KB LP)."""
        if codes is None:
            return build_lp(self.kb, None, substitute=False).size()
        codes = self._codes(codes)
        size = build_lp(self.query_kb(codes), codes).size()
        size["clauses"] = len(self.query_kb(codes))
        return size

    def clear_cache(self) -> None:
        if self._cache is not None:
            self._cache.clear()
