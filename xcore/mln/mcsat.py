"""MC-SAT (Poon and Domingos 2006): a slice sampler for Markov logic that moves inside hard clauses.

Each step, from a state x: every clause of weight w > 0 that x satisfies is kept with probability
1 - exp(-w) (a hard clause, weight `hard_weight` = 20 in the network, whenever x satisfies it: the
difference, e^-20 per clause and step, is below what any run could see); every clause of weight w < 0
that x violates is kept, as "stays violated" (its atoms fixed), with probability 1 - exp(w). The next
state must satisfy the kept clauses and, in the paper, is a near-uniform draw among such states by
SampleSAT (WalkSAT mixed with simulated annealing). Here, by default, it is an *exact* move instead:
`sa_sweeps` heat-bath sweeps on exp(-(unsatisfied kept clauses) / temperature) from x (`SaSweeps`:
each colour class's atoms at once for all chains, classes in random order, so a sweep is reversible on
average), kept only when every kept clause holds again, else x stays (counted in ``rejected_steps``).
A reversible kernel for a target that is flat on the kept set, restricted that way, leaves the uniform
distribution on the kept set invariant, which is all the slice sampler needs: no SampleSAT bias. The
annealing moves climb over hard clauses (breaking one costs about exp(-1 / temperature), not the e^-20
of a hard weight under Gibbs) and come back within the sweeps, so the chain moves between regions that
single-site Gibbs cannot connect. SampleSAT proper (`xcore.mln.mcsat_walk`: interleaved moves, then a
WalkSAT repair; near-uniform, not exact) runs with ``sat_steps`` or ``repair`` > 0.

The sampler walks on `xcore.mln.mcsat_merge.merged_network`, the same distribution with repeated
clauses summed and unit clauses netted per atom (opposing heavy unit clauses would otherwise fix their
atom almost every step); counts, marginals and importances are on the network as given.

This is MC-SAT for the network's own distribution (hard clauses with their finite weight, as exact
enumeration and Gibbs see them), so it needs no world satisfying every hard clause: a hard clause the
state violates is simply not kept, and once satisfied it stays so. The first state of every chain is
a greedy descent on the hard clauses from a uniform random start, then WalkSAT (at most `init_flips`
moves; the hard clauses left violated are reported as ``hard_violated_at_start``; when the hard
clauses cannot all hold, e.g. Tuffy's rc1000 with its evidence, the mass sits on the worlds violating
fewest, a weighted MAX-SAT landscape where chains stay in the local optimum they start in).

Chains, batches, marginals, R-hat and Monte Carlo errors are those of `xcore.mln.gibbs`: the result
is a `GibbsResult` with ``sampler="mcsat"``. At every kept sample the sampler also records each
atom's conditional P(x_i | rest) and the clause truths with x_i set either way (evaluated in the
state, all atoms at once over the CSR incidence), so importances get the same Rao-Blackwellised
estimator as under Gibbs (valid for any sampler of P). ``atom_updates`` counts SampleSAT moves.

`choose_sampler` decides what ``sampler="auto"`` runs; `run_sampler` runs either sampler.
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.mln.gibbs import Chains, GibbsResult, all_atoms_plan, class_plans, gibbs
from xcore.mln.mcsat_merge import merged_network
from xcore.mln.mcsat_walk import SampleSat, WalkStats
from xcore.mln.network import GroundMLN
from xcore.runtime import Progress, throttled

SAMPLERS: tuple[str, ...] = ("auto", "gibbs", "mcsat")
HEAVY_WEIGHT = 5.0
"""`auto` runs MC-SAT when a clause over two or more query atoms is hard or has |w| >= this: one
single-site Gibbs move against such a clause succeeds less than once in e^5 ~ 150 tries, so Gibbs
chains freeze in whichever region they reach first (unit clauses are sampled exactly by Gibbs)."""


def coupling_heavy(mln: GroundMLN) -> bool:
    """Whether a hard or heavy (|w| >= `HEAVY_WEIGHT`) clause ties two or more query atoms."""
    wide = np.diff(mln.S.indptr) >= 2
    return bool((wide & (mln.hard | (np.abs(mln.weights) >= HEAVY_WEIGHT))).any())


def choose_sampler(mln: GroundMLN, sampler: str = "auto") -> str:
    """The sampler to run: `sampler` itself, or for "auto" MC-SAT when `coupling_heavy`, else Gibbs."""
    if sampler not in SAMPLERS:
        raise XcoreError(f"unknown sampler {sampler!r}; use one of {', '.join(SAMPLERS)}")
    if sampler == "auto":
        return "mcsat" if coupling_heavy(mln) else "gibbs"
    return sampler


def run_sampler(mln: GroundMLN, sampler: str = "auto", progress: Progress | None = None, **options) -> GibbsResult:
    """Sample P(query atoms | evidence) with Gibbs or MC-SAT (`choose_sampler`); `options` are those
    of `gibbs` or `mcsat` (the shared ones: n_samples, burn_in, n_chains, seed, n_batches, init)."""
    chosen = choose_sampler(mln, sampler)
    if chosen == "gibbs":
        return gibbs(mln, progress=progress, **options)
    unsupported = set(options) - MCSAT_OPTIONS
    if unsupported:
        raise XcoreError(f"MC-SAT does not take {', '.join(sorted(unsupported))}; "
                         f"its options are {', '.join(sorted(MCSAT_OPTIONS))}")
    return mcsat(mln, progress=progress, **options)


MCSAT_OPTIONS = frozenset({"n_samples", "burn_in", "thin", "n_chains", "seed", "n_batches", "init", "sa_sweeps",
                           "sat_steps", "p_sa", "temperature", "noise", "repair", "init_flips", "n_jobs"})


def default_temperature(mln: GroundMLN) -> float:
    """min(0.5, 1 / ln(n_atoms + 1)): with n atoms each breaking a kept clause with probability about
    exp(-1 / T), a sweep then breaks about one; the exact step (below) keeps a sweep's state only
    when it breaks none."""
    return min(0.5, 1.0 / math.log(mln.n_atoms + 1.0)) if mln.n_atoms > 1 else 0.5


def mcsat(mln: GroundMLN, n_samples: int = 1000, burn_in: int = 100, thin: int = 1, n_chains: int = 4,
          seed: int = 0, n_batches: int = 20, init: np.ndarray | None = None, sa_sweeps: int = 2,
          sat_steps: int = 0, temperature: float | None = None, p_sa: float = 0.5, noise: float = 0.5,
          repair: int = 0, init_flips: int | None = None, n_jobs: int = 1,
          progress: Progress | None = None) -> GibbsResult:
    """Sample P(query atoms | evidence) with `n_chains` MC-SAT chains (see the module docstring).

    Each chain runs `burn_in` steps, then keeps one state every `thin` steps until it has `n_samples`. One step:
    `sa_sweeps` simulated-annealing sweeps over all free atoms at `temperature` (default `default_temperature`;
    vectorised, `SaSweeps`); by default a chain keeps their state only when every kept clause holds, else its old
    state (an exact step, counted in ``rejected_steps``). With `sat_steps` or `repair` > 0, SampleSAT proper
    instead: `sat_steps` interleaved moves (`p_sa`, `noise`), then up to `repair` WalkSAT moves until the kept
    clauses hold (near-uniform, not exact). `init` (n_atoms, n_chains) 0/1 starts, else uniform random ones; WalkSAT
    then works on the hard clauses they violate for at most `init_flips` moves (default max(1000, 2 x atoms)).
    `n_jobs` is accepted for option compatibility with `gibbs` and ignored. `progress` hears the steps (at most
    every 0.1 s; a cancel stops the chains there).
    """
    _check_counts(n_samples=(n_samples, 1), burn_in=(burn_in, 0), thin=(thin, 1), n_chains=(n_chains, 1),
                  n_batches=(n_batches, 1), sa_sweeps=(sa_sweeps, 0), sat_steps=(sat_steps, 0))
    temperature = _checked_walk(mln, p_sa, noise, temperature, repair)
    n, C, ns = mln.n_atoms, int(n_chains), int(n_samples)
    repair = int(repair)
    init_flips = max(1000, 2 * n) if init_flips is None else int(init_flips)
    if init_flips < 0:
        raise XcoreError("mcsat: init_flips must be >= 0")
    batch_of, batch_sizes, batch_end = _batches(ns, int(n_batches))
    rng = np.random.default_rng(seed)
    if init is not None and np.shape(init) != (n, C):
        raise XcoreError(f"mcsat: init must have shape (n_atoms, n_chains) = {(n, C)}, got {np.shape(init)}")
    init = None if init is None else np.asarray(init)
    tick = throttled(progress)
    t0 = time.perf_counter()
    work = merged_network(mln)  # the same distribution, repeated clauses merged (`xcore.mln.mcsat_merge`)
    sat, sweeps = SampleSat(work), SaSweeps(work, float(temperature))
    walker = Chains(work, C, rng, batch_of[:1], init)
    walker.T = walker.T.astype(np.int32)
    plan, S32 = all_atoms_plan(mln), mln.S.astype(np.int32)
    walk = {"p_sa": p_sa, "temperature": float(temperature), "noise": noise}
    stats, total_steps, k = WalkStats(), int(burn_in) + ns * int(thin), 0
    with np.errstate(over="ignore"):
        _start(sat, work, walker, init_flips, rng, walk)
        chains = Chains(mln, C, rng, batch_of, walker.X)  # counts on the network as given, same state
        violated = np.count_nonzero(mln.hard[:, None] & (chains.T == 0), axis=0).tolist()
        for s in range(total_steps):
            _step(sat, sweeps, work, walker, sa_sweeps, int(sat_steps), repair, rng, walk, stats)
            if tick is not None:
                tick((s + 1) / total_steps, f"MC-SAT {'burn-in' if s < burn_in else 'sampling'}: "
                                             f"step {s + 1:,} of {total_steps:,}")
            if s >= burn_in and (s - int(burn_in) + 1) % int(thin) == 0:
                chains.X = walker.X
                chains.T = S32 @ walker.X.astype(np.int32) + mln.n_negative[:, None]
                chains.record_state(plan)
                chains.count(k, int(batch_of[k]), bool(batch_end[k]), None)
                k += 1
    moves = total_steps * C * n * int(sa_sweeps) + stats.steps
    extra = {"sa_sweeps": int(sa_sweeps), "sat_steps": int(sat_steps), "walksat_flips": stats.flips,
             "rejected_steps": stats.failed, "temperature": float(temperature),
             "hard_violated_at_start": max(violated, default=0)}
    return _result(mln, chains, batch_sizes, int(burn_in), int(thin), time.perf_counter() - t0, moves, extra)


def _batches(n_samples: int, n_batches: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(batch of each kept sample, batch sizes, whether a sample ends its batch) for batch-means errors."""
    nb = min(n_batches, n_samples)
    batch_of = (np.arange(n_samples) * nb) // n_samples
    return batch_of, np.bincount(batch_of, minlength=nb), np.r_[batch_of[1:] != batch_of[:-1], True]


