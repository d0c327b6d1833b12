"""`xcore run METHOD DATA`: fit a method, explain its predictions, write the run's files and report."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Callable, TextIO

from xcore.commands import EXIT_OK
from xcore.commands.arguments import build_settings, parse_set, read_config
from xcore.commands.data import check_label_given, load_data, with_user_model
from xcore.commands.progress import StderrProgress
from xcore.errors import ConfigError, XcoreError
from xcore.methods import REGISTRY, run_method
from xcore.methods.surrogate import fidelity_sentence
from xcore.report import report_html

OUTPUT_FILES = ("run.json", "predictions.csv", "explanations.json", "metrics.json", "report.html")


def write_outputs(run: Any, out_dir: Path, report: Callable[[], str]) -> list[Path]:
    """run.json, predictions.csv, explanations.json, metrics.json, then report.html into `out_dir`
    (the data files are written before the report is built, so a bad --targets loses nothing)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, Callable[[], str]] = {
        "run.json": lambda: run.to_json(indent=1),
        "predictions.csv": lambda: run.predictions.to_csv(index=False),
        "explanations.json": lambda: json.dumps({n: s.to_dict() for n, s in run.explanations.items()},
                                                allow_nan=False),
        "metrics.json": lambda: json.dumps(run.bundle()["metrics"], indent=1, allow_nan=False),
        "report.html": report,
    }
    paths = []
    for name, text in files.items():
        path = out_dir / name
        path.write_text(text(), encoding="utf-8")
        paths.append(path)
    return paths


def surrogate_note(metrics: dict[str, Any]) -> str | None:
    """The fidelity sentence of a surrogate run (None for a run explaining its own model)."""
    said = fidelity_sentence(metrics)
    return None if said is None else said[0]


def run_settings(args: argparse.Namespace, spec: Any, dataset: Any, config: dict[str, Any],
                 sets: dict[str, Any]) -> Any:
    """The run's settings: the method's defaults for the data, then the --config file, --set and --positive."""
    if getattr(args, "positive", None) is not None:
        if "positive_class" not in spec.settings_type.model_fields:
            raise ConfigError(f"{args.method} has no positive class to choose", field="--positive")
        sets = {**sets, "positive_class": args.positive}
    reason = spec.applicable(dataset)
    if reason is not None:
        raise XcoreError(f"{spec.title} cannot run on {dataset.name!r}: {reason}")
    return build_settings(spec, dataset, config, sets, config_name=args.config or "")


def run_command(args: argparse.Namespace, out: TextIO) -> int:
    """Load the data, run the method, write the files and the report, print the metrics."""
    progress = StderrProgress(quiet=args.quiet)
    spec = REGISTRY[args.method]
    sets = parse_set(args.set or [], spec.settings_type)  # flags and the settings file are checked before the data is read
    config = read_config(args.config) if args.config else {}
    progress.note(f"loading {args.data}")
    dataset = load_data(args.data, fmt=args.format, label=args.label)
    check_label_given(dataset, args.data, args.label)
    dataset = with_user_model(dataset, args, progress)
    settings = run_settings(args, spec, dataset, config, sets)
    progress.note(f"running {args.method} on {dataset.name}")
    t0 = time.perf_counter()
    run = run_method(args.method, dataset, settings, progress=progress, cache=None)
    progress.done()
    progress.note(f"done in {time.perf_counter() - t0:.1f}s; writing the files and the report")
    out_dir = Path(args.out) if args.out else Path(f"xcore_{args.method}_run")
    summary = dataset.summary()
    paths = write_outputs(run, out_dir, lambda: report_html(run, targets=args.targets, n_cards=args.cards,
                                                            data_summary=summary))
    for p in paths:
        out.write(f"wrote {p}\n")
    note = surrogate_note(run.metrics)
    if note:
        out.write(note + "\n")
    for k, v in run.metrics.items():
        out.write(f"{k:>12} {v:.6g}\n")
    for note in getattr(run.model, "notes_", ()) or ():  # what the fit noticed (e.g. Markov logic's learning)
        out.write(f"note: {note}\n")
    return EXIT_OK
