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
from typing import Callable, TextIO

from xcore.data.io.psl_project import UNLIMITED
from xcore.errors import ConfigError, DataError, XcoreError
from xcore.psl.admm import OPTION_KEYS as ADMM_OPTION_KEYS
from xcore.psl.model import PSLModel
from xcore.psl.weight_learning import DEFAULT_METHOD, RUNTIME_DEFAULT_METHOD, learn_weights, resolve_method
from xcore.psl.weight_search import evaluator_from_project


@dataclass
class Steps:
    """What the command runs, decided as PSL's runtime decides it (`runtime_steps`)."""

    learn: str | None
    """The weight learning method, or None when learning is off."""
    infer: bool
    why: str
    """How the learning step was decided (printed with the steps)."""

    def describe(self) -> str:
        parts = [f"learn {self.learn} on the learn split ({self.why})"] if self.learn else []
        if self.infer:
            parts.append("infer on the infer split" + ("" if self.learn else f" ({self.why})"))
        return "steps: " + ", then ".join(parts)


def _bool_option(options: dict, key: str) -> bool | None:
    for k, v in options.items():
        if str(k).lower() == key:
            text = str(v).strip().lower()
            if text not in ("true", "false"):
                raise ConfigError(f"option {key}={v!r}: expected true or false")
            return text == "true"
    return None


def runtime_steps(project, args: argparse.Namespace) -> Steps:
    """Learn and/or infer, and with which learner, as PSL runs the project.

    JSON / YAML config (PSL 2.4's runtime): learn when the config has learn data or rules, infer when
    it has infer data (or nothing says learn); ``runtime.learn`` / ``runtime.inference`` options
    override; the learner is ``runtime.learn.method`` (default StructuredPerceptron). ``.data`` +
    ``.psl`` (PSL 2.x's CLI): learn only with ``--learn`` (default MaxLikelihoodMPE). ``--learn
    METHOD`` names the learner, ``--no-learn`` turns learning off; an unknown learner is an error.
    """
    json_layout = bool(args.config)
    options = {**project.options, **project.split_options.get("learn", {}), **args.options}
    learn_opt = _bool_option(options, "runtime.learn")
    infer_opt = _bool_option(options, "runtime.inference")
    if getattr(args, "no_learn", False):
        learn, why = False, "learning off: --no-learn"
    elif args.learn is not None:
        learn, why = True, "--learn"
    elif learn_opt is not None:
        learn, why = learn_opt, f"option runtime.learn={str(learn_opt).lower()}"
    elif json_layout and args.split == "infer" and project.has_learn_split:
        learn, why = True, "the config has learn data, so PSL's runtime learns first"
    else:
        learn, why = False, "no learn data" if json_layout else "PSL's CLI learns only with --learn"
    method = None
    if learn:
        named = next((v for k, v in options.items() if str(k).lower() == "runtime.learn.method"), None)
        if isinstance(args.learn, str):
            method = resolve_method(args.learn)
        elif named is not None:
            method = resolve_method(named)
            why += "; method from runtime.learn.method"
        else:
            method = RUNTIME_DEFAULT_METHOD if json_layout else DEFAULT_METHOD
            why += f"; {'PSL 2.4 runtime' if json_layout else 'PSL 2.x CLI'} default method"
    explicit_infer = bool(project.rules.get("infer")) or any(k[1] == "infer" for p in project.predicates.values()
                                                               for k in p.sources)
    if args.infer:
        infer = True
    elif infer_opt is not None:
        infer = infer_opt
    elif not learn:
        infer = True
    elif json_layout:
        infer = explicit_infer
    else:
        infer = project.has_learn_split
    return Steps(method, infer, why)


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
    split = "learn" if project.has_learn_split else "infer"  # a single .data file is the learn data
    written = {**project.options, **project.split_options.get("learn", {})}
    options = {**{k: v for k, v in written.items() if str(k).lower() not in ADMM_OPTION_KEYS}, **args.options}
    model = PSLModel(project.parsed_rules(split), inference=args.method, limit=None)
    dataset = project.dataset(split, UNLIMITED)
    result = learn_weights(model, dataset, args.learn, options, evaluator=evaluator_from_project(project, options))
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
    infer_only = project.split_rules("infer") if project.has_learn_split else []
    return LearnedProject(list(model.rules) + infer_only, path, result)


def rules_to_infer(project, args: argparse.Namespace, steps: Steps, err: TextIO,
                   lap: Callable[[str], None]) -> tuple[list, str] | None:
    """Learn first when the runtime says so; the rules to infer with and the split they run on (None:
    nothing to infer, as PSL's runtime with inference off)."""
    learned = None
    if steps.learn is not None:
        asked = args.learn is not None  # --learn on the command line, not the runtime's own choice
        args.learn = steps.learn
        try:
            learned = learn_from_project(project, args, err)
        except XcoreError as e:
            if asked or not str(e).startswith("weight learning needs truth"):
                raise
            err.write(f"note: learning skipped: {e}; inferring with the rules' written weights\n")
        lap("learn")
    if not steps.infer:
        return None
    if learned is not None:
        return learned.infer_rules, "infer"
    return project.parsed_rules(args.split), args.split
