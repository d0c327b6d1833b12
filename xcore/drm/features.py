"""Random relational features (the paper's DrawFeatures, Fig. 3) and their 0/1 feature matrix.

A feature is a clause ``f(X) :- Cp(X)`` drawn as a random mode-consistent sub-clause of the
bottom clause of a randomly chosen example; a draw equivalent (theta-subsumption both ways, after
reduction) to an earlier one is rejected. The matrix evaluates every feature on every example by
joins over the integer-coded fact tables (pandas merges), never one Prolog call per pair.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from xcore.data.io.prolog_saturation import clause_coverage
from xcore.drm.clauses import Clause, Lit, equivalent, reduce_clause, signature
from xcore.drm.lazy_constants import instantiate_lazy, mark_lazy
from xcore.drm.problem import Problem
from xcore.drm.saturation import saturate
from xcore.logic.modes import Mode
from xcore.logic.terms import Var
from xcore.runtime import Progress, null_progress


@dataclass(frozen=True)
class Feature:
    """One relational feature: its index and defining clause (head is the target on variable A)."""

    index: int
    clause: Clause

    @property
    def name(self) -> str:
        return f"f{self.index + 1}"

    def definition(self) -> str:
        """``f3(A) :- has_car(A,B), short(B).``"""
        return self.clause.text(head_name=self.name)

    @property
    def predicates(self) -> list[str]:
        return [l.pred for l in self.clause.body]


def draw_subclause(bottom: Clause, modes: tuple[Mode, ...], rng: np.random.Generator, max_literals: int) -> Clause:
    """A random sub-clause of `bottom` obeying the modes: each literal's inputs bound by the head or an
    earlier literal; literals without constants whose outputs nobody uses are dropped."""
    bound = set(bottom.head.variables())
    length = int(rng.integers(1, max_literals + 1))
    chosen: list[int] = []
    for _ in range(length):
        cands = [i for i, lit in enumerate(bottom.body) if i not in chosen
                 and all(lit.args[p] in bound for p in modes[i].positions("+"))]
        if not cands:
            break
        pick = int(cands[int(rng.integers(len(cands)))])
        chosen.append(pick)
        bound.update(bottom.body[pick].args[p] for p in modes[pick].positions("-"))
    chosen.sort()
    changed = True
    while changed and len(chosen) > 1:
        changed = False
        for i in chosen:
            lit, mode = bottom.body[i], modes[i]
            outs = {lit.args[p] for p in mode.positions("-")}
            if mode.positions("#") or not outs:
                continue
            used = any(v in outs for j in chosen if j != i for v in bottom.body[j].args)
            if not used:
                chosen.remove(i)
                changed = True
                break
    return Clause(bottom.head, tuple(bottom.body[i] for i in chosen))


def draw_features(problem: Problem, max_draws: int, seed: int = 0, max_literals: int = 4,
                  depth: int | None = None, progress: Progress | None = None) -> list[Feature]:
    """DrawFeatures (Fig. 3): `max_draws` random draws, the non-redundant ones kept, in draw order
    (constants of lazily evaluated literals computed after drawing, `xcore.drm.lazy_constants`)."""
    progress = progress or null_progress
    rng = np.random.default_rng(seed)
    bottoms: dict[int, tuple[Clause, tuple[Mode, ...]]] = {}
    kept: list[Clause] = []
    buckets: dict[tuple, list[Clause]] = {}
    n = len(problem.examples)
    for draw in range(max_draws):
        e = int(rng.integers(n))
        if e not in bottoms:
            bottoms[e] = saturate(problem, e, depth)
        bottom, modes = bottoms[e]
        if not bottom.body:
            continue
        clause = reduce_clause(mark_lazy(problem, draw_subclause(bottom, modes, rng, max_literals)))
        if not clause.body:
            continue
        bucket = buckets.setdefault(signature(clause), [])
        if any(equivalent(clause, other) for other in bucket):
            continue
        bucket.append(clause)
        kept.append(canonical(clause))
        if draw % 25 == 0:
            progress((draw + 1) / max_draws, f"drew {draw + 1} of {max_draws}: {len(kept)} features")
    if problem.lazy:  # Aleph's lazy_evaluate: constants computed from the (training) examples covered
        progress(1.0, f"computing the lazily evaluated constants of {len(kept)} features")
        kept = instantiate_lazy(problem, kept)
    progress(1.0, f"{len(kept)} features from {max_draws} draws")
    return [Feature(i, c) for i, c in enumerate(kept)]


def distinct_columns(X: np.ndarray) -> np.ndarray:
    """Indices of the first column of each distinct column of X, in column order.

    Features drawn as different clauses often have the same extension (on Mutagenesis 188 the
    2,122 features of 10,000 draws have 202 distinct columns): as network inputs a feature repeated
    r times carries r times the weight for the same weight decay, so the penalty is far from uniform
    and the few descriptors that matter are drowned by repeated structure features."""
    if not X.shape[1]:
        return np.zeros(0, dtype=np.int64)
    _, first = np.unique(np.ascontiguousarray(X.T), axis=0, return_index=True)
    return np.sort(first).astype(np.int64)


def canonical(clause: Clause) -> Clause:
    """The clause with variables renamed by first appearance (stable, comparable across runs)."""
    names: dict[Var, Var] = {}
    for lit in (clause.head, *clause.body):
        for a in lit.args:
            if isinstance(a, Var) and a not in names:
                names[a] = Var(f"X{len(names)}")

    def sub(l: Lit) -> Lit:
        return Lit(l.pred, tuple(names[a] if isinstance(a, Var) else a for a in l.args))
    return Clause(sub(clause.head), tuple(sub(l) for l in clause.body))


# ---------------------------------------------------------------------- evaluation
def _key(cols: np.ndarray) -> np.ndarray:
    """One int64 key per row of a small-int matrix (codes below 2**20, up to 3 columns exact)."""
    if cols.shape[1] == 1:
        return cols[:, 0]
    if cols.shape[1] <= 3:
        k = cols[:, 0].copy()
        for j in range(1, cols.shape[1]):
            k = (k << 21) | cols[:, j]
        return k
    _, inv = np.unique(cols, axis=0, return_inverse=True)
    return inv.ravel().astype(np.int64)


def _distinct(rows: np.ndarray) -> np.ndarray:
    """Distinct rows of an int64 matrix."""
    if len(rows) < 2 or rows.shape[1] == 0:
        return rows[:1] if rows.shape[1] == 0 else rows
    if rows.shape[1] <= 3:
        _, first = np.unique(_key(rows), return_index=True)
        return rows[np.sort(first)]
    return np.unique(rows, axis=0)


def join(left: np.ndarray, lcols: list[str], right: np.ndarray, rcols: list[str]) -> tuple[np.ndarray, list[str]]:
    """Inner natural join of two int64 row sets on their shared column names (sort + searchsorted)."""
    shared = [c for c in lcols if c in rcols]
    extra = [c for c in rcols if c not in lcols]
    li = [lcols.index(c) for c in shared]
    ri = [rcols.index(c) for c in shared]
    xi = [rcols.index(c) for c in extra]
    if not shared:
        rep = np.repeat(np.arange(len(left)), len(right))
        til = np.tile(np.arange(len(right)), len(left))
        return np.hstack([left[rep], right[til][:, xi]]), lcols + extra
    if len(shared) <= 3:
        lk, rk = _key(left[:, li]), _key(right[:, ri])
    else:
        both = np.vstack([left[:, li], right[:, ri]])
        k = _key(both)
        lk, rk = k[:len(left)], k[len(left):]
    order = np.argsort(rk, kind="stable")
    rks = rk[order]
    lo = np.searchsorted(rks, lk, side="left")
    hi = np.searchsorted(rks, lk, side="right")
    counts = hi - lo
    lrows = np.repeat(np.arange(len(left)), counts)
    starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
    rrows = order[starts + np.arange(len(lrows))] if len(lrows) else np.zeros(0, dtype=np.int64)
    return np.hstack([left[lrows], right[rrows][:, xi]]), lcols + extra


class Evaluator:
    """Evaluates clauses on every example by joins over int-coded tables; literal tables are cached."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self._tables: dict[Lit, tuple[np.ndarray, list[str]]] = {}

    def _literal_table(self, lit: Lit) -> tuple[np.ndarray, list[str]]:
        """The facts matching a literal's constants and repeated variables, one column per variable."""
        hit = self._tables.get(lit)
        if hit is not None:
            return hit
        p = self.problem
        facts = p.tables.get(lit.pred)
        if facts is None or facts.shape[1] != len(lit.args):
            facts = p.tables.get(f"{lit.pred}_{len(lit.args)}", np.zeros((0, len(lit.args)), dtype=np.int64))
        mask = np.ones(len(facts), dtype=bool)
        cols: list[int] = []
        names: list[str] = []
        for i, a in enumerate(lit.args):
            if isinstance(a, Var):
                first = lit.args.index(a)
                if first != i:
                    mask &= facts[:, i] == facts[:, first]
                else:
                    cols.append(i)
                    names.append(a.name)
            else:
                mask &= facts[:, i] == p.code(a)
        out = (_distinct(facts[mask][:, cols]), names)
        self._tables[lit] = out
        return out

    def engine_covered(self, clauses: list[Clause]) -> np.ndarray:
        """(examples x clauses) 0/1 by SWI-Prolog, one process for all clauses: those with rule-defined
        literals (``gteq(A,9)``) are evaluated as in Aleph, not over tables."""
        p = self.problem
        pos, neg = p.example_files()
        texts = [c.text().rstrip(".") for c in clauses]
        m = clause_coverage(p.background, pos, neg, texts, p.example_atoms())
        return np.maximum(m, 0).T.astype(np.int8)

    def needs_engine(self, clause: Clause) -> bool:
        return bool(self.problem.computed) and any(l.pred in self.problem.computed for l in clause.body)

    def covered(self, clause: Clause) -> np.ndarray:
        """A 0/1 vector: whether the clause body holds for each example (head variable = example)."""
        p = self.problem
        if self.needs_engine(clause):
            return self.engine_covered([clause])[:, 0]
        head = clause.head.args[0]
        assert isinstance(head, Var)
        rows = np.unique(p.example_codes)[:, None]
        cols = [head.name]
        body = clause.body
        for k, lit in enumerate(body):
            table, names = self._literal_table(lit)
            if not names:
                if not len(table):
                    rows = rows[:0]
                continue
            rows, cols = join(rows, cols, table, names)
            later = {a.name for l in body[k + 1:] for a in l.args if isinstance(a, Var)} | {head.name}
            keep = [i for i, c in enumerate(cols) if c in later]
            rows, cols = _distinct(rows[:, keep]), [cols[i] for i in keep]
            if not len(rows):
                break
        return np.isin(p.example_codes, rows[:, cols.index(head.name)]).astype(np.int8)

    def matrix(self, features: list[Feature], progress: Progress | None = None) -> np.ndarray:
        """The examples x features 0/1 matrix (int8)."""
        progress = progress or null_progress
        out = np.zeros((len(self.problem.examples), len(features)), dtype=np.int8)
        t0 = time.perf_counter()
        engine = [j for j, f in enumerate(features) if self.needs_engine(f.clause)]
        if engine:  # one SWI-Prolog process for every feature over rule-defined predicates
            out[:, engine] = self.engine_covered([features[j].clause for j in engine])
        for j, f in enumerate(features):
            if engine and self.needs_engine(f.clause):
                continue
            out[:, j] = self.covered(f.clause)
            if j % 50 == 0:
                progress((j + 1) / max(len(features), 1), f"evaluated {j + 1} of {len(features)} features "
                         f"({time.perf_counter() - t0:.1f} s)")
        return out


