"""Entity-resolution (linqs/psl-examples, `.data` + `.psl` unchanged) MAP inference and weight learning at real size.

    python bench/psl_er.py [DOMAIN] [TIMEOUT_S] [--solvers auto qp admm] [--java] [--no-in-process]
    python bench/psl_er.py [DOMAIN] [TIMEOUT_S] --learn [--solvers auto admm] [--learners MaxLikelihoodMPE ...]

Data: the synthetic files of `tests/methods/esms/test_psl_examples.py::write_synthetic_data` over DOMAIN
constants (default 9: 162 targets, ~491,000 potentials; 6: 72 targets, ~11,000). Two tables:
1. fresh process per solver (`python -m xcore.psl --method M`): CPU seconds (user + system of the child)
   of the whole process and of inference (the command's own line), energy; a solver over TIMEOUT_S
   (default 120) wall is shown as not finished. With `--java`, Java PSL 2.4.1 (pslpython's runtime jar,
   its default ADMM options, `nice -n 10`) on the same files and rules, its values' energy under our
   grounding.
With `--learn`, instead: learn-then-infer per learner and solver in a fresh process (`python -m xcore.psl
--learn LEARNER --infer --method M` on the one `.data` file): process CPU seconds, the learn phase's CPU
seconds (the command's own line), steps, energy of the final inference.
2. in process, on one grounding: ADMM's blocks, iterations, CPU seconds and energy gap against L-BFGS-B
   (`auto`), for our stopping rule and Java PSL's (`stop="psl"`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "methods" / "esms"))


def write_project(root: Path, domain: int) -> tuple[Path, Path]:
    """The project's files with synthetic data over `domain` constants: (.data, .psl)."""
    import test_psl_examples as t

    t.copy_project("entity-resolution/cli/x", root)
    t.write_synthetic_data(root / "cli" / "entity-resolution.data", seed=3, domain=tuple(str(i) for i in range(domain)))
    return root / "cli" / "entity-resolution.data", root / "cli" / "entity-resolution.psl"


def grounded(data: Path, model: Path):
    """xcore's grounding of the project (PSLModel with its program and atom store)."""
    from xcore.data.io.psl_project import UNLIMITED, read_project
    from xcore.psl.model import PSLModel

    project = read_project(data=str(data), model=str(model), limits=UNLIMITED)
    m = PSLModel(project.parsed_rules("infer"), limit=None)
    m.ground(project.dataset("infer", UNLIMITED))
    return m


def state_energy(m, folder: Path) -> float:
    """Energy under our grounding of the values written in `folder` (one <PREDICATE>.txt per open predicate)."""
    values = {}
    for f in folder.glob("*.txt"):
        for line in f.read_text().splitlines():
            *args, v = line.split("\t")
            values[(f.stem.upper(), tuple(a.strip("'") for a in args))] = float(v)
    texts = m.store_.atom_text(m.store_.target_ids)
    keys = [(t[: t.index("(")].upper(), tuple(a.strip().strip("'") for a in t[t.index("(") + 1: -1].split(",")))
            for t in texts]
    return m.program_.energy(np.array([values[k] for k in keys]))


def fresh_process_rows(data: Path, model: Path, solvers: list[str], timeout: float, out: Path) -> list[str]:
    from psl_citeseer_size import timed

    rows = []
    for method in solvers:
        cmd = [sys.executable, "-m", "xcore.psl", "--data", str(data), "--model", str(model), "-o", str(out / method),
               "--method", method]
        code, log, wall, cpu = timed(cmd, data.parent, timeout)
        if code == -9:
            rows.append(f"| ours {method} | > {timeout:.0f} wall, not finished ({cpu:.1f} CPU-s) | | | | | {wall:.1f} |")
            continue
        m = re.search(r"([\d,]+) target atoms, ([\d,]+) potentials, energy ([\d.e+-]+) \((\S+)\)", log)
        inf = re.search(r"in-process CPU: .*infer ([\d.]+) s", log)
        rows.append(f"| ours {method} ({m.group(4) if m else '?'}) | {cpu:.2f} | {inf.group(1) if inf else '?'} | "
                    f"{m.group(3) if m else log[-200:]} | {m.group(1) if m else ''} | {m.group(2) if m else ''} | {wall:.1f} |")
    return rows


def learn_rows(data: Path, model: Path, solvers: list[str], learners: list[str], timeout: float,
               out: Path) -> list[str]:
    """Learn-then-infer in a fresh process per learner and solver: CPU seconds of the process and of learning."""
    from psl_citeseer_size import timed

    rows = []
    for learner in learners:
        for method in solvers:
            cmd = [sys.executable, "-m", "xcore.psl", "--data", str(data), "--model", str(model), "--learn", learner,
                   "--infer", "--method", method, "-o", str(out / f"{learner}-{method}"), "--no-check-unique"]
            code, log, wall, cpu = timed(cmd, data.parent, timeout)
            if code != 0:
                why = "not finished" if code == -9 else f"exit {code}"
                rows.append(f"| {learner} | {method} | > {timeout:.0f} wall, {why} ({cpu:.1f} CPU-s) | | | | {wall:.1f} |")
                continue
            learn = re.search(r"in-process CPU: .*learn ([\d.]+) s", log)
            steps = re.search(r"learned \S+ weights \((\d+) steps", log)
            m = re.search(r"([\d,]+) target atoms, ([\d,]+) potentials, energy ([\d.e+-]+)", log)
            rows.append(f"| {learner} | {method} | {cpu:.2f} | {learn.group(1) if learn else '?'} | "
                        f"{steps.group(1) if steps else '?'} | {m.group(3) if m else log[-200:]} | {wall:.1f} |")
    return rows


