"""ESMS with its default settings on a binary unary target against the constant rate (issue 24's goal).

    python bench/esms_unary_goal.py                              # 5 seeds, print the table
    python bench/esms_unary_goal.py --results bench/RESULTS.md   # also update the section in RESULTS.md

Data: `friends_smokers_dataset(600, seed=s)`, s = 0..4, target `cancer`, split as the registered run splits
(20% of the labelled cancer atoms held out by `xcore.methods.evaluate`'s split, the rest 60/20 inside
the search, seed 0). ESMS runs with `default_settings(data)` for target
cancer (a 0/1 target T(A): weights learned jointly with the priors, "calibrated", and counterpart
templates; 20 candidates x 10 rules; n_jobs 1), and once more with the paper's PPLL per rule
(weight_learning per_rule, no counterparts). Baselines: the training rate of cancer (constant) and
the training rate per observed smokes value (the planted signal read directly).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.esms_unary import baselines  # noqa: E402
from bench.grounding import machine  # noqa: E402
from bench.results_file import replace_section  # noqa: E402
from xcore.data.generators.friends_smokers import friends_smokers_dataset  # noqa: E402
from xcore.esms.runs import default_settings, held_out_split  # noqa: E402
from xcore.psl import prediction_metrics  # noqa: E402

TITLE = "ESMS defaults on a binary unary target (friends_smokers_dataset(600), 5 seeds)"


def run(seeds: int) -> tuple[str, dict]:
    rows: dict[str, list[dict]] = {}
    reasons: list[str] = []
    t0 = time.perf_counter()
    for seed in range(seeds):
        ds = friends_smokers_dataset(600, seed=seed)
        base = default_settings(ds).replace(target="cancer", n_jobs=1)
        for name, settings in (("ESMS, default settings (calibrated joint weights, counterparts)", base),
                               ("ESMS, PPLL per rule (paper), no counterparts",
                                base.replace(weight_learning="per_rule", counterparts=False))):
            est, train, test = held_out_split(ds, settings)
            applied = est.fit(train).apply(test).predict()
            predictions = applied[applied["predicate"] == "cancer"]
            y = predictions["truth"].to_numpy(float)
            rows.setdefault(name, []).append(prediction_metrics(predictions["prediction"].to_numpy(float), y))
            if seed == 0 and settings is base:
                reasons = [f"{r.weight:.3f}: {r.text('psl').split(': ', 1)[1]}" for r in est.rules_]
        truth = test.tables["cancer"]["truth"][["a0", "value"]]
        order = predictions["a0"].astype(str)
        y = truth.set_index("a0").loc[order, "value"].to_numpy(float)
        ref = truth.reset_index(drop=True)
        for name, p in baselines(est.train_, test).items():
            p = dict(zip(ref["a0"], p))
            rows.setdefault(f"baseline: {name}", []).append(prediction_metrics(np.array([p[a] for a in order]), y))
    n_test = len(y)
    lines = [f"{seeds} seeds x {n_test} test cancer atoms each; {time.perf_counter() - t0:.0f} s in all. "
             "Mean over seeds (min-max).", "",
             "| predictor | test MSE | test MAE | AUROC |", "|---|---:|---:|---:|"]
    for name, ms in rows.items():
        cell = lambda k: (f"{np.mean([m[k] for m in ms]):.4f} ({min(m[k] for m in ms):.3f}-"  # noqa: E731
                          f"{max(m[k] for m in ms):.3f})")
        lines.append(f"| {name} | {cell('mse')} | {cell('mae')} | {cell('auroc')} |")
    lines += ["", "Learned model, default settings (seed 0; weight: rule):", "", "```", *reasons, "```"]
    return "\n".join(lines), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--results", type=Path, help="update this section of RESULTS.md")
    args = parser.parse_args()
    info = machine()
    body, _ = run(args.seeds)
    print(f"Machine: {info}\n\n{body}")
    if args.results:
        section = (f"## {TITLE}\n\nCommand: `python bench/esms_unary_goal.py` ({time.strftime('%Y-%m-%d')}).\n"
                   f"Machine: {info}.\n\n{__doc__.split('Data: ', 1)[1].strip()}\n\n{body}\n")
        replace_section(args.results, TITLE, section)


if __name__ == "__main__":
    main()