_CACHE: OrderedDict[tuple, tuple[list[Feature], np.ndarray]] = OrderedDict()
_CACHE_LOCK = threading.Lock()
"""Sessions run DRM in threads: reads, inserts and evictions of `_CACHE` happen under this lock."""


def features_and_matrix(problem: Problem, key: tuple, max_draws: int, seed: int, max_literals: int,
                        depth: int | None, progress: Progress | None = None) -> tuple[list[Feature], np.ndarray]:
    """Drawn features and their matrix, cached by `key` (data fingerprint, modes, draw settings)."""
    full = (key, max_draws, seed, max_literals, depth)
    with _CACHE_LOCK:
        if full in _CACHE:
            _CACHE.move_to_end(full)
            return _CACHE[full]
    prog = progress or null_progress
    feats = draw_features(problem, max_draws, seed, max_literals, depth,
                          progress=lambda f, m: prog(0.5 * f, m))
    X = Evaluator(problem).matrix(feats, progress=lambda f, m: prog(0.5 + 0.5 * f, m))
    X.setflags(write=False)  # shared by every run with this key: nobody may change it in place
    with _CACHE_LOCK:
        _CACHE[full] = (feats, X)
        while len(_CACHE) > 8:
            _CACHE.popitem(last=False)
    return feats, X