def _checked_walk(mln: GroundMLN, p_sa: float, noise: float, temperature: float | None, repair: int) -> float:
    """The walk's settings checked (XcoreError naming the bad one); the temperature (default if None)."""
    for name, v in (("p_sa", p_sa), ("noise", noise)):
        if not 0.0 <= float(v) <= 1.0:
            raise XcoreError(f"mcsat: {name} must be in [0, 1], got {v}")
    if int(repair) < 0:
        raise XcoreError("mcsat: repair must be >= 0")
    t = default_temperature(mln) if temperature is None else temperature
    if not float(t) > 0:
        raise XcoreError(f"mcsat: temperature must be > 0, got {t}")
    return float(t)


def _check_counts(**values: tuple[int, int]) -> None:
    """Each named count is an integer at least its bound (XcoreError naming it otherwise)."""
    for name, (v, low) in values.items():
        if isinstance(v, bool) or int(v) != v or v < low:
            raise XcoreError(f"mcsat: {name} must be an integer >= {low}, got {v}")


def _result(mln: GroundMLN, chains: Chains, batch_sizes: np.ndarray, burn_in: int, thin: int, seconds: float,
            moves: int, extra: dict) -> GibbsResult:
    """The sampler's counts as a `GibbsResult` (the per-entry counts rebuilt from atoms and negated entries)."""
    negative = mln.entry_sign < 0
    entry_counts = np.empty((len(batch_sizes), mln.nnz), dtype=np.int64)
    entry_counts[:, negative] = chains.neg_counts
    entry_counts[:, ~negative] = chains.atom_counts.sum(axis=2)[:, mln.entry_atom[~negative]]
    return GibbsResult(chains.atom_counts, chains.clause_counts, entry_counts, batch_sizes, chains.X.shape[1], burn_in,
                       thin, seconds, moves, chains.X, (chains.rb_p1, chains.rb_p0, chains.rb_a, chains.rb_b), None,
                       sampler="mcsat", extra=extra)


