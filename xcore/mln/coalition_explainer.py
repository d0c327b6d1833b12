"""`CoalitionExplainer`: the machinery I-Explain and R-Explain share (see `xcore.mln.iexplain`):
solve coalitions, rank their formulas per query, merge the lists, build explanations."""

from __future__ import annotations

import time

import numpy as np

from xcore.errors import XcoreError
from xcore.explain.rank_aggregation import cemc, coalition_weights, footrule_assignment
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.mln.coalition_tables import (
    AGGREGATIONS,
    GIBBS_DEFAULTS,
    TABLE_KEYS,
    WORK_MODES,
    budgeted_options,
    check_int,
    coalition_atom_count,
    ranked_table,
    weighted_mean,
)
from xcore.mln.coalitions import INFERENCE_METHODS, Coalition, solve_coalition
from xcore.mln.importance import FormulaTexts, formula_direction
from xcore.mln.network import GroundMLN
from xcore.mln.network_index import NetworkIndex, entry_lookup
from xcore.runtime import Progress, scaled


class CoalitionExplainer:
    """Shared machinery: per-coalition ranked lists, CEMC aggregation, explanations."""

    method = ""

    def __init__(self, T: int, top_k: int, gibbs_options: dict | None, seed: int, inference: str,
                 cemc_options: dict | None, aggregation: str = "cemc", work: str = "per_coalition") -> None:
        self.aggregation = aggregation
        self.work = work
        self.T = T
        self.top_k = top_k
        self.gibbs_options = gibbs_options
        self.seed = seed
        self.inference = inference
        self.cemc_options = cemc_options

    def _check_common(self) -> None:
        check_int("T", self.T)
        check_int("top_k", self.top_k)
        check_int("seed", self.seed, low=0)
        if self.inference not in INFERENCE_METHODS:
            raise XcoreError(f"unknown inference {self.inference!r}; use one of {', '.join(INFERENCE_METHODS)}")
        if self.gibbs_options is not None and not isinstance(self.gibbs_options, dict):
            raise XcoreError("gibbs_options must be a dict of options of xcore.mln.gibbs.gibbs")
        if self.aggregation not in AGGREGATIONS:
            raise XcoreError(f"unknown aggregation {self.aggregation!r}; use one of {', '.join(AGGREGATIONS)}")
        if self.cemc_options is not None and not isinstance(self.cemc_options, dict):
            raise XcoreError("cemc_options must be a dict of options of xcore.explain.rank_aggregation.cemc")
        if self.work not in WORK_MODES:
            raise XcoreError(f"unknown work {self.work!r}; use one of {', '.join(WORK_MODES)}")

    def _solve_all(self, coalitions: list[Coalition], rngs: list[np.random.Generator], mln: GroundMLN,
                   index: NetworkIndex | None, progress: Progress | None, start: float, total: float,
                   label: str) -> None:
        """Solve every coalition with its (budgeted) Gibbs options and per-coalition seed."""
        sizes = [coalition_atom_count(mln, c) for c in coalitions]
        opts = budgeted_options(self.gibbs_options, sizes, mln.n_atoms, self.work)
        for i, (coal, rng, o) in enumerate(zip(coalitions, rngs, opts)):  # one pass per coalition
            sweeps = None if progress is None else scaled(
                lambda f, m, i=i: progress(f, f"{label} {i + 1}/{len(coalitions)}: {m}"),
                (start + i - 1) / total, (start + i) / total)  # ends where the report below says it is done
            solve_coalition(coal, mln, index, self.inference, self._gibbs_options(rng, o), progress=sweeps)
            if progress:
                progress((start + i) / total, f"{label} {i + 1}/{len(coalitions)}: {coal.n_clauses} clauses, "
                                             f"{len(coal.network_atoms)} query atoms ({coal.inference})")
        self.coalition_options_ = opts

    def _gibbs_options(self, rng: np.random.Generator, options: dict | None = None) -> dict:
        """The Gibbs options of one coalition (`options`, else the user's), with a per-coalition seed
        unless one is given."""
        opts = dict((self.gibbs_options or {}) if options is None else options)
        opts.setdefault("seed", int(rng.integers(0, 2**31 - 1)))
        return opts

    # ------------------------------------------------------------------ after the coalitions
    def _finish(self, model, mln: GroundMLN, coalitions: list[Coalition], borrow: bool) -> None:
        self.model_ = model
        self.mln_ = mln
        self.coalition_details_ = coalitions
        mats = [c.importance_matrix(mln.n_atoms, mln.n_clauses, mln) for c in coalitions]
        self.betas_ = coalition_weights(mats)
        self.norms_ = np.array([float(np.sqrt((m.data ** 2).sum())) for m in mats])
        tables = [ranked_table(c, mln, self.top_k) for c in coalitions]
        if borrow:
            tables = [self._borrow(c, t) for c, t in zip(coalitions, tables)]
        self._tables = tables
        marg = np.full((len(coalitions), mln.n_atoms), np.nan)
        for i, c in enumerate(coalitions):
            marg[i, c.network_atoms] = c.marginals
        self._marginals = marg
        texts = getattr(model, "_texts", None)  # share the model's (M-Explain's) texts: built once per rule
        if not isinstance(texts, FormulaTexts) or texts.mln is not mln:
            texts = FormulaTexts(mln)
            if getattr(model, "mln_", None) is mln and getattr(model, "_texts", 0) is None:
                model._texts = texts
        self._texts = texts
        self._target_texts = mln.atoms_text()  # every query's text at once, not one store lookup per query
        self._cache: dict[int, Explanation] = {}

    def _borrow(self, coalition: Coalition, table: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return table

    def _need_fit(self) -> None:
        if not hasattr(self, "coalition_details_"):
            raise XcoreError(f"fit the {self.method} explainer first: .fit(model, ...)")

    # ------------------------------------------------------------------ explanations
    def lists_for(self, atom: str | int) -> list[list[int]]:
        """The T ranked lists (clause indices, possibly borrowed, possibly empty) of a query atom."""
        self._need_fit()
        q = self.model_.atom_column(atom)
        return [t["clause"][slice(*self._bounds(t, q))].tolist() for t in self._tables]

    @staticmethod
    def _bounds(table: dict[str, np.ndarray], q: int) -> tuple[int, int]:
        a = table["atom"]
        return int(np.searchsorted(a, q, "left")), int(np.searchsorted(a, q, "right"))

    def explain(self, atom: str | int) -> Explanation:
        """The unified (CEMC) ranking of the ground formulas of one query atom (text or column)."""
        self._need_fit()
        q = self.model_.atom_column(atom)
        if q not in self._cache:
            self._cache[q] = self._explain(q)
        return self._cache[q]

    def explain_all(self) -> ExplanationSet:
        """`explain` for every query atom; meta carries the sampling work, times and the count of
        queries in no coalition (their prediction is the full model's marginal)."""
        self._need_fit()
        t0 = time.perf_counter()
        exps = [self.explain(q) for q in range(self.mln_.n_atoms)]
        self.explain_seconds_ = time.perf_counter() - t0
        return ExplanationSet(exps, method=self.method, meta={"T": len(self.coalition_details_),
                                                               "top_k": self.top_k, "betas": self.betas_.tolist(),
                                                               **self.work_meta(),
                                                               "queries_in_no_coalition": sum(
                                                                   e.meta["coalitions_with_query"] == 0 for e in exps)})

    def work_meta(self) -> dict:
        """Sampling work of the fit: atom updates in all, kept samples and burn-in per coalition, mode
        (deterministic, so it may go into explanation meta; times are in `stage_seconds_`)."""
        self._need_fit()
        cs = self.coalition_details_
        opts = getattr(self, "coalition_options_", [{} for _ in cs])
        return {"work": self.work, "atom_updates": int(sum(c.atom_updates for c in cs)),
                "coalition_samples": [int({**GIBBS_DEFAULTS, **o}["n_samples"]) for o in opts],
                "coalition_burn_in": [int({**GIBBS_DEFAULTS, **o}["burn_in"]) for o in opts]}

    def _explain(self, q: int) -> Explanation:
        """The explanation of query column `q`: the coalitions' lists merged, one item per ranked formula."""
        parts = []
        for i, t in enumerate(self._tables):
            lo, hi = self._bounds(t, q)
            if hi > lo:
                parts.append((i, {k: t[k][lo:hi] for k in TABLE_KEYS}))
        ranking, objective = self._aggregate(parts)
        items = self._items(q, parts, ranking)
        return self._explanation(q, parts, items, objective)

    def _aggregate(self, parts: list[tuple[int, dict[str, np.ndarray]]]) -> tuple[list[int], float | None]:
        """The merged top-k clause ranking of the coalitions' lists and its footrule objective."""
        if not parts:
            return [], None
        lists = [p["clause"].tolist() for _, p in parts]
        w = self.betas_[[i for i, _ in parts]]
        if not (w > 0).any():
            w = np.ones(len(parts))
        n_items = len({c for lst in lists for c in lst})
        if all(lst == lists[0] for lst in lists):  # identical lists: that list is optimal (distance 0)
            return [int(c) for c in lists[0][:self.top_k]], 0.0
        if self.aggregation == "exact_footrule":
            agg = footrule_assignment(lists, weights=w, k=min(self.top_k, n_items))
        else:
            agg = cemc(lists, weights=w, k=min(self.top_k, n_items), seed=self.seed, **(self.cemc_options or {}))
        return [int(c) for c in agg.ranking], float(agg.objective)

    def _items(self, q: int, parts: list[tuple[int, dict[str, np.ndarray]]],
               ranking: list[int]) -> list[ExplanationItem]:
        """One item per ranked clause, its score the beta-weighted mean importance over the coalitions."""
        mln, betas = self.mln_, self.betas_
        store = mln.store
        atom_id = int(store.target_ids[q])
        explainable = {p.name: bool(p.explainable) for p in store.schema}
        coal = np.concatenate([np.full(len(p["clause"]), i) for i, p in parts]) if parts else np.zeros(0, int)
        cat = {k: np.concatenate([p[k] for _, p in parts]) if parts else np.zeros(0) for k in TABLE_KEYS}
        entries = entry_lookup(mln, np.array(ranking, dtype=np.int64), np.full(len(ranking), q))
        items = []
        for pos, c in enumerate(ranking):  # one object per explanation item
            sel = cat["clause"] == c
            wi = betas[coal[sel]]
            imp = cat["importance"][sel]
            est = np.isfinite(imp)
            score = weighted_mean(imp[est], wi[est])
            t = self._texts.clause(c)
            hit = np.flatnonzero(t["atom_ids"] == atom_id)
            preds = [a.split("(", 1)[0] for a in t["atoms"]]
            ega = weighted_mean(cat["expected_given_atom"][sel][est], wi[est])
            items.append(ExplanationItem(
                kind="ground_formula", text=t["text"], natural=t["natural"], score=score if est.any() else 0.0,
                direction=formula_direction(float(mln.weights[c]),
                                            int(mln.entry_sign[entries[pos]]) if entries[pos] >= 0 else 0),
                atoms=t["atoms"], target_index=int(hit[0]) if len(hit) else None, roles=t["roles"],
                observed=t["observed"], explainable=all(explainable.get(p, True) for p in preds),
                extras={"rule": t["rule"], "rule_index": int(mln.rule[c]), "clause": int(c),
                        "weight": float(mln.weights[c]), "hard": bool(mln.hard[c]),
                        "sign": int(mln.entry_sign[entries[pos]]) if entries[pos] >= 0 else 0,
                        "expected": weighted_mean(cat["expected"][sel], wi),
                        "expected_given_atom": ega if est.any() else None, "se": None,
                        "estimable": bool(est.any()), "n_coalitions": int(sel.sum()),
                        "n_borrowed": int((cat["lender"][sel] >= 0).sum()), "aggregated_rank": pos + 1}))
        return items

    def _explanation(self, q: int, parts: list, items: list[ExplanationItem],
                     objective: float | None) -> Explanation:
        """The query's explanation around its items, with the coalitions' meta."""
        mln, store = self.mln_, self.mln_.store
        atom_id = int(store.target_ids[q])
        target = str(self._target_texts[q])
        pred = store.schema[target.split("(", 1)[0]]
        args = [store.constants[store.args[atom_id, i]] for i in range(pred.arity)]
        truth = store.truth[q]
        in_coalitions = int(np.isfinite(self._marginals[:, q]).sum())
        return Explanation(
            target=target, target_text=pred.render(args), method=self.method,
            prediction=self._model_prediction(q), prediction_kind="probability",
            truth=None if not np.isfinite(truth) else float(truth), items=items, ordering="given",
            meta={"n_formulas": int(len(mln.entries_of(q))), "importance": "I(f,Q) = E_Q[n_f] - E[n_f]",
                  "aggregation": ("exact weighted footrule (assignment)" if self.aggregation == "exact_footrule"
                                  else "CEMC (weighted footrule)") + ", weights beta_i = 1 - z_i / sum(z)",
                  "coalitions_with_query": in_coalitions, "lists": len(parts),
                  "coalition_estimate": self._coalition_estimate(q),
                  "borrowed_lists": int(sum(bool((p["lender"] >= 0).any()) for _, p in parts)),
                  "cemc_objective": objective})

    def _model_prediction(self, q: int) -> float | None:
        """The model's own marginal of the query: the one prediction every explanation of it explains."""
        res = getattr(self.model_, "result_", None)
        if res is not None and len(res.marginals) == self.mln_.n_atoms:
            return float(res.marginals[q])
        return self._prediction(q)

    def _coalition_estimate(self, q: int) -> float | None:
        """beta-weighted mean marginal over the coalitions whose network holds the atom, else None."""
        m = self._marginals[:, q]
        ok = np.isfinite(m)
        return weighted_mean(m[ok], self.betas_[ok]) if ok.any() else None

    def _prediction(self, q: int) -> float | None:
        """beta-weighted mean marginal over the coalitions whose network holds the atom; else the
        model's own marginal when it has run inference; else None."""
        m = self._marginals[:, q]
        ok = np.isfinite(m)
        if ok.any():
            return weighted_mean(m[ok], self.betas_[ok])
        res = getattr(self.model_, "result_", None)
        if res is not None and len(res.marginals) == self.mln_.n_atoms:
            return float(res.marginals[q])
        return None


