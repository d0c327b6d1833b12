"""What ``python -m xcore.psl`` does once its arguments are read: read the project, learn when PSL's
runtime would, ground, infer and write the values (`xcore.psl.cli` imports it only then)."""

from __future__ import annotations

import argparse
from typing import Callable, TextIO

from xcore.data.io.psl_project import UNLIMITED, read_project
from xcore.psl import cli_output
from xcore.psl.learn_command import rules_to_infer, runtime_steps
from xcore.psl.model import PSLModel

LEARNING_OPTION_PREFIXES = ("votedperceptron.", "gradientdescent.", "runtime.learn", "inference.normalize")
"""``-D`` options that steer weight learning; others are accepted and ignored (noted on stderr)."""


def run_project(args: argparse.Namespace, out: TextIO, err: TextIO, lap: Callable[[str], None],
                describe: Callable[[], str], unique_limit: int) -> int:
    """Run the project of `args`; `lap(phase)` closes a timed phase, `describe()` says their times;
    programs up to `unique_limit` potentials are checked for a unique optimum unless told otherwise."""
    project = read_project(config=args.config, data=args.data, model=args.model, limits=UNLIMITED)
    ignored = [k for k in args.options if not k.lower().startswith(LEARNING_OPTION_PREFIXES)]
    if ignored and not args.quiet:
        err.write(f"note: PSL options ignored: {', '.join(f'{k}={args.options[k]}' for k in ignored)}\n")
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
    result = model.infer(warm_start=False)  # HiGHS's banner is kept off stdout by xcore.runtime.new_highs
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
