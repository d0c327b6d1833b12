"""R-Explain, the paper's baseline: coalitions of uniformly random ground formulas, no borrowing
(see `xcore.mln.iexplain`)."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.mln.coalition_explainer import CoalitionExplainer
from xcore.mln.coalition_tables import check_fraction, need_mln
from xcore.mln.coalitions import random_coalition
from xcore.mln.iexplain import IExplainer, object_frame
from xcore.mln.network import GroundMLN
from xcore.mln.network_index import NetworkIndex, build_index
from xcore.runtime import Progress


class RExplainer(CoalitionExplainer):
    """R-Explain (baseline): coalitions are uniform random sets of ground formulas; queries outside
    a coalition get no list from it. Sized like a fitted `IExplainer` given as `match` (its T and
    each coalition's number of clauses), else `size` (a fraction of the clauses, or a count)."""

    method = "R-Explain"

    def __init__(self, T: int = 10, top_k: int = 10, size: float | int = 0.5, gibbs_options: dict | None = None,
                 seed: int = 0, inference: str = "gibbs", match: IExplainer | None = None,
                 cemc_options: dict | None = None, aggregation: str = "cemc", work: str = "per_coalition") -> None:
        super().__init__(T, top_k, gibbs_options, seed, inference, cemc_options, aggregation, work)
        self.size = size
        self.match = match

    def fit(self, model, domain_type: str | None = None, progress: Progress | None = None) -> "RExplainer":
        """Sample and solve the random coalitions, weight them and prepare every query's lists."""
        self._check_common()
        mln = need_mln(model)
        match = self.match
        if match is not None:
            if not isinstance(match, IExplainer) or not hasattr(match, "coalition_details_"):
                raise XcoreError("match must be a fitted IExplainer")
            if match.mln_ is not mln:
                raise XcoreError("match was fitted on another network; fit both on the same grounded model")
            sizes = [c.n_clauses for c in match.coalition_details_]
            domain_type = domain_type or match.domain_type_
        else:
            s = self.size
            if isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 1:
                n = min(int(s), mln.n_clauses)
            else:
                n = max(1, math.floor(check_fraction("size", s) * mln.n_clauses + 0.5))
            sizes = [n] * self.T
        index = build_index(mln, domain_type) if domain_type is not None else None
        T = len(sizes)
        t0 = time.perf_counter()
        seeds = np.random.SeedSequence(self.seed).spawn(T)
        coalitions, rngs = [], []
        for ss, n in zip(seeds, sizes):  # one pass per coalition
            rng = np.random.default_rng(ss)
            coal = random_coalition(mln, n, rng)
            coal.objects = self._objects(mln, index, coal.members)
            coalitions.append(coal)
            rngs.append(rng)
        self._solve_all(coalitions, rngs, mln, None, progress, 1, max(T, 1), "random coalition")
        self.index_ = index
        self.domain_type_ = domain_type
        self.coalitions_ = [c.objects for c in coalitions]
        self._finish(model, mln, coalitions, borrow=False)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    @staticmethod
    def _objects(mln: GroundMLN, index: NetworkIndex | None, members: np.ndarray) -> np.ndarray:
        """Objects of the embedded domain among the members' arguments, or the members' texts."""
        if index is None:
            return mln.store.atom_text(mln.store.target_ids[members])
        ids = index.atom_args[members][index.atom_domain[members]]
        return mln.store.constants[np.unique(ids)]

    def coalition_frame(self) -> pd.DataFrame:
        """Like `IExplainer.coalition_frame` (positions and clusters of `match`, NaN/-1 without
        one); n_coalitions counts the random coalitions whose query atoms mention the object."""
        self._need_fit()
        if self.domain_type_ is None:
            raise XcoreError("R-Explain was fitted without a domain type; pass one (or match=IExplainer) "
                             "to plot objects")
        m = self.match
        if m is not None:
            names, frame = m.embedding_.names, object_frame(m.embedding_, m.clusters_, np.zeros(len(m.clusters_)))
        else:
            names = self.mln_.store.constants[self.index_.objects]
            frame = pd.DataFrame({"object": pd.Series(names, dtype=object), "x": np.nan, "y": np.nan,
                                  "cluster": np.full(len(names), -1, dtype=np.int64)})
        counts = np.zeros(len(names), dtype=np.int64)
        for objs in self.coalitions_:
            counts += np.isin(names, objs)
        frame["n_coalitions"] = counts
        return frame
