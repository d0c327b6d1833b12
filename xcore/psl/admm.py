"""Consensus ADMM for hinge-loss MRFs, as PSL's own reasoner (Bach et al.), over blocks: potentials
and hard rows that share a linear form are one local problem (`xcore.psl.admm_blocks`), each of its
non-zeros holds a local copy of its atom, updated in closed form, then averaged."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from xcore.errors import ConfigError, XcoreError
from xcore.psl.admm_blocks import Blocks, build_blocks
from xcore.psl.map_problem import HARD_TOL, MAPResult, box_bounds, check_hard_feasible, hard_violation, start_state
from xcore.psl.program import HingeProgram
from xcore.runtime import Progress, throttled

ADMM_RELAXATION = 1.6
"""Over-relaxation of the consensus step (Boyd et al. 2011, sec. 3.4.3: 1.5-1.8 usually speeds ADMM up)."""
ADMM_BALANCE = (10, 10.0, 2.0)
"""Normalised residual balancing (Wohlberg 2017): every 10 iterations, rho is multiplied (divided) by 2
when the relative primal residual exceeds the relative dual one tenfold (or the reverse). On
entity-resolution, whose atoms have thousands of local copies, this and the over-relaxation cut the
iterations 4.5-fold (bench/RESULTS.md, "PSL entity-resolution inference")."""
PSL_EPSILON = (1e-5, 1e-3)
"""Java PSL's ADMMReasoner stopping rule (admmreasoner.epsilonabs, .epsilonrel): stop when the primal
residual < sqrt(copies) eps_abs + eps_rel max(|x|, |z|) and the dual residual < sqrt(copies) eps_abs +
eps_rel |y| (y = rho u, the unscaled multipliers). Looser than ours: `stop="psl"` selects it."""
STOPPING_RULES = ("exact", "psl")
OPTION_KEYS = {"admmreasoner.epsilonabs": "epsilon_abs", "admmreasoner.epsilonrel": "epsilon_rel",
               "admmreasoner.maxiterations": "max_iter", "admmreasoner.stepsize": "rho"}
"""Java PSL's ADMMReasoner options (``-D key=value``) that `admm_options` passes on to `map_admm`."""
RHO_RANGE = (1e-8, 1e8)
"""Balancing keeps rho within this range: on infeasible hard rows it would grow without end (to inf,
then NaN in the local steps) while the residuals never meet."""


@dataclass
class _Residuals:
    """One iteration's primal and dual residuals and the norms they are measured against."""

    primal: float
    dual: float
    x_norm: float
    z_norm: float
    y_norm: float

    def done(self, stop: str, tol: float, copies: int, epsilon: tuple[float, float] | None = None) -> bool:
        """Whether ADMM may stop: ours (`exact`, relative `tol`) or Java PSL's rule (`psl`, `epsilon`)."""
        if stop == "psl":
            eps_abs, eps_rel = epsilon or PSL_EPSILON
            floor = np.sqrt(copies) * eps_abs
            return (self.primal < floor + eps_rel * max(self.x_norm, self.z_norm)
                    and self.dual < floor + eps_rel * self.y_norm)
        return (self.primal <= tol * max(self.x_norm, self.z_norm, 1.0)
                and self.dual <= tol * max(self.y_norm, 1.0))


def admm_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """`map_admm` keyword arguments from Java PSL's ``admmreasoner.*`` options (`OPTION_KEYS`, keys
    case-insensitive): an epsilon selects PSL's stopping rule (the other epsilon at PSL's default),
    ``maxiterations`` caps the iterations, ``stepsize`` is the first rho. ConfigError on a bad value."""
    given: dict[str, float] = {}
    for key, raw in (options or {}).items():
        name = OPTION_KEYS.get(str(key).strip().lower())
        if name is None:
            continue
        try:
            value = float(str(raw).strip())
        except ValueError:
            raise ConfigError(f"option {key}={raw!r}: expected a number") from None
        if not np.isfinite(value) or value <= 0 or (name == "max_iter" and not value.is_integer()):
            raise ConfigError(f"option {key}={raw!r}: expected a positive {'whole ' if name == 'max_iter' else ''}number")
        given[name] = value
    out: dict[str, Any] = {}
    if "epsilon_abs" in given or "epsilon_rel" in given:
        out["stop"] = "psl"
        out["epsilon"] = (given.get("epsilon_abs", PSL_EPSILON[0]), given.get("epsilon_rel", PSL_EPSILON[1]))
    if "max_iter" in given:
        out["max_iter"] = int(given["max_iter"])
    if "rho" in given:
        out["rho"] = given["rho"]
    return out


@dataclass
class AdmmWarm:
    """ADMM's state between solves of one program under changing weights (weight learning): the blocks
    (built once, `keep_zero`, reweighted per solve), the bounds, and the last run's scaled multipliers
    `u`, `rho` and segments (a warm start, as Java PSL's reasoner keeps its terms' multipliers)."""

    blocks: Blocks
    lo: np.ndarray | float
    hi: np.ndarray | float
    u: np.ndarray | None = None
    rho: float | None = None
    active: object = None

    @classmethod
    def of(cls, prog: HingeProgram) -> AdmmWarm:
        """The program's blocks with room for every potential's weight to change."""
        return cls(*blocks_of(prog, keep_zero=True))


