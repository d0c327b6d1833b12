"""Paper Figure 2: query time against KB size (up to 10,000 clauses over 10,000 variables),
ours (build_lp exact presolve + highspy) beside pulp + CBC, on the full-KB LP.

    python bench/plkb_querytime.py [--sizes 100,300,1000,3000,10000] [--queries 3] [--pulp-queries 1]

KB of n clauses ``p: POS | ~a_v | ...`` (1-3 feature literals, p ~ U(0,1)) over n/2 binary
features = n feature literals. Queries fix half of the features (the hard case: the whole KB
stays in the LP) and all of them. Prints a markdown table with the fitted growth exponent
(time ~ clauses^b) and writes bench/plkb_fig2.svg.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plkb_lp import make_kb, queries  # noqa: E402
from plkb_svg import line_svg  # noqa: E402

from xcore.plkb.inference import Reasoner  # noqa: E402
from xcore.plkb.lp_matrix import build_lp  # noqa: E402
from xcore.plkb.lp_pulp import solve_pulp  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,300,1000,3000,10000")
    ap.add_argument("--queries", type=int, default=3)
    ap.add_argument("--pulp-queries", type=int, default=1)
    ap.add_argument("--svg", default=str(Path(__file__).resolve().parent / "plkb_fig2.svg"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for n in sizes:
        kb = make_kb(n, max(1, n // 2), 2, seed=0)
        size = build_lp(kb, None, substitute=False).size()
        for label, fixed in (("half the features fixed", 0.5), ("complete query", 1.0)):
            qs = queries(kb.domain, max(args.queries, args.pulp_queries), fixed, seed=1)
            ours = Reasoner(kb, "highs", "full", cache=False)
            t_ours, diffs = [], []
            for q in qs[: args.queries]:
                t = time.perf_counter()
                ours.interval(q)
                t_ours.append(time.perf_counter() - t)
            t_pulp = []
            for q in qs[: args.pulp_queries]:
                t = time.perf_counter()
                ivp = solve_pulp(kb, q, "cbc")
                t_pulp.append(time.perf_counter() - t)
                ivo = ours.interval(q)
                diffs.append(max(abs(ivp.lo - ivo.lo), abs(ivp.hi - ivo.hi)))
            rows.append({"clauses": n, "variables": kb.domain.n_atoms - 1, "lp": size, "query": label,
                         "ours": statistics.median(t_ours), "pulp": statistics.median(t_pulp), "diff": max(diffs)})
            print(f"  {n} clauses, {label}: ours {rows[-1]['ours']:.4f} s, pulp+CBC {rows[-1]['pulp']:.3f} s",
                  file=sys.stderr, flush=True)
    print("\n| clauses | variables (feature literals) | full LP rows x cols | query | ours (s) | pulp + CBC (s) "
          "| CBC / ours | max interval difference |")
    print("|---:|---:|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['clauses']:,} | {r['variables']:,} | {r['lp']['rows']:,} x {r['lp']['cols']:,} | {r['query']} | "
              f"{r['ours']:.4f} | {r['pulp']:.3f} | {r['pulp'] / r['ours']:,.0f}x | {r['diff']:.1e} |")
    series = {}
    for label in ("half the features fixed", "complete query"):
        d = [r for r in rows if r["query"] == label]
        x = np.log([r["clauses"] for r in d])
        for key, name in (("ours", "ours"), ("pulp", "pulp + CBC")):
            y = [r[key] for r in d]
            b = np.polyfit(x, np.log(y), 1)[0] if len(d) > 1 else float("nan")
            print(f"\ngrowth, {name}, {label}: time ~ clauses^{b:.2f}", end="")
            series[f"{name}, {label} (~n^{b:.2f})"] = ([r["clauses"] for r in d], y)
    print()
    line_svg(args.svg, series, "Figure 2: seconds per query against KB size (full-KB LP)",
             "clauses (= feature literals)", "seconds per query", log_x=True, log_y=True, width=720, height=440)
    print(f"\nwrote {args.svg}")


if __name__ == "__main__":
    main()
