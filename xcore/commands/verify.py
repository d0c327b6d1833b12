"""`xcore verify RUN_DIR`: check every explanation of a run against its model by intervention."""

from __future__ import annotations

import argparse
import time
from typing import TextIO

from xcore.commands import EXIT_DISAGREE, EXIT_OK
from xcore.commands.arguments import bundle_path
from xcore.commands.data import load_data, read_run, with_user_model
from xcore.commands.progress import StderrProgress
from xcore.data.samples import list_samples, load_sample
from xcore.errors import ConfigError
from xcore.methods.verify import rebuild_run, verify_run


def verify_command(args: argparse.Namespace, out: TextIO) -> int:
    """Refit the bundle's run on its data, measure each top item's effect, print the verdicts; exit 1
    when any item moved the prediction against its stated direction."""
    bundle = read_run(bundle_path(args.run))
    progress = StderrProgress(quiet=args.quiet)
    if args.data:
        data = load_data(args.data, fmt=args.format, label=args.label)
    elif bundle.dataset in {s.name for s in list_samples()}:
        data = load_sample(bundle.dataset)
    else:
        raise ConfigError(f"the bundle's data {bundle.dataset!r} is not a bundled sample: give it with --data",
                          field="--data")
    data = with_user_model(data, args, progress)  # a surrogate run: the same predictions as its labels
    run, notes = rebuild_run(bundle, data, progress=progress)
    for note in notes:
        progress.note(note)
    t0 = time.perf_counter()
    result = verify_run(run, data, targets=args.targets, k=args.k, explanations=bundle.explanations,
                        explainers=[args.explainer] if args.explainer else None, progress=progress)
    progress.done()
    out.write(result.table() + "\n")
    bad = result.items[result.items["verdict"] == "opposite"]
    for r in bad.head(10).itertuples(index=False):
        out.write(f"against its direction: {r.explainer} {r.target} #{r.rank} {r.text[:70]} "
                  f"(says {r.direction:+d}, measured {r.measured_change:+.3g})\n")
    out.write(f"verified in {time.perf_counter() - t0:.1f}s: "
              f"{'every directed item agrees' if result.ok else f'{len(bad)} item(s) disagree'}\n")
    return EXIT_OK if result.ok else EXIT_DISAGREE
