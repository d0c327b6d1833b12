"""I-Explain and R-Explain: formula-importance explanations of a Markov logic network from many
small coalitions (Al Farabi, Sarkhel, Dey, Venugopal 2021).

M-Explain (`xcore.mln.importance`) needs inference on the whole network. I-Explain instead:

1. embeds the objects of one domain (e.g. reviews) from their co-occurrence in ground formulas
   (`xcore.mln.embeddings`), clusters them, and cuts `T` coalitions: sub-networks over objects
   sampled from every cluster, without approximately symmetric clauses
   (`xcore.mln.coalitions`, where the dropping and its importance mapping are documented);
2. runs inference on every coalition and computes I(f, Q) there; coalition i gets the list weight
   ``beta_i = 1 - z_i / sum(z)`` from the Frobenius norm z_i of its importance matrix
   (`xcore.explain.rank_aggregation.coalition_weights`);
3. for a query Q, takes from every coalition its top-k ground formulas by |I(f, Q)|. When Q is not
   in coalition i it *borrows*: the nearest query of the same predicate in coalition i (Euclidean
   distance between the concatenated embeddings of their embedded-domain arguments; only queries
   that have a list there) lends its list, with its objects replaced by Q's in every formula; a
   mapped formula is kept only if it is a ground formula of Q in the full network (its value is
   the lender's importance);
4. merges the T lists with weighted Cross-Entropy Monte Carlo rank aggregation (`cemc`, weights
   beta); ``aggregation="exact_footrule"`` instead solves the same weighted-footrule problem
   exactly as a linear assignment (`footrule_assignment`), far faster. The score shown for a formula
   is the beta-weighted mean of its importance over the coalitions that ranked it (equal weights
   when those betas are all 0).

Sampling work: with ``work="equal"`` the T coalitions together make as many Gibbs atom updates as
one run of the given options on the full network (M-Explain's budget), each coalition with its own
seed; ``work="per_coalition"`` (the paper) runs the options in every coalition. `explain_all`'s meta
reports the atom updates, samples per coalition and the queries in no coalition.

R-Explain, the paper's baseline, samples each coalition as a uniform random set of ground formulas
(of the size of the matching I-Explain coalition when given one) and borrows nothing.

Formulas are identified by their clause index in the full folded network (`MLNModel.mln_`), so
the items carry the same texts, atoms and extras as M-Explain's (`explain_atom`).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.explain.rank_aggregation import cemc, coalition_weights, footrule_assignment
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.mln.coalitions import (
    INFERENCE_METHODS,
    Coalition,
    NetworkIndex,
    build_index,
    cluster_objects,
    cut_coalition,
    entry_lookup,
    random_coalition,
    sample_objects,
    solve_coalition,
)
from xcore.mln.embeddings import CONTEXTS, ObjectEmbedding, embed_objects
from xcore.mln.importance import FormulaTexts, formula_direction
from xcore.mln.network import GroundMLN
from xcore.runtime import Progress, scaled

_TABLE_KEYS = ("atom", "rank", "clause", "importance", "expected", "expected_given_atom", "lender")


AGGREGATIONS: tuple[str, ...] = ("cemc", "exact_footrule")
"""How the coalition lists are merged: CEMC (the paper's choice) or the exact footrule optimum."""
WORK_MODES: tuple[str, ...] = ("per_coalition", "equal")
"""Sampling work of the coalitions: every coalition gets the Gibbs options as given (the paper: T
times the sweeps of a smaller network), or "equal": all coalitions together make as many atom
updates as one run of those options on the full network (fewer sweeps per coalition)."""
_GIBBS_DEFAULTS = {"n_samples": 1000, "burn_in": 200, "n_chains": 4}


def coalition_atom_count(mln: GroundMLN, coalition: Coalition) -> int:
    """Query atoms of the coalition's network (those occurring in its kept clauses)."""
    return int(len(np.unique(mln.S[coalition.clauses].indices)))


def budgeted_options(options: dict | None, sizes: list[int], n_full: int, work: str) -> list[dict]:
    """Per-coalition Gibbs options. "equal": every coalition runs the same number of sweeps, scaled
    by n_full / sum(sizes) (burn-in and kept samples alike), so the total atom updates equal one run
    of `options` on the `n_full`-atom network (up to rounding; at least 1 kept sample)."""
    base = {**_GIBBS_DEFAULTS, **(options or {})}
    if work == "per_coalition":
        return [dict(options or {}) for _ in sizes]
    scale = n_full / max(sum(sizes), 1)
    n_s = max(1, int(round(base["n_samples"] * scale)))
    b_in = int(round(base["burn_in"] * scale))
    return [{**(options or {}), "n_samples": n_s, "burn_in": b_in} for _ in sizes]

def _check_fraction(name: str, v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v) \
            or not 0 < v <= 1:
        raise XcoreError(f"{name} must be a number in (0, 1], got {v!r}")
    return float(v)


def _check_int(name: str, v: object, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise XcoreError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def _need_mln(model) -> GroundMLN:
    mln = getattr(model, "mln_", None)
    if mln is None or mln.store is None or mln.program is None:
        raise XcoreError("ground the model first: MLNModel(...).ground(dataset)")
    return mln


def ranked_table(coalition: Coalition, mln: GroundMLN, top_k: int) -> dict[str, np.ndarray]:
    """Per query atom of the coalition, its top-k formulas by |importance| (non-estimable last,
    ties by |weight x importance| as in `xcore.mln.importance.rank_by_importance`, then clause
    index), as arrays sorted by (atom, rank); ``lender`` = -1 (own list)."""
    e = coalition.entries
    atom, clause = mln.entry_atom[e], mln.entry_clause[e]
    score = np.nan_to_num(np.abs(coalition.importance), nan=-1.0)
    effect = np.nan_to_num(np.abs(coalition.importance * mln.weights[clause]), nan=-1.0)
    order = np.lexsort((clause, -effect, -score, atom))
    a = atom[order]
    first = np.ones(len(a), dtype=bool)
    first[1:] = a[1:] != a[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(len(a)), 0))
    rank = np.arange(len(a)) - start
    rows = order[rank < top_k]
    return {"atom": atom[rows], "rank": rank[rank < top_k], "clause": clause[rows],
            "importance": coalition.importance[rows], "expected": coalition.expected[rows],
            "expected_given_atom": coalition.expected_given_atom[rows],
            "lender": np.full(len(rows), -1, dtype=np.int64)}


def substitute_formulas(index: NetworkIndex, clauses: np.ndarray, lenders: np.ndarray,
                        borrowers: np.ndarray) -> np.ndarray:
    """Map each ground formula `clauses[j]` of query atom `lenders[j]` to the ground formula of
    `borrowers[j]` obtained by replacing, in every atom, the lender's embedded-domain arguments by
    the borrower's (argument position by position). -1 where that formula is not a ground formula
    of the borrower in the full folded network. Vectorised (hash lookups)."""
    clauses = np.asarray(clauses, dtype=np.int64)
    lenders, borrowers = np.asarray(lenders, dtype=np.int64), np.asarray(borrowers, dtype=np.int64)
    if not len(clauses):
        return np.zeros(0, dtype=np.int64)
    B = index.bindings[clauses]
    vd = index.var_domain[clauses]
    src, dst = index.atom_args[lenders], index.atom_args[borrowers]
    dom = index.atom_domain[lenders]
    out = B.copy()
    for p in range(src.shape[1]):  # loop over argument positions, not formulas
        hit = vd & dom[:, p, None] & (B == src[:, p, None])
        out = np.where(hit, dst[:, p, None], out)
    mapped = index.clause_lookup(index.mln.rule[clauses], out)
    ok = mapped >= 0
    ok[ok] = index.entry_lookup(mapped[ok], borrowers[ok]) >= 0
    return np.where(ok, mapped, -1)


class _CoalitionExplainer:
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
        _check_int("T", self.T)
        _check_int("top_k", self.top_k)
        _check_int("seed", self.seed, low=0)
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
                "coalition_samples": [int({**_GIBBS_DEFAULTS, **o}["n_samples"]) for o in opts],
                "coalition_burn_in": [int({**_GIBBS_DEFAULTS, **o}["burn_in"]) for o in opts]}

    def _explain(self, q: int) -> Explanation:
        mln, betas = self.mln_, self.betas_
        parts = []
        for i, t in enumerate(self._tables):
            lo, hi = self._bounds(t, q)
            if hi > lo:
                parts.append((i, {k: t[k][lo:hi] for k in _TABLE_KEYS}))
        ranking: list[int] = []
        objective = None
        if parts:
            lists = [p["clause"].tolist() for _, p in parts]
            w = betas[[i for i, _ in parts]]
            if not (w > 0).any():
                w = np.ones(len(parts))
            n_items = len({c for lst in lists for c in lst})
            if all(lst == lists[0] for lst in lists):  # identical lists: that list is optimal (distance 0)
                ranking, objective = [int(c) for c in lists[0][:self.top_k]], 0.0
            elif self.aggregation == "exact_footrule":
                agg = footrule_assignment(lists, weights=w, k=min(self.top_k, n_items))
                ranking, objective = [int(c) for c in agg.ranking], float(agg.objective)
            else:
                agg = cemc(lists, weights=w, k=min(self.top_k, n_items), seed=self.seed, **(self.cemc_options or {}))
                ranking, objective = [int(c) for c in agg.ranking], float(agg.objective)
        store = mln.store
        atom_id = int(store.target_ids[q])
        explainable = {p.name: bool(p.explainable) for p in store.schema}
        coal = np.concatenate([np.full(len(p["clause"]), i) for i, p in parts]) if parts else np.zeros(0, int)
        cat = {k: np.concatenate([p[k] for _, p in parts]) if parts else np.zeros(0) for k in _TABLE_KEYS}
        entries = entry_lookup(mln, np.array(ranking, dtype=np.int64), np.full(len(ranking), q))
        items = []
        for pos, c in enumerate(ranking):  # one object per explanation item
            sel = cat["clause"] == c
            wi = betas[coal[sel]]
            imp = cat["importance"][sel]
            est = np.isfinite(imp)
            score = _weighted_mean(imp[est], wi[est])
            t = self._texts.clause(c)
            hit = np.flatnonzero(t["atom_ids"] == atom_id)
            preds = [a.split("(", 1)[0] for a in t["atoms"]]
            ega = _weighted_mean(cat["expected_given_atom"][sel][est], wi[est])
            items.append(ExplanationItem(
                kind="ground_formula", text=t["text"], natural=t["natural"], score=score if est.any() else 0.0,
                direction=formula_direction(float(mln.weights[c]),
                                            int(mln.entry_sign[entries[pos]]) if entries[pos] >= 0 else 0),
                atoms=t["atoms"], target_index=int(hit[0]) if len(hit) else None, roles=t["roles"],
                observed=t["observed"], explainable=all(explainable.get(p, True) for p in preds),
                extras={"rule": t["rule"], "rule_index": int(mln.rule[c]), "clause": int(c),
                        "weight": float(mln.weights[c]), "hard": bool(mln.hard[c]),
                        "sign": int(mln.entry_sign[entries[pos]]) if entries[pos] >= 0 else 0,
                        "expected": _weighted_mean(cat["expected"][sel], wi),
                        "expected_given_atom": ega if est.any() else None, "se": None,
                        "estimable": bool(est.any()), "n_coalitions": int(sel.sum()),
                        "n_borrowed": int((cat["lender"][sel] >= 0).sum()), "aggregated_rank": pos + 1}))
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
        return _weighted_mean(m[ok], self.betas_[ok]) if ok.any() else None

    def _prediction(self, q: int) -> float | None:
        """beta-weighted mean marginal over the coalitions whose network holds the atom; else the
        model's own marginal when it has run inference; else None."""
        m = self._marginals[:, q]
        ok = np.isfinite(m)
        if ok.any():
            return _weighted_mean(m[ok], self.betas_[ok])
        res = getattr(self.model_, "result_", None)
        if res is not None and len(res.marginals) == self.mln_.n_atoms:
            return float(res.marginals[q])
        return None


