"""Coalitions of a ground Markov logic network (I-Explain): clusters of objects, sampled
sub-networks, their inference and formula importance.

A *coalition* is a small sub-network of the folded `GroundMLN`, cut as follows:

1. The objects of the embedded domain (e.g. reviews) are clustered (`cluster_objects`, k-means on
   their embeddings into ``max(1, round(C * n))`` clusters); from each cluster of size N,
   ``ceil(S * N)`` objects are sampled (`sample_objects`).
2. Its query atoms (*members*) are those whose embedded-domain arguments are all sampled objects
   (an atom without such an argument is always a member).
3. Its candidate ground clauses are those whose query atoms are all members.
4. Approximate symmetry (``dedup=True``): two candidates are symmetric when they come from the
   same rule, have their query atoms at the same literal positions (the same folded shape), and
   per variable bind constants of the same cluster (embedded-domain variables) or the same
   constant (other variables). Only the first candidate of each symmetry class (lowest clause
   index) is kept; the others are *dropped*.
5. The kept clauses and their query atoms form a `GroundMLN` (a vectorised slice of the sparse
   incidence); Gibbs sampling (or exact enumeration for a few atoms) gives its expectations and
   hence I(f, Q) = E_Q[n_f] - E[n_f] for every literal (`solve_coalition`).
6. A dropped clause takes the importance of its representative, literal by literal matched by
   position in the rule (the same literal position holds the corresponding query atom because the
   shapes agree); such entries are flagged ``mapped``.

All clause and query-atom indices are those of the full folded network, so coalitions compare.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.mln.exact import MAX_EXACT_ATOMS, exact
from xcore.mln.importance import conditional_expectations, importance
from xcore.mln.mcsat import run_sampler
from xcore.mln.network import GroundMLN
from xcore.mln.network_index import NetworkIndex
from xcore.optional_deps import import_optional
from xcore.runtime import Progress

INFERENCE_METHODS: tuple[str, ...] = ("gibbs", "exact", "auto")
"""How a coalition network is solved; "auto" enumerates exactly up to `AUTO_EXACT_ATOMS` atoms."""
AUTO_EXACT_ATOMS = 12


# ---------------------------------------------------------------------- clusters and samples
def n_clusters_for(C: float, n_objects: int) -> int:
    """``max(1, round(C * n))`` (round half up), at most n."""
    return int(min(max(1, math.floor(C * n_objects + 0.5)), max(n_objects, 1)))


def cluster_objects(vectors: np.ndarray, C: float, seed: int = 0, n_init: int = 4) -> np.ndarray:
    """Cluster label (0..k-1) of each row of `vectors`: k-means (seeded) into
    ``max(1, round(C * n))`` clusters; with k = n every object is its own cluster."""
    KMeans = import_optional("sklearn.cluster").KMeans  # heavy: loaded only when objects are clustered
    vectors = np.asarray(vectors, dtype=np.float64)
    n = len(vectors)
    k = n_clusters_for(C, n)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if k >= n:
        return np.arange(n, dtype=np.int64)
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    distinct = len(np.unique(vectors, axis=0))
    if distinct <= k:  # k-means cannot make more clusters than distinct points
        return np.unique(vectors, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
    km = KMeans(n_clusters=k, n_init=n_init, random_state=int(seed)).fit(vectors)
    return _relabel(km.labels_)


def _relabel(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered 0.. in order of first appearance (stable across equivalent runs)."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inv.reshape(-1)]


def sample_objects(labels: np.ndarray, S: float, rng: np.random.Generator) -> np.ndarray:
    """Bool mask over objects: ``ceil(S * N)`` objects drawn without replacement from every
    cluster of size N (vectorised: random keys ranked within clusters)."""
    labels = np.asarray(labels, dtype=np.int64)
    n = len(labels)
    if n == 0:
        return np.zeros(0, dtype=bool)
    keys = rng.random(n)
    order = np.lexsort((keys, labels))
    sizes = np.bincount(labels)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.arange(n) - start[labels[order]]
    take = np.ceil(S * sizes - 1e-9).astype(np.int64)
    mask = np.zeros(n, dtype=bool)
    mask[order] = rank < take[labels[order]]
    return mask


# ---------------------------------------------------------------------- a coalition
@dataclass
class Coalition:
    """One coalition: its objects, member query atoms, kept/dropped clauses, its sub-network and
    (after `solve_coalition`) the importance of every literal it covers."""

    objects: np.ndarray
    """Names of the sampled objects (or, for R-Explain, the objects of its query atoms)."""
    members: np.ndarray
    """Full-network query-atom columns in the coalition (ascending)."""
    clauses: np.ndarray
    """Kept ground clauses (full-network indices, ascending): the clauses of `network`."""
    dropped: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Candidate clauses left out as symmetric to a kept one."""
    representative: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """The kept clause each dropped clause was symmetric to."""
    network: GroundMLN | None = None
    network_atoms: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Full-network columns of `network`'s atoms (the members occurring in kept clauses)."""
    entries: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Full-network CSR entries (literals) with an importance, ascending."""
    source: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Entry whose value was computed (itself, or the representative's literal for mapped ones)."""
    importance: np.ndarray = field(default_factory=lambda: np.zeros(0))
    expected: np.ndarray = field(default_factory=lambda: np.zeros(0))
    expected_given_atom: np.ndarray = field(default_factory=lambda: np.zeros(0))
    mapped: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    marginals: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Marginal of each atom of `network` (aligned with `network_atoms`)."""
    inference: str = ""
    seconds: float = 0.0
    atom_updates: int = 0
    """Gibbs atom updates spent on this coalition (its sampling work; 0 for exact inference)."""
    gibbs_seed: int | None = None

    @property
    def n_clauses(self) -> int:
        """Number of ground clauses in the coalition network (kept clauses)."""
        return int(len(self.clauses))

    def importance_matrix(self, n_atoms: int, n_clauses: int, mln: GroundMLN) -> sp.csr_matrix:
        """(query atoms x ground formulas) sparse importance over the full network's indices
        (non-estimable entries count as 0)."""
        return sp.csr_matrix((np.nan_to_num(self.importance, nan=0.0),
                              (mln.entry_atom[self.entries], mln.entry_clause[self.entries])),
                             shape=(n_atoms, n_clauses))

    def frame(self, mln: GroundMLN) -> pd.DataFrame:
        """One row per covered literal: atom, clause, rule, importance, expectations, mapped."""
        e = self.entries
        return pd.DataFrame({"atom": mln.entry_atom[e], "clause": mln.entry_clause[e],
                             "rule": mln.rule[mln.entry_clause[e]],
                             "importance": self.importance, "expected": self.expected,
                             "expected_given_atom": self.expected_given_atom, "mapped": self.mapped,
                             "source_clause": mln.entry_clause[self.source]})


def _clause_entries(mln: GroundMLN, clauses: np.ndarray) -> np.ndarray:
    """Full CSR entry indices of the given clauses, clause by clause."""
    indptr = mln.S.indptr
    counts = (indptr[clauses + 1] - indptr[clauses]).astype(np.int64)
    starts = np.repeat(indptr[clauses].astype(np.int64), counts)
    offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return starts + offsets


def sub_network(mln: GroundMLN, clauses: np.ndarray) -> tuple[GroundMLN, np.ndarray]:
    """The `GroundMLN` of the given clauses over the query atoms they contain (a vectorised slice
    of the incidence; column order preserved) and the full columns of its atoms."""
    clauses = np.asarray(clauses, dtype=np.int64)
    rows = mln.S[clauses]
    atoms = np.unique(rows.indices).astype(np.int64)
    colmap = np.full(mln.n_atoms, -1, dtype=np.int64)
    colmap[atoms] = np.arange(len(atoms))
    S = sp.csr_matrix((rows.data.astype(np.int8), colmap[rows.indices], rows.indptr), shape=(len(clauses), len(atoms)))
    S.sort_indices()
    return GroundMLN(None, None, S, mln.weights[clauses], mln.rule[clauses], mln.ground_row[clauses],
                     mln.hard[clauses], mln.hard_weight), atoms


def cut_coalition(index: NetworkIndex, sampled: np.ndarray, cluster_of: np.ndarray, dedup: bool = True,
                  objects: np.ndarray | None = None) -> Coalition:
    """The coalition of the sampled objects (see the module docstring, steps 2-4).

    `sampled` is a bool array and `cluster_of` an int array (cluster, -1 for non-objects), both
    over constant ids.
    """
    mln = index.mln
    members = index.members(sampled)
    outside = abs(mln.S).astype(np.int32) @ (~members).astype(np.int32)
    rowlen = np.diff(mln.S.indptr)
    candidates = np.flatnonzero((outside == 0) & (rowlen > 0)).astype(np.int64)
    if dedup and len(candidates):
        b = index.bindings[candidates]
        ext = np.append(np.asarray(cluster_of, dtype=np.int64), -1)
        sig_vars = np.where(index.var_domain[candidates], -2 - ext[np.maximum(b, 0)], b)
        sig = np.column_stack([mln.rule[candidates].astype(np.int64), index.shape[candidates], sig_vars])
        _, first, inv = np.unique(sig, axis=0, return_index=True, return_inverse=True)
        rep = candidates[first[inv.reshape(-1)]]
    else:
        rep = candidates
    own = rep == candidates
    if objects is None:
        objects = mln.store.constants[np.flatnonzero(np.asarray(sampled, dtype=bool))]
    return Coalition(np.asarray(objects, dtype=object), np.flatnonzero(members).astype(np.int64), candidates[own],
                     candidates[~own], rep[~own])


def solve_coalition(coalition: Coalition, mln: GroundMLN, index: NetworkIndex | None = None,
                    inference: str = "gibbs", gibbs_options: dict | None = None,
                    progress: Progress | None = None) -> Coalition:
    """Build the coalition network, run inference on it and fill in the importance of every
    literal of its kept clauses and (via their representatives) of its dropped clauses
    (`progress` hears the sampler's steps; ``gibbs_options["sampler"]`` picks Gibbs or MC-SAT, default
    "auto": `xcore.mln.mcsat.choose_sampler` on the coalition's own network)."""
    if inference not in INFERENCE_METHODS:
        raise XcoreError(f"unknown inference {inference!r}; use one of {', '.join(INFERENCE_METHODS)}")
    t0 = time.perf_counter()
    net, atoms = sub_network(mln, coalition.clauses)
    coalition.network, coalition.network_atoms = net, atoms
    if net.n_atoms == 0:
        coalition.inference = "none"
        coalition.seconds = time.perf_counter() - t0
        return coalition
    use_exact = inference == "exact" or (inference == "auto" and net.n_atoms <= AUTO_EXACT_ATOMS)
    if use_exact and net.n_atoms > MAX_EXACT_ATOMS:
        raise XcoreError(f"exact inference on a coalition of {net.n_atoms} query atoms (at most {MAX_EXACT_ATOMS}); "
                         "use inference='gibbs' or smaller coalitions (lower S)")
    res = exact(net) if use_exact else run_sampler(net, progress=progress, **(gibbs_options or {}))
    imp = importance(net, res)
    cond, expected = conditional_expectations(net, res)
    kept_entries = _clause_entries(mln, coalition.clauses)  # same order as the sub-network's CSR entries
    entries, source = [kept_entries], [kept_entries]
    vals = [np.arange(len(kept_entries))]
    mapped = [np.zeros(len(kept_entries), bool)]
    if len(coalition.dropped):
        if index is None:
            raise XcoreError("mapping dropped clauses needs the network index")
        d_entries = _clause_entries(mln, coalition.dropped)
        counts = np.diff(mln.S.indptr)[coalition.dropped]
        rep_clause = np.repeat(coalition.representative, counts)
        width = int(index.entry_position.max(initial=0)) + 1
        kept_keys = mln.entry_clause[kept_entries] * width + index.entry_position[kept_entries]
        order = np.argsort(kept_keys)
        q = rep_clause * width + index.entry_position[d_entries]
        pos = np.minimum(np.searchsorted(kept_keys[order], q), len(order) - 1)
        found = kept_keys[order][pos] == q
        local = order[pos[found]]
        entries.append(d_entries[found])
        source.append(kept_entries[local])
        vals.append(local)
        mapped.append(np.ones(int(found.sum()), bool))
    entries_all = np.concatenate(entries)
    order = np.argsort(entries_all, kind="stable")
    v = np.concatenate(vals)[order]
    coalition.entries = entries_all[order]
    coalition.source = np.concatenate(source)[order]
    coalition.importance, coalition.expected, coalition.expected_given_atom = imp[v], expected[v], cond[v]
    coalition.mapped = np.concatenate(mapped)[order]
    coalition.marginals = np.asarray(res.marginals, dtype=np.float64)
    coalition.inference = "exact" if use_exact else res.sampler
    coalition.atom_updates = 0 if use_exact else int(res.atom_updates)
    coalition.gibbs_seed = None if use_exact else int((gibbs_options or {}).get("seed", 0))
    coalition.seconds = time.perf_counter() - t0
    return coalition


def random_coalition(mln: GroundMLN, n_clauses: int, rng: np.random.Generator) -> Coalition:
    """R-Explain's coalition: `n_clauses` ground clauses drawn uniformly without replacement; its
    members are the query atoms of those clauses."""
    n = min(max(int(n_clauses), 0), mln.n_clauses)
    clauses = np.sort(rng.choice(mln.n_clauses, size=n, replace=False)).astype(np.int64)
    members = np.unique(mln.S[clauses].indices).astype(np.int64)
    return Coalition(np.zeros(0, dtype=object), members, clauses)
