"""Citeseer and Cora at their real sizes: the hard summation constraint under each solver, beside Java.

One command: ``python bench/psl_citeseer_size.py [--no-java] [--sizes citeseer cora]``.

linqs/psl-examples' citeseer ``.data`` + ``.psl`` (unchanged; cora uses the same rules with its own
file names) with generated data of the real datasets' sizes (Citeseer 3,312 papers, 6 categories,
4,732 links; Cora 2,708 papers, 7 categories, 5,429 links; half the papers observed, every category
of theirs given as an atom of value 1 or 0 (as the real files, which Java PSL needs); the others are targets over every category; 80% of links join papers of
the same category). The rule ``HasCat(A, +C) = 1 .`` makes one hard equality row per paper over its
categories, which L-BFGS-B's box cannot hold: the default solver runs L-BFGS-B inside an augmented
Lagrangian; beside it consensus ADMM and the HiGHS QP, with Java PSL's ADMM (pslpython 2.4.1,
runtime jar, tolerances tightened to 1e-8, same files and rules as a JSON config) beside them.

Every run is a fresh process: ``python -m xcore.psl --data X-eval.data --model X.psl --method M``;
CPU seconds are user + system of the child (``os.wait4``). Printed per solver: energy (ours: the
command's own line; Java's values under our grounding), the largest value difference against the
default (auto: L-BFGS-B in an augmented Lagrangian), the worst hard-row violation, and the command's
uniqueness line. The HiGHS QP gets ``--qp-timeout`` wall seconds (its active-set method is slow here).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SIZES = {"citeseer": (3312, 6, 4732), "cora": (2708, 7, 5429)}


def generate(folder: Path, papers: int, cats: int, links: int, seed: int = 0) -> dict:
    """Write the citeseer layout's eval files (../data/citeseer/0/eval/*.txt) of the given size."""
    rng = random.Random(seed)
    cat = [rng.randrange(1, cats + 1) for _ in range(papers)]
    by_cat: dict[int, list[int]] = {}
    for p, c in enumerate(cat):
        by_cat.setdefault(c, []).append(p)
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < links:
        a = rng.randrange(papers)
        b = rng.choice(by_cat[cat[a]]) if rng.random() < 0.8 else rng.randrange(papers)
        if a != b:
            pairs.add((a, b))
    observed = set(rng.sample(range(papers), papers // 2))
    out = folder / "data" / "citeseer" / "0" / "eval"
    out.mkdir(parents=True, exist_ok=True)
    (out / "link_obs.txt").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(pairs)))
    (out / "hasCat_obs.txt").write_text("".join(f"{p}\t{c}\t{int(cat[p] == c)}\n" for p in sorted(observed)
                                                for c in range(1, cats + 1)))
    targets = [(p, c) for p in range(papers) if p not in observed for c in range(1, cats + 1)]
    (out / "hasCat_targets.txt").write_text("".join(f"{p}\t{c}\n" for p, c in targets))
    (out / "hasCat_truth.txt").write_text("".join(f"{p}\t{c}\t{int(cat[p] == c)}\n" for p, c in targets))
    return {"targets": len(targets)}


def timed(cmd: list[str], cwd: Path, timeout: float) -> tuple[int, str, float, float]:
    """(exit code, output, wall s, CPU s of the child) of a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    t0 = time.monotonic()
    log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: Java's atom dump would fill a pipe and block
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    deadline = t0 + timeout
    out = ""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return -9, "timed out", time.monotonic() - t0, usage.ru_utime + usage.ru_stime
        time.sleep(0.05)
    log.seek(0)
    out = log.read()
    return os.waitstatus_to_exitcode(status), out, time.monotonic() - t0, usage.ru_utime + usage.ru_stime


def read_values(folder: Path) -> dict[tuple, float]:
    rows = {}
    for line in (folder / "HASCAT.txt").read_text().splitlines():
        a, c, v = line.split("\t")
        rows[(a.strip("'"), c.strip("'"))] = float(v)
    return rows


def our_energy(data: Path, model: Path, values: dict) -> tuple[float, float]:
    """Energy and worst hard violation of a state under xcore's grounding of the project."""
    from xcore.data.io.psl_project import UNLIMITED, read_project
    from xcore.psl.model import PSLModel

    project = read_project(data=str(data), model=str(model), limits=UNLIMITED)
    m = PSLModel(project.parsed_rules(), limit=None)
    m.ground(project.dataset("infer", UNLIMITED))
    store = m.store_
    text = store.atom_text(store.target_ids)
    y = np.array([values[tuple(t[len("HasCat("):-1].split(", "))] for t in text])
    return m.program_.energy(y), m.program_.constraint_violation(y)


