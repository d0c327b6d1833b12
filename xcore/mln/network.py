"""`GroundMLN`: a ground Markov logic network over the query atoms, with evidence folded in.

Semantics. Ground atoms are Boolean. Evidence atoms are the observed atoms of the store (true when
``value >= 0.5``); atoms absent from the store are false (closed world); the store's targets are
the query atoms. With clause truth ``n_c(x)`` in {0, 1},
``P(x | E) = exp(sum_c w_c n_c(x)) / Z``.

Folding the evidence (vectorised per rule, no loop over ground clauses): a ground clause already
satisfied by evidence is constant and dropped; false evidence literals are removed; a query atom
occurring twice with the same sign is kept once and with both signs makes the clause a tautology
(dropped). A soft clause left with no query literal is constant false and dropped (it only scales
``Z``). A *hard* clause (rule without weight) gets the finite weight `hard_weight` (default 20: a
world violating it is e^20 ~ 5e8 times less likely); a hard clause violated by the evidence alone
raises `XcoreError`, since no world is consistent with the evidence then.

What remains is the signed incidence matrix `S` (clauses x query atoms, +1 clause-positive literal,
-1 clause-negative) with one weight, rule index and ground row per clause. The number of true
literals of every clause is ``x @ S.T + n_negative``; a clause is satisfied when that is > 0.
`colour_classes` partitions the query atoms so that no two atoms of a class share a clause: their
Gibbs conditionals are then independent and a whole class is resampled at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import GroundProgram

DEFAULT_HARD_WEIGHT = 20.0
"""Finite weight given to hard clauses (see the module docstring)."""


@dataclass
class GroundMLN:
    """Ground clauses over the query atoms (evidence folded in), as a signed sparse incidence."""

    store: AtomStore | None
    """The atoms (None for a network built directly from arrays, e.g. `random_ground_mln`)."""
    program: GroundProgram | None
    S: sp.csr_matrix
    """(n_clauses, n_atoms) int8 signed incidence: +1 positive literal, -1 negative literal."""
    weights: np.ndarray
    """(n_clauses,) float64 clause weight (hard clauses: `hard_weight`)."""
    rule: np.ndarray
    """(n_clauses,) int32 index of the clause's rule in `program` (its formula id)."""
    ground_row: np.ndarray
    """(n_clauses,) int64 row of the clause in ``program[rule]``."""
    hard: np.ndarray
    """(n_clauses,) bool: the clause comes from a hard rule."""
    hard_weight: float = DEFAULT_HARD_WEIGHT
    dropped: dict[str, int] = field(default_factory=dict)
    """Counts of ground clauses removed while folding evidence, by reason."""

    # ------------------------------------------------------------------ sizes
    @property
    def n_atoms(self) -> int:
        """Number of query atoms (the store's targets)."""
        return int(self.S.shape[1])

    @property
    def n_clauses(self) -> int:
        return int(self.S.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.S.nnz)

    # ------------------------------------------------------------------ literal arrays
    @cached_property
    def n_negative(self) -> np.ndarray:
        """(n_clauses,) int32 number of clause-negative literals (true when their atom is false)."""
        return np.bincount(self.entry_clause[self.entry_sign < 0], minlength=self.n_clauses).astype(np.int32)

    @cached_property
    def entry_clause(self) -> np.ndarray:
        """(nnz,) int64 clause of each literal, in CSR order ("entries" = literals over query atoms)."""
        return np.repeat(np.arange(self.n_clauses, dtype=np.int64), np.diff(self.S.indptr))

    @property
    def entry_atom(self) -> np.ndarray:
        """(nnz,) query-atom column of each literal, CSR order."""
        return self.S.indices.astype(np.int64)

    @property
    def entry_sign(self) -> np.ndarray:
        """(nnz,) int8 sign of each literal, CSR order."""
        return self.S.data

    def true_literals(self, x: np.ndarray) -> np.ndarray:
        """Number of true literals per clause for states ``x`` (..., n_atoms) 0/1 -> (..., n_clauses)."""
        x = np.asarray(x)
        flat = x.reshape(int(np.prod(x.shape[:-1])), self.n_atoms).T.astype(np.int32)
        return (self.S.astype(np.int32) @ flat).T.reshape(x.shape[:-1] + (self.n_clauses,)) + self.n_negative

    def satisfied(self, x: np.ndarray) -> np.ndarray:
        """Clause truth ``n_c(x)`` (bool) for states ``x`` (..., n_atoms)."""
        return self.true_literals(x) > 0

    def log_weight(self, x: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Unnormalised log-probability ``sum_c w_c n_c(x)`` of states ``x`` (..., n_atoms)."""
        w = self.weights if weights is None else np.asarray(weights, dtype=np.float64)
        return self.satisfied(x).astype(np.float64) @ w

    # ------------------------------------------------------------------ structure
    @cached_property
    def atom_graph(self) -> sp.csr_matrix:
        """(n_atoms, n_atoms) bool adjacency: two query atoms share a clause (no self loops)."""
        a = abs(self.S).astype(np.int32)
        g = (a.T @ a).tocsr()
        g.setdiag(0)
        g.eliminate_zeros()
        return (g > 0).tocsr()

    @cached_property
    def colour_classes(self) -> list[np.ndarray]:
        """Query atoms grouped into classes sharing no clause (greedy colouring, largest first)."""
        return colour_classes(self.atom_graph)

    def atoms_text(self) -> np.ndarray:
        """Canonical text of every query atom, in column order."""
        return self.store.atom_text(self.store.target_ids)

    def clauses_of(self, atom: int) -> np.ndarray:
        """Clause indices containing query atom column `atom`, ascending."""
        return self.entry_clause[self.entries_of(atom)]

    def entries_of(self, atom: int) -> np.ndarray:
        """CSR entry (literal) positions of query atom column `atom`, ordered by clause."""
        order = self._entry_order_by_atom
        lo, hi = self._atom_entry_bounds[int(atom)], self._atom_entry_bounds[int(atom) + 1]
        return order[lo:hi]

    @cached_property
    def _entry_order_by_atom(self) -> np.ndarray:
        return np.lexsort((self.entry_clause, self.entry_atom))

    @cached_property
    def _atom_entry_bounds(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(np.bincount(self.entry_atom, minlength=self.n_atoms))])

    def summary(self) -> dict[str, int]:
        """Sizes: query atoms, clauses, literals, colour classes, and dropped clause counts."""
        return {"query_atoms": self.n_atoms, "clauses": self.n_clauses, "literals": self.nnz,
                "colours": len(self.colour_classes), **{f"dropped_{k}": v for k, v in self.dropped.items()}}


# ---------------------------------------------------------------------- building
def build_ground_mln(program: GroundProgram, hard_weight: float = DEFAULT_HARD_WEIGHT) -> GroundMLN:
    """Fold the evidence of `program.store` into its ground clauses (see the module docstring)."""
    store = program.store
    if not np.isfinite(hard_weight) or hard_weight <= 0:
        raise XcoreError(f"hard_weight must be a positive finite number, got {hard_weight}")
    n_t = store.n_targets
    tindex = np.append(store.target_index, -1)
    ev_true = np.append(np.where(store.is_target, False, np.nan_to_num(store.value) >= 0.5), False)
    rows_all, atoms_all, signs_all = [], [], []
    weights, rules, ground_rows, hard = [], [], [], []
    dropped = {"satisfied_by_evidence": 0, "tautology": 0, "constant_false": 0}
    offset = 0
    for g in program:
        if np.asarray(g.atom_ids).shape[0] == 0:
            continue
        kept_rows, r, a, s = _fold_group(g, store, tindex, ev_true, n_t, dropped)
        rows_all.append(r + offset)
        atoms_all.append(a)
        signs_all.append(s)
        w = hard_weight if g.rule.is_hard else float(g.rule.weight)  # type: ignore[arg-type]
        weights.append(np.full(len(kept_rows), w))
        rules.append(np.full(len(kept_rows), g.rule_index, dtype=np.int32))
        ground_rows.append(kept_rows)
        hard.append(np.full(len(kept_rows), g.rule.is_hard))
        offset += len(kept_rows)
    cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)  # noqa: E731
    rows, atoms, signs = cat(rows_all, np.int64), cat(atoms_all, np.int64), cat(signs_all, np.int8)
    S = sp.csr_matrix((signs, (rows, atoms)), shape=(offset, n_t), dtype=np.int8)
    S.sort_indices()
    return GroundMLN(store, program, S, cat(weights, np.float64), cat(rules, np.int32),
                     cat(ground_rows, np.int64), cat(hard, bool), float(hard_weight), dropped)


def _fold_group(g, store, tindex: np.ndarray, ev_true: np.ndarray, n_t: int,
                dropped: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One rule's groundings with the evidence folded in: (kept grounding rows, then per query
    literal its kept clause number counted from 0, query atom and sign); `dropped` counts the rest."""
    ids = np.asarray(g.atom_ids, dtype=np.int64)
    n = ids.shape[0]
    signs = np.asarray(g.signs, dtype=np.int8)
    t = tindex[ids]  # -1 for evidence / missing atoms
    lit_true = (t < 0) & (ev_true[ids] == (signs[None, :] > 0))
    keep = ~lit_true.any(axis=1)
    dropped["satisfied_by_evidence"] += int((~keep).sum())
    r, j = np.nonzero((t >= 0) & keep[:, None])
    a, s = t[r, j], signs[j]
    # duplicates of one atom in one clause: same sign -> once, both signs -> tautology
    key = r.astype(np.int64) * (n_t + 1) + a
    order = np.lexsort((s, key))
    key, r, a, s = key[order], r[order], a[order], s[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    last = np.ones(len(key), dtype=bool)
    last[:-1] = key[1:] != key[:-1]
    # a group's first entry has the smallest sign; its last the largest
    taut_rows = np.unique(r[first][s[first] != s[last]])
    keep[taut_rows] = False
    dropped["tautology"] += len(taut_rows)
    ok = first & keep[r]
    r, a, s = r[ok], a[ok], s[ok]
    per_row = np.bincount(r, minlength=n)
    empty = keep & (per_row == 0)
    if g.rule.is_hard and empty.any():
        text = g.texts(store, [int(np.flatnonzero(empty)[0])])[0]
        raise XcoreError(f"hard clause `{g.rule.text('mln')}` is violated by the evidence in its "
                         f"grounding `{text}`: no world satisfies the evidence")
    dropped["constant_false"] += int(empty.sum())
    keep &= per_row > 0
    kept_rows = np.flatnonzero(keep)
    new_index = np.full(n, -1, dtype=np.int64)
    new_index[kept_rows] = np.arange(len(kept_rows))
    return kept_rows, new_index[r], a, s


# ---------------------------------------------------------------------- colouring
def colour_classes(graph: sp.csr_matrix) -> list[np.ndarray]:
    """Greedy (largest-degree-first) colouring of an undirected sparse graph; classes of nodes.

    One pass over the nodes in Python at build time (not on the sampling path): each node takes
    the smallest colour not used by an already coloured neighbour.
    """
    n = graph.shape[0]
    if n == 0:
        return []
    indptr, indices = graph.indptr, graph.indices
    degree = np.diff(indptr)
    order = np.argsort(-degree, kind="stable")
    colour = np.full(n, -1, dtype=np.int64)
    for v in order.tolist():
        nb = colour[indices[indptr[v]:indptr[v + 1]]]
        used = np.unique(nb[nb >= 0])
        if len(used) == 0 or used[0] > 0:
            c = 0
        else:
            gaps = np.flatnonzero(used != np.arange(len(used)))
            c = int(gaps[0]) if len(gaps) else len(used)
        colour[v] = c
    k = int(colour.max()) + 1
    order = np.argsort(colour, kind="stable")
    bounds = np.searchsorted(colour[order], np.arange(k + 1))
    return [order[bounds[i]:bounds[i + 1]] for i in range(k)]
