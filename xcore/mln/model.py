"""`MLNModel`: Markov logic rules -> ground network -> inference -> formula-importance explanations."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationSet
from xcore.logic.ast import Atom, Rule, Variable
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import DEFAULT_LIMIT, ground
from xcore.logic.mln_program import MLNProgram
from xcore.logic.mln_syntax import parse_mln
from xcore.logic.parser import parse_rules
from xcore.mln.exact import ExactResult, exact
from xcore.mln.gibbs import GibbsResult
from xcore.mln.importance import FormulaTexts, explain_atom, importance_frame
from xcore.mln.mcsat import choose_sampler, run_sampler
from xcore.mln.network import DEFAULT_HARD_WEIGHT, GroundMLN, build_ground_mln
from xcore.runtime import Progress


def read_rules(text: str, source: str = "rules") -> tuple[list[Rule], MLNProgram | None]:
    """Clauses of Markov-logic text: one clause per line (`parse_rules`), or, when that does not
    read it, a whole program with declarations and formulas (`parse_mln`: ``<=>``, ``EXIST``, ...),
    whose clauses are made when the data's domains are known (the program is returned then)."""
    try:
        return parse_rules(text, dialect="mln", source=source), None
    except XcoreError as first:
        try:
            program = parse_mln(text, source)
        except XcoreError:
            raise first from None
        return program.rules(), program


class EvidenceProjections:
    """Closed predicates that answer ``EXIST y P(x, y)`` from the evidence (`MLNProgram.rules`'s
    `derive`): ``some_P`` holds the true atoms of closed P projected on the other arguments, so an
    existential over a closed predicate is one literal instead of one per constant of y's type."""

    def __init__(self, data: RelationalDataset) -> None:
        self.data = data
        self.made: dict[tuple, Predicate] = {}
        self.tables: dict[str, pd.DataFrame] = {}

    def __call__(self, atom: Atom, bound: frozenset) -> Atom | None:
        names = {p.name for p in self.data.predicates}
        if atom.predicate not in names:
            return None
        pred = self.data.predicate(atom.predicate)
        hidden = [t.name for t in atom.args if isinstance(t, Variable) and t.name in bound]
        if not pred.closed or len(hidden) != len(set(hidden)) or not hidden:
            return None
        keep = [i for i, t in enumerate(atom.args) if not (isinstance(t, Variable) and t.name in bound)]
        free = [i for i in keep if isinstance(atom.args[i], Variable)]
        key = (atom.predicate, tuple(keep), tuple((i, atom.args[i].value) for i in keep if i not in free))
        if key not in self.made:
            obs = self.data.observations(atom.predicate)
            true = obs[obs["value"].astype(float) >= 0.5]
            for i in keep:
                if i not in free:
                    true = true[true[f"a{i}"].astype(str) == atom.args[i].value]
            name = f"some_{atom.predicate}" + (f"_{len(self.made)}" if any(k[0] == atom.predicate for k in self.made) else "")
            table = true[[f"a{i}" for i in free]].astype(str).drop_duplicates()
            table.columns = [f"a{k}" for k in range(len(free))]
            table = table.reset_index(drop=True)
            table["value"] = 1.0
            self.made[key] = Predicate(name, len(free), tuple(pred.types[i] for i in free), closed=True,
                                       explainable=pred.explainable,
                                       description=f"EXIST of {atom.predicate} over the evidence")
            self.tables[name] = table
        return Atom(self.made[key].name, tuple(atom.args[i] for i in free))

    def dataset(self) -> RelationalDataset:
        """The data with the projection predicates added (the data itself when none was made)."""
        if not self.made:
            return self.data
        d = self.data
        tables = {p.name: {part: d.table(p.name, part) for part in ("obs", "targets", "truth")} for p in d.predicates}
        for p in self.made.values():
            tables[p.name] = {"obs": self.tables[p.name]}
        return RelationalDataset(Schema.of([*d.predicates, *self.made.values()]), tables, name=d.name,
                                 description=d.description, rules=d.rules)


class MLNModel:
    """A Markov logic network: weighted (and hard) first-order clauses over a relational dataset.

    ``MLNModel(text).ground(dataset).infer()`` then `marginals()`, `explain(atom)`, `explain_all()`.
    """

    def __init__(self, rules: str | Sequence[Rule | str], hard_weight: float = DEFAULT_HARD_WEIGHT,
                 limit: int | None = DEFAULT_LIMIT) -> None:
        self.program: MLNProgram | None = None
        if isinstance(rules, str):
            self.rules, self.program = read_rules(rules)
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
        if self.program is not None:  # a full program: clauses depend on the data's domains (EXIST, +x)
            if isinstance(data, RelationalDataset):
                projections = EvidenceProjections(data)
                self.rules = self.program.rules({t: data.constants(t) for t in data.types()}, projections)
                data = projections.dataset()
            else:
                self.rules = self.program.rules()
        program = ground(self.rules, data, limit=self.limit, domain_variables=True)
        self.mln_ = build_ground_mln(program, self.hard_weight)
        self.result_, self._frame, self._texts = None, None, None
        return self

    def infer(self, method: str = "gibbs", progress: Progress | None = None, **options) -> "MLNModel":
        """Run "gibbs" (options of `xcore.mln.gibbs.gibbs`), "mcsat" (of `xcore.mln.mcsat.mcsat`),
        "sample" (whichever `choose_sampler` picks for this network; `progress` hears the sampler's
        steps) or "exact" enumeration (<= 20 atoms). `method_` is then "gibbs", "mcsat" or "exact"."""
        mln = self._need_mln()
        if method in ("gibbs", "mcsat", "sample"):
            method = choose_sampler(mln, "auto" if method == "sample" else method)
            self.result_ = run_sampler(mln, method, progress=progress, **options)
        elif method == "exact":
            self.result_ = exact(mln, **options)
        else:
            raise XcoreError(f"unknown inference method {method!r}; use 'gibbs', 'mcsat', 'sample' or 'exact'")
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
