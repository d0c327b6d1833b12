"""Where I-Explain's time goes, stage by stage, beside M-Explain's, at equal sampling work.

    python bench/iexplain_profile.py                         # 2,000 and 5,000 reviews, seed 0
    python bench/iexplain_profile.py --sizes 2000 --results bench/RESULTS.md

Per size: `generate_reviews(N, seed=0)`, weights by `learn_weights(..., "linear+pll")`, grounding,
Gibbs on the full network (`ExplainSettings().model_gibbs_options()`: 1,000 samples, 200 burn-in,
4 chains), then `run_explainers` with M-Explain and I-Explain at the defaults (C = 0.2, S = 0.5,
T = 10, top-10, work="equal": all coalitions together make as many atom updates as the full run).
I-Explain's stages come from `IExplainer.stage_seconds_`; aggregation is timed for the exact
footrule (the default) and for CEMC on the same lists (CEMC on at most `--cemc-queries` queries,
scaled to all of them, to keep the run to minutes), with the share of queries whose rankings agree
and the count where exact's weighted-footrule objective is worse than CEMC's (should be 0).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.grounding import machine  # noqa: E402
from bench.results_file import replace_section  # noqa: E402
from xcore.data.generators.reviews import generate_reviews  # noqa: E402
from xcore.mln.learning import learn_weights  # noqa: E402
from xcore.mln.model import MLNModel  # noqa: E402
from xcore.mln.workflow import ExplainSettings, detect_setting, run_explainers, starting_rules  # noqa: E402

HEADING = "I-Explain profile (issue 20)"


def profile(n_reviews: int, seed: int, cemc_queries: int) -> dict:
    """Stage seconds of one size (see the module docstring)."""
    data = generate_reviews(n_reviews, seed=seed)
    ds = data.dataset
    setting = detect_setting(ds)
    settings = ExplainSettings(methods=("M-Explain", "I-Explain"), seed=seed)
    t = time.perf_counter()
    rules = learn_weights(starting_rules(ds, setting), ds, method="linear+pll", target=setting.target,
                          word_predicate=setting.word_predicate)
    out = {"reviews": n_reviews, "learn": time.perf_counter() - t}
    t = time.perf_counter()
    model = MLNModel(rules).ground(ds)
    out["ground"] = time.perf_counter() - t
    model.infer("gibbs", **settings.model_gibbs_options())
    out["atoms"], out["clauses"] = model.mln_.n_atoms, model.mln_.n_clauses
    run = run_explainers(model, ds, setting, settings)
    ie = run.iexplainer
    out["m_sampling"] = float(model.result_.seconds)
    out["m_total"] = run.seconds["M-Explain"]
    out["m_updates"] = run.explanations["M-Explain"].meta["atom_updates"]
    out["i_updates"] = run.explanations["I-Explain"].meta["atom_updates"]
    out["stages"] = dict(ie.stage_seconds_)
    out["exact_agg"] = ie.explain_seconds_
    out["i_total"] = run.seconds["I-Explain"]
    exact = {e.target: e for e in run.explanations["I-Explain"]}
    targets = list(exact)[:cemc_queries]
    ie.aggregation, ie._cache = "cemc", {}
    t = time.perf_counter()
    cem = [ie.explain(q) for q in targets]
    out["cemc_agg"] = (time.perf_counter() - t) * len(exact) / max(len(targets), 1)
    out["cemc_scaled"] = len(targets) < len(exact)
    same = [[it.extras["clause"] for it in c.items] == [it.extras["clause"] for it in exact[c.target].items]
            for c in cem]
    worse = [c.meta["cemc_objective"] is not None and
             exact[c.target].meta["cemc_objective"] > c.meta["cemc_objective"] + 1e-9 for c in cem]
    out["same_ranking"], out["exact_worse"], out["compared"] = float(np.mean(same)), int(sum(worse)), len(cem)
    return out


def markdown(rows: list[dict]) -> str:
    lines = [f"## {HEADING}", "",
             "`python bench/iexplain_profile.py` (seed 0, one run per size; the machine was shared with other "
             "jobs, so seconds are indicative). " + machine(), "",
             "| reviews | atoms / clauses | stage | seconds |", "|---|---|---|---:|"]
    for r in rows:
        size = f"{r['atoms']:,} / {r['clauses']:,}"
        stage_rows = [("M-Explain: full-network Gibbs", r["m_sampling"]),
                      ("M-Explain: importance + explanations", r["m_total"] - r["m_sampling"]),
                      ("**M-Explain total**", r["m_total"])]
        stage_rows += [(f"I-Explain: {k}", v) for k, v in r["stages"].items()]
        stage_rows += [("I-Explain: aggregation, exact footrule (default)", r["exact_agg"]),
                       ("I-Explain: aggregation, CEMC" + (" (scaled from a subset)" if r["cemc_scaled"] else ""),
                        r["cemc_agg"]),
                       ("**I-Explain total (exact footrule)**", r["i_total"]),
                       ("I-Explain total with CEMC (before)", r["i_total"] - r["exact_agg"] + r["cemc_agg"])]
        for name, v in stage_rows:
            lines.append(f"| {r['reviews']:,} | {size} | {name} | {v:.2f} |")
    lines += ["", "| reviews | atom updates M / I | I / M time, exact | I / M time, CEMC | rankings equal to CEMC's "
              "| exact objective worse than CEMC |", "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        cem = r["i_total"] - r["exact_agg"] + r["cemc_agg"]
        lines.append(f"| {r['reviews']:,} | {r['m_updates']:,} / {r['i_updates']:,} | {r['i_total'] / r['m_total']:.1f} "
                     f"| {cem / r['m_total']:.1f} | {r['same_ranking']:.0%} of {r['compared']} | {r['exact_worse']} |")
    lines += ["", NOTE]
    return "\n".join(lines) + "\n"


NOTE = """Reading (run of 2026-11-24; the issue's figures were 25 s and 61 s for I-Explain against 2.3 s and 10 s for
M-Explain, with CEMC 80-90 % of I-Explain's time). CEMC was the stage that held I-Explain back; the exact
footrule optimum of the same objective is now the default (about 10x faster here, never a worse objective, the
same ranking as CEMC in 87-88 % of queries: where they differ, CEMC stopped short of the optimum). Formula texts
are shared with M-Explain and query texts looked up once. At equal sampling work I-Explain now takes 1.0-1.5x
M-Explain's time (goal: within 2x, met). The goal of under 10 s at 5,000 reviews is not met on this shared
machine: what remains is spread over skip-gram embedding (~4 s), coalition Gibbs (~5 s: the same atom updates as
the full run, spread over 10 smaller networks) and building the explanation items (~3.5 s; M-Explain spends 8 s
on the same step), so the next lever is vectorising the item construction shared by both methods."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cemc-queries", type=int, default=400)
    ap.add_argument("--results", type=Path)
    args = ap.parse_args()
    rows = []
    for n in args.sizes:
        rows.append(profile(n, args.seed, args.cemc_queries))
        print(f"{n} reviews done", file=sys.stderr)
    text = markdown(rows)
    print(text)
    if args.results:
        replace_section(args.results, HEADING, text)


if __name__ == "__main__":
    main()
