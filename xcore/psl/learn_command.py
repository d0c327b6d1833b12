"""``python -m xcore.psl --learn``: learn a PSL project's weights on its learn split, as PSL's CLI does.

Learns on the learn split (a config's ``learn`` data, or the single ``.data`` file given), writes
the learned rules in PSL's syntax (``<project>-learned.psl``, as PSL names it) and hands the
rules for inference back to the command: the learned rules plus the infer-only rules (PSL's
runtime adds those to the learned model).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from xcore.errors import DataError


@dataclass
class LearnedProject:
    """What learning hands to inference, and where the learned model went."""

    infer_rules: list
    path: Path
    result: object


def learned_model_path(project, args: argparse.Namespace, options: dict) -> Path:
    """``runtime.learn.output.model.path`` if set; else ``<project>-learned.psl`` in the output folder,
    or beside the model (``.data`` layout) / config file, where PSL 2's CLI writes it."""
    if options.get("runtime.learn.output.model.path"):
        return Path(str(options["runtime.learn.output.model.path"]))
    stem = Path(args.model).stem if args.model else project.name
    if args.output:
        return Path(args.output) / f"{stem}-learned.psl"
    beside = Path(args.model or args.config or args.data)
    return (beside.parent if beside.is_file() else beside) / f"{stem}-learned.psl"


def learn_from_project(project, args: argparse.Namespace, err: TextIO) -> LearnedProject:
    """Learn the project's weights with `args.learn`, write the learned model, return the inference rules."""
    from xcore.data.io.psl_project import UNLIMITED
    from xcore.psl.model import PSLModel
    from xcore.psl.weight_learning import learn_weights

    split = "learn" if project.has_learn_split else "infer"  # a single .data file is the learn data
    options = {**project.options, **project.split_options.get("learn", {}), **args.options}
    model = PSLModel(project.parsed_rules(split), inference=args.method, limit=None)
    dataset = project.dataset(split, UNLIMITED)
    result = learn_weights(model, dataset, args.learn, options)
    path = learned_model_path(project, args, options)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(model.to_text())
    except OSError as e:
        raise DataError(f"cannot write the learned model: {e.strerror or e}", file=str(path)) from None
    if not args.quiet:
        if result.latent:
            err.write(f"note: no truth for {', '.join(result.latent)}: learned as latent variables\n")
        err.write(f"learned {result.method} weights ({result.steps} steps, {result.seconds:.3f} s) -> {path}\n")
        for rule in model.rules:
            err.write(f"    {rule.text('psl')}\n")
    n_common = len(project.rules.get("all", []))
    infer_only = project.parsed_rules("infer")[n_common:] if project.has_learn_split else []
    return LearnedProject(list(model.rules) + infer_only, path, result)
