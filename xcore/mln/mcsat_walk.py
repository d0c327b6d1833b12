"""SampleSAT (Wei, Erenrich and Selman 2004) on a `GroundMLN`'s clauses: WalkSAT moves mixed with
simulated-annealing moves, to draw a near-uniform assignment satisfying a chosen set of clauses.

The state of one walk is the atom vector ``x`` (n_atoms,) int8 and the true-literal counts ``t``
(n_clauses,) per clause, shared with the caller and changed in place. Only the *kept* clauses (a bool
mask) constrain it; *fixed* atoms never flip (MC-SAT's kept negative-weight clauses fix their atoms).
Every flip touches only the flipped atom's clauses (its CSR slice in atom order): ``t`` and the
per-atom ``wmake`` (sum over the atom's kept, unsatisfied clauses c of 1 / len(c)) are updated
incrementally. An unsatisfied kept clause is drawn uniformly without a list of them: an atom a with
probability wmake[a] / #unsat, then one of a's unsatisfied clauses with probability proportional to
1 / len(c) (each clause c is then chosen with probability sum over its atoms of (1/len c) / #unsat =
1 / #unsat). The per-step Python work is a fixed number of numpy calls on slices of the flipped atom's
clauses (plus one cumulative sum over atoms to draw the clause): a loop per flip is inherent to
WalkSAT, never a loop per clause.

Moves (as in Tuffy's and Alchemy's SampleSAT):
* with probability `p_sa`, or when every kept clause is satisfied: a simulated-annealing move, a
  uniformly drawn free atom flipped with probability min(1, exp(-delta / temperature)) (Metropolis:
  the atom is drawn at random, so no period two), delta the change in the number of unsatisfied
  kept clauses;
* else a WalkSAT move: a uniformly drawn unsatisfied kept clause; with probability `noise` a random
  free atom of it flips, else the one with the smallest delta (ties at random; Tuffy's greedy
  choice: breaks minus makes, which matters when clauses repeat, as rc1000's ground clauses do).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xcore.mln.network import GroundMLN


@dataclass
class WalkStats:
    """Counts of one or more walks: flip attempts, flips made and walks that ended unsatisfied."""

    steps: int = 0
    flips: int = 0
    failed: int = 0


class SampleSat:
    """The network's incidence in the two orders a walk needs (per clause and per atom)."""

    def __init__(self, mln: GroundMLN) -> None:
        S = mln.S
        self.n, self.m = mln.n_atoms, mln.n_clauses
        self.indptr = S.indptr.astype(np.int64)
        self.clause_atoms = S.indices.astype(np.int64)            # CSR order: atoms of each clause
        self.length = np.diff(self.indptr)
        self.inv_length = np.where(self.length > 0, 1.0 / np.maximum(self.length, 1), 0.0)
        order = np.lexsort((mln.entry_clause, mln.entry_atom))   # entries by atom, then clause
        self.atom_ptr = np.concatenate([[0], np.cumsum(np.bincount(mln.entry_atom, minlength=self.n))]).astype(np.int64)
        self.atom_clauses = mln.entry_clause[order]               # clauses of each atom
        self.atom_positive = (mln.entry_sign[order] > 0)          # the atom's literal there is positive
        self.atom_sign = mln.entry_sign[order].astype(np.int32)

    # ------------------------------------------------------------------ state helpers
    def wmake(self, t: np.ndarray, kept: np.ndarray) -> np.ndarray:
        """(n_atoms,) sum over each atom's kept unsatisfied clauses of 1 / len(c)."""
        unsat = kept & (t == 0)
        return np.bincount(self.clause_atoms, weights=np.repeat(self.inv_length * unsat, self.length),
                           minlength=self.n)

    def _clause_entries(self, clauses: np.ndarray) -> np.ndarray:
        """CSR entry positions of the given clauses, clause after clause."""
        starts, counts = self.indptr[clauses], self.length[clauses]
        total = int(counts.sum())
        return np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)

    def flip(self, a: int, x: np.ndarray, t: np.ndarray, kept: np.ndarray, wmake: np.ndarray) -> int:
        """Flip atom `a`; update ``t`` and ``wmake``; return the change in unsatisfied kept clauses."""
        lo, hi = self.atom_ptr[a], self.atom_ptr[a + 1]
        cl = self.atom_clauses[lo:hi]
        d = 1 - 2 * int(x[a])                                    # +1 when a turns true
        before = t[cl]
        after = before + self.atom_sign[lo:hi] * d
        t[cl] = after
        x[a] = 1 - x[a]
        k = kept[cl]
        now_sat = cl[k & (before == 0)]                          # a literal turned true in an unsat clause
        now_unsat = cl[k & (after == 0)]
        for clauses, sign in ((now_sat, -1.0), (now_unsat, 1.0)):
            if len(clauses):
                e = self._clause_entries(clauses)
                np.add.at(wmake, self.clause_atoms[e], sign * np.repeat(self.inv_length[clauses], self.length[clauses]))
        return len(now_unsat) - len(now_sat)

    def delta(self, a: int, x: np.ndarray, t: np.ndarray, kept: np.ndarray) -> int:
        """Change in unsatisfied kept clauses if atom `a` flipped (breaks minus makes)."""
        lo, hi = self.atom_ptr[a], self.atom_ptr[a + 1]
        cl = self.atom_clauses[lo:hi]
        tc, k = t[cl], kept[cl]
        lit_true = self.atom_positive[lo:hi] == bool(x[a])
        return int(np.count_nonzero(k & (tc == 1) & lit_true)) - int(np.count_nonzero(k & (tc == 0)))

    def deltas(self, atoms: np.ndarray, x: np.ndarray, t: np.ndarray, kept: np.ndarray) -> np.ndarray:
        """`delta` of each atom of `atoms` (every atom in at least one clause): kept clauses it alone
        satisfies (breaks) minus kept unsatisfied clauses it would satisfy (makes)."""
        lo, hi = self.atom_ptr[atoms], self.atom_ptr[atoms + 1]
        counts = hi - lo
        idx = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        cl = self.atom_clauses[idx]
        lit_true = self.atom_positive[idx] == np.repeat(x[atoms].astype(bool), counts)
        tc, k = t[cl], kept[cl]
        score = (k & (tc == 1) & lit_true).astype(np.int64) - (k & (tc == 0))
        return np.add.reduceat(score, np.cumsum(counts) - counts)

    def unsat_clause(self, wmake: np.ndarray, x: np.ndarray, t: np.ndarray, kept: np.ndarray,
                     rng: np.random.Generator) -> int:
        """A uniformly drawn unsatisfied kept clause (see the module docstring); -1 if none."""
        cw = np.cumsum(wmake)
        total = cw[-1] if len(cw) else 0.0
        if total <= 1e-9:
            return -1
        a = int(min(np.searchsorted(cw, rng.random() * total, side="right"), self.n - 1))
        lo, hi = self.atom_ptr[a], self.atom_ptr[a + 1]
        cl = self.atom_clauses[lo:hi]
        cand = cl[kept[cl] & (t[cl] == 0)]
        if not len(cand):  # float residue on an atom without unsat clauses: draw again from scratch
            wmake[a] = 0.0
            return self.unsat_clause(wmake, x, t, kept, rng)
        cum = np.cumsum(self.inv_length[cand])
        return int(cand[min(np.searchsorted(cum, rng.random() * cum[-1], side="right"), len(cand) - 1)])

    # ------------------------------------------------------------------ the walk
    def walk(self, x: np.ndarray, t: np.ndarray, kept: np.ndarray, fixed: np.ndarray, steps: int,
             rng: np.random.Generator, *, p_sa: float = 0.5, temperature: float = 0.5, noise: float = 0.5,
             repair: int = 0, stats: WalkStats | None = None) -> bool:
        """`steps` SampleSAT moves from the current state, then up to `repair` WalkSAT moves until every
        kept clause holds; True when the walk ends with every kept clause satisfied."""
        unsat = int(np.count_nonzero(kept & (t == 0)))
        stats = stats if stats is not None else WalkStats()
        if steps == 0 and unsat == 0:
            return True
        free = np.flatnonzero(~fixed)
        if not len(free):
            return unsat == 0
        wmake = self.wmake(t, kept)
        done = 0
        while done < steps or (unsat and done < steps + repair):
            repairing = done >= steps
            done += 1
            if not repairing and (unsat == 0 or rng.random() < p_sa):
                a = int(free[rng.integers(len(free))])
                dlt = self.delta(a, x, t, kept)
                if dlt > 0 and rng.random() >= np.exp(-dlt / temperature):
                    continue
                unsat += self.flip(a, x, t, kept, wmake)
                stats.flips += 1
                continue
            c = self.unsat_clause(wmake, x, t, kept, rng)
            if c < 0:
                unsat = 0
                continue
            atoms = self.clause_atoms[self.indptr[c]:self.indptr[c + 1]]
            atoms = atoms[~fixed[atoms]]
            if not len(atoms):
                continue
            if rng.random() < noise:
                a = int(atoms[rng.integers(len(atoms))])
            else:
                b = self.deltas(atoms, x, t, kept)
                best = np.flatnonzero(b == b.min())
                a = int(atoms[best[rng.integers(len(best))]])
            unsat += self.flip(a, x, t, kept, wmake)
            stats.flips += 1
        stats.steps += done
        ok = unsat == 0
        stats.failed += int(not ok)
        return ok