class SaSweeps:
    """Simulated-annealing sweeps for all chains at once: the atoms of a colour class share no clause,
    so their moves on "unsatisfied kept clauses / temperature" are independent and made together (a
    change of each atom's own delta only); fixed atoms stay. Moves are heat-bath (flip with probability
    1 / (1 + exp(delta / T))), reversible for exp(-unsat / T) like Metropolis, but without its
    period two: under Metropolis an atom no kept clause constrains would flip at every sweep."""

    def __init__(self, mln: GroundMLN, temperature: float) -> None:
        self.plans = class_plans(mln)
        self.count = [sp.csr_matrix((np.ones(len(p.local), np.float32), (p.local, np.arange(len(p.local)))),
                                    shape=(len(p.atoms), len(p.local))) for p in self.plans]
        self.temperature = temperature
        self.incidence_t = abs(mln.S).T.tocsr().astype(np.int32)  # atoms x clauses: an atom's clauses
        self.soft = np.flatnonzero(~mln.hard)

    def sweep(self, X: np.ndarray, T: np.ndarray, kept: np.ndarray, fixed: np.ndarray,
              rng: np.random.Generator) -> int:
        """One sweep over every colour class, in place; returns the flips made."""
        flips = 0
        for k in rng.permutation(len(self.plans)):  # a random class order: the sweep is reversible on average
            p, count = self.plans[k], self.count[k]
            u = rng.random((len(p.atoms), X.shape[1]), dtype=np.float32)
            x_old = np.take(X, p.atoms, axis=0)
            if not len(p.clause):
                flip = u < 0.5
            else:
                xe = np.take(x_old, p.local, axis=0)
                te = np.take(T, p.clause, axis=0)
                lit = xe == p.positive
                crit = (te == lit) & np.take(kept, p.clause, axis=0)      # the literal decides a kept clause
                delta = count @ (crit & lit).view(np.int8) - count @ (crit & ~lit).view(np.int8)
                flip = u * (1.0 + np.exp(delta / self.temperature)) < 1.0    # heat bath: 1 / (1 + e^(delta/T))
            flip &= ~np.take(fixed, p.atoms, axis=0)
            if not flip.any():
                continue
            new = x_old ^ flip.view(np.int8)
            if len(p.clause):
                te += p.sign * np.take(new - x_old, p.local, axis=0)
                T[p.clause] = te
            X[p.atoms] = new
            flips += int(flip.sum())
        return flips


