"""Probabilistic knowledge bases: lists of (probability p, clause) over feature-value atoms and POS.

A `KB` stores its clauses column-wise (CSR-like arrays) so that relevance tests and LP matrices
are built with numpy, not per-clause Python loops. `Clause` is the readable one-clause view.
The text format (one ``p: LIT | LIT | ...`` per line) is read and written by `xcore.plkb.kbtext`
(`parse_kb` lives here because it builds a `KB`; `kbtext` does not import this module).
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.plkb.clause import Clause
from xcore.plkb.kbtext import atom_tokens, parse_clauses, write_kb
from xcore.plkb.literals import FALSE, FREE, TRUE, Domain


class KB:
    """A knowledge base over a `Domain`: clause probabilities plus CSR arrays of literals.

    Clause ``i`` has literals ``atoms[indptr[i]:indptr[i+1]]`` with signs ``positive[...]``;
    `source` says where each clause came from (tree, direct, user, random) and `support` how
    many training rows back it (-1 when not learned from data). `weight` scales each clause's
    term in the LP objective (1 by default, as in the paper).
    """

    def __init__(
        self,
        domain: Domain,
        prob: Sequence[float] | np.ndarray,
        indptr: Sequence[int] | np.ndarray,
        atoms: Sequence[int] | np.ndarray,
        positive: Sequence[bool] | np.ndarray,
        source: Sequence[str] | np.ndarray | str = "user",
        support: Sequence[int] | np.ndarray | None = None,
        weight: Sequence[float] | np.ndarray | None = None,
        validate: bool = True,
    ) -> None:
        self.domain = domain
        self.prob = np.asarray(prob, dtype=np.float64).reshape(-1)
        n = len(self.prob)
        self.indptr = np.asarray(indptr, dtype=np.int64).reshape(-1)
        self.atoms = np.asarray(atoms, dtype=np.int64).reshape(-1)
        self.positive = np.asarray(positive, dtype=bool).reshape(-1)
        if isinstance(source, str):
            self.source = np.full(n, source, dtype=object)
        else:
            self.source = np.asarray(source, dtype=object).reshape(-1)
        self.support = (np.full(n, -1, dtype=np.int64) if support is None
                        else np.asarray(support, dtype=np.int64).reshape(-1))
        self.weight = (np.ones(n, dtype=np.float64) if weight is None
                       else np.asarray(weight, dtype=np.float64).reshape(-1))
        if validate:
            self._validate()

    def _validate(self) -> None:
        n = len(self.prob)
        if len(self.indptr) != n + 1 or (n + 1 and self.indptr[0] != 0):
            raise XcoreError(f"KB: indptr must have {n + 1} entries starting at 0")
        if np.any(np.diff(self.indptr) < 1):
            raise XcoreError("KB: every clause needs at least one literal")
        if self.indptr[-1] != len(self.atoms) or len(self.atoms) != len(self.positive):
            raise XcoreError("KB: atoms and positive must have indptr[-1] entries")
        if len(self.atoms) and (self.atoms.min() < 0 or self.atoms.max() >= self.domain.n_atoms):
            raise XcoreError("KB: an atom id is outside the domain")
        if not np.all(np.isfinite(self.prob)) or np.any((self.prob < 0) | (self.prob > 1)):
            bad = int(np.flatnonzero(~((self.prob >= 0) & (self.prob <= 1)))[0])
            raise XcoreError(f"KB: clause {bad} has probability {self.prob[bad]}, outside [0, 1]")
        for name, arr in (("source", self.source), ("support", self.support), ("weight", self.weight)):
            if len(arr) != n:
                raise XcoreError(f"KB: {name} must have one entry per clause ({n})")
        if not np.all(np.isfinite(self.weight)) or np.any(self.weight < 0):
            raise XcoreError("KB: clause weights must be finite and non-negative")

    # ------------------------------------------------------------------ construction
    @classmethod
    def empty(cls, domain: Domain) -> "KB":
        return cls(domain, [], [0], [], [])

    @classmethod
    def from_clauses(cls, domain: Domain, clauses: Iterable[Clause]) -> "KB":
        """A KB from `Clause` objects (names checked against the domain)."""
        clauses = list(clauses)
        lengths = [len(c.lits) for c in clauses]
        if any(k == 0 for k in lengths):
            raise XcoreError("KB: a clause has no literals")
        atoms = [domain.atom_id(lit) for c in clauses for lit in c.lits]
        positive = [lit.positive for c in clauses for lit in c.lits]
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return cls(domain, [c.p for c in clauses], indptr, atoms, positive,
                   source=np.array([c.source for c in clauses], dtype=object),
                   support=[c.support for c in clauses])

    @classmethod
    def from_text(cls, text: str, domain: Domain, source: str = "user", name: str | None = None) -> "KB":
        """Parse the text format (see `xcore.plkb.kbtext`); errors name the line and column."""
        return parse_kb(text, domain, clause_source=source, name=name)

    @staticmethod
    def concat(kbs: Sequence["KB"]) -> "KB":
        """All clauses of several KBs over the same domain, in order."""
        kbs = list(kbs)
        if not kbs:
            raise XcoreError("KB.concat needs at least one KB")
        dom = kbs[0].domain
        for k in kbs[1:]:
            if k.domain != dom:
                raise XcoreError("KB.concat: the KBs have different domains")
        offs = np.cumsum([0] + [k.n_literals for k in kbs[:-1]])
        indptr = np.concatenate([[0]] + [k.indptr[1:] + o for k, o in zip(kbs, offs)])
        return KB(dom, np.concatenate([k.prob for k in kbs]), indptr,
                  np.concatenate([k.atoms for k in kbs]), np.concatenate([k.positive for k in kbs]),
                  source=np.concatenate([k.source for k in kbs]),
                  support=np.concatenate([k.support for k in kbs]),
                  weight=np.concatenate([k.weight for k in kbs]))

    def __add__(self, other: "KB") -> "KB":
        return KB.concat([self, other])

    def select(self, index: np.ndarray | Sequence[int]) -> "KB":
        """The KB of the chosen clauses (boolean mask or integer positions), in that order."""
        idx = np.asarray(index)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        idx = idx.astype(np.int64)
        lengths = self.lengths[idx]
        lit_idx = _gather_ranges(self.indptr[idx], lengths)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return KB(self.domain, self.prob[idx], indptr, self.atoms[lit_idx], self.positive[lit_idx],
                  source=self.source[idx], support=self.support[idx], weight=self.weight[idx], validate=False)

    # ------------------------------------------------------------------ sizes
    def __len__(self) -> int:
        return len(self.prob)

    @property
    def n_literals(self) -> int:
        return int(self.indptr[-1])

    @cached_property
    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    @cached_property
    def lit_clause(self) -> np.ndarray:
        """Clause index of every literal."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths)

    @cached_property
    def clause_group(self) -> np.ndarray:
        """Id of every clause's distinct sentence: clauses with the same set of literals (in any
        order, repeats ignored) share an id, so the LP gives them one omega(c) (vectorised)."""
        n = len(self)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        code = self.atoms * 2 + self.positive.astype(np.int64)
        order = np.lexsort((code, self.lit_clause))
        c_sorted, cl_sorted = code[order], self.lit_clause[order]
        keep = np.ones(len(code), dtype=bool)
        keep[1:] = (c_sorted[1:] != c_sorted[:-1]) | (cl_sorted[1:] != cl_sorted[:-1])
        c_sorted, cl_sorted = c_sorted[keep], cl_sorted[keep]
        counts = np.bincount(cl_sorted, minlength=n)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        slot = np.arange(len(c_sorted)) - np.repeat(starts, counts)
        table = np.full((n, int(counts.max()) + 1), -1, dtype=np.int64)
        table[:, 0] = counts
        table[cl_sorted, slot + 1] = c_sorted
        _, inv = np.unique(table, axis=0, return_inverse=True)
        return inv.reshape(-1).astype(np.int64)

    @cached_property
    def _lit_is_feature(self) -> np.ndarray:
        return self.atoms != 0

    def atoms_used(self) -> np.ndarray:
        """Sorted ids of the atoms some clause mentions."""
        return np.unique(self.atoms)

    def summary(self) -> dict[str, int]:
        """Clause, literal-occurrence and distinct-atom counts (for the page's "KB size")."""
        return {"clauses": len(self), "literal_occurrences": self.n_literals,
                "atoms": int(len(self.atoms_used())), "domain_atoms": self.domain.n_atoms}

    # ------------------------------------------------------------------ relevance
    def relevant_mask(self, codes: np.ndarray) -> np.ndarray:
        """Clauses that matter for a query: every feature they mention is fixed by it, and none
        of their literals is already true under it.

        For the usual clauses ``POS | ~a_v | ...`` this is exactly "the clause's feature-value set
        is a subset of the query". Clauses dropped here either contain a free feature atom or are
        satisfied by the query (their omega is 1 whatever the rest, a constant in the objective).
        """
        state = self.domain.atom_states(codes)
        lt = state[self.atoms]
        lit_true = ((lt == TRUE) & self.positive) | ((lt == FALSE) & ~self.positive)
        free_feature = (lt == FREE) & self._lit_is_feature
        bad = np.bincount(self.lit_clause, weights=(lit_true | free_feature), minlength=len(self))
        return bad == 0

    def relevant(self, codes: np.ndarray) -> "KB":
        return self.select(self.relevant_mask(codes))

    # ------------------------------------------------------------------ views
    def clause(self, i: int) -> Clause:
        s, e = int(self.indptr[i]), int(self.indptr[i + 1])
        lits = []
        for a, pos in zip(self.atoms[s:e], self.positive[s:e]):
            base = self.domain.atom_lit(int(a))
            lits.append(base if pos else base.negated())
        return Clause(float(self.prob[i]), tuple(lits), str(self.source[i]), int(self.support[i]))

    def clauses(self) -> Iterator[Clause]:
        for i in range(len(self)):
            yield self.clause(i)

    def body_texts(self) -> np.ndarray:
        """Clause bodies in the text format (``POS | ~a1_0``), one string per clause."""
        tokens = np.asarray(atom_tokens(self.domain), dtype=object)
        lit_text = np.where(self.positive, tokens[self.atoms], "~" + tokens[self.atoms])
        return np.array([" | ".join(lit_text[s:e]) for s, e in zip(self.indptr[:-1], self.indptr[1:])],
                        dtype=object)

    def to_frame(self) -> pd.DataFrame:
        """One row per clause: p, clause text, length, source, support, weight."""
        return pd.DataFrame({
            "p": self.prob, "clause": self.body_texts(), "length": self.lengths,
            "source": self.source, "support": self.support, "weight": self.weight,
        })

    def to_text(self, header: str | None = None) -> str:
        """The KB in the text format; `KB.from_text` reads it back to an equal KB."""
        return write_kb(self, header=header)

    def equals(self, other: "KB") -> bool:
        """Same domain, clauses (probabilities and literals, in order) and weights."""
        return (self.domain == other.domain and len(self) == len(other)
                and np.array_equal(self.prob, other.prob) and np.array_equal(self.indptr, other.indptr)
                and np.array_equal(self.atoms, other.atoms) and np.array_equal(self.positive, other.positive)
                and np.array_equal(self.weight, other.weight))

    def __repr__(self) -> str:
        return f"KB({len(self)} clauses, {self.n_literals} literal occurrences, {self.domain.n_features} features)"


