"""Every linqs/psl-examples project, both layouts, through ``python -m xcore.psl`` beside Java PSL.

One command: ``python bench/psl_examples_table.py [--domain 5] [--no-java] [PROJECT ...]``.

The projects are the unchanged ``cli/`` folders in ``$XCORE_SHARED_DATA/psl_examples`` (``json/``:
the JSON/YAML runtime configs; ``legacy/``: the older ``.data`` + ``.psl`` pairs). Their data is
downloaded by scripts in the real repository (not reachable here), so each project gets synthetic
files of the same names and shapes over ``--domain`` constants, written by the project tests'
generator (`tests/methods/esms/test_psl_examples.py`, seeded by the project's name).

Per row, fresh processes on both sides:

* **JSON layout**, run as its users run it: ours ``python -m xcore.psl --config X.json`` (PSL 2.4's
  runtime decides the steps: learn first when the config has learn data, with its
  ``runtime.learn.method``); Java ``java -jar psl-runtime.jar X.json`` (pslpython 2.4.1) on the same
  config with its ADMM tolerances tightened (1e-8, breaks off) so that it reaches the optimum.
* **legacy layout**: the engine for ``.data`` + ``.psl`` is PSL 2.3's ``psl-cli``, which is not
  installed (no network; pslpython 2.4 ships only the runtime, which reads JSON/YAML only, and has no
  MaxLikelihoodMPE). Ours runs the project's ``run.sh`` pipeline (``--learn`` on ``X-learn.data``
  with ``MaxLikelihoodMPE``, then infer ``X-learned.psl`` on ``X-eval.data``) to show it runs;
  the values compared with Java are inference on ``X-eval.data`` with the written weights
  (``--no-learn``) against the 2.4 runtime on the same ``.data`` + ``.psl`` translated one to one
  into a JSON config (same files, same rules in canonical text: 2.3's ``(A1 - A2)`` written
  ``(A1 != A2)``; no learn split).

Columns: ours runs (exit code 0), the steps our command printed, Java runs, the largest
|ours - Java| per target predicate, the energy of each side's values under one grounding (ours
minus Java's, the weights our run used) and, when values differ by more than 1e-3 while energies
agree, ``flat``: the optimum is not unique, both are optimal.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
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

from xcore.data.io.lenient_json import loads as lenient_loads  # noqa: E402
from xcore.data.io.psl_project import read_project  # noqa: E402
from xcore.logic.parser import parse_rules  # noqa: E402
from xcore.psl.java_engine import java_psl_jar  # noqa: E402

TOLERANCE = 1e-3


def _examples_module():
    """The project tests' synthetic-data generator and brute-force grounding (one source of truth)."""
    path = ROOT / "tests" / "methods" / "esms" / "test_psl_examples.py"
    spec = importlib.util.spec_from_file_location("psl_examples_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EX = _examples_module()
JAVA_OPTIONS = {"runtime.db.intids": False, "runtime.log.level": "INFO",
                "admmreasoner.epsilonabs": 1e-8, "admmreasoner.epsilonrel": 1e-8,
                "admmreasoner.maxiterations": 100000, "reasoner.objectivebreak": False,
                "reasoner.variablemovementbreak": False}


def run(cmd: list[str], cwd: Path, timeout: float) -> tuple[int, str, float]:
    """(exit code, stdout+stderr, wall seconds) of a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return -9, out + f"\n(timed out after {timeout:.0f} s)", time.monotonic() - start
    return proc.returncode, out, time.monotonic() - start


def values_of(folder: Path, preds: set[str]) -> dict[str, dict[tuple, float]]:
    """The values a run wrote: {predicate: {args: value}} from <PRED>.txt files."""
    out: dict[str, dict[tuple, float]] = {}
    for pred in preds:
        path = folder / f"{pred.upper()}.txt"
        if not path.exists():
            continue
        rows = {}
        for line in path.read_text().splitlines():
            *args, value = line.split("\t")
            rows[tuple(a.strip("'") for a in args)] = float(value)
        out[pred] = rows
    return out


def legacy_as_json(data: Path, model: Path, target: Path) -> None:
    """The .data + .psl pair as one runtime config (same files and rules, no learn split)."""
    project = read_project(data=str(data), model=str(model))
    preds = {}
    for spec in project.predicates.values():
        entry: dict = {}
        for part, key in (("obs", "observations"), ("targets", "targets"), ("truth", "truth")):
            refs = spec.refs(part, "infer")
            if refs:
                entry[key] = [str((Path(r.file).parent / r.path).resolve()) for r in refs if r.path]
        if spec.declared_open is False and not entry.get("targets"):
            entry.pop("targets", None)
        preds[f"{spec.name}/{spec.arity}"] = entry
    # the rules as xcore read them, in canonical PSL text (2.3's `(A1 - A2)` written `(A1 != A2)`, constants quoted)
    rules = [r.text("psl") for r in project.parsed_rules("infer")]
    target.write_text(json.dumps({"rules": rules, "predicates": preds}))


def java_config(config: Path, target: Path, out_dir: Path, keep_learn: bool) -> None:
    """A copy of the config with tight ADMM tolerances and an output folder (learn data kept or not)."""
    doc = lenient_loads(config.read_text(), str(config))
    if not keep_learn:
        for spec in doc["predicates"].values():
            for part in ("observations", "targets", "truth"):
                if isinstance(spec, dict) and isinstance(spec.get(part), dict):
                    spec[part] = {k: v for k, v in spec[part].items() if k != "learn"}
    doc["options"] = {**doc.get("options", {}), **JAVA_OPTIONS,
                      "runtime.inference.output.results.dir": str(out_dir),
                      "runtime.learn.output.model.path": str(out_dir / "java-learned.psl")}
    target.write_text(json.dumps(doc))


def compare(ours: dict, java: dict) -> tuple[float, dict[str, float]]:
    per = {}
    for pred, rows in ours.items():
        other = java.get(pred, {})
        common = set(rows) & set(other)
        if len(common) != len(rows) or len(common) != len(other):
            per[pred] = float("nan")
            continue
        per[pred] = max((abs(rows[k] - other[k]) for k in common), default=0.0)
    worst = max(per.values(), default=0.0)
    return worst, per


def energies(rules, atoms: dict, ours: dict, java: dict) -> tuple[float, float, float] | None:
    """Energy of both states (and Java's worst hard violation) under one brute-force grounding."""
    try:
        soft, hard, index = EX.ground_by_enumeration(rules, atoms)
    except Exception:  # noqa: BLE001 - a project the brute force does not cover: no energy column
        return None

    def vector(vals):
        y = np.full(len(index), np.nan)
        for (p, t), i in index.items():
            y[i] = vals.get(p, {}).get(t, np.nan)
        return y

    a, b = vector(ours), vector(java)
    if np.isnan(a).any() or np.isnan(b).any():
        return None
    return EX.energy(soft, a), EX.energy(soft, b), EX.violation(hard, b)


def project_row(name: str, layout: str, shared: Path, work: Path, domain: int, java: bool, timeout: float) -> dict:
    src = shared / layout / name / "cli"
    root = work / layout / name
    shutil.copytree(src, root / "cli")
    cli = root / "cli"
    dom = tuple(str(i) for i in range(domain))
    row = {"project": name, "layout": layout}
    py = [sys.executable, "-m", "xcore.psl"]
    if layout == "json":
        config = next(p for p in sorted(cli.iterdir()) if p.suffix in (".json", ".yaml", ".yml"))
        project = read_project(config=str(config))
        atoms = EX.write_synthetic_data(config, seed=len(name), reflexive_targets=False, domain=dom,
                                        targets_only=EX.hard_summation_predicates(config, None, root))
        ours_cmd = py + ["--config", str(config), "--output", str(root / "ours")]
        learn = project.has_learn_split
        rules_of = lambda: (parse_rules(next((root / "ours").glob("*-learned.psl")).read_text(), dialect="psl")  # noqa: E731
                            if learn and list((root / "ours").glob("*-learned.psl")) else project.parsed_rules())
        java_cfg = cli / "java.json"
        if java:
            java_config(config, java_cfg, root / "java", keep_learn=True)
    else:
        model = next(cli.glob("*.psl"))
        evals = sorted(cli.glob("*-eval.data")) or sorted(cli.glob("*.data"))
        data = evals[0]
        learn_data = next(iter(sorted(cli.glob("*-learn.data"))), None)
        atoms = EX.write_synthetic_data(data, seed=len(name), reflexive_targets=False, domain=dom,
                                        targets_only=EX.hard_summation_predicates(data, "x/" + model.name, cli))
        if learn_data is not None:
            EX.write_synthetic_data(learn_data, seed=len(name) + 1, reflexive_targets=False, domain=dom,
                                    targets_only=EX.hard_summation_predicates(learn_data, "x/" + model.name, cli))
            code, out, secs = run(py + ["--model", str(model), "--data", str(learn_data), "--learn", "-q"], cli, timeout)
            learned = model.with_name(model.stem + "-learned.psl")
            row["pipeline"] = "learn+infer" if code == 0 and learned.exists() else f"learn failed ({code})"
            if code == 0 and learned.exists():
                code2, out2, _ = run(py + ["--model", str(learned), "--data", str(data), "--output",
                                           str(root / "pipeline"), "-q"], cli, timeout)
                row["pipeline"] = "learn+infer" if code2 == 0 else f"infer failed ({code2})"
        else:
            row["pipeline"] = "infer"
        project = read_project(data=str(data), model=str(model))
        ours_cmd = py + ["--data", str(data), "--model", str(model), "--no-learn", "--output", str(root / "ours")]
        rules_of = project.parsed_rules
        java_cfg = cli / "java.json"
        if java:
            legacy_as_json(data, model, cli / "legacy.json")
            java_config(cli / "legacy.json", java_cfg, root / "java", keep_learn=False)
    code, out, secs = run(ours_cmd, cli, timeout)
    row["ours"] = "yes" if code == 0 else f"exit {code}"
    row["ours_log"] = out
    steps = re.search(r"^steps: (.*)$", out, re.M)
    learned = re.match(r"learn (\w+)", steps.group(1)) if steps else None
    row["steps"] = ("-" if steps is None else f"learn {learned.group(1)}, infer" if learned else "infer")
    row["ours_s"] = secs
    targets = {p for p, a in atoms.items() if a["targets"]}
    row["targets"] = sum(len(a["targets"]) for a in atoms.values())
    if not java:
        return row
    (root / "java").mkdir(exist_ok=True)
    jcode, jout, jsecs = run(["nice", "-n", "10", "java", "-Xmx1g", "-jar", str(java_psl_jar()), java_cfg.name],
                             cli, timeout)
    row["java"] = "yes" if jcode == 0 else f"exit {jcode}"
    row["java_log"] = jout[-3000:]
    reasoner = re.findall(r"Final Objective: ([-0-9.eE]+).*?Total Number of Iterations: (\d+)", jout)
    if reasoner:  # the last inference's objective and iterations (a cap hit means ADMM stopped early)
        row["java_objective"], row["java_iterations"] = float(reasoner[-1][0]), int(reasoner[-1][1])
    row["java_s"] = jsecs
    if code != 0 or jcode != 0:
        return row
    ours_vals = values_of(root / "ours", targets)
    java_vals = values_of(root / "java", targets)
    row["diff"], row["per"] = compare(ours_vals, java_vals)
    row["energy"] = energies(rules_of(), atoms, ours_vals, java_vals)
    return row


def verdict(row: dict) -> str:
    if "diff" not in row:
        return ""
    if row["diff"] <= TOLERANCE:
        return "equal"
    e = row.get("energy")
    if e is not None and abs(e[0] - e[1]) <= 1e-6 * (1 + abs(e[1])):
        return "flat (same energy)"
    if e is not None and e[0] < e[1] and row.get("java_iterations", 0) > JAVA_OPTIONS["admmreasoner.maxiterations"]:
        return f"ours lower energy: Java's ADMM stopped at its {row['java_iterations'] - 1:,}-iteration cap"
    return "DIFFERS"


def table(rows: list[dict]) -> str:
    lines = ["| project | layout | ours runs | steps (ours) | legacy run.sh pipeline | Java runs | max abs(ours - Java) per target | energy ours - Java | verdict |",
             "|---|---|---|---|---|---|---|---:|---|"]
    for r in rows:
        per = ", ".join(f"{p} {v:.1e}" for p, v in sorted(r.get("per", {}).items())) or "-"
        e = r.get("energy")
        ed = f"{e[0] - e[1]:+.1e}" if e else "-"
        lines.append(f"| {r['project']} | {r['layout']} | {r['ours']} | {r['steps']} | {r.get('pipeline', '-')} | "
                     f"{r.get('java', '-')} | {per} | {ed} | {verdict(r)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("projects", nargs="*")
    ap.add_argument("--domain", type=int, default=5, help="constants in the synthetic data")
    ap.add_argument("--no-java", action="store_true")
    ap.add_argument("--layout", choices=["json", "legacy", "both"], default="both")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()
    shared = Path(os.environ.get("XCORE_SHARED_DATA", "/work/shared/data")) / "psl_examples"
    java = not args.no_java and java_psl_jar() is not None
    names = args.projects or sorted(p.name for p in (shared / "json").iterdir())
    layouts = ["json", "legacy"] if args.layout == "both" else [args.layout]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for layout in layouts:
                if not (shared / layout / name).exists():
                    continue
                row = project_row(name, layout, shared, Path(tmp), args.domain, java, args.timeout)
                rows.append(row)
                print(f"{name:32s} {layout:7s} ours {row['ours']:8s} java {row.get('java', '-'):8s} "
                      f"diff {row.get('diff', float('nan')):.2e} {verdict(row)}", file=sys.stderr, flush=True)
                if args.verbose and (row["ours"] != "yes" or row.get("java", "yes") != "yes" or verdict(row) == "DIFFERS"):
                    print(row["ours_log"][-2000:], row.get("java_log", ""), file=sys.stderr)
    print(table(rows))


if __name__ == "__main__":
    main()
