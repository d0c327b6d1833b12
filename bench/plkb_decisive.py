"""Decisive-set share of the classifier with default settings on every bundled tabular sample.

    python bench/plkb_decisive.py [--rows 100] [--samples titanic_like,mushroom,...]

Issue 24's goal: a decisive set (the best k-feature sub-query's ω(POS) interval lies on one side of
0.5) for >= 90% of rows on each bundled tabular sample, with the defaults (Tree KB, k grown per row
from 2 up to k_max = 8). Runs `xcore.methods.run_method("plkb", sample)` with the page's default
settings (`explain_rows` test rows explained up front, here `--rows`), then counts the explained rows
whose set decides (`xcore.plkb.scores.decides`). Prints a markdown table: sample, rows, features,
test accuracy, share decided, the k used (median, max), rows left undecided, CPU seconds.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")


def classes(name: str) -> list[str | None]:
    """[None] for a two-class label; else every class (the classifier explains one class against the
    rest and asks which: a multi-class sample is measured once per class)."""
    from xcore.data.samples import load_sample

    ds = load_sample(name)
    values = ds.tabular[ds.label].dropna().astype(str)
    return [None] if values.nunique() <= 2 else sorted(values.unique())


def measure(name: str, rows: int, positive: str | None = None) -> dict:
    from xcore.data.samples import load_sample
    from xcore.methods import REGISTRY, run_method
    from xcore.plkb.scores import decides

    ds = load_sample(name)
    settings = REGISTRY["plkb"].default_settings(ds).model_copy(update={"explain_rows": rows,
                                                                        "positive_class": positive})
    cpu0, wall0 = time.process_time(), time.perf_counter()
    run = run_method("plkb", ds, settings, cache=None)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    exps = list(next(iter(run.explanations.values())))
    decided = [decides(e.items) for e in exps]
    ks = [float(e.meta.get("k", np.nan)) for e in exps]  # the k the row used
    features = ds.tabular.shape[1] - 1 - len(settings.drop)
    return {"sample": name if positive is None else f"{name} ({positive} vs rest)", "rows explained": len(exps),
            "features": features,
            "accuracy": run.metrics.get("accuracy", float("nan")),
            "decided": float(np.mean(decided)) if decided else float("nan"),
            "k median": float(np.nanmedian(ks)) if ks else float("nan"),
            "k max": float(np.nanmax(ks)) if ks else float("nan"),
            "undecided": int(len(decided) - sum(decided)), "cpu s": cpu, "wall s": wall}


def main() -> None:
    from xcore.data.samples import list_samples

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100, help="test rows explained per sample (the default setting)")
    ap.add_argument("--samples", default="", help="comma-separated sample names (default: every tabular one)")
    a = ap.parse_args()
    names = [s for s in a.samples.split(",") if s] or [s.name for s in list_samples() if s.format == "tabular"]
    print("| sample | rows explained | features | test accuracy | decided | k median | k max | undecided | "
          "CPU s | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, positive in [(n, c) for n in names for c in classes(n)]:
        try:
            r = measure(name, a.rows, positive)
        except Exception as e:  # noqa: BLE001 - a class the classifier cannot take is reported, not fatal
            print(f"| {name} ({positive} vs rest) | failed: {e} |||||||||", flush=True)
            continue
        print(f"| {r['sample']} | {r['rows explained']} | {r['features']} | {r['accuracy']:.3f} | "
              f"{r['decided']:.1%} | {r['k median']:.0f} | {r['k max']:.0f} | {r['undecided']} | "
              f"{r['cpu s']:.1f} | {r['wall s']:.1f} |", flush=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