def _gather_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for every (s, l), vectorised."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + offs


def clauses_from_conjunctions(
    domain: Domain,
    feature_idx: np.ndarray,
    value_idx: np.ndarray,
    lengths: np.ndarray,
    prob: np.ndarray,
    support: np.ndarray,
    source: str,
) -> KB:
    """KB of clauses ``POS | ~f1_v1 | ... | ~fk_vk`` from flat (feature, value) arrays per clause.

    Used by the tree and direct learners: clause ``i`` says "rows matching its conjunction are
    positive with probability prob[i]". The POS literal comes first.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    atoms_feat = domain.offsets[feature_idx] + value_idx if len(feature_idx) else np.zeros(0, np.int64)
    total = int(lengths.sum()) + n
    indptr = np.concatenate([[0], np.cumsum(lengths + 1)]).astype(np.int64)
    atoms = np.empty(total, dtype=np.int64)
    positive = np.zeros(total, dtype=bool)
    pos_slots = indptr[:-1]
    atoms[pos_slots] = 0
    positive[pos_slots] = True
    mask = np.ones(total, dtype=bool)
    mask[pos_slots] = False
    atoms[mask] = atoms_feat
    return KB(domain, prob, indptr, atoms, positive, source=source, support=support)


__all__ = ["KB", "Clause", "clauses_from_conjunctions"]


def parse_kb(text: str, domain: Domain, clause_source: str = "user", name: str | None = None) -> KB:
    """A `KB` over `domain` from the text format (errors name `name`, line and column)."""
    clauses = parse_clauses(text, domain, source=name, clause_source=clause_source)
    return KB.from_clauses(domain, clauses)