def blocks_of(prog: HingeProgram, keep_zero: bool = False) -> tuple[Blocks, np.ndarray | float, np.ndarray | float]:
    """The program's ADMM blocks and the bounds on each atom; hard rows over one atom are bounds
    (`box_bounds`, held by the consensus clip), the other hard rows bounds on their block's form.
    `keep_zero`: potentials without weight are kept (`Blocks.reweighted` can weigh them later)."""
    boxed = box_bounds(prog) if prog.C.shape[0] else None
    lo, hi = (boxed[0], boxed[1]) if boxed is not None else (0.0, 1.0)
    keep = boxed[2] if boxed is not None else np.arange(prog.C.shape[0])
    C = prog.C.tocsr()[keep]
    return build_blocks(prog.A, prog.b, prog.w, prog.squared, C, prog.d[keep], prog.equality[keep],
                        prog.n_atoms, keep_zero=keep_zero), lo, hi


def map_admm(prog: HingeProgram, y0: np.ndarray | None = None, rho: float = 1.0,
             tol: float = 1e-7, max_iter: int = 20000, progress: Progress | None = None,
             stop: str = "exact", epsilon: tuple[float, float] | None = None,
             warm: AdmmWarm | None = None) -> MAPResult:
    """Consensus ADMM (Bach et al., PSL): exact local steps per block of potentials sharing a linear
    form, averaged consensus, over-relaxed (`ADMM_RELAXATION`) with rho balanced on the residuals
    (`ADMM_BALANCE`). `stop`: ``exact`` (relative residuals below `tol`) or ``psl`` (Java PSL's
    rule: `epsilon` = (epsilon_abs, epsilon_rel), default `PSL_EPSILON`). `y0` warm-starts the
    consensus values; `warm` (`AdmmWarm`) reuses the blocks under the program's current weights and
    starts from its multipliers, and is updated to this run's.

    All updates are array operations over the blocks' local copies and potentials.
    """
    if stop not in STOPPING_RULES:
        raise XcoreError(f"unknown ADMM stopping rule {stop!r}; use {' or '.join(STOPPING_RULES)}")
    t0 = time.perf_counter()
    bl, lo, hi, z, u, rho, active = _start(prog, y0, rho, warm)
    count = np.bincount(bl.cols, minlength=prog.n_atoms).astype(np.float64)
    has_copy = count > 0
    every, mu, tau = ADMM_BALANCE
    it, converged = 0, False
    tick = throttled(progress)
    for it in range(1, max_iter + 1):
        if tick is not None:
            tick(it / max_iter, f"ADMM iteration {it:,}")
        zc = z[bl.cols]
        v = zc - u
        t_v = bl.row_sums(bl.a * v)
        t, active = bl.prox_t(t_v, rho / bl.norm2, active)
        x = v + ((t - t_v) / bl.norm2)[bl.rows] * bl.a
        xh = ADMM_RELAXATION * x + (1.0 - ADMM_RELAXATION) * zc
        z_old = z
        sums = np.bincount(bl.cols, xh + u, minlength=len(z))
        z = np.where(has_copy, np.clip(sums / np.maximum(count, 1), lo, hi), z_old)
        zc = z[bl.cols]
        u = u + xh - zc
        res = _Residuals(float(np.sqrt(np.sum((x - zc) ** 2))),
                         rho * float(np.sqrt(np.sum(count * (z - z_old) ** 2))),
                         float(np.sqrt(np.sum(x * x))), float(np.sqrt(np.sum(zc ** 2))),
                         rho * float(np.sqrt(np.sum(u * u))))
        if res.done(stop, tol, len(bl.a), epsilon):
            converged = True
            break
        if it % every == 0 and res.y_norm > 0:  # normalised residual balancing; u is scaled with 1/rho
            rel_p, rel_d = res.primal / max(res.x_norm, res.z_norm, 1.0), res.dual / res.y_norm
            if rel_p > mu * rel_d and rho < RHO_RANGE[1]:
                rho, u = rho * tau, u / tau
            elif rel_d > mu * rel_p and rho > RHO_RANGE[0]:
                rho, u = rho / tau, u * tau
    if warm is not None:
        warm.u, warm.rho, warm.active = u, rho, active
    return _admm_result(prog, z, it, converged, t0, bl)


def _start(prog: HingeProgram, y0: np.ndarray | None, rho: float, warm: AdmmWarm | None) -> tuple:
    """Blocks, bounds, consensus values, scaled multipliers, rho and segments to start from: fresh, or
    `warm`'s blocks under the program's weights with its multipliers, rho and segments."""
    if warm is not None:
        bl, lo, hi = warm.blocks.reweighted(prog.w), warm.lo, warm.hi
    else:
        bl, lo, hi = blocks_of(prog)
    z = np.clip(start_state(prog, y0), lo, hi)
    if warm is None or warm.u is None:
        return bl, lo, hi, z, np.zeros_like(bl.a), rho, None
    active = warm.active
    active.refresh(bl, np.arange(bl.n_blocks), active.count.copy())  # its cached sums are the old weights'
    return bl, lo, hi, z, warm.u.copy(), warm.rho, active


def _admm_result(prog: HingeProgram, z: np.ndarray, it: int, converged: bool, t0: float, bl: Blocks) -> MAPResult:
    """ADMM's state as a result; hard constraints it leaves violated are reported (or found infeasible)."""
    message = (f"{'converged' if converged else 'iteration limit reached'} ({prog.n_potentials:,} potentials "
               f"in {bl.n_blocks:,} blocks, {len(bl.a):,} local copies)")
    violation = hard_violation(prog, z)
    if not violation <= HARD_TOL:  # NaN counts as violated
        check_hard_feasible(prog)  # raises when no state can hold them; else say how far this one is
        converged = False
        message += f"; the hard constraints are violated by up to {violation:.3g}"
    return MAPResult(z, prog.energy(z), it, time.perf_counter() - t0, "admm", converged, message)
