"""Local logical explanations of a DRM prediction (paper Sections 3-4).

- Neighbourhood: training instances within Hamming distance k of the instance's feature vector,
  split into E+ / E- by the network's predictions (the instance itself is in E+: distance 0).
- Unstructured explanations: clauses ``Class(x,c) :- F_i(x), ...`` over the instance's active
  features; fidelity = (|AgreePos| + |AgreeNeg|) / |E+ u E-|; a beam search (Figs. 6, 8) over the
  subset lattice returns the maximal-fidelity clauses.
- Relevance: the dictionary ordering <fidelity, relevance> picks among them (Definition 31).
- Structured explanations: 2-partitions of a clause's features into invented features
  (ConstructExpl, Fig. 9), kept when relevance strictly improves; fidelity is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xcore.drm.clauses import Clause, Lit
from xcore.drm.features import Feature
from xcore.drm.relevance import Interval, Relevance, better, leq, rank_key
from xcore.logic.terms import Var


@dataclass
class Neighbourhood:
    """Indices of neighbours (training examples) and whether each is in E+ (same predicted class)."""

    members: np.ndarray
    positive: np.ndarray
    distance: np.ndarray


def neighbourhood(X: np.ndarray, x: np.ndarray, candidates: np.ndarray, predicted: np.ndarray, c: int,
                  k: int) -> Neighbourhood:
    """Candidates within Hamming distance k of x, with E+ membership by the network's predictions."""
    d = np.count_nonzero(X[candidates] != x[None, :], axis=1)
    near = d <= k
    return Neighbourhood(candidates[near], predicted[candidates[near]] == c, d[near])


