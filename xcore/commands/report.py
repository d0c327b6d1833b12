"""`xcore report RUN.json` and `xcore compare RUN.json ...`: the HTML report of a bundle, and the
agreement between the explainers of runs on the same data."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

import pandas as pd

from xcore.commands import EXIT_OK
from xcore.commands.data import load_data, read_run
from xcore.compare import compare_runs, disagreements, pair_summary, top_items_table
from xcore.report import compare_html, report_html


def report_command(args: argparse.Namespace, out: TextIO) -> int:
    """Rebuild the report of a run bundle (with the data's summary when --data is given)."""
    run = read_run(args.run)
    summary = load_data(args.data).summary() if args.data else None
    html = report_html(run, targets=args.targets, n_cards=args.cards, data_summary=summary)
    path = Path(args.out) if args.out else Path(args.run).with_name("report.html")
    path.write_text(html, encoding="utf-8")
    out.write(f"wrote {path}\n")
    return EXIT_OK


def run_names(paths: list[str]) -> list[str]:
    """A short unique name per bundle: its file stem, or its folder for a run.json (run1, run2, ... on a clash)."""
    names = [Path(p).stem if Path(p).stem != "run" else Path(p).parent.name or Path(p).stem for p in paths]
    return names if len(set(names)) == len(names) else [f"run{i + 1}" for i in range(len(paths))]


def compare_command(args: argparse.Namespace, out: TextIO) -> int:
    """Print how the runs' explainers agree (per pair, then the targets where they disagree most)."""
    runs = [read_run(p) for p in args.runs]
    columns, agreement = compare_runs(runs, k=args.k, names=run_names(args.runs))
    pairs = pair_summary(agreement)
    worst = disagreements(agreement)
    with pd.option_context("display.max_colwidth", 60, "display.width", 200):
        out.write(f"Agreement between explainers (top-{args.k} overlap, Spearman over shared items)\n")
        out.write(pairs.round(3).to_string(index=False) + "\n\n")
        out.write("Targets where they disagree most\n")
        out.write(worst.head(args.show).round(3).to_string(index=False) + "\n")
        for target in worst["target"].head(min(args.show, 3)):
            out.write(f"\n{target}\n{top_items_table(columns, target, k=args.k).to_string(index=False)}\n")
    if args.out:
        Path(args.out).write_text(compare_html(columns, agreement, k=args.k), encoding="utf-8")
        out.write(f"\nwrote {args.out}\n")
    if args.csv:
        agreement.to_csv(args.csv, index=False)
        out.write(f"wrote {args.csv}\n")
    return EXIT_OK
