"""ESMS search benchmark: 100 iterations x 15 rules on small-medium LastFM-shaped data.

    python bench/esms_search.py                          # print the tables
    python bench/esms_search.py --results bench/RESULTS.md   # also update the "ESMS search" section
    python bench/esms_search.py --size lastfm            # LastFM size: reference vs fast path, per stage
    python bench/esms_search.py --size lastfm --iterations 20 --sides reference   # a cheaper baseline

`--size lastfm` (issue 13): `lastfm_preset("lastfm", seed=0)` (the size of HetRec LastFM: 1,892 users,
17,632 items, 92k ratings, top-50 similarities), the paper's templates, gamma = 0, 100 x 15, seed 0.
Each side runs in a fresh process (`--one SIDE`, data generated there, not timed): the reference
path (`ESMSSearch(reference=True)`: today's full grounding, cold-start MAP) and the fast path
(grounding only the ground rules with a target, batched; see `xcore.esms.search`) with threads, the
fast path with candidates in processes (`process`), and with `--dask` the fast path on a
`LocalCluster(n_workers=2, threads_per_worker=1)` (cluster start-up timed separately). Printed: stage seconds side by side with their ratio, peak memory (the
child's max RSS), and whether both sides chose the same rules with the same validation score.

Data: `make_lastfm` with 500 users, 1,000 items, 10,000 ratings (20% held out), top-10
similarities ("small-medium": between the `small` and `bench` presets), split by
`three_way_split` (60/20/20) on the held-out ratings. Search: `ESMSSearch(iterations=100,
rules_per_model=15, block="rated", n_jobs=2)` (threads). Runs, one after another:

1. gamma = 0 with a fresh cache: wall time and where it goes (grounding, PPLL, MAP, scoring);
2. gamma = 0.5 sharing the cache of run 1 (a gamma pair, as in a sweep);
3. gamma = 0.5 with a fresh cache, to show what the shared PPLL/grounding cache saved.

Stage seconds are summed over candidates; MAP and scoring run on 2 threads, so their sums can
exceed their share of the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.grounding import machine  # noqa: E402
from bench.results_file import replace_section  # noqa: E402
from xcore.data.generators.lastfm import make_lastfm  # noqa: E402
from xcore.esms import ESMSSearch, SearchCache, three_way_split  # noqa: E402

SMALL_MEDIUM = dict(n_users=500, n_items=1_000, n_ratings=10_000, target_fraction=0.2, k_sim=10)
STAGES = ("ground", "ppll", "map", "score")


def small_medium(seed: int = 0):
    """The small-medium LastFM-shaped dataset of this benchmark."""
    return make_lastfm(seed=seed, name="lastfm_small_medium", **SMALL_MEDIUM)  # type: ignore[arg-type]


def timed_search(train, valid, gamma: float, cache: SearchCache, iterations: int, n_jobs: int) -> dict:
    """One search; wall seconds, stage sums from the history, cache counters, best score."""
    hits0, misses0 = cache.ppll.hits, cache.ppll.misses
    learned0 = len(cache.ppll)
    s = ESMSSearch("rating", gamma=gamma, iterations=iterations, rules_per_model=15, block="rated",
                   n_jobs=n_jobs, seed=0, cache=cache)
    t = time.perf_counter()
    s.fit(train, valid)
    wall = time.perf_counter() - t
    h = s.history_
    out = {"wall": wall, "best": s.best_score_, "best_iteration": s.best_iteration_,
           "rule_uses": int(h["n_rules"].sum()), "learned": len(cache.ppll) - learned0,
           "hits": cache.ppll.hits - hits0, "misses": cache.ppll.misses - misses0,
           "converged": int(h["converged"].sum()), "candidates": len(h),
           "map_iterations": float(h["map_iterations"].mean()), "skipped": len(s.skipped_rules_)}
    for st in STAGES:
        out[st] = float(h[f"{st}_seconds"].sum())
    return out


def run(iterations: int = 100, n_jobs: int = 2) -> tuple[str, dict]:
    t = time.perf_counter()
    ds = small_medium()
    train, valid, test = three_way_split(ds, "rating", seed=0)
    t_gen = time.perf_counter() - t
    shared = SearchCache()
    runs = [("gamma = 0, fresh cache", timed_search(train, valid, 0.0, shared, iterations, n_jobs)),
            ("gamma = 0.5, cache shared with the gamma = 0 run", timed_search(train, valid, 0.5, shared,
                                                                              iterations, n_jobs)),
            ("gamma = 0.5, fresh cache", timed_search(train, valid, 0.5, SearchCache(), iterations, n_jobs))]
    lines = [f"Data: {ds.description} (generated and split in {t_gen:.1f} s, not timed).",
             f"Split: three_way_split 60/20/20 of the {len(ds.tables['rating']['targets']):,} held-out ratings; "
             f"{iterations} candidates x 15 rules, n_jobs={n_jobs} (threads).", "",
             "| run | wall s | grounding s | PPLL s | MAP s | scoring s | rules learned (PPLL) | "
             "PPLL cache hits | best validation MSE |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, r in runs:
        lines.append(f"| {label} | {r['wall']:.1f} | {r['ground']:.1f} | {r['ppll']:.1f} | {r['map']:.1f} | "
                     f"{r['score']:.2f} | {r['learned']} | {r['hits']} | {r['best']:.5f} |")
    first = runs[0][1]
    stage_sum = sum(first[st] for st in STAGES)
    lines += ["", "Where the first run's time goes (share of the summed stage seconds):", "",
              "| stage | seconds | share |", "|---|---:|---:|"]
    for st, name in zip(STAGES, ("grounding (train + validation, DuckDB)", "PPLL weight learning",
                                 "MAP inference (L-BFGS-B)", "scoring (metrics + MEP)")):
        lines.append(f"| {name} | {first[st]:.2f} | {first[st] / stage_sum:.0%} |")
    other = first["wall"] - first["ground"] - first["ppll"] - (first["map"] + first["score"]) / n_jobs
    lines.append(f"| other (drawing models, stacking blocks, best-model refit; wall minus the above, "
                 f"MAP/scoring divided by {n_jobs} threads) | {max(other, 0.0):.2f} | |")
    per_rule = first["ppll"] / max(first["learned"], 1)
    no_cache = per_rule * first["rule_uses"]
    shared_run, fresh = runs[1][1], runs[2][1]
    lines += ["",
              f"PPLL caching: the first run uses {first['rule_uses']:,} rule slots but learns only "
              f"{first['learned']} distinct rules ({per_rule * 1000:.0f} ms each); learning a weight per "
              f"slot would cost about {no_cache:.0f} s of PPLL alone (plus the grounding each needs). "
              f"The second gamma shares the cache: {shared_run['learned']} new rules learned, "
              f"{shared_run['hits']} hits, {shared_run['wall']:.1f} s wall versus {fresh['wall']:.1f} s "
              f"with a fresh cache.",
              f"Goal: 100 x 15 under 5 minutes on 2 cores: {first['wall']:.1f} s "
              f"({'met' if first['wall'] < 300 else 'NOT met'}). MAP converged for "
              f"{first['converged']}/{first['candidates']} candidates (mean {first['map_iterations']:.0f} "
              f"L-BFGS-B iterations); rules skipped as too large: {first['skipped']}."]
    return "\n".join(lines), {"runs": runs}


# ---------------------------------------------------------------------- LastFM size (issue 13)
LASTFM_SIDES = ("reference", "fast", "process", "dask")


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its finished children: less sensitive to a
    shared machine's load than wall time."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def one_side(side: str, iterations: int, n_jobs: int) -> dict:
    """One LastFM-size search in this process: stage seconds, wall, peak RSS, the chosen model."""
    from xcore.data.generators import lastfm_preset

    ds = lastfm_preset("lastfm", seed=0)
    train, valid, _test = three_way_split(ds, "rating", seed=0)
    cpu0 = cpu_seconds()
    client, cluster, t_cluster = None, None, 0.0
    if side == "dask":
        from distributed import Client, LocalCluster

        t = time.perf_counter()
        cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        t_cluster = time.perf_counter() - t
    executor = client if client is not None else "process" if side == "process" else "thread"
    s = ESMSSearch("rating", gamma=0.0, iterations=iterations, rules_per_model=15, block="rated", n_jobs=n_jobs,
                   seed=0, reference=side == "reference", executor=executor)
    t = time.perf_counter()
    s.fit(train, valid)
    wall = time.perf_counter() - t
    if client is not None:
        client.close()
        cluster.close()
    h = s.history_
    out = {"side": side, "wall": wall, "cluster_start": t_cluster, "best": s.best_score_,
           "best_iteration": s.best_iteration_, "rules": sorted(r.text("psl") for r in s.best_rules_),
           "skipped": len(s.skipped_rules_), "converged": int(h["converged"].sum()), "candidates": len(h),
           "map_iterations": float(h["map_iterations"].mean()),
           "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
           "cpu": cpu_seconds() - cpu0, "skip": s.skip_seconds_,
           "scores": h["score"].tolist()}
    rs = s.rule_stats_.fillna(0.0)
    rs["seconds"] = rs["train_seconds"] + rs["valid_seconds"]
    out["slowest_rules"] = rs.sort_values("seconds", ascending=False).head(8).to_dict("records")
    for st in STAGES:
        out[st] = float(h[f"{st}_seconds"].sum())
    out["other"] = max(wall - out["ground"] - out["skip"] - out["ppll"] - (out["map"] + out["score"]) / n_jobs,
                       0.0)
    out.update({f"wall_{k}": v for k, v in s.timings_.items()})
    return out


def lastfm_run(sides: list[str], iterations: int, n_jobs: int) -> tuple[str, dict]:
    """Each side in a fresh process, then one table of stage seconds side by side."""
    res = {}
    for side in sides:
        cmd = [sys.executable, __file__, "--one", side, "--iterations", str(iterations), "--n-jobs", str(n_jobs)]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode:
            raise SystemExit(f"{side} failed:\n{proc.stderr[-3000:]}")
        res[side] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{side}: {res[side]['wall']:.1f} s", file=sys.stderr)
    head = "| stage | " + " | ".join(f"{s} s" for s in sides) + (" | ratio reference / fast |" if
                                                                   {"reference", "fast"} <= set(sides) else " |")
    lines = [f"LastFM size (`lastfm_preset('lastfm', seed=0)`), paper templates, gamma = 0, {iterations} candidates x "
             f"15 rules, block `rated`, seed 0, n_jobs={n_jobs}; each side in a fresh process.", "", head,
             "|---|" + "---:|" * (len(sides) + ({"reference", "fast"} <= set(sides)))]
    rows = [("grounding (train + validation, summed)", "ground"),
            ("finding rules over the ground limit (fast path; the reference's share is inside grounding)", "skip"),
            ("PPLL weight learning", "ppll"),
            ("MAP inference (summed over candidates)", "map"), ("scoring (summed)", "score"),
            (f"other (wall minus the above, MAP/scoring divided by {n_jobs})", "other"),
            ("wall: atom stores + fingerprints", "wall_stores"), ("wall: grounding + PPLL", "wall_ground_and_ppll"),
            ("wall: warm start", "wall_warm_start"), ("wall: evaluating candidates (MAP + scoring)", "wall_evaluate"),
            ("wall: best model (grounding + MAP on validation)", "wall_best_model"), ("**wall**", "wall"),
            ("CPU seconds of the search (process and finished children)", "cpu")]
    for label, key in rows:
        cells = [f"{res[s].get(key, 0.0):.1f}" for s in sides]
        if {"reference", "fast"} <= set(sides):
            f = res["fast"].get(key, 0.0)
            cells.append(f"{res['reference'].get(key, 0.0) / f:.1f}x" if f > 0.05 else "")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("| peak memory (max RSS, GB) | " + " | ".join(f"{res[s]['peak_gb']:.1f}" for s in sides) +
                 (" | |" if {"reference", "fast"} <= set(sides) else " |"))
    lines.append("")
    base = res[sides[0]]
    for s in sides:
        r = res[s]
        same = r["rules"] == base["rules"] and r["best"] == base["best"]
        lines.append(f"- {s}: best validation MSE {r['best']:.6f} at iteration {r['best_iteration']}, "
                     f"{len(r['rules'])} rules; MAP converged {r['converged']}/{r['candidates']} (mean "
                     f"{r['map_iterations']:.0f} L-BFGS-B iterations); rules skipped as too large: {r['skipped']}"
                     + (f"; LocalCluster start {r['cluster_start']:.1f} s (not in wall)" if s == "dask" else "")
                     + ("" if s == sides[0] else f"; same rules and score as {sides[0]}: {'yes' if same else 'NO'}"
                        f" (largest candidate score difference "
                        f"{max(abs(a - b) for a, b in zip(r['scores'], base['scores'])):.1e})"))
    lines += ["", f"Chosen rules ({sides[0]}):", "", "```", *base["rules"], "```"]
    return "\n".join(lines), res


LASTFM_HEADING = "### At LastFM size (issue 13)"


def _current_section(path: Path) -> str:
    """The "## ESMS search" section of the results file as it is now ("" when absent)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    m = re.search(r"^## ESMS search\n.*?(?=^## |\Z)", text, re.S | re.M)
    return m.group(0) if m else ""


