"""Third-party Markov logic examples (Tuffy smoke, rc1000, cse; pracmln smokers, alarm, taxonomies):
load through `xcore.data.load`, ground, infer, explain one query atom; one fresh process each.

    XCORE_SHARED_DATA=/work/shared/data python bench/mln_examples.py [--samples 200]

Small networks (<= 20 query atoms) use exact enumeration; the others Gibbs with `--samples`
samples, a quarter of that burn-in and 2 chains (short: the table is about loading and running,
not about converged marginals; R-hat is shown). Reference: for the exact rows, an independent
Gibbs run of the same network is shown beside (the max |difference| of marginals); pracmln does
not install on Python 3.11 here and Tuffy's outputs are not in the data, so there is no
third-party engine to compare with.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.results_file import child_json  # noqa: E402

EXAMPLES = ("tuffy/smoke", "tuffy/rc1000", "tuffy/cse", "pracmln/smokers", "pracmln/alarm", "pracmln/taxonomies")

CHILD = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
out = {}
try:
    from xcore.data import load
    from xcore.mln.model import MLNModel
    t = time.perf_counter()
    ds = load(sys.argv[1])
    out["load_s"] = time.perf_counter() - t
    out["loaded"] = True
    out["query_atoms"] = int(sum(len(ds.targets(p.name)) for p in ds.predicates))
    out["description"] = ds.description
    t = time.perf_counter()
    model = MLNModel("\n".join(ds.rules)).ground(ds)
    out["ground_s"] = time.perf_counter() - t
    out["clauses"] = int(model.mln_.S.shape[0])
    n = model.mln_.n_atoms
    samples = int(sys.argv[2])
    t = time.perf_counter()
    if n <= 20:
        model.infer("exact")
        exact = model.marginals()["marginal"].to_numpy()
        ref = MLNModel("\n".join(ds.rules)).ground(ds).infer("gibbs", n_samples=4000, burn_in=500, n_chains=4, seed=0)
        out["reference"] = f"Gibbs 4x4000: max abs diff {np.abs(ref.marginals()['marginal'].to_numpy() - exact).max():.3f}"
        out["method"] = "exact"
    else:
        model.infer("gibbs", n_samples=samples, burn_in=samples // 4, n_chains=2, seed=0)
        out["method"] = f"Gibbs 2x{samples}"
        out["max_rhat"] = float(np.nanmax(model.marginals()["rhat"]))
    out["infer_s"] = time.perf_counter() - t
    m = model.marginals()
    queries = [p.name for p in ds.predicates if p.description == "query predicate"]
    q = m[m["atom"].str.split("(").str[0].isin(queries)] if queries else m
    top = q.sort_values("marginal", ascending=False).iloc[0]
    out["result"] = f"{len(q)} query atoms, mean P {q['marginal'].mean():.3f}; top {top['atom']} {top['marginal']:.3f}"
    t = time.perf_counter()
    exp = model.explain(str(top["atom"]), top_k=1)
    out["explain_s"] = time.perf_counter() - t
    out["top_formula"] = exp.items[0].extras.get("formula", "") if exp.items else ""
    out["ran"] = True
except Exception as e:  # reported in the table
    out["error"] = f"{type(e).__name__}: {str(e)[:200]}"
out["total_s"] = time.perf_counter() - t0
print(json.dumps(out))
"""


def run_one(path: Path, samples: int) -> dict:
    """One example in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(samples)], capture_output=True, text=True,
                          env=env, timeout=3600)
    return child_json(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    root = Path(os.environ.get("XCORE_SHARED_DATA", "/work/shared/data")) / "mln_examples"
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print("| input | loaded | ran | query atoms | ground clauses | load s | ground s | inference | infer s | "
          "explain s | result | reference |")
    print("|---|---|---|---:|---:|---:|---:|---|---:|---:|---|---|")
    for ex in args.only or EXAMPLES:
        r = run_one(root / ex, args.samples)
        ref = r.get("reference") or (f"none (max R-hat {r['max_rhat']:.2f})" if "max_rhat" in r else "none")
        result = r.get("result") or r.get("error", "")
        print(f"| {ex} | {'yes' if r.get('loaded') else 'no'} | {'yes' if r.get('ran') else 'no'} | "
              f"{r.get('query_atoms', '')} | {r.get('clauses', '')} | {r.get('load_s', 0):.2f} | "
              f"{r.get('ground_s', 0):.2f} | {r.get('method', '')} | {r.get('infer_s', 0):.2f} | "
              f"{r.get('explain_s', 0):.2f} | {result} | {ref} |", flush=True)


if __name__ == "__main__":
    main()
