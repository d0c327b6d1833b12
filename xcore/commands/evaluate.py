"""`xcore evaluate METHOD DATA`: the shared held-out evaluation (`xcore.methods.evaluate`) of a method on
data — a seeded hold-out split or K folds of the labelled units — printed as the per-fold table and the
pooled metrics beside their trivial-predictor baselines, written as CSV files with --out."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TextIO

import pandas as pd

from xcore.commands import EXIT_OK
from xcore.commands.arguments import parse_set, read_config
from xcore.commands.data import check_label_given, load_data
from xcore.commands.progress import StderrProgress
from xcore.commands.run import run_settings
from xcore.methods import REGISTRY
from xcore.methods.baselines import baseline_table
from xcore.methods.evaluate import Evaluation, Holdout, KFold, PredefinedFolds, Split, evaluate

EVALUATION_FILES = ("predictions.csv", "folds.csv", "metrics.json")


def split_of(args: argparse.Namespace) -> Split:
    """The split the flags ask for: the data's folds with --folds-from, K folds with --folds, else one hold-out
    of --test-size (default 0.25)."""
    if getattr(args, "folds_from", None):
        return PredefinedFolds(args.folds_from)
    if args.folds is not None:
        return KFold(n_splits=args.folds, seed=args.seed)
    return Holdout(test_size=0.25 if args.test_size is None else args.test_size, seed=args.seed)


def write_evaluation(evaluation: Evaluation, out_dir: Path) -> list[Path]:
    """predictions.csv (the held-out predictions with their fold), folds.csv and metrics.json into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = {
        "predictions.csv": evaluation.predictions.to_csv(index=False),
        "folds.csv": evaluation.folds.to_csv(index=False),
        "metrics.json": json.dumps({k: v for k, v in evaluation.metrics.items() if pd.notna(v)}, indent=1,
                                   allow_nan=False),
    }
    paths = []
    for name, text in texts.items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def print_evaluation(evaluation: Evaluation, split: Split, out: TextIO) -> None:
    """The per-fold table, then the pooled held-out metrics beside their baselines."""
    if isinstance(split, PredefinedFolds):
        how = f"the {len(evaluation.folds)} folds of {split.predicate}"
    elif isinstance(split, KFold):
        how = f"{split.n_splits} folds (seed {split.seed})"
    else:
        how = f"hold-out of {split.test_size:g} (seed {split.seed})"
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        out.write(f"{evaluation.method}: {how} of the labelled units\n")
        out.write(evaluation.folds.round(4).to_string(index=False) + "\n\n")
        n = int(evaluation.metrics.get("n_scored", len(evaluation.predictions)))
        out.write(f"held-out metrics over {n} predictions, beside the trivial predictor's\n")
        out.write(baseline_table(evaluation.metrics).round(4).to_string(index=False) + "\n")


def evaluate_command(args: argparse.Namespace, out: TextIO) -> int:
    """Load the data, evaluate the method on held-out parts, print the tables, write the files."""
    progress = StderrProgress(quiet=args.quiet)
    spec = REGISTRY[args.method]
    sets = parse_set(args.set or [], spec.settings_type)
    config = read_config(args.config) if args.config else {}
    split = split_of(args)
    progress.note(f"loading {args.data}")
    dataset = load_data(args.data, fmt=args.format, label=args.label)
    check_label_given(dataset, args.data, args.label)
    settings = run_settings(args, spec, dataset, config, sets)
    progress.note(f"evaluating {args.method} on {dataset.name}")
    t0 = time.perf_counter()
    evaluation = evaluate(args.method, dataset, settings, split=split, progress=progress)
    progress.done()
    progress.note(f"done in {time.perf_counter() - t0:.1f}s")
    print_evaluation(evaluation, split, out)
    if args.out:
        for path in write_evaluation(evaluation, Path(args.out)):
            out.write(f"wrote {path}\n")
    return EXIT_OK
