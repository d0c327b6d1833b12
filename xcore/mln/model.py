"""`MLNModel`: Markov logic rules -> ground network -> inference -> formula-importance explanations."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationSet
from xcore.logic.ast import Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import DEFAULT_LIMIT, ground
from xcore.logic.parser import parse_rules
from xcore.mln.exact import ExactResult, exact
from xcore.mln.gibbs import GibbsResult, gibbs
from xcore.mln.importance import FormulaTexts, explain_atom, importance_frame
from xcore.mln.network import DEFAULT_HARD_WEIGHT, GroundMLN, build_ground_mln
from xcore.runtime import Progress


class MLNModel:
    """A Markov logic network: weighted (and hard) first-order clauses over a relational dataset.

    ``MLNModel(text).ground(dataset).infer()`` then `marginals()`, `explain(atom)`, `explain_all()`.
    """

    def __init__(self, rules: str | Sequence[Rule | str], hard_weight: float = DEFAULT_HARD_WEIGHT,
                 limit: int | None = DEFAULT_LIMIT) -> None:
        if isinstance(rules, str):
            self.rules = parse_rules(rules, dialect="mln")
        else:
            self.rules = [r if isinstance(r, Rule) else parse_rules(r, dialect="mln")[0] for r in rules]
        self.hard_weight = hard_weight
        self.limit = limit
        self.mln_: GroundMLN | None = None
        self.result_: GibbsResult | ExactResult | None = None
        self.method_ = ""
        self._frame: pd.DataFrame | None = None
        self._texts: FormulaTexts | None = None

    # ------------------------------------------------------------------ steps
    def ground(self, data: RelationalDataset | AtomStore) -> "MLNModel":
        """Ground the rules (Markov-logic domain semantics) and fold the evidence."""
        program = ground(self.rules, data, limit=self.limit, domain_variables=True)
        self.mln_ = build_ground_mln(program, self.hard_weight)
        self.result_, self._frame, self._texts = None, None, None
        return self

    def infer(self, method: str = "gibbs", progress: Progress | None = None, **options) -> "MLNModel":
        """Run "gibbs" (options of `xcore.mln.gibbs.gibbs`; `progress` hears its sweeps) or "exact"
        enumeration (<= 20 atoms)."""
        mln = self._need_mln()
        if method == "gibbs":
            self.result_ = gibbs(mln, progress=progress, **options)
        elif method == "exact":
            self.result_ = exact(mln, **options)
        else:
            raise XcoreError(f"unknown inference method {method!r}; use 'gibbs' or 'exact'")
        self.method_ = method
        self.options_ = dict(options)
        self._frame = None
        return self

    # ------------------------------------------------------------------ results
    def marginals(self) -> pd.DataFrame:
        """One row per query atom: atom, marginal, se, rhat (NaN/0 for exact), truth."""
        mln, res = self._need_mln(), self._need_result()
        if isinstance(res, GibbsResult):
            se, rhat = res.marginal_se, res.rhat
        else:
            se, rhat = np.zeros(mln.n_atoms), np.full(mln.n_atoms, np.nan)
        return pd.DataFrame({"atom": mln.atoms_text(), "marginal": res.marginals, "se": se, "rhat": rhat,
                             "truth": mln.store.truth})

    def importance(self) -> pd.DataFrame:
        """All (query atom, ground formula) importances; see `importance_frame`."""
        if self._frame is None:
            self._frame = importance_frame(self._need_mln(), self._need_result())
        return self._frame

    def atom_column(self, atom: str | int) -> int:
        """Query-atom column of an atom given as text (``smokes(bob)``) or column number."""
        mln = self._need_mln()
        if isinstance(atom, (int, np.integer)) and not isinstance(atom, bool):
            if not 0 <= int(atom) < mln.n_atoms:
                raise XcoreError(f"query atom column {atom} out of range (0..{mln.n_atoms - 1})")
            return int(atom)
        texts = mln.atoms_text()
        hits = np.flatnonzero(texts == str(atom))
        if not len(hits):  # tolerate other spacing after commas: smokes(a,b)
            hits = np.flatnonzero(texts == ", ".join(p.strip() for p in str(atom).split(",")))
        if not len(hits):
            raise XcoreError(f"{atom!r} is not a query atom of this model")
        return int(hits[0])

    def explain(self, atom: str | int, top_k: int | None = None) -> Explanation:
        """M-Explain of one query atom: its ground formulas ranked by importance."""
        mln = self._need_mln()
        if self._texts is None:
            self._texts = FormulaTexts(mln)
        return explain_atom(mln, self._need_result(), self.atom_column(atom), top_k=top_k,
                            method=f"M-Explain ({self.method_})", texts=self._texts, frame=self.importance())

    def explain_all(self, top_k: int | None = None) -> ExplanationSet:
        """`explain` for every query atom."""
        mln = self._need_mln()
        exps = [self.explain(i, top_k) for i in range(mln.n_atoms)]
        return ExplanationSet(exps, method=f"M-Explain ({self.method_})")

    # ------------------------------------------------------------------ helpers
    def _need_mln(self) -> GroundMLN:
        if self.mln_ is None:
            raise XcoreError("ground the model first: MLNModel(...).ground(dataset)")
        return self.mln_

    def _need_result(self) -> GibbsResult | ExactResult:
        if self.result_ is None:
            raise XcoreError("run inference first: model.infer('gibbs') or model.infer('exact')")
        return self.result_
