"""Grounding benchmark: five collaborative-filtering rules on a LastFM-shaped dataset.

    python bench/grounding.py                  # print the tables
    python bench/grounding.py --results bench/RESULTS.md   # also update the "Grounding" section

Data: `lastfm_preset("bench", seed=0)` -- 1,900 users, 8,000 items, 90,000 observed and 18,000
target ratings, friendships and top-20 similarities (k=20 instead of 50 so that the five rules
give about 750,000 ground rules; with k=50 they give about 1.9 million). Timed, best of 3 after a
warm-up: building the AtomStore, SQL grounding with DuckDB into integer arrays, and the
Lukasiewicz linear forms as scipy sparse matrices. Baselines in the same run: a plain pandas-merge
grounder on the string tables and the same on integer-encoded tables, both producing the same
atom-id arrays (checked).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import duckdb  # noqa: E402

from bench.results_file import replace_section  # noqa: E402
from xcore.data.generators import lastfm_preset  # noqa: E402
from xcore.logic import parse_rules  # noqa: E402
from xcore.logic.ast import Rule, Variable  # noqa: E402
from xcore.logic.atoms import AtomStore  # noqa: E402
from xcore.logic.grounding import ground  # noqa: E402
from xcore.logic.linear_form import linear_form  # noqa: E402

RULES = """\
1.0: rated(U, I1) & rated(U, I2) & rating(U, I1) & sim_cosine_items(I1, I2) -> rating(U, I2) ^2
1.0: rated(U, I1) & rated(U, I2) & rating(U, I1) & sim_pearson_items(I1, I2) -> rating(U, I2) ^2
1.0: rated(U1, I) & rated(U2, I) & friend(U1, U2) & rating(U1, I) -> rating(U2, I) ^2
1.0: rated(U1, I) & rated(U2, I) & sim_cosine_users(U1, U2) & rating(U1, I) -> rating(U2, I) ^2
1.0: sgd_rating(U, I) -> rating(U, I) ^2
"""


# ---------------------------------------------------------------------- pandas baseline
def pandas_tables(ds, store: AtomStore, integer: bool) -> dict[str, pd.DataFrame]:
    """Per predicate: its atoms (obs then targets, as in the store) with an atom_id column."""
    out = {}
    for name, p in store.predicates.items():
        if integer:
            t = pd.DataFrame(p.args.astype(np.int64), columns=p.predicate.columns)
        else:
            t = pd.concat([ds.observations(name), ds.targets(name)], ignore_index=True)[p.predicate.columns]
        out[name] = t.assign(atom_id=p.ids)
    return out


def pandas_ground(rule: Rule, tables: dict[str, pd.DataFrame]) -> np.ndarray:
    """Ground one rule with pandas merges: inner merges for clause-negative literals, left merges
    for clause-positive ones (all their variables bound), in clause order. Returns atom ids."""
    lits = rule.clause_literals()
    order = [j for j, l in enumerate(lits) if l.negated] + [j for j, l in enumerate(lits) if not l.negated]
    frame = None
    for j in order:
        lit = lits[j]
        t = tables[lit.atom.predicate]
        cols = {f"a{i}": str(v) for i, v in enumerate(lit.atom.args) if isinstance(v, Variable)}
        t = t.rename(columns={**cols, "atom_id": f"l{j}"})[[*cols.values(), f"l{j}"]]
        if frame is None:
            frame = t
        else:
            on = [c for c in cols.values() if c in frame.columns]
            frame = frame.merge(t, on=on, how="inner" if lit.negated else "left")
    ids = frame[[f"l{j}" for j in range(len(lits))]]
    return ids.fillna(-1).to_numpy(dtype=np.int64)


# ---------------------------------------------------------------------- timing
CPU: dict[str, float] = {}
"""Best CPU seconds (all threads of this process) per timed stage, filled by `best_of`."""


def best_of(fn, repeats: int = 3, label: str = ""):
    """Best wall time of `repeats` runs after a warm-up (and the best CPU time into `CPU`)."""
    fn()  # warm-up
    times, cpu, result = [], [], None
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    CPU[label] = min(cpu)
    return min(times), result


def machine() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = re.search(r"Model name:\s*(.+)", lscpu).group(1).strip()  # type: ignore[union-attr]
    except Exception:
        model = platform.processor() or "unknown CPU"
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return (f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, DuckDB "
            f"{duckdb.__version__}, pandas {pd.__version__}, numpy {np.__version__}; "
            f"load average before the run {load}")


def run() -> tuple[str, dict]:
    t = time.perf_counter()
    ds = lastfm_preset("bench", seed=0)
    t_gen = time.perf_counter() - t
    rules = parse_rules(RULES)

    t_store, store = best_of(lambda: AtomStore.from_dataset(ds), label="store")
    t_ground, prog = best_of(lambda: ground(rules, store), label="ground")
    t_linear, forms = best_of(lambda: [linear_form(g, store) for g in prog], label="linear")
    n = prog.n_ground_rules

    str_tables = pandas_tables(ds, store, integer=False)
    int_tables = pandas_tables(ds, store, integer=True)
    t_pd_str, pd_str = best_of(lambda: [pandas_ground(r, str_tables) for r in rules], label="pandas_str")
    t_pd_int, pd_int = best_of(lambda: [pandas_ground(r, int_tables) for r in rules], label="pandas_int")
    for g, a, b in zip(prog, pd_str, pd_int):  # same ground rules, whatever the row order
        want = np.unique(g.atom_ids, axis=0)
        assert np.array_equal(np.unique(a, axis=0), want) and np.array_equal(np.unique(b, axis=0), want), g.rule.text()

    total = t_store + t_ground + t_linear
    c = CPU
    rows = [
        ("AtomStore build (dictionary-encode constants, number atoms)", t_store, c["store"], None),
        ("SQL grounding with DuckDB into integer arrays", t_ground, c["ground"], n / t_ground),
        ("linear forms: scipy sparse A and b for all rules", t_linear, c["linear"], None),
        ("grounding into sparse arrays (SQL grounding + linear forms)", t_ground + t_linear,
         c["ground"] + c["linear"], n / (t_ground + t_linear)),
        ("total from dataset (store + SQL + linear forms)", total, c["store"] + c["ground"] + c["linear"], n / total),
        ("baseline: pandas merges on string tables", t_pd_str, c["pandas_str"], n / t_pd_str),
        ("baseline: pandas merges on integer tables", t_pd_int, c["pandas_int"], n / t_pd_int),
    ]
    lines = [f"Data: {ds.description} (generated in {t_gen:.1f} s, not timed below).",
             f"Atoms: {store.n_atoms:,} ({store.n_targets:,} targets), {store.n_constants:,} constants. "
             f"Ground rules: {n:,}.", "",
             "| stage | wall seconds (best of 3) | CPU seconds, all threads | ground rules / s (wall) |",
             "|---|---:|---:|---:|"]
    for label, sec, cpu, rate in rows:
        lines.append(f"| {label} | {sec:.3f} | {cpu:.3f} | {'' if rate is None else f'{rate:,.0f}'} |")
    lines += ["",
              f"SQL grounding is {t_pd_str / t_ground:.1f}x faster than pandas merges on strings and "
              f"{t_pd_int / t_ground:.1f}x faster than pandas merges on integers; grounding into sparse "
              f"arrays takes {t_ground + t_linear:.2f} s (goal: under 1 s).", "",
              "| rule | estimate | ground rules | seconds (last run) |", "|---|---:|---:|---:|"]
    for g in prog:
        lines.append(f"| `{g.rule.text()}` | {g.estimate:,} | {g.n:,} | {g.seconds:.3f} |")
    figures = {"n": n, "store": t_store, "ground": t_ground, "linear": t_linear, "total": total,
               "pandas_str": t_pd_str, "pandas_int": t_pd_int}
    return "\n".join(lines), figures


def update_results(path: Path, body: str, info: str) -> None:
    """Replace (or append) the "## Grounding" section of the results file."""
    section = (f"## Grounding\n\nCommand: `python bench/grounding.py` ({time.strftime('%Y-%m-%d')}).\n"
               f"Machine: {info}.\n\n{body}\n\n"
               "Notes. Similarities are top-20 (not top-50) so that the five rules give about "
               "750,000 ground rules; with top-50 they give about 1.9 million. \"SQL grounding\" "
               "includes planning (estimates, join order), DuckDB, fetching Arrow results into numpy "
               "and the canonical (sorted) order of ground rules; it runs on both cores (registered "
               "tables are split into 16k-row record batches). The machine is shared: while another "
               "process held one core the same stages took about 0.8 s (SQL) and 1.0 s (into sparse "
               "arrays); the CPU column is less sensitive to that. For scale (figures from the issue, "
               "measured on this machine type, not by this script): the Java PSL engine grounds a "
               "347k-rule model of this shape in about 21 s; a plain pandas-merge grounder took about "
               "2.8 s.\n")
    replace_section(path, "Grounding", section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, help="update the Grounding section of this markdown file")
    args = parser.parse_args()
    info = machine()
    body, _ = run()
    print(f"Machine: {info}\n")
    print(body)
    if args.results:
        update_results(args.results, body, info)
        print(f"\nwrote {args.results}")


if __name__ == "__main__":
    main()