def _weighted_mean(values: np.ndarray, weights: np.ndarray) -> float:
    """Weighted mean; equal weights when the weights sum to 0; 0.0 for no values."""
    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return 0.0
    w = np.asarray(weights, dtype=np.float64)
    if w.sum() <= 0:
        w = np.ones(len(values))
    return float(np.dot(values, w) / w.sum())


class IExplainer(_CoalitionExplainer):
    """I-Explain: explanations from embedding-guided coalitions merged by weighted rank aggregation.

    ``IExplainer(C=0.2, S=0.5, T=10).fit(model, "review").explain("positive(r7)")``; `model` is a
    grounded `MLNModel`. `C` is the fraction of objects that become clusters, `S` the fraction of
    every cluster sampled into a coalition, `T` the number of coalitions.
    """

    method = "I-Explain"

    def __init__(self, C: float = 0.2, S: float = 0.5, T: int = 10, top_k: int = 10, embedding_dim: int = 16,
                 gibbs_options: dict | None = None, seed: int = 0, inference: str = "gibbs",
                 embedding_epochs: int = 20, context: str = "body", dedup: bool = True,
                 cemc_options: dict | None = None, aggregation: str = "cemc", work: str = "per_coalition") -> None:
        super().__init__(T, top_k, gibbs_options, seed, inference, cemc_options, aggregation, work)
        self.C = C
        self.S = S
        self.embedding_dim = embedding_dim
        self.embedding_epochs = embedding_epochs
        self.context = context
        self.dedup = dedup

    def fit(self, model, domain_type: str, progress: Progress | None = None) -> "IExplainer":
        """Embed, cluster, cut and solve `T` coalitions, weight them and prepare every query's lists."""
        _check_fraction("C", self.C)
        _check_fraction("S", self.S)
        self._check_common()
        _check_int("embedding_dim", self.embedding_dim)
        _check_int("embedding_epochs", self.embedding_epochs)
        if self.context not in CONTEXTS:
            raise XcoreError(f"unknown context {self.context!r}; use one of {', '.join(CONTEXTS)}")
        mln = _need_mln(model)
        index = build_index(mln, domain_type)  # validates the domain type
        total = self.T + 2
        t0 = time.perf_counter()
        if progress:
            progress(0.0, f"embedding the {domain_type} objects")
        emb = embed_objects(mln, domain_type, dim=self.embedding_dim, epochs=self.embedding_epochs, seed=self.seed,
                            context=self.context, progress=scaled(progress, 0.0, 1 / total) if progress else None)
        t_emb = time.perf_counter() - t0
        labels = cluster_objects(emb.vectors, self.C, seed=self.seed)
        n_const = mln.store.n_constants
        cluster_of = np.full(n_const, -1, dtype=np.int64)
        cluster_of[emb.constant_ids] = labels
        if progress:
            progress(1 / total, f"{labels.max() + 1} clusters of {len(labels)} objects")
        seeds = np.random.SeedSequence(self.seed).spawn(self.T)
        self.stage_seconds_ = {"embedding (skip-gram)": t_emb, "clustering (k-means)": time.perf_counter() - t0 - t_emb}
        t1 = time.perf_counter()
        coalitions, sampled_rows, rngs = [], [], []
        for ss in seeds:  # one pass per coalition
            rng = np.random.default_rng(ss)
            mask = sample_objects(labels, self.S, rng)
            sampled = np.zeros(n_const, dtype=bool)
            sampled[emb.constant_ids[mask]] = True
            coalitions.append(cut_coalition(index, sampled, cluster_of, dedup=self.dedup, objects=emb.names[mask]))
            sampled_rows.append(mask)
            rngs.append(rng)
        self.stage_seconds_["cutting coalitions"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        self._solve_all(coalitions, rngs, mln, index, progress, 2, total, "coalition")
        solve = time.perf_counter() - t1
        sampling = float(sum(c.seconds for c in coalitions))
        self.stage_seconds_["coalition sampling (Gibbs)"] = sampling
        self.stage_seconds_["coalition grounding and importance"] = solve - sampling
        t1 = time.perf_counter()
        self.index_ = index
        self.domain_type_ = domain_type
        self.embedding_ = emb
        self.clusters_ = labels
        self.sampled_ = np.array(sampled_rows, dtype=bool).reshape(self.T, len(labels))
        self.coalitions_ = [c.objects for c in coalitions]
        self._atom_vectors, self._atom_group = self._query_vectors(index, emb)
        self._finish(model, mln, coalitions, borrow=True)
        self.stage_seconds_["weights, ranked lists, borrowing"] = time.perf_counter() - t1
        self.fit_seconds_ = time.perf_counter() - t0
        if progress:
            progress(1.0, f"{self.T} coalitions in {self.fit_seconds_:.1f} s")
        return self

    # ------------------------------------------------------------------ borrowing
    @staticmethod
    def _query_vectors(index: NetworkIndex, emb: ObjectEmbedding) -> tuple[np.ndarray, np.ndarray]:
        """Per query atom: concatenated embeddings of its embedded-domain arguments (zeros elsewhere)
        and a group id (same predicate and same other arguments: only those can lend to each other)."""
        row = np.full(index.n_constants + 1, -1, dtype=np.int64)
        row[emb.constant_ids] = np.arange(len(emb.constant_ids))
        args, dom = index.atom_args, index.atom_domain
        parts = []
        for p in range(args.shape[1]):
            r = row[args[:, p]]
            v = np.where((dom[:, p] & (r >= 0))[:, None], emb.vectors[np.maximum(r, 0)], 0.0)
            parts.append(v)
        vecs = np.concatenate(parts, axis=1) if parts else np.zeros((len(args), 0))
        key = np.column_stack([index.atom_pred.astype(np.int64), np.where(dom, -2, args)])
        group = np.unique(key, axis=0, return_inverse=True)[1].reshape(-1)
        return vecs, group

    def _borrow(self, coalition: Coalition, table: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Add borrowed lists for the queries outside the coalition (see the module docstring)."""
        from sklearn.neighbors import NearestNeighbors

        index = self.index_
        n = index.mln.n_atoms
        member = np.zeros(n, dtype=bool)
        member[coalition.members] = True
        has_list = np.zeros(n, dtype=bool)
        has_list[table["atom"]] = True
        borrowers, lenders = [], []
        for g in np.unique(self._atom_group).tolist():  # one pass per query group (predicate)
            in_g = self._atom_group == g
            miss = np.flatnonzero(in_g & ~member)
            have = np.flatnonzero(in_g & has_list)
            if not len(miss) or not len(have):
                continue
            nn = NearestNeighbors(n_neighbors=1).fit(self._atom_vectors[have])
            near = nn.kneighbors(self._atom_vectors[miss], return_distance=False)[:, 0]
            borrowers.append(miss)
            lenders.append(have[near])
        if not borrowers:
            return table
        b, l = np.concatenate(borrowers), np.concatenate(lenders)
        lo = np.searchsorted(table["atom"], l, "left")
        hi = np.searchsorted(table["atom"], l, "right")
        counts = hi - lo
        rows = np.repeat(lo, counts) + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        bq, lq = np.repeat(b, counts), np.repeat(l, counts)
        mapped = substitute_formulas(index, table["clause"][rows], lq, bq)
        ok = mapped >= 0
        rows, bq, lq, mapped = rows[ok], bq[ok], lq[ok], mapped[ok]
        _, first = np.unique(bq * index.mln.n_clauses + mapped, return_index=True)  # a formula once per query
        first = np.sort(first)
        rows, bq, lq, mapped = rows[first], bq[first], lq[first], mapped[first]
        new = {"atom": bq, "rank": table["rank"][rows], "clause": mapped, "importance": table["importance"][rows],
               "expected": table["expected"][rows], "expected_given_atom": table["expected_given_atom"][rows],
               "lender": lq}
        out = {k: np.concatenate([table[k], new[k]]) for k in _TABLE_KEYS}
        order = np.lexsort((out["rank"], out["atom"]))
        return {k: v[order] for k, v in out.items()}

    # ------------------------------------------------------------------ plotting data
    def coalition_summary(self) -> pd.DataFrame:
        """One row per coalition: objects sampled, ground formulas kept, symmetric formulas merged
        into a representative, and its weight beta."""
        self._need_fit()
        return pd.DataFrame({"coalition": np.arange(1, len(self.coalitions_) + 1),
                             "objects": [len(c) for c in self.coalitions_],
                             "ground formulas": [len(d.clauses) for d in self.coalition_details_],
                             "symmetric formulas merged": [len(d.dropped) for d in self.coalition_details_],
                             "beta": np.asarray(self.betas_, dtype=float)})

    def coalition_frame(self) -> pd.DataFrame:
        """One row per embedded object: object, x, y (2-D PCA of the embedding), cluster and the
        number of coalitions it was sampled into."""
        self._need_fit()
        return _object_frame(self.embedding_, self.clusters_, self.sampled_.sum(axis=0))


def _pca_2d(vectors: np.ndarray) -> np.ndarray:
    """(n, 2) principal-component coordinates (zeros where there are fewer components)."""
    n, d = vectors.shape
    out = np.zeros((n, 2))
    if n < 2 or d == 0:
        return out
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    k = min(2, vt.shape[0])
    coords = centred @ vt[:k].T
    signs = np.sign(coords[np.argmax(np.abs(coords), axis=0), np.arange(k)])  # deterministic orientation
    out[:, :k] = coords * np.where(signs == 0, 1.0, signs)
    return out


def _object_frame(emb: ObjectEmbedding, clusters: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    xy = _pca_2d(emb.vectors)
    return pd.DataFrame({"object": pd.Series(emb.names, dtype=object), "x": xy[:, 0], "y": xy[:, 1],
                         "cluster": np.asarray(clusters, dtype=np.int64),
                         "n_coalitions": np.asarray(counts, dtype=np.int64)})


class RExplainer(_CoalitionExplainer):
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
        mln = _need_mln(model)
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
                n = max(1, math.floor(_check_fraction("size", s) * mln.n_clauses + 0.5))
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
            names, frame = m.embedding_.names, _object_frame(m.embedding_, m.clusters_, np.zeros(len(m.clusters_)))
        else:
            names = self.mln_.store.constants[self.index_.objects]
            frame = pd.DataFrame({"object": pd.Series(names, dtype=object), "x": np.nan, "y": np.nan,
                                  "cluster": np.full(len(names), -1, dtype=np.int64)})
        counts = np.zeros(len(names), dtype=np.int64)
        for objs in self.coalitions_:
            counts += np.isin(names, objs)
        frame["n_coalitions"] = counts
        return frame
