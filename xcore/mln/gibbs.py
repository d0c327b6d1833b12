"""Vectorised Gibbs sampling of a `GroundMLN`: colour-class block updates over many chains.

State: ``X`` (n_atoms, n_chains) int8 and the true-literal counts ``T`` (n_clauses, n_chains).
The conditional log-odds of query atom i is ``sum_c w_c s_ci [T_c == lit_ci]`` (clause c is
critical for i when i's literal is its only true one, or none is true and flipping i helps). Atoms
of one colour class share no clause, so the whole class is resampled at once for all chains with
a few array operations; then ``T`` is updated for the class's clauses (each clause has at most one
literal in the class, so the scatter has no collisions). No Python loop per atom update.

Samples are not stored: per batch (``n_batches`` consecutive blocks of kept sweeps, per chain) the
counts of atom truth, clause truth and "clause true and atom true" per literal are accumulated.
These give marginals, E[n_f], E[n_f x_Q], batch-means Monte Carlo errors and split-chain R-hat.
`naive_gibbs` is the straightforward one-atom-at-a-time Python sampler, for the benchmark only.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.mln.network import GroundMLN
from xcore.runtime import Progress, throttled


@dataclass
class ClassPlan:
    """Precomputed arrays for resampling one colour class."""

    atoms: np.ndarray        # (k,) atom columns
    clause: np.ndarray       # (m,) clause of each literal touching the class
    atom: np.ndarray         # (m,) atom column of each literal
    local: np.ndarray        # (m,) position of that atom within `atoms`
    positive: np.ndarray     # (m, 1) int8 1 for a clause-positive literal
    sign: np.ndarray         # (m, 1) int8
    gather: sp.csr_matrix    # (k, m) float32 w_c * s_ci: sums critical literals into log-odds
    entries: np.ndarray      # (m,) CSR entry index of each literal (for the Rao-Blackwellised sums)


def class_plans(mln: GroundMLN) -> list[ClassPlan]:
    """One plan per colour class (the literals of its atoms gathered by a stable sort on colour)."""
    ea = mln.entry_atom
    colour_of = np.empty(mln.n_atoms, dtype=np.int64)
    for k, atoms in enumerate(mln.colour_classes):
        colour_of[atoms] = k
    entry_colour = colour_of[ea]
    order = np.argsort(entry_colour, kind="stable")
    bounds = np.searchsorted(entry_colour[order], np.arange(len(mln.colour_classes) + 1))
    return [_plan(mln, atoms, order[bounds[k]:bounds[k + 1]]) for k, atoms in enumerate(mln.colour_classes)]


def all_atoms_plan(mln: GroundMLN) -> ClassPlan:
    """A plan over every atom at once: evaluates each atom's conditional given the rest in one state
    without resampling (atoms may share clauses; used by MC-SAT for Rao-Blackwellised sums)."""
    return _plan(mln, np.arange(mln.n_atoms, dtype=np.int64), np.arange(mln.nnz, dtype=np.int64))


def _plan(mln: GroundMLN, atoms: np.ndarray, sel: np.ndarray) -> ClassPlan:
    """The plan of `atoms` whose literals are the CSR entries `sel`."""
    ec, ea, es = mln.entry_clause, mln.entry_atom, mln.entry_sign
    local_of = np.full(mln.n_atoms, -1, dtype=np.int64)
    local_of[atoms] = np.arange(len(atoms))
    local = local_of[ea[sel]]
    val = (mln.weights[ec[sel]] * es[sel]).astype(np.float32)
    gather = sp.csr_matrix((val, (local, np.arange(len(sel)))), shape=(len(atoms), len(sel)))
    return ClassPlan(atoms, ec[sel], ea[sel], local, (es[sel] > 0).astype(np.int8)[:, None],
                      es[sel].astype(np.int8)[:, None], gather, sel)


@dataclass
class GibbsResult:
    """Batch sums of a sampling run (Gibbs or MC-SAT); marginals, expectations, MC errors and R-hat derive from them."""

    atom_counts: np.ndarray
    """(n_batches, n_atoms, n_chains) int32: kept samples with the atom true."""
    clause_counts: np.ndarray
    """(n_batches, n_clauses) int64: kept samples (all chains) with the clause satisfied."""
    entry_counts: np.ndarray
    """(n_batches, nnz) int64: per literal (clause c, atom q), kept samples (all chains) with c and q true."""
    batch_sizes: np.ndarray
    """(n_batches,) kept samples per chain in each batch."""
    n_chains: int
    burn_in: int
    thin: int
    seconds: float
    atom_updates: int
    state: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), np.int8))
    """(n_atoms, n_chains) final state."""
    rb_sums: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = field(repr=False, default=None)
    """Rao-Blackwellised sums over kept samples and chains: per atom sum P(x=1 | rest) and
    sum P(x=0 | rest); per literal (c, q) sum P(q=1 | rest) n_c(q=1, rest) and
    sum P(q=0 | rest) n_c(q=0, rest), each taken when q is resampled (None: not recorded)."""
    watched: tuple[np.ndarray, np.ndarray] | None = field(repr=False, default=None)
    """With `watch`: (n_samples, atoms, chains) int8 states of the watched atoms and (n_samples,
    clauses, chains) bool truth of the watched clauses at every kept sample (None otherwise)."""
    sampler: str = "gibbs"
    """Which sampler made the samples: "gibbs" (this module) or "mcsat" (`xcore.mln.mcsat`)."""
    extra: dict = field(default_factory=dict)
    """Sampler-specific figures for the diagnostics (MC-SAT: SampleSAT flips, failed steps)."""

    @property
    def rao_blackwell(self) -> dict[str, np.ndarray] | None:
        """Smoothed expectations from the sampler's own conditionals (never exactly 0 or 1 unless
        the conditional is): ``p1``/``p0`` per atom (P(Q) and 1 - P(Q), each kept to full relative
        precision), ``a`` = E[n_f x_Q] and ``b`` = E[n_f (1 - x_Q)] per literal."""
        if self.rb_sums is None:
            return None
        n = float(self.n_samples * self.n_chains)
        p1, p0, a, b = (x / n for x in self.rb_sums)
        return {"p1": p1, "p0": p0, "a": a, "b": b}

    @property
    def n_samples(self) -> int:
        """Kept samples per chain."""
        return int(self.batch_sizes.sum())

    @property
    def updates_per_second(self) -> float:
        return self.atom_updates / self.seconds if self.seconds > 0 else math.inf

    # pooled expectations -------------------------------------------------------
    def _mean(self, counts: np.ndarray) -> np.ndarray:
        axes = (0, 2) if counts.ndim == 3 else 0
        return counts.sum(axis=axes) / (self.n_samples * self.n_chains)

    @property
    def marginals(self) -> np.ndarray:
        """(n_atoms,) estimated P(atom true | evidence)."""
        return self._mean(self.atom_counts)

    @property
    def clause_means(self) -> np.ndarray:
        """(n_clauses,) estimated E[n_c]."""
        return self._mean(self.clause_counts)

    @property
    def entry_means(self) -> np.ndarray:
        """(nnz,) estimated E[n_c x_q] for each literal (clause c, query atom q)."""
        return self._mean(self.entry_counts)

    def batch_means(self, counts: np.ndarray) -> np.ndarray:
        """Batch means: (n_batches * n_chains, m) for per-chain counts (n_batches, m, n_chains),
        (n_batches, m) for counts pooled over chains (n_batches, m)."""
        if counts.ndim == 2:
            return counts.astype(np.float64) / (self.batch_sizes[:, None] * self.n_chains)
        b = counts.astype(np.float64) / self.batch_sizes[:, None, None]
        return b.transpose(0, 2, 1).reshape(counts.shape[0] * counts.shape[2], counts.shape[1])

    @property
    def marginal_se(self) -> np.ndarray:
        """(n_atoms,) Monte Carlo standard error of `marginals` (batch means over chains x batches)."""
        bm = self.batch_means(self.atom_counts)
        return bm.std(axis=0, ddof=1) / np.sqrt(len(bm)) if len(bm) > 1 else np.full(bm.shape[1], np.nan)

    @property
    def rhat(self) -> np.ndarray:
        """(n_atoms,) split-chain potential scale reduction (Gelman-Rubin) of each atom's truth.

        Each chain is split into its first and second half of batches; 1.0 when all half-chains
        agree on a constant atom, inf when they are constant but disagree.
        """
        nb = len(self.batch_sizes)
        if nb < 2:
            return np.full(self.atom_counts.shape[1], np.nan)
        h = nb // 2
        halves = [slice(0, h), slice(nb - h, nb)]
        means, n = [], []
        for sl in halves:
            cnt = self.atom_counts[sl].sum(axis=0).astype(np.float64)  # (n_atoms, chains)
            m = self.batch_sizes[sl].sum()
            means.append(cnt / m)
            n.append(m)
        nh = float(min(n))
        m = np.concatenate(means, axis=1)  # (n_atoms, 2 * chains)
        w = (m * (1 - m) * nh / max(nh - 1, 1)).mean(axis=1)
        b = nh * m.var(axis=1, ddof=1)
        var_plus = (nh - 1) / nh * w + b / nh
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.sqrt(var_plus / w)
        return np.where(w > 0, r, np.where(b > 0, np.inf, 1.0))

    def diagnostics(self, rhat_threshold: float = 1.1) -> dict[str, float | int | bool]:
        """Convergence summary to show the user: worst R-hat, atoms above `rhat_threshold`,
        largest and mean Monte Carlo error, run size and speed."""
        rhat, se = self.rhat, self.marginal_se
        worst = float(np.nanmax(rhat)) if np.isfinite(rhat).any() or np.isinf(rhat).any() else float("nan")
        above = int(np.sum(rhat > rhat_threshold))
        return {"max_rhat": worst, "atoms_above_threshold": above, "converged": above == 0 and (len(rhat) == 0 or not np.isnan(worst)),
                "max_se": float(np.nanmax(se)) if len(se) else 0.0, "mean_se": float(np.nanmean(se)) if len(se) else 0.0,
                "n_chains": self.n_chains, "n_samples": self.n_samples, "burn_in": self.burn_in, "thin": self.thin,
                "seconds": self.seconds, "updates_per_second": self.updates_per_second,
                "sampler": self.sampler, **self.extra}


def gibbs(mln: GroundMLN, n_samples: int = 1000, burn_in: int = 200, thin: int = 1, n_chains: int = 4,
          seed: int = 0, n_batches: int = 20, init: np.ndarray | None = None, n_jobs: int = 1,
          watch: tuple[np.ndarray, np.ndarray] | None = None, progress: Progress | None = None) -> GibbsResult:
    """Sample P(query atoms | evidence) with `n_chains` parallel chains of colour-class Gibbs sweeps.

    Each chain runs `burn_in` sweeps, then keeps one state every `thin` sweeps until it has
    `n_samples`. Starts from uniform random states (or `init`, (n_atoms, n_chains) 0/1). With
    ``n_jobs > 1`` the chains are split into that many groups run in threads (numpy releases the
    GIL); results are reproducible for a given (seed, n_jobs) but differ between n_jobs values.
    `watch` = (atom columns, clause indices) keeps their values at every kept sample (`watched`), so
    other weightings of the same samples can be evaluated afterwards (importance reweighting).
    `progress` hears the sweeps done (at most every 0.1 s; a cancel stops the chains there).
    """
    for name, v, low in (("n_samples", n_samples, 1), ("burn_in", burn_in, 0), ("thin", thin, 1),
                         ("n_chains", n_chains, 1), ("n_batches", n_batches, 1), ("n_jobs", n_jobs, 1)):
        if isinstance(v, bool) or int(v) != v or v < low:
            raise XcoreError(f"gibbs: {name} must be an integer >= {low}, got {v}")
    n, C = mln.n_atoms, int(n_chains)
    nb = min(int(n_batches), int(n_samples))
    batch_of = (np.arange(int(n_samples)) * nb) // int(n_samples)
    batch_sizes = np.bincount(batch_of, minlength=nb)
    plans = class_plans(mln)
    if init is not None:
        init = np.asarray(init)
        if init.shape != (n, C):
            raise XcoreError(f"gibbs: init must have shape (n_atoms, n_chains) = {(n, C)}, got {init.shape}")
    jobs = min(int(n_jobs), C)
    tick = throttled(progress)
    t0 = time.perf_counter()
    watched = None
    if watch is not None:
        wa, wc = (np.asarray(v, dtype=np.int64) for v in watch)
        watched = (np.zeros((int(n_samples), len(wa), C), np.int8), np.zeros((int(n_samples), len(wc), C), bool))
        jobs = 1  # one group of chains writes the watched arrays
    if jobs == 1:
        parts = [_run_chains(mln, plans, int(n_samples), int(burn_in), int(thin), C, np.random.default_rng(seed),
                             batch_of, init, tick, None if watch is None else (wa, wc, *watched))]
    else:
        groups = np.array_split(np.arange(C), jobs)
        seeds = np.random.SeedSequence(seed).spawn(jobs)
        with ThreadPoolExecutor(jobs) as ex:
            futures = [ex.submit(_run_chains, mln, plans, int(n_samples), int(burn_in), int(thin), len(g),
                                 np.random.default_rng(sd), batch_of, None if init is None else init[:, g], tick)
                       for g, sd in zip(groups, seeds)]
            parts = [f.result() for f in futures]
    seconds = time.perf_counter() - t0
    atom_counts = np.concatenate([p[0] for p in parts], axis=2)
    clause_counts = sum(p[1] for p in parts)
    neg_counts = sum(p[2] for p in parts)
    X = np.concatenate([p[3] for p in parts], axis=1)
    rb = tuple(sum(p[4][i] for p in parts) for i in range(4))
    negative = mln.entry_sign < 0
    entry_counts = np.empty((nb, mln.nnz), dtype=np.int64)
    entry_counts[:, negative] = neg_counts
    entry_counts[:, ~negative] = atom_counts.sum(axis=2)[:, mln.entry_atom[~negative]]
    updates = n * C * (int(burn_in) + int(n_samples) * int(thin))
    return GibbsResult(atom_counts, clause_counts, entry_counts, batch_sizes, C, int(burn_in), int(thin),
                       seconds, updates, X, rb, watched)


class Chains:
    """The state of C chains (atoms X, true-literal counts T per clause) and the sums they record:
    per-batch atom, clause and negative-literal counts and the Rao-Blackwellised sums."""

    def __init__(self, mln: GroundMLN, C: int, rng: np.random.Generator, batch_of: np.ndarray,
                 init: np.ndarray | None) -> None:
        n, m = mln.n_atoms, mln.n_clauses
        nb = int(batch_of[-1]) + 1
        self.C, self.rng = C, rng
        if init is None:
            self.X = (rng.random((n, C)) < 0.5).astype(np.int8)
        else:
            self.X = np.ascontiguousarray(np.asarray(init, dtype=np.int8))
        longest = int(np.diff(mln.S.indptr).max(initial=0))
        t_dtype = np.int8 if longest < 127 else np.int16 if longest < 32_000 else np.int32
        self.T = (mln.S.astype(np.int32) @ self.X.astype(np.int32) + mln.n_negative[:, None]).astype(t_dtype)
        self.atom_counts = np.zeros((nb, n, C), dtype=np.int32)
        self.clause_counts = np.zeros((nb, m), dtype=np.int64)
        buf_dtype = np.uint16 if np.bincount(batch_of).max() < 65_535 else np.int32
        self.clause_buf = np.zeros((m, C), dtype=buf_dtype)  # current batch, per chain; pooled at batch end
        # E[n_c x_q] needs counting only for negative literals: a positive literal of q is true when
        # q is, so there n_c x_q = x_q (filled in from atom_counts after sampling)
        negative = mln.entry_sign < 0
        self.ec_neg, self.ea_neg = mln.entry_clause[negative], mln.entry_atom[negative]
        self.neg_counts = np.zeros((nb, len(self.ec_neg)), dtype=np.int64)
        self.neg_buf = np.zeros((len(self.ec_neg), C), dtype=buf_dtype)
        self.rb_p1, self.rb_p0 = np.zeros(n), np.zeros(n)
        self.rb_a, self.rb_b = np.zeros(mln.nnz), np.zeros(mln.nnz)

    def sweep(self, plans: list[ClassPlan], record: bool = False) -> None:
        """One sweep: every colour class's atoms drawn at once given the rest (`record`: add the
        Rao-Blackwellised conditionals)."""
        X, T, C = self.X, self.T, self.C
        for p in plans:
            u = self.rng.random((len(p.atoms), C), dtype=np.float32)
            if not len(p.clause):
                new = (u < 0.5).view(np.int8)
                if record:
                    self.rb_p1[p.atoms] += 0.5 * C
                    self.rb_p0[p.atoms] += 0.5 * C
                X[p.atoms] = new
                continue
            x_old = np.take(X, p.atoms, axis=0)                   # (k, C)
            xe = np.take(x_old, p.local, axis=0)                  # (m, C)
            te = np.take(T, p.clause, axis=0)                     # (m, C)
            lit = xe == p.positive                                # the literal is true now
            crit = te == lit                                      # the literal decides its clause
            logit = p.gather @ crit.view(np.int8)                 # (k, C) float32
            e_neg = np.exp(-logit)
            new = (u * (1.0 + e_neg) < 1.0).view(np.int8)         # u < sigmoid(logit)
            if record:
                self._record_conditionals(p, logit, e_neg, te - lit)
            te += p.sign * np.take(new - x_old, p.local, axis=0)
            T[p.clause] = te                                      # clauses are distinct within a class
            X[p.atoms] = new

    def record_state(self, p: ClassPlan) -> None:
        """Add the Rao-Blackwellised conditionals of `p`'s atoms in the current state, leaving it as
        it is (for samplers other than Gibbs: any sampler of P may average P(x_i | rest))."""
        xe = np.take(np.take(self.X, p.atoms, axis=0), p.local, axis=0)
        te = np.take(self.T, p.clause, axis=0)
        lit = xe == p.positive
        logit = p.gather @ (te == lit).view(np.int8)
        with np.errstate(over="ignore"):
            self._record_conditionals(p, logit, np.exp(-logit), te - lit)

    def _record_conditionals(self, p: ClassPlan, logit: np.ndarray, e_neg: np.ndarray, rest: np.ndarray) -> None:
        """Add P(x=1 | rest) and the clause's truth with the atom set either way (`rest`: true
        literals besides this one)."""
        p1 = 1.0 / (1.0 + e_neg)
        p0 = 1.0 / (1.0 + np.exp(logit))
        self.rb_p1[p.atoms] += p1.sum(axis=1)
        self.rb_p0[p.atoms] += p0.sum(axis=1)
        n1 = (rest + p.positive) > 0
        n0 = (rest + (1 - p.positive)) > 0
        self.rb_a[p.entries] += (np.take(p1, p.local, axis=0) * n1).sum(axis=1)
        self.rb_b[p.entries] += (np.take(p0, p.local, axis=0) * n0).sum(axis=1)

    def count(self, k: int, b: int, batch_end: bool, watch: tuple | None) -> None:
        """Record sample `k` into batch `b` (pooling the per-chain buffers at a batch's end)."""
        X = self.X
        self.atom_counts[b] += X
        sat = self.T > 0
        if watch is not None:
            watch[2][k] = X[watch[0]]
            watch[3][k] = sat[watch[1]]
        self.clause_buf += sat
        self.neg_buf += np.take(sat, self.ec_neg, axis=0) & np.take(X, self.ea_neg, axis=0).view(bool)
        if batch_end:
            self.clause_counts[b] = self.clause_buf.sum(axis=1, dtype=np.int64)
            self.neg_counts[b] = self.neg_buf.sum(axis=1, dtype=np.int64)
            self.clause_buf[:] = 0
            self.neg_buf[:] = 0


def _run_chains(mln: GroundMLN, plans: list[ClassPlan], n_samples: int, burn_in: int, thin: int, C: int,
                rng: np.random.Generator, batch_of: np.ndarray, init: np.ndarray | None,
                tick: Progress | None = None, watch: tuple | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple]:
    """Run C chains; returns per-chain atom batch counts, pooled clause and negative-literal batch
    counts, the final state and the Rao-Blackwellised sums (see `GibbsResult.rb_sums`)."""
    chains = Chains(mln, C, rng, batch_of, init)
    batch_end = np.r_[batch_of[1:] != batch_of[:-1], True]
    sweeps = burn_in + n_samples * thin
    with np.errstate(over="ignore"):
        for s in range(burn_in):
            chains.sweep(plans)
            if tick is not None:
                tick(s / sweeps, f"Gibbs burn-in: sweep {s + 1:,} of {burn_in:,}")
        for k in range(n_samples):
            for j in range(thin):
                chains.sweep(plans, record=j == thin - 1)
            if tick is not None:
                tick((burn_in + (k + 1) * thin) / sweeps, f"Gibbs sampling: sample {k + 1:,} of {n_samples:,}")
            chains.count(k, int(batch_of[k]), bool(batch_end[k]), watch)
    c = chains
    return c.atom_counts, c.clause_counts, c.neg_counts, c.X, (c.rb_p1, c.rb_p0, c.rb_a, c.rb_b)
