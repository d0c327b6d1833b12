"""`xcore explain RUN.json TARGET`: one explanation from a run bundle as a ranked table and text."""

from __future__ import annotations

import argparse
import difflib
from typing import Any, TextIO

import pandas as pd

from xcore.commands import EXIT_OK
from xcore.commands.arguments import bundle_path
from xcore.commands.data import read_run
from xcore.errors import ConfigError, XcoreError
from xcore.explain.render import item_table
from xcore.explain.text import explanation_text


def pick_explanation(run: Any, target: str, explainer: str | None) -> tuple[str, Any]:
    """(explainer name, explanation) of `target`: the named explainer's, else the first that explains it."""
    names = [explainer] if explainer else list(run.explanations)
    if explainer and explainer not in run.explanations:
        raise ConfigError(f"no explainer {explainer!r} in this run; it has {', '.join(run.explanations) or 'none'}",
                          field="--explainer")
    for name in names:
        if target in run.explanations[name]:
            return name, run.explanations[name][target]
    every = list(dict.fromkeys(t for n in names for t in run.explanations[n].targets))
    close = difflib.get_close_matches(target, every, n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise XcoreError(f"no explanation of {target!r} in this {run.method} run{hint}")


def explain_command(args: argparse.Namespace, out: TextIO) -> int:
    """Print the explanation of `args.target`: its score's meaning, the top-k table, then the text."""
    run = read_run(bundle_path(args.run))
    name, exp = pick_explanation(run, args.target, args.explainer)
    out.write(f"{exp.target} — {name}\n")
    if exp.score_spec is not None:
        out.write(f"{exp.score_spec.caption()}\n")
    out.write("\n")
    if exp.items:
        table = item_table(exp, args.k)[["rank", "score", "direction", "effect", "text", "natural"]]
        with pd.option_context("display.max_colwidth", 80, "display.width", 200):
            out.write(table.to_string(index=False) + "\n\n")
    out.write(explanation_text(exp, k=min(3, args.k)) + "\n")
    return EXIT_OK
