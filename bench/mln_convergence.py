"""Do Gibbs sampling and MC-SAT converge on Tuffy's rc1000 and cse at the default sample counts? Two
checks per sampler (`--samplers gibbs mcsat`), one fresh process each:

* reduced domains (rc1000: the papers of one author with two papers, 18-20 `category` atoms; cse:
  two students and two professors, 16 `advisedBy` atoms): the program unchanged, the evidence
  restricted to atoms over the chosen objects; exact enumeration (the reference) beside Gibbs at
  the defaults (4 chains x 1,000 samples, 200 burn-in): max |marginal difference| and max R-hat;
* the full networks: `--full-samples` samples per chain (the defaults take hours on this shared
  machine), split-chain R-hat and the share of atoms above 1.1.

MC-SAT rows also give the hard clauses its chains' WalkSAT start left violated (rc1000's hard clauses
contradict its evidence, so no world satisfies them all) and the steps whose SampleSAT failed.

    XCORE_SHARED_DATA=/work/shared/data python bench/mln_convergence.py [--full-samples 100] [--no-full]
        [--samplers gibbs mcsat] [--only rc1000 cse]
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

CHILD = r"""
import json, re, sys, tempfile, time, resource
from pathlib import Path
import numpy as np
from xcore.data import load
from xcore.mln.model import MLNModel
from xcore.mln.mcsat import run_sampler
from xcore.mln.exact import exact

kind, folder, mode, samples, chains = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
sampler = sys.argv[6]
ATOM = re.compile(r"^\s*(!?)\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")
out = {}
t0 = time.perf_counter()
full = load(str(folder))
if mode == "reduced":
    lines = (folder / "evidence.db").read_text().splitlines()
    parsed = [(l, ATOM.match(l)) for l in lines]
    types = {p.name: p.types for p in full.predicates}
    if kind == "rc1000":
        papers = {}
        for l, m in parsed:
            if m and m.group(2) == "wrote":
                a, p = [x.strip() for x in m.group(3).split(",")]
                papers.setdefault(a, []).append(p)
        author = sorted(a for a, ps in papers.items() if len(ps) == 2)[0]
        keep_type, chosen = "paper", set(papers[author])
    else:
        st = [m.group(3).strip() for l, m in parsed if m and m.group(2) == "student"][:2]
        pr = [m.group(3).strip() for l, m in parsed if m and m.group(2) == "professor"][:2]
        keep_type, chosen = "person", set(st + pr)
    kept = []
    for l, m in parsed:
        if m is None:
            continue
        args = [x.strip() for x in m.group(3).split(",")]
        if all(a in chosen for a, t in zip(args, types[m.group(2)]) if t == keep_type):
            kept.append(l)
    tmp = Path(tempfile.mkdtemp())
    (tmp / "prog.mln").write_text((folder / "prog.mln").read_text())
    (tmp / "query.db").write_text((folder / "query.db").read_text())
    (tmp / "evidence.db").write_text("\n".join(kept) + "\n")
    ds = load(str(tmp))
    out["objects"] = sorted(chosen)
else:
    ds = full
model = MLNModel("\n".join(ds.rules)).ground(ds)
mln = model.mln_
out["atoms"], out["clauses"] = int(mln.n_atoms), int(mln.n_clauses)
out["hard_clauses"] = int(mln.hard.sum())
if mode == "reduced":
    ref = exact(mln).marginals
r0 = resource.getrusage(resource.RUSAGE_SELF)
res = run_sampler(mln, sampler, n_samples=samples, burn_in=samples // 5, n_chains=chains, seed=0)
out["sampler"] = res.sampler
out["hard_violated_at_start"] = res.extra.get("hard_violated_at_start")
out["rejected_steps"] = res.extra.get("rejected_steps")
r1 = resource.getrusage(resource.RUSAGE_SELF)
out["gibbs_cpu_s"] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
out["gibbs_wall_s"] = res.seconds
rhat = res.rhat
out["max_rhat"] = float(np.max(rhat)) if len(rhat) else float("nan")
out["above_1_1"] = int(np.sum(rhat > 1.1))
out["infinite"] = int(np.sum(np.isinf(rhat)))
out["mean_marginal"] = float(res.marginals.mean())
if mode == "reduced":
    out["max_abs_diff"] = float(np.abs(res.marginals - ref).max())
    out["exact_mean"] = float(ref.mean())
out["total_s"] = time.perf_counter() - t0
print(json.dumps(out))
"""


def run_one(kind: str, folder: Path, mode: str, samples: int, chains: int, sampler: str) -> dict:
    """One check in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD, kind, str(folder), mode, str(samples), str(chains), sampler],
                          capture_output=True, text=True, env=env, timeout=6 * 3600)
    return child_json(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full-samples", type=int, default=100)
    ap.add_argument("--full-chains", type=int, default=4)
    ap.add_argument("--no-full", action="store_true")
    ap.add_argument("--only", nargs="*", default=["rc1000", "cse"])
    ap.add_argument("--samplers", nargs="*", default=["gibbs", "mcsat"], choices=["gibbs", "mcsat", "auto"])
    args = ap.parse_args()
    root = Path(os.environ.get("XCORE_SHARED_DATA", "/work/shared/data")) / "mln_examples" / "tuffy"
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print("| network | query atoms | ground clauses (hard) | sampler, chains x samples | CPU s | max R-hat | "
          "atoms R-hat > 1.1 | mean P | exact mean P | max abs diff vs exact | hard violated at start | "
          "rejected steps |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    jobs = [(k, "reduced", 1000, 4, s) for k in args.only for s in args.samplers]
    if not args.no_full:
        jobs += [(k, "full", args.full_samples, args.full_chains, s) for k in args.only for s in args.samplers]
    for kind, mode, samples, chains, sampler in jobs:
        r = run_one(kind, root / kind, mode, samples, chains, sampler)
        if "error" in r:
            print(f"| {kind} {mode} | error: {r['error']} |||||||||||")
            continue
        name = f"{kind} reduced ({', '.join(r['objects'])})" if mode == "reduced" else f"{kind} full"
        extra = [r.get("hard_violated_at_start"), r.get("rejected_steps")]
        print(f"| {name} | {r['atoms']} | {r['clauses']} ({r['hard_clauses']}) | {r['sampler']} {chains}x{samples} "
              f"(burn-in {samples // 5}) | {r['gibbs_cpu_s']:.1f} | {r['max_rhat']:.3g} | "
              f"{r['above_1_1']} ({r['infinite']} inf) | {r['mean_marginal']:.3f} | "
              f"{r.get('exact_mean', float('nan')):.3f} | {r.get('max_abs_diff', float('nan')):.3f} | "
              + " | ".join("" if v is None else f"{v:,}" for v in extra) + " |", flush=True)


if __name__ == "__main__":
    main()
