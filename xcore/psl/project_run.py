"""What ``python -m xcore.psl`` does once its arguments are read: read the project, learn when PSL's
runtime would, ground, infer and write the values (`xcore.psl.cli` imports it only then)."""

from __future__ import annotations

import argparse
from typing import Callable, TextIO

import numpy as np

from xcore.data.io.psl_project import UNLIMITED, read_project
from xcore.psl import cli_output
from xcore.psl.admm import OPTION_KEYS as ADMM_OPTION_KEYS
from xcore.psl.admm import admm_options, map_admm
from xcore.psl.learn_command import rules_to_infer, runtime_steps
from xcore.psl.map_problem import MAPResult
from xcore.psl.model import PSLModel
from xcore.runtime import limited_threads

LEARNING_OPTION_PREFIXES = ("votedperceptron.", "gradientdescent.", "runtime.learn", "runtime.inference",
                            "inference.normalize", "gridsearch.", "randomgridsearch.", "guidedrandomgridsearch.",
                            "weightlearning.", "random.seed", "aucevaluator.", "categoricalevaluator.",
                            "discreteevaluator.")
"""``-D`` options that steer weight learning and the runtime's steps."""
SUPPORTED_OPTIONS = tuple(p + ("*" if p.endswith(".") else "") for p in LEARNING_OPTION_PREFIXES) + tuple(ADMM_OPTION_KEYS)
"""What the unknown-option warning lists; ``admmreasoner.*`` reach ADMM (``--method admm``)."""


def unsupported_options(options: dict) -> list[str]:
    """The ``-D`` keys xcore does not use (the command warns, naming them and the supported ones)."""
    return [k for k in options if not (k.lower().startswith(LEARNING_OPTION_PREFIXES) or k.lower() in ADMM_OPTION_KEYS)]


def infer(model: PSLModel, method: str, admm: dict) -> MAPResult:
    """MAP inference from the targets' initial values; ``--method admm`` with ``admmreasoner.*`` options
    runs `map_admm` with them (PSL's stopping rule when an epsilon is given)."""
    if method != "admm" or not admm:
        return model.infer(warm_start=False)
    store = model.store_
    y0 = np.where(np.isfinite(store.target_initial), store.target_initial, 0.5) if store is not None else None
    with limited_threads(1):
        result = map_admm(model.program_, y0, **{"tol": 1e-9, **admm})
    model.map_, model.y_ = result, result.y
    return result


def run_project(args: argparse.Namespace, out: TextIO, err: TextIO, lap: Callable[[str], None],
                describe: Callable[[], str], unique_limit: int) -> int:
    """Run the project of `args`; `lap(phase)` closes a timed phase, `describe()` says their times;
    programs up to `unique_limit` potentials are checked for a unique optimum unless told otherwise."""
    project = read_project(config=args.config, data=args.data, model=args.model, limits=UNLIMITED)
    ignored = unsupported_options(args.options)
    if ignored:  # never silent, even when quiet: a mistyped option would otherwise change nothing unseen
        err.write(f"warning: PSL options not used by xcore, ignored: {', '.join(f'{k}={args.options[k]}' for k in ignored)}"
                  f" (supported: {', '.join(SUPPORTED_OPTIONS)})\n")
    # -D only: a config's admmreasoner.* (tuned for Java's loose stopping rule, e.g. maxiterations=500) would
    # cap our exact one; checked before grounding, so a bad value exits 2
    admm = admm_options(args.options)
    if admm and args.method != "admm":
        err.write(f"note: {', '.join(k for k in args.options if k.lower() in ADMM_OPTION_KEYS)} steer ADMM only "
                  "(--method admm)\n")
    steps = runtime_steps(project, args)
    for skipped, kept in project.duplicate_rules(args.split):  # Java's Model.addRule skips them too
        err.write(f"warning: {skipped.file}:{skipped.line}: rule `{skipped.text.strip()}` is the same rule as "
                  f"`{kept.text.strip()}` (line {kept.line}) for Java PSL (same clause, weight aside): skipped, "
                  "as Java's runtime does\n")
    err.write(steps.describe() + "\n")  # which steps ran, even when quiet (PSL's runtime decides them)
    todo = rules_to_infer(project, args, steps, err, lap)
    if todo is None:
        return 0
    rules, split = todo
    ds = project.dataset(split, UNLIMITED)
    lap("load")
    model = PSLModel(rules, inference=args.method, limit=None)
    model.ground(ds)
    lap("ground")
    result = infer(model, args.method, admm)  # HiGHS's banner is kept off stdout by xcore.runtime.new_highs
    lap("infer")
    if not result.converged:  # the values are written, but the user must know they are approximate
        err.write(f"warning: {result.method} inference did not converge: {result.message}\n")
    cli_output.report_uniqueness(model, result, args.check_unique, args.quiet, err, unique_limit)
    lap("check")
    frames = cli_output.target_values(model)
    if args.output:
        cli_output.write_values(frames, args.output)
    else:
        cli_output.print_values(frames, out)
    lap("write")
    if args.eval is not None:
        cli_output.print_metrics(frames, out)
    if not args.quiet:
        err.write(f"{model.store_.n_targets:,} target atoms, {model.program_.n_potentials:,} potentials, "
                  f"energy {result.energy:.6g} ({result.method}); {describe()}\n")
    return 0
