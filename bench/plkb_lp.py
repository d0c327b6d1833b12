"""LP speed of the PLKB classifier: full-KB queries through pulp+CBC vs our highspy path, and
relevant-KB queries, on one random 10,000-clause KB over ~10,000 literals (side by side, one run).

    python bench/plkb_lp.py [--clauses 10000] [--features 5000] [--pulp-queries 2] [--queries 200]

Prints a markdown table; the paper says "a few seconds" per query; goals: < 1 s per full-KB
query with highspy and < 20 ms per relevant-KB query.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from xcore.plkb.experiments import random_clauses
from xcore.plkb.inference import Reasoner
from xcore.plkb.kb import KB
from xcore.plkb.literals import ABSENT, Domain
from xcore.plkb.lp import FullKBLP
from xcore.plkb.lp_matrix import build_lp
from xcore.plkb.lp_pulp import solve_pulp


def make_kb(n_clauses: int, n_features: int, n_values: int, seed: int) -> KB:
    """Random clauses POS | ~a_v | ... (1 to 3 feature literals) plus a few priors on POS."""
    dom = Domain(tuple(f"a{i}" for i in range(n_features)),
                 tuple(tuple(str(v) for v in range(n_values)) for _ in range(n_features)))
    return random_clauses(dom, n_clauses, lengths=(1, 2, 3), seed=seed)


def queries(dom: Domain, n: int, fixed: float, seed: int) -> np.ndarray:
    """`n` random queries fixing a fraction `fixed` of the features (1.0 = complete rows)."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, dom.cardinalities[0], size=(n, dom.n_features))
    codes[rng.random(codes.shape) >= fixed] = ABSENT
    return codes


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clauses", type=int, default=10_000)
    ap.add_argument("--features", type=int, default=5_000)
    ap.add_argument("--values", type=int, default=2)
    ap.add_argument("--pulp-queries", type=int, default=2)
    ap.add_argument("--highs-queries", type=int, default=5)
    ap.add_argument("--warm-queries", type=int, default=2)
    ap.add_argument("--queries", type=int, default=200, help="relevant-KB queries")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    kb = make_kb(args.clauses, args.features, args.values, args.seed)
    dom = kb.domain
    lp = build_lp(kb, None, substitute=False)
    print(f"KB: {len(kb):,} clauses, {kb.n_literals:,} literal occurrences, {dom.n_atoms - 1:,} feature "
          f"literals (+POS); full LP {lp.size()['rows']:,} rows x {lp.size()['cols']:,} cols, "
          f"{lp.size()['nonzeros']:,} non-zeros\n")

    rows: list[tuple[str, str, float, int]] = []
    diffs: dict[str, list[float]] = {}

    def compare(a, b, path: str) -> None:
        diffs.setdefault(path, []).append(max(abs(a.lo - b.lo), abs(a.hi - b.hi)))

    for label, fixed in (("complete", 1.0), ("partial (half the features)", 0.5)):
        qs = queries(dom, max(args.pulp_queries, args.highs_queries), fixed, args.seed + 1)
        ours = Reasoner(kb, "highs", "full", cache=False)
        h_out, h_times = [], []
        for q in qs[: args.highs_queries]:
            iv, t = timed(ours.interval, q)
            h_out.append(iv)
            h_times.append(t)
        p_times = []
        for i, q in enumerate(qs[: args.pulp_queries]):
            iv, t = timed(solve_pulp, kb, q, "cbc")
            p_times.append(t)
            compare(iv, h_out[i], "pulp+CBC vs ours, full KB")
        w_times = []
        full, t_load = timed(FullKBLP, kb)
        for i, q in enumerate(qs[: args.warm_queries]):
            (iv, _), t = timed(full.solve, q)
            w_times.append(t + (t_load if i == 0 else 0.0))
            compare(iv, h_out[i], "one-model warm start vs ours, full KB")
        n = len(p_times)
        rows.append((f"full KB, {label} query", "pulp + CBC (model build + 3 solves)", statistics.mean(p_times), n))
        rows.append((f"full KB, {label} query", "highspy, one model, bounds per query, warm start",
                     statistics.mean(w_times), len(w_times)))
        rows.append((f"full KB, {label} query", "highspy, exact presolve + reused Highs (ours)",
                     statistics.mean(h_times), len(h_times)))

    rel = Reasoner(kb, "highs", "relevant", cache=False)
    rq = queries(dom, args.queries, 1.0, args.seed + 2)
    _, t_rel = timed(rel.intervals, rq)
    n_rel = np.mean([int(kb.relevant_mask(q).sum()) for q in rq[:50]])
    rq_p = rq[: max(1, args.pulp_queries * 5)]
    rel_p = Reasoner(kb, "pulp", "relevant", cache=False)
    _, t_rel_p = timed(rel_p.intervals, rq_p)
    for q in rq_p:
        compare(rel.interval(q), rel_p.interval(q), "pulp+CBC vs ours, relevant KB")
    label = f"relevant KB (~{n_rel:.1f} clauses), complete query"
    rows.append((label, "pulp + CBC", t_rel_p / len(rq_p), len(rq_p)))
    rows.append((label, "highspy (ours)", t_rel / len(rq), len(rq)))

    print("| query | solver path | s/query | queries |")
    print("|---|---|---:|---:|")
    for q, m, t, n in rows:
        print(f"| {q} | {m} | {t:.4f} | {n} |")
    print()
    by = {(q, m): t for q, m, t, _ in rows}
    for q in dict.fromkeys(r[0] for r in rows):
        p = [t for (qq, m), t in by.items() if qq == q and m.startswith("pulp")][0]
        o = [t for (qq, m), t in by.items() if qq == q and m.endswith("(ours)")][0]
        print(f"ratio pulp+CBC / ours, {q}: {p / o:,.0f}x")
    print()
    for path, d in diffs.items():
        print(f"max |difference| of interval ends, {path}: {max(d):.1e} over {len(d)} queries")
    print("(pulp reads CBC's solutions with ~8 significant digits, so its face tolerance is 1e-8 per clause)")
    full_ours = max(t for (q, m), t in by.items() if q.startswith("full KB, complete") and m.endswith("(ours)"))
    rel_ours = by[(label, "highspy (ours)")]
    print(f"goals: full-KB (complete) query < 1 s with highspy: {full_ours:.3f} s -> "
          f"{'met' if full_ours < 1 else 'MISSED'}; relevant-KB query < 20 ms: {1000 * rel_ours:.2f} ms -> "
          f"{'met' if rel_ours < 0.02 else 'MISSED'}")


if __name__ == "__main__":
    main()