def run_size(name: str, work: Path, java: bool, timeout: float, qp_timeout: float) -> list[dict]:
    papers, cats, links = SIZES[name]
    folder = work / name
    shutil.copytree(Path(os.environ.get("XCORE_SHARED_DATA", "/work/shared/data")) / "psl_examples" / "legacy" /
                    "citeseer" / "cli", folder / "cli")
    info = generate(folder, papers, cats, links)
    cli = folder / "cli"
    data, model = cli / "citeseer-eval.data", cli / "citeseer.psl"
    rows = []
    values = {}
    for method in ("auto", "admm", "qp"):
        cmd = [sys.executable, "-m", "xcore.psl", "--data", str(data), "--model", str(model), "--method", method,
               "--output", str(folder / method)]
        code, out, wall, cpu = timed(cmd, cli, qp_timeout if method == "qp" else timeout)
        energy = re.search(r"energy ([0-9.e+-]+) \(([^)]*)\)", out)
        unique = re.search(r"^(warning: )?(the optimum is[^;\n]*|optimum uniqueness not checked[^\n]*)", out, re.M)
        if code == -9:
            out = f"not finished in {qp_timeout if method == 'qp' else timeout:.0f} s wall"
        rows.append({"data": name, "solver": f"ours {method}" + (f" ({energy.group(2)})" if energy else ""),
                     "ok": code == 0, "cpu": cpu, "wall": wall, "energy": float(energy.group(1)) if energy else None,
                     "unique": unique.group(2) if unique else ("-" if code == 0 else out), "log": out[-1500:], "targets": info["targets"]})
        if code == 0:
            values[method] = read_values(folder / method)
    if java:
        from psl_examples_table import java_config, legacy_as_json  # noqa: E402

        from xcore.psl.java_engine import java_psl_jar

        legacy_as_json(data, model, cli / "legacy.json")
        java_config(cli / "legacy.json", cli / "java.json", folder / "java", keep_learn=False)
        doc = json.loads((cli / "java.json").read_text())
        doc["options"]["runtime.db.intids"] = True  # as the project's run.sh (--int-ids)
        (cli / "java.json").write_text(json.dumps(doc))
        (folder / "java").mkdir(exist_ok=True)
        code, out, wall, cpu = timed(["nice", "-n", "10", "java", "-Xmx2g", "-jar", str(java_psl_jar()), "java.json"],
                                     cli, timeout)
        row = {"data": name, "solver": "Java PSL ADMM", "ok": code == 0, "cpu": cpu, "wall": wall, "energy": None,
               "unique": "-", "log": out[-1500:], "targets": info["targets"]}
        if code == 0:
            values["java"] = read_values(folder / "java")
            row["energy"], row["violation"] = our_energy(data, model, values["java"])
        rows.append(row)
    ref = values.get("auto")
    for row, key in zip(rows, ["auto", "admm", "qp", "java"]):
        if ref is not None and key in values:
            row["diff"] = max(abs(values[key][k] - ref[k]) for k in ref)
        if key in values and "violation" not in row:
            row["energy"], row["violation"] = our_energy(data, model, values[key])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES))
    ap.add_argument("--no-java", action="store_true")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--qp-timeout", type=float, default=180, help="wall seconds given to the HiGHS QP")
    args = ap.parse_args()
    from xcore.psl.java_engine import java_psl_jar

    java = not args.no_java and java_psl_jar() is not None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sizes:
            for row in run_size(name, Path(tmp), java, args.timeout, args.qp_timeout):
                rows.append(row)
                print(f"{row['data']} {row['solver']}: ok={row['ok']} cpu={row['cpu']:.2f}", file=sys.stderr, flush=True)
                if not row["ok"]:
                    print(row["log"], file=sys.stderr)
    print(f"load average after: {os.getloadavg()}")
    print("| data | targets | solver | process CPU s | wall s | energy | max abs diff vs ours auto | worst hard violation | optimum |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        e = f"{r['energy']:.9g}" if r.get("energy") is not None else "-"
        d = f"{r['diff']:.1e}" if "diff" in r else "-"
        v = f"{r['violation']:.1e}" if "violation" in r else "-"
        print(f"| {r['data']} | {r['targets']:,} | {r['solver']} | {r['cpu']:.2f} | {r['wall']:.1f} | {e} | {d} | {v} | "
              f"{r['unique']} |")


if __name__ == "__main__":
    main()
