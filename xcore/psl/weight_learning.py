"""PSL weight learning as PSL's command line does it: the MAP-state perceptrons.

Both learners follow the likelihood gradient of a hinge-loss MRF, ``d log p(y*) / d w_r =
E[Phi_r] - Phi_r(y*)``, with the expectation replaced by the incompatibility in the MAP state
(``Phi_r(y)`` = sum of rule r's ground potentials at y; one `np.bincount` over the ground rows):

* ``MaxLikelihoodMPE`` (PSL 2.x ``psl-cli``'s default for ``--learn``; ``VotedPerceptron.java``):
  ``w_r += step / (t + 1) * (Phi_r(MAP) - Phi_r(truth)) / n_r`` with ``n_r`` = rule r's number of
  ground rules, weights clipped at 0; options ``votedperceptron.*`` with PSL 2.3's defaults
  (25 steps, step size 0.2, step scaled by 1/(t+1), gradient scaled by the groundings, weights
  clipped at 0, no averaging, no momentum, no regularisation, start from the given weights).
* ``StructuredPerceptron`` (the default of PSL's JSON runtime, ``GradientDescent.java``): gradient
  ``g_r = Phi_r(truth) - Phi_r(MAP)`` plus regularisers (``2 l2 w - log_reg / w + entropy_reg
  (log w + 1)``), clipped to magnitude 25, then mirror descent on the unit simplex
  (``w *= exp(-eta g); w /= sum(w)``) with ``eta = 0.1 / (t + 1)``, weights first scaled onto the
  simplex, stopped after 500 steps or when the weights move less than 1e-3 (L1); options
  ``gradientdescent.*`` (``extension`` PROJECTED_GRADIENT or NONE switch the update).

Target atoms without a truth label are latent: the observed incompatibility takes them at their
MAP values with every labelled atom fixed to its truth (PSL's ``OptimalValue``). MAP states are
exact (`xcore.psl.inference`), warm-started from the previous step by solvers kept across steps
(`xcore.psl.learning_states`: with ADMM the blocks are built once and reweighted, and its multipliers
carry over; ``admmreasoner.*`` options reach it). As in PSL, the starting
weights are first divided by the largest one (option ``inference.normalize``, default true); MAP
states do not change under that scaling, the perceptron's steps do.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

import numpy as np

from xcore.errors import ConfigError, XcoreError, brief
from xcore.psl.admm import admm_options
from xcore.psl.inference import map_inference
from xcore.psl.learning_states import LatentProblem, MapSolver
from xcore.psl.program import HingeProgram
from xcore.psl.weight_search import grid_weights, learn_by_search

JAVA_PACKAGE = "org.linqs.psl.application.learning.weight"
METHODS: dict[str, str] = {
    "maxlikelihoodmpe": "MaxLikelihoodMPE",
    "votedperceptron": "MaxLikelihoodMPE",
    "structuredperceptron": "StructuredPerceptron",
    "gridsearch": "GridSearch",
    "randomgridsearch": "RandomGridSearch",
    "guidedrandomgridsearch": "GuidedRandomGridSearch",
}
"""Accepted method names (case-insensitive, also as PSL's Java class names) -> learner."""
DEFAULT_METHOD = "MaxLikelihoodMPE"
"""PSL 2.x ``psl-cli``'s ``--learn`` default (the ``.data`` + ``.psl`` layout)."""
RUNTIME_DEFAULT_METHOD = "StructuredPerceptron"
"""PSL 2.4 runtime's ``runtime.learn.method`` default (the JSON / YAML config layout)."""
SEARCH_METHODS = ("GridSearch", "RandomGridSearch", "GuidedRandomGridSearch")
SUPPORTED = ("MaxLikelihoodMPE", "StructuredPerceptron") + SEARCH_METHODS


def resolve_method(name: str | None) -> str:
    """The learner for a method name as PSL users write it (``MaxLikelihoodMPE``, the Java class name, ...)."""
    if name is None or name is True or name == "":
        return DEFAULT_METHOD
    key = str(name).rsplit(".", 1)[-1].lower()
    if key not in METHODS:
        raise ConfigError(f"unknown weight learning method {name!r}; supported: {', '.join(SUPPORTED)} "
                          f"(or their Java class names, e.g. {JAVA_PACKAGE}.maxlikelihood.MaxLikelihoodMPE)")
    return METHODS[key]


# ---------------------------------------------------------------------- options (PSL's keys and defaults)
@dataclass
class VotedPerceptronOptions:
    """PSL 2.3's ``votedperceptron.*`` options (``Options.java``) with their defaults."""

    numsteps: int = 25
    stepsize: float = 0.2
    scalestepsize: bool = True
    scalegradient: bool = True
    averagesteps: bool = False
    clipnegativeweights: bool = True
    zeroinitialweights: bool = False
    inertia: float = 0.0
    l1regularization: float = 0.0
    l2regularization: float = 0.0
    cutobjective: bool = False
    """PSL's step halving on a worse training evaluation; only false is supported (no evaluator here)."""

    prefix = "votedperceptron"


@dataclass
class GradientDescentOptions:
    """PSL's runtime ``gradientdescent.*`` options (``Options.java`` of the 2.4 runtime) with their defaults."""

    extension: str = "MIRROR_DESCENT"
    numsteps: int = 500
    stepsize: float = 0.1
    scalestepsize: bool = True
    clipweightgradient: bool = True
    maxgradientmagnitude: float = 25.0
    maxgradientnorm: float = math.inf
    l2regularization: float = 0.0
    negativelogregularization: float = 1.0
    negativeentropyregularization: float = 10.0
    movementbreak: bool = True
    movementtolerance: float = 1e-3
    runfulliterations: bool = False

    prefix = "gradientdescent"


def learner_options(method: str, options: Mapping[str, Any] | None = None):
    """The learner's options from PSL ``key=value`` pairs (``-D`` or a config's ``options``).

    Keys of the learner's namespace must be known and well typed (ConfigError otherwise);
    other keys (e.g. reasoner tolerances, which our exact solvers do not need) are left alone.
    """
    if resolve_method(method) in SEARCH_METHODS:
        grid_weights(options)  # checked now, before any grounding
        return dict(options or {})
    cls = VotedPerceptronOptions if resolve_method(method) == "MaxLikelihoodMPE" else GradientDescentOptions
    out = cls()
    known = {f.name: f for f in fields(cls)}
    for key, raw in (options or {}).items():
        ns, _, name = str(key).lower().partition(".")
        if ns != cls.prefix:
            continue
        if name not in known:
            raise ConfigError(f"unknown option {key!r}; {cls.prefix} options: "
                              f"{', '.join(cls.prefix + '.' + k for k in known)}")
        setattr(out, name, _coerce(key, raw, known[name].type))
    if isinstance(out, GradientDescentOptions):
        out.extension = str(out.extension).upper()
        if out.extension not in ("MIRROR_DESCENT", "PROJECTED_GRADIENT", "NONE"):
            raise ConfigError(f"gradientdescent.extension must be MIRROR_DESCENT, PROJECTED_GRADIENT or NONE, "
                              f"not {out.extension!r}")
    if isinstance(out, VotedPerceptronOptions) and out.cutobjective:
        raise ConfigError("votedperceptron.cutobjective=true is not supported (it needs PSL's training evaluator)")
    if out.numsteps <= 0 or out.stepsize <= 0:
        raise ConfigError(f"{cls.prefix}.numsteps and {cls.prefix}.stepsize must be positive")
    return out


def _coerce(key: str, raw: Any, kind: Any) -> Any:
    text = str(raw).strip()
    kind = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
    try:
        if kind == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError
            return text.lower() == "true"
        if kind == "int":
            return int(float(text)) if float(text).is_integer() else int(text)
        if kind == "float":
            return float(text)
        return text
    except ValueError:
        raise ConfigError(f"option {key}={brief(raw)}: expected {'true or false' if kind == 'bool' else 'a number'}") from None


# ---------------------------------------------------------------------- incompatibilities
def rule_incompatibility(prog: HingeProgram, y: np.ndarray, n_rules: int) -> np.ndarray:
    """Phi_r(y) per lifted rule: the sum of its ground potentials (squared where the rule is)."""
    return np.bincount(prog.rule_index, prog.potentials(y), minlength=n_rules)


def ground_counts(prog: HingeProgram, n_rules: int) -> np.ndarray:
    """Number of ground potentials per lifted rule (PSL's gradient scale)."""
    return np.bincount(prog.rule_index, minlength=n_rules).astype(np.float64)


def observed_state(prog: HingeProgram, truth: np.ndarray, initial: np.ndarray | None = None,
                   method: str = "auto") -> np.ndarray:
    """The labelled state: truth where known, latent atoms at their MAP values given the labels."""
    return LatentProblem(prog, truth, method).state(prog.w, initial)


# ---------------------------------------------------------------------- the learners
@dataclass
class LearningResult:
    """Learned weights (per lifted rule; NaN for hard rules) with the trace PSL logs."""

    method: str
    weights: np.ndarray
    initial: np.ndarray
    observed: np.ndarray
    """Phi_r at the labelled state."""
    expected: np.ndarray
    """Phi_r at the last MAP state."""
    counts: np.ndarray
    steps: int
    seconds: float
    history: list[np.ndarray] = field(default_factory=list)
    """Soft-rule weights after every step."""
    options: Any = None
    latent: list[str] = field(default_factory=list)
    """Open predicates with targets but no truth (learned as latent variables)."""


def voted_perceptron(prog: HingeProgram, observed: np.ndarray, w0: np.ndarray,
                     opts: VotedPerceptronOptions, counts: np.ndarray, map_method: str = "auto",
                     y0: np.ndarray | None = None, solver: MapSolver | None = None
                     ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """PSL's VotedPerceptron/MaxLikelihoodMPE loop over soft-rule weights `w0` (one per lifted rule);
    `solver` (default: one over `prog` with `map_method`) finds the MAP states, each from the last."""
    n = len(w0)
    w = np.zeros(n) if opts.zeroinitialweights else np.asarray(w0, dtype=np.float64).copy()
    scale = np.maximum(counts, 1.0) if opts.scalegradient else np.ones(n)
    total, last_step, history = np.zeros(n), np.zeros(n), []
    solver = solver or MapSolver(prog, map_method)
    y, expected = y0, np.zeros(n)
    for t in range(opts.numsteps):
        y, expected = _map_incompatibility(solver, w, n, y)
        step = (expected - observed - opts.l2regularization * w - opts.l1regularization) / scale * opts.stepsize
        if opts.scalestepsize:
            step /= t + 1
        step += opts.inertia * last_step
        w = np.maximum(w + step, 0.0) if opts.clipnegativeweights else w + step
        last_step = step
        total += w
        history.append(w.copy())
    if opts.averagesteps:
        w = total / opts.numsteps
    return w, expected, history


def structured_perceptron(prog: HingeProgram, observed: np.ndarray, w0: np.ndarray,
                          opts: GradientDescentOptions, map_method: str = "auto",
                          y0: np.ndarray | None = None, truth: np.ndarray | None = None,
                          solver: MapSolver | None = None, labelled: LatentProblem | None = None
                          ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """PSL's runtime GradientDescent + StructuredPerceptron loop (mirror descent on the simplex by default).

    With `truth` holding unlabelled (NaN) targets, the observed incompatibility is recomputed every
    step at the latent atoms' MAP values given the labels under the current weights (PSL's
    ``OptimalValue.computeLatentInferenceIncompatibility``). `solver` and `labelled` (defaults: built
    from `prog`, `map_method` and `truth`) find the MAP and labelled states, each from its last.
    """
    latent = truth is not None and not np.isfinite(truth).all()
    solver = solver or MapSolver(prog, map_method)
    if latent and labelled is None:
        labelled = LatentProblem(prog, truth, map_method)
    n = len(w0)
    w = np.asarray(w0, dtype=np.float64).copy()
    simplex = opts.extension in ("MIRROR_DESCENT", "PROJECTED_GRADIENT")
    if simplex:
        w = w / w.sum() if w.sum() > 0 else np.full(n, 1.0 / max(n, 1))
    y, expected, history = y0, np.zeros(n), []
    for t in range(opts.numsteps + 1):  # PSL stops once the iteration count exceeds numsteps
        if latent and t > 0:
            prog.w = np.maximum(w, 0.0)[prog.rule_index]
            observed = rule_incompatibility(prog, labelled.state(prog.w, y), n)
        y, expected = _map_incompatibility(solver, np.maximum(w, 0.0), n, y)
        safe = np.maximum(w, 1e-8)
        g = (observed - expected + 2.0 * opts.l2regularization * w - opts.negativelogregularization / safe
             + opts.negativeentropyregularization * (np.log(safe) + 1.0))
        if opts.clipweightgradient:
            norm = np.linalg.norm(g, ord=opts.maxgradientnorm) if n else 0.0
            if norm > opts.maxgradientmagnitude:
                g = opts.maxgradientmagnitude * g / norm
        eta = opts.stepsize / (t + 1) if opts.scalestepsize else opts.stepsize
        old = w
        if opts.extension == "MIRROR_DESCENT":
            w = w * np.exp(-eta * g)
            w = w / w.sum()
        elif opts.extension == "PROJECTED_GRADIENT":
            w = project_simplex(w - eta * g)
        else:
            w = w - eta * g
        history.append(w.copy())
        if not opts.runfulliterations and opts.movementbreak and np.abs(w - old).sum() <= opts.movementtolerance:
            break
    return w, expected, history


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto {w >= 0, sum w = 1} (sort-based, Held et al.)."""
    if not len(v):
        return v
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.flatnonzero(u - css / np.arange(1, len(v) + 1) > 0)[-1]
    return np.maximum(v - css[k] / (k + 1), 0.0)


def _map_incompatibility(solver: MapSolver, w: np.ndarray, n: int,
                         y0: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """MAP state under lifted weights `w` (from `y0`) and its per-rule incompatibility."""
    prog = solver.prog
    y = solver.solve(w[prog.rule_index] if prog.n_potentials else np.zeros(0), y0)
    return y, rule_incompatibility(prog, y, n)


def learn_weights(model, dataset, method: str | None = None, options: Mapping[str, Any] | None = None,
                  map_method: str | None = None, evaluator=None):
    """Learn `model`'s soft-rule weights on `dataset` (its truth labels); returns a `LearningResult`.

    `model` is a `PSLModel` (its rules' current weights are the starting point); it is grounded
    on `dataset`, and its rules get the learned weights. `options` are PSL option pairs. The search
    learners (`SEARCH_METHODS`, `xcore.psl.weight_search`) score weights with `evaluator`.
    """
    t0 = time.perf_counter()
    learner = resolve_method(method)
    opts = learner_options(learner, options)
    model.ground(dataset)
    store, prog = model.store_, model.program_
    labelled = np.isfinite(store.truth)
    if store.n_targets == 0:
        raise XcoreError("weight learning needs target atoms: the learn split has no open predicate with targets")
    missing = [name for name, p in store.predicates.items()
               if p.n_targets and not np.isfinite(store.truth[store.target_index[p.ids[p.n_obs:]]]).any()]
    if not labelled.any():
        raise XcoreError(f"weight learning needs truth for the targets; no truth labels for {', '.join(missing)}")
    soft = np.array([not r.is_hard for r in model.rules])
    n = len(model.rules)
    method_map = map_method or model.inference
    admm = admm_options(options) if method_map == "admm" else {}
    initial = np.where(np.isfinite(store.target_initial), store.target_initial, 0.0)
    y_obs = LatentProblem(prog, store.truth, method_map, admm).state(prog.w, initial)
    observed = rule_incompatibility(prog, y_obs, n)
    counts = ground_counts(prog, n)
    w0 = np.nan_to_num(model.weights, nan=0.0)
    if _flag(options, "inference.normalize", True):  # PSL's InferenceApplication: weights / largest weight
        top = w0[soft].max(initial=0.0)
        w0 = np.where(soft, w0 / top if top > 0 else 1.0, 0.0)
    if learner in SEARCH_METHODS:
        found, idx, _ = learn_by_search(model, learner, options, evaluator, method_map)
        w = np.zeros(n)
        w[idx] = found.weights
        expected = rule_incompatibility(prog, map_inference(_with_weights(prog, w), method_map, y0=initial).y, n)
        history = [_scatter(h, idx, n) for h in found.history]
    elif learner == "MaxLikelihoodMPE":
        w, expected, history = voted_perceptron(prog, observed, w0, opts, counts, method_map, initial,
                                                MapSolver(prog, method_map, admm))
    else:
        idx = np.flatnonzero(soft)  # the simplex holds the soft rules only
        sub_prog = _reindexed(prog, idx, n)
        sub_prog.w = (w0[idx] / w0[idx].sum() if w0[idx].sum() > 0 else np.ones(len(idx)))[sub_prog.rule_index]
        labelled = LatentProblem(sub_prog, store.truth, method_map, admm)
        first = rule_incompatibility(sub_prog, labelled.state(sub_prog.w, initial), len(idx))
        sub_w, sub_exp, sub_hist = structured_perceptron(sub_prog, first, w0[idx], opts, method_map, initial,
                                                         store.truth, MapSolver(sub_prog, method_map, admm),
                                                         labelled)
        w, expected = np.zeros(n), np.zeros(n)
        w[idx], expected[idx] = sub_w, sub_exp
        history = [_scatter(h, idx, n) for h in sub_hist]
    weights = np.where(soft, w, np.nan)
    model.rules = [r if r.is_hard else r.with_weight(float(weights[k])) for k, r in enumerate(model.rules)]
    model._reset_program_weights()
    model.map_, model.y_ = None, None
    return LearningResult(learner, weights, np.where(soft, w0, np.nan), observed, expected, counts,
                          len(history), time.perf_counter() - t0, history, opts, missing)


def _with_weights(prog: HingeProgram, w: np.ndarray) -> HingeProgram:
    prog.w = w[prog.rule_index] if prog.n_potentials else np.zeros(0)
    return prog


def _flag(options: Mapping[str, Any] | None, key: str, default: bool) -> bool:
    """A boolean PSL option (ConfigError when it is neither true nor false)."""
    for k, v in (options or {}).items():
        if str(k).lower() == key:
            return _coerce(key, v, "bool")
    return default


def _reindexed(prog: HingeProgram, idx: np.ndarray, n: int) -> HingeProgram:
    """`prog` with rule_index renumbered to positions in `idx` (soft rules only)."""
    pos = np.full(n, -1)
    pos[idx] = np.arange(len(idx))
    prog.rule_index = pos[prog.rule_index]
    return prog


def _scatter(values: np.ndarray, idx: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    out[idx] = values
    return out