def update_lastfm(path: Path, body: str, info: str, command: str, notes: str = "") -> None:
    """Replace (or add) the LastFM-size subsection at the end of the "## ESMS search" section."""
    section = _current_section(path) or "## ESMS search\n"
    head = section.split(LASTFM_HEADING)[0].rstrip()
    sub = (f"{LASTFM_HEADING}\n\nCommand: `{command}` ({time.strftime('%Y-%m-%d')}).\nMachine: {info}.\n\n"
           f"{body}\n" + (f"\n{notes}\n" if notes else ""))
    replace_section(path, "ESMS search", f"{head}\n\n{sub}")


def update_results(path: Path, body: str, info: str) -> None:
    """Replace (or append) the "## ESMS search" section of the results file (keeping the LastFM part)."""
    section = (f"## ESMS search\n\nCommand: `python bench/esms_search.py` ({time.strftime('%Y-%m-%d')}).\n"
               f"Machine: {info}.\n\n{body}\n\n"
               "Notes. Stage seconds come from `ESMSSearch.history_` (grounding and PPLL are charged to the "
               "first candidate that uses a rule; MAP and scoring per candidate, measured inside the "
               "worker threads). With the block predicate `rated`, the paper's templates give 103 candidate "
               "rules on this schema and 100 x 15 draws use all of them, so a second gamma sharing the "
               "cache grounds and learns nothing new. The machine is shared; the load average is in the "
               "machine line (a first run at load average 3.3 took 24.8 s for the gamma = 0 search).\n")
    current = _current_section(path)
    if LASTFM_HEADING in current:
        section = section.rstrip() + "\n\n" + LASTFM_HEADING + current.split(LASTFM_HEADING, 1)[1]
    replace_section(path, "ESMS search", section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--results", type=Path, help="update the ESMS search section of this file")
    parser.add_argument("--size", choices=["small-medium", "lastfm"], default="small-medium")
    parser.add_argument("--sides", default="reference,fast", help="lastfm size: comma-separated of "
                        + ", ".join(LASTFM_SIDES))
    parser.add_argument("--dask", action="store_true", help="lastfm size: also the LocalCluster side")
    parser.add_argument("--one", choices=LASTFM_SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_side(args.one, args.iterations, args.n_jobs)))
        return
    info = machine()
    if args.size == "lastfm":
        sides = [s for s in args.sides.split(",") if s] + (["dask"] if args.dask else [])
        body, _ = lastfm_run(sides, args.iterations, args.n_jobs)
        print(f"Machine: {info}\n")
        print(body)
        if args.results:
            cmd = f"python bench/esms_search.py --size lastfm --iterations {args.iterations} --sides {args.sides}" + \
                  (" --dask" if args.dask else "")
            update_lastfm(args.results, body, info, cmd)
            print(f"\nwrote {args.results}")
        return
    body, _ = run(args.iterations, args.n_jobs)
    print(f"Machine: {info}\n")
    print(body)
    if args.results:
        update_results(args.results, body, info)
        print(f"\nwrote {args.results}")


if __name__ == "__main__":
    main()