def _start(sat: SampleSat, mln: GroundMLN, chains: Chains, init_flips: int, rng: np.random.Generator,
           walk: dict) -> list[int]:
    """Move every chain's start towards the hard clauses: greedy descent sweeps (heat bath at a
    temperature where no move uphill is taken) while they lower the violated hard clauses, then WalkSAT for at most `init_flips` moves, keeping whichever
    state violates fewer hard clauses (WalkSAT wanders on heavily repeated clauses, such as rc1000's).
    Returns the hard clauses each chain still violates."""
    X, T, hard = chains.X, chains.T, mln.hard
    kept = np.repeat(hard[:, None], X.shape[1], axis=1)
    if hard.any():
        descent = SaSweeps(mln, 0.02)
        fixed = np.zeros(X.shape, dtype=bool)
        left = int(np.count_nonzero(kept & (T == 0)))
        for _ in range(100):  # until a sweep no longer lowers the violated hard clauses
            if not left:
                break
            descent.sweep(X, T, kept, fixed, rng)
            now = int(np.count_nonzero(kept & (T == 0)))
            if now >= left:
                break
            left = now
    violated = []
    for j in range(X.shape[1]):
        x, t = X[:, j].copy(), T[:, j].copy()
        before = int(np.count_nonzero(hard & (t == 0)))
        if before:
            sat.walk(x, t, hard, np.zeros(len(x), dtype=bool), 0, rng, repair=init_flips, **walk)
            after = int(np.count_nonzero(hard & (t == 0)))
            if after < before:
                X[:, j], T[:, j], before = x, t, after
        violated.append(before)
    return violated


def _step(sat: SampleSat, sweeps: SaSweeps, mln: GroundMLN, chains: Chains, sa_sweeps: int, sat_steps: int,
          repair: int, rng: np.random.Generator, walk: dict, stats: WalkStats) -> None:
    """One MC-SAT step of every chain, in place: draw the kept clauses, run the SA sweeps, then per
    chain the SampleSAT moves and the WalkSAT repair (a chain whose walk ends unsatisfied keeps its
    old state)."""
    X, T = chains.X, chains.T
    C = X.shape[1]
    soft = sweeps.soft
    w = mln.weights[soft][:, None]
    satisfied = np.take(T, soft, axis=0) > 0
    draw = rng.random((len(soft), C)) < -np.expm1(-np.abs(w))   # kept with probability 1 - exp(-|w|)
    kept = mln.hard[:, None] & (T > 0)
    kept[soft] = draw & (w > 0) & satisfied
    stay_false = np.zeros(T.shape, dtype=bool)
    stay_false[soft] = draw & (w < 0) & ~satisfied
    fixed = (sweeps.incidence_t @ stay_false.view(np.int8)) > 0 if stay_false.any() else np.zeros(X.shape, dtype=bool)
    X_old, T_old = X.copy(), T.copy()
    for _ in range(sa_sweeps):
        stats.flips += sweeps.sweep(X, T, kept, fixed, rng)
    if sat_steps == 0 and repair == 0:  # exact: keep the sweeps' state only where every kept clause holds
        bad = (kept & (T == 0)).any(axis=0)
        X[:, bad], T[:, bad] = X_old[:, bad], T_old[:, bad]
        stats.failed += int(bad.sum())
        return
    for j in range(C):
        x, t = X[:, j].copy(), T[:, j].copy()
        if sat.walk(x, t, kept[:, j], fixed[:, j], sat_steps, rng, repair=repair, stats=stats, **walk):
            X[:, j], T[:, j] = x, t
        else:
            X[:, j], T[:, j] = X_old[:, j], T_old[:, j]