def java_row(data: Path, model: Path, timeout: float, out: Path, m) -> str:
    """Java PSL's ADMM with its default options on the same files and rules (fresh process, nice 10)."""
    from psl_citeseer_size import timed
    from psl_examples_table import legacy_as_json

    from xcore.psl.java_engine import java_psl_jar

    jar = java_psl_jar()
    if jar is None:
        return "| Java PSL 2.4.1 | not run: pslpython's jar or java is missing | | | | | |"
    cli = data.parent
    legacy_as_json(data, model, cli / "legacy.json")
    doc = json.loads((cli / "legacy.json").read_text())
    doc["options"] = {"runtime.inference.output.results.dir": str(out / "java"), "runtime.log.level": "INFO",
                      "runtime.db.intids": False}
    (cli / "java.json").write_text(json.dumps(doc))
    (out / "java").mkdir(parents=True, exist_ok=True)
    code, log, wall, cpu = timed(["nice", "-n", "10", "java", "-Xmx2g", "-jar", str(jar), "java.json"], cli, timeout)
    if code != 0:
        why = "not finished" if code == -9 else f"exit {code}"
        return f"| Java PSL 2.4.1 ADMM (defaults) | > {timeout:.0f} wall, {why} ({cpu:.1f} CPU-s) | | | | | {wall:.1f} |"
    final = re.findall(r"Final Objective: ([-0-9.eE]+).*?Total Number of Iterations: (\d+)", log)
    said = f"; its objective {float(final[-1][0]):.6g} after {int(final[-1][1]):,} iterations" if final else ""
    energy = state_energy(m, out / "java")
    return (f"| Java PSL 2.4.1 ADMM (defaults) | {cpu:.2f} | | {energy:.6g} (ours on its values{said}) | | | "
            f"{wall:.1f} |")


def in_process_rows(m) -> list[str]:
    from xcore.psl.admm import blocks_of, map_admm
    from xcore.psl.inference import map_inference

    prog = m.program_
    t = time.process_time()
    ref = map_inference(prog, "auto")
    rows = [f"| auto ({ref.method}) | | {ref.iterations:,} | {time.process_time() - t:.2f} | {ref.energy:.10g} | 0 |"]
    t = time.process_time()
    bl = blocks_of(prog)[0]
    build = time.process_time() - t
    for stop in ("exact", "psl"):
        t = time.process_time()
        res = map_admm(prog, tol=1e-9, max_iter=20_000, stop=stop)
        cpu = time.process_time() - t
        rows.append(f"| ADMM, stop={stop} | {prog.n_potentials:,} potentials -> {bl.n_blocks:,} blocks, "
                    f"{bl.n_members:,} members, {len(bl.a):,} copies (built in {build:.2f} CPU-s) | "
                    f"{res.iterations:,} | {cpu:.2f} | {res.energy:.10g} | {(res.energy - ref.energy) / ref.energy:.1e} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("domain", nargs="?", type=int, default=9)
    ap.add_argument("timeout", nargs="?", type=float, default=120.0)
    ap.add_argument("--solvers", nargs="*", default=["auto", "qp", "admm"])
    ap.add_argument("--java", action="store_true", help="run Java PSL too (pslpython's jar and java on PATH)")
    ap.add_argument("--no-in-process", action="store_true")
    ap.add_argument("--learn", action="store_true", help="time learn-then-infer instead of inference")
    ap.add_argument("--learners", nargs="*", default=["MaxLikelihoodMPE", "StructuredPerceptron"])
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="psl_er_"))
    try:
        data, model = write_project(root, args.domain)
        print(f"load average before: {os.getloadavg()}")
        if args.learn:
            solvers = [s for s in args.solvers if s != "qp"] if args.solvers == ["auto", "qp", "admm"] else args.solvers
            print("| learner | solver | process CPU s | learn CPU s | steps | energy after | wall s |")
            print("|---|---|---:|---:|---:|---:|---:|")
            for row in learn_rows(data, model, solvers, args.learners, args.timeout, root / "out"):
                print(row, flush=True)
            print(f"load average after: {os.getloadavg()}")
            return
        print("| solver | process CPU s | inference CPU s | energy | targets | potentials | wall s |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for row in fresh_process_rows(data, model, args.solvers, args.timeout, root / "out"):
            print(row, flush=True)
        m = grounded(data, model) if (args.java or not args.no_in_process) else None
        if args.java:
            print(java_row(data, model, args.timeout, root / "out", m), flush=True)
        print(f"load average after: {os.getloadavg()}")
        if not args.no_in_process:
            print("\n| in process | blocks | iterations | CPU s | energy | gap to auto |")
            print("|---|---|---:|---:|---:|---:|")
            for row in in_process_rows(m):
                print(row, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