def fidelity(cov: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Fidelity of clauses whose coverage columns are `cov` (neighbours x clauses) on E+ = `positive`
    (NaN, undefined, when there is no neighbour).

    One extra member, the instance itself, is in E+ and covered by every clause over its active
    features, so it adds one agreeing example to numerator and denominator.
    """
    if not len(positive):
        return np.full(cov.shape[1], np.nan)
    pos = positive[:, None]
    agree = np.count_nonzero(cov & pos, axis=0) + np.count_nonzero(~cov & ~pos, axis=0) + 1
    return agree / (len(positive) + 1)


@dataclass
class Unstructured:
    """One unstructured explanation: features (indices into the feature list), fidelity, relevance."""

    features: tuple[int, ...]
    fidelity: float
    relevance: list[Interval]


@dataclass
class Structured:
    """A structured explanation: a 2-partition of an unstructured clause's features, with relevance."""

    blocks: tuple[tuple[int, ...], tuple[int, ...]]
    fidelity: float
    relevance: list[Interval]


def clause_relevance(feats: tuple[int, ...], intervals: list[Interval | None]) -> list[Interval]:
    """Definition 33: {[min low, max high]} over the clause's features (empty if none has relevance)."""
    have = [intervals[f] for f in feats if intervals[f] is not None]
    if not have:
        return []
    return [(min(a for a, _ in have), max(b for _, b in have))]  # type: ignore[misc]


def beam_search(A: np.ndarray, positive: np.ndarray, active: np.ndarray, intervals: list[Interval | None],
                beam: int = 5, max_len: int = 6, max_clauses: int | None = 20) -> list[Unstructured]:
    """Maximal-fidelity clauses over the active features (beam search over the subset lattice).

    `A` is the neighbours x features 0/1 matrix restricted to `active` (global feature indices).
    Each level extends every beam member by one feature; the beam keeps the `beam` best distinct
    sets by fidelity, then relevance, then feature order. Levels continue up to `max_len` features
    (fidelity is not monotone in length: two features can together exclude negatives that each alone
    cannot exclude without losing positives) and stop early once fidelity 1 is reached and a level
    adds nothing. Returned: every evaluated clause with the maximal fidelity (at most
    `max_clauses`), ordered by <fidelity, relevance> then length and feature order.
    """
    A = A.astype(bool)
    m = A.shape[1]
    if m == 0:
        return []
    n = A.shape[0]
    states: list[tuple[tuple[int, ...], np.ndarray]] = [((), np.ones(n, dtype=bool))]
    best = -1.0
    found: dict[tuple[int, ...], float] = {}
    for _level in range(max_len):
        cands: dict[tuple[int, ...], tuple[float, np.ndarray]] = {}
        for s, cov in states:
            covs = cov[:, None] & A
            fids = fidelity(covs, positive)
            for j in np.argsort(-fids, kind="stable"):
                j = int(j)
                if j in s:
                    continue
                key = tuple(sorted(s + (j,)))
                if key not in cands:
                    cands[key] = (float(fids[j]), covs[:, j])
        if not cands:
            break
        level_best = max(f for f, _ in cands.values())
        for key, (f, _) in cands.items():
            if f >= max(best, level_best) - 1e-12:
                found[key] = f
        improved = level_best > best + 1e-12
        best = max(best, level_best)
        found = {k: f for k, f in found.items() if f >= best - 1e-12}
        order = sorted(cands, key=lambda k: (-cands[k][0], tuple(-x for x in _rel_key(k, active, intervals)), k))
        states = [(k, cands[k][1]) for k in order[:beam]]
        if not improved and best >= 1.0 - 1e-12:
            break
    out = []
    for key, f in found.items():
        feats = tuple(int(active[j]) for j in key)
        out.append(Unstructured(feats, f, clause_relevance(feats, intervals)))
    out.sort(key=lambda u: (-u.fidelity, tuple(-x for x in rank_key(u.relevance)), len(u.features), u.features))
    return out if max_clauses is None else out[:max_clauses]


def _rel_key(key: tuple[int, ...], active: np.ndarray, intervals: list[Interval | None]) -> tuple[int, ...]:
    return rank_key(clause_relevance(tuple(int(active[j]) for j in key), intervals))


def select(expls: list[Unstructured]) -> tuple[int, int]:
    """(index chosen by fidelity alone, index chosen by the dictionary ordering <fidelity, relevance>).

    Fidelity alone takes the first maximal-fidelity clause in feature order (shortest first);
    <fidelity, relevance> takes a maximal-fidelity clause that no other one beats on relevance.
    """
    if not expls:
        return -1, -1
    top = max(u.fidelity for u in expls)
    tied = [i for i, u in enumerate(expls) if u.fidelity >= top - 1e-12]
    plain = min(tied, key=lambda i: (len(expls[i].features), expls[i].features))
    # dominance depends on the relevance value only: compare the few distinct values, not every pair of
    # clauses (thousands tie where features repeat an extension, and the pairwise test was quadratic)
    values = {tuple(expls[i].relevance) for i in tied}
    kept = {v for v in values if not any(better(list(w), list(v)) for w in values)}
    undominated = [i for i in tied if tuple(expls[i].relevance) in kept]
    chosen = min(undominated, key=lambda i: (tuple(-x for x in rank_key(expls[i].relevance)),
                                            len(expls[i].features), expls[i].features))
    return plain, chosen


def structure(u: Unstructured, intervals: list[Interval | None], limit: int = 3,
              max_features: int = 12) -> list[Structured]:
    """2-partitions of u's features (one block of at least two) whose relevance strictly beats u's."""
    k = len(u.features)
    if k < 3 or k > max_features:
        return []
    out = []
    for mask in range(1, 1 << (k - 1)):
        left = tuple(u.features[i] for i in range(k) if i == 0 or (mask >> (i - 1)) & 1 == 0)
        right = tuple(f for f in u.features if f not in left)
        if not right:
            continue
        rel = sorted(set(clause_relevance(left, intervals)) | set(clause_relevance(right, intervals)))
        if better(rel, u.relevance):
            out.append(Structured((left, right), u.fidelity, rel))
    best = [s for s in out if not any(better(t.relevance, s.relevance) for t in out)]
    best.sort(key=lambda s: (tuple(-x for x in rank_key(s.relevance)), s.blocks))
    return best[:limit]


def structured_fidelity(blocks: tuple[tuple[int, ...], ...], X: np.ndarray, positive: np.ndarray) -> float:
    """Fidelity computed from the structured program itself: invented features are conjunctions of
    their blocks' columns, the clause is the conjunction of the invented features."""
    invented = [np.all(X[:, list(b)].astype(bool), axis=1) for b in blocks]
    cov = np.all(np.stack(invented, axis=1), axis=1) if invented else np.ones(len(X), dtype=bool)
    return float(fidelity(cov[:, None], positive)[0])


# ---------------------------------------------------------------------- text
def head_name(target: str, c: int) -> str:
    return target if c == 1 else f"not_{target}"


def clause_text(target: str, c: int, feats: tuple[int, ...], features: list[Feature]) -> str:
    """``eastbound(X) :- f3(X), f7(X).``"""
    body = ", ".join(f"{features[f].name}(X)" for f in feats)
    return f"{head_name(target, c)}(X) :- {body}." if feats else f"{head_name(target, c)}(X)."


def unfolded(target: str, c: int, feats: tuple[int, ...], features: list[Feature]) -> str:
    """The clause with every feature replaced by its definition, variables renamed apart."""
    head = Var("X")
    lits: list[Lit] = []
    for n, f in enumerate(feats):
        cl = features[f].clause
        h = cl.head.args[0]
        sub = {v: (head if v == h else Var(f"{v.name}_{n}")) for l in cl.body for v in l.variables()}
        lits += [Lit(l.pred, tuple(sub.get(a, a) if isinstance(a, Var) else a for a in l.args)) for l in cl.body]
    return Clause(Lit(head_name(target, c), (head,)), tuple(lits)).text()


def structured_text(target: str, c: int, s: Structured, features: list[Feature]) -> str:
    """The folded program: the class clause over two invented features and their definitions."""
    h = head_name(target, c)
    lines = [f"{h}(X) :- inv1(X), inv2(X)."]
    for i, b in enumerate(s.blocks, 1):
        lines.append(f"inv{i}(X) :- {', '.join(features[f].name + '(X)' for f in b)}.")
    return "\n".join(lines)


@dataclass
class LocalExplanation:
    """Everything explained for one instance: neighbourhood, maximal-fidelity clauses, the choices."""

    index: int
    prediction: int
    neighbourhood: Neighbourhood
    clauses: list[Unstructured]
    plain: int
    chosen: int
    structured: dict[int, list[Structured]] = field(default_factory=dict)
    radius: int = 0
    target: str = ""
    """The explained target's text (``eastbound(east3)``), set by the estimator."""
    instance: np.ndarray | None = None
    """The instance's 0/1 feature row (it need not be a training instance)."""
    truth: float = float("nan")
    """The instance's class where the data gives it, else NaN."""

    @property
    def fidelity_defined(self) -> bool:
        """Whether the neighbourhood holds a training instance (else fidelity is undefined)."""
        return bool(len(self.neighbourhood.members))

    @property
    def relevance_changes_choice(self) -> bool:
        if self.plain < 0:
            return False
        return better(self.clauses[self.chosen].relevance, self.clauses[self.plain].relevance)


def explain_instance(X: np.ndarray, i: int, train: np.ndarray, predicted: np.ndarray, c: int,
                     intervals: list[Interval | None], k: int, beam: int, max_len: int,
                     with_structure: bool = True, max_clauses: int = 20) -> LocalExplanation:
    """Neighbourhood, maximal-fidelity clauses and relevance choices for example i predicted c.

    Fidelity is undefined over an empty neighbourhood (only the instance itself would count, every
    clause would score 1 and relevance alone would choose): then no clause is returned."""
    nb = neighbourhood(X, X[i], train[train != i], predicted, c, k)
    if not len(nb.members):
        return LocalExplanation(i, c, nb, [], -1, -1, radius=k)
    active = np.flatnonzero(X[i] == 1)
    A = X[np.ix_(nb.members, active)]
    found = beam_search(A, nb.positive, active, intervals, beam=beam, max_len=max_len, max_clauses=None)
    plain, chosen = select(found)  # on every maximal-fidelity clause, before the list is cut
    keep = list(range(min(len(found), max_clauses)))
    for j in (chosen, plain):
        if j >= 0 and j not in keep:
            keep.append(j)
    clauses = [found[j] for j in keep]
    plain, chosen = keep.index(plain) if plain >= 0 else -1, keep.index(chosen) if chosen >= 0 else -1
    out = LocalExplanation(i, c, nb, clauses, plain, chosen, radius=k)
    if with_structure:
        for j, u in enumerate(clauses):
            s = structure(u, intervals)
            if s:
                out.structured[j] = s
    return out


def feature_intervals(features: list[Feature], relevance: Relevance) -> list[Interval | None]:
    return [relevance.interval(f.predicates) for f in features]


__all__ = ["LocalExplanation", "Neighbourhood", "Structured", "Unstructured", "beam_search", "clause_relevance",
           "explain_instance", "feature_intervals", "fidelity", "leq", "select", "structure", "structured_fidelity"]
