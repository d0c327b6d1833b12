"""PSL weight learning, files to learned model: `python -m xcore.psl --learn` beside Java PSL, fresh processes.

    python bench/psl_learn.py                          # sizes 2k and 20k targets per split, 3 runs each side
    python bench/psl_learn.py --sizes 2000 --runs 1    # quick
    python bench/psl_learn.py --results bench/RESULTS.md

Data: a planted relational project (seed 0): per split n people, Good(P) and Bad(P) observed in
[0, 1], Link(P1, P2) (3 random links per person), Label(P) = clip(0.7 Good(P) + 0.3 mean Good of
linked people + noise); rules ``Good -> Label``, ``Bad -> Label``, ``Link & Label -> Label`` and
the prior ``~Label``, all squared, weight 1. Learn split and eval split are independent draws.

* StructuredPerceptron (PSL's runtime default): ours ``--config X.json --learn StructuredPerceptron
  -o DIR`` learns on the learn split and infers on the eval split; Java: the runtime jar of
  `pslpython` (``java -jar psl-runtime.jar X.json``) does the same (ADMM at its default tolerances).
* MaxLikelihoodMPE (PSL 2.x's CLI default), learning only: ours ``--learn --model X.psl --data
  X-learn.data``; Java: PSL 2.3's ``psl-cli`` jar (pslpython 2.3.0) when ``XCORE_PSL_CLI_JAR``
  names it.

Sides alternate (A B A B), medians of wall and CPU seconds (the child's, ``os.wait4``); the last
column is the largest difference between the two sides' learned weights.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.grounding import machine  # noqa: E402
from bench.psl_map import run_process  # noqa: E402
from bench.results_file import replace_section  # noqa: E402
from xcore.logic.parser import parse_rules  # noqa: E402
from xcore.psl.java_engine import psl_jar  # noqa: E402

RULES = ["1.0: Good(P) -> Label(P) ^2", "1.0: Bad(P) -> Label(P) ^2",
         "1.0: Link(P1, P2) & Label(P1) -> Label(P2) ^2", "1.0: ~Label(P) ^2"]
HEADING = "PSL weight learning (`python -m xcore.psl --learn`)"


def write_project(folder: Path, n: int, seed: int = 0) -> None:
    """The planted project in both layouts (JSON config; .psl + X-learn.data / X-eval.data)."""
    rng = np.random.default_rng(seed)
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    for split in ("learn", "eval"):
        people = np.array([f"{split[0]}{i}" for i in range(n)])
        good, bad = rng.random(n), rng.random(n)
        src, dst = np.repeat(np.arange(n), 3), rng.integers(0, n, 3 * n)
        pairs = np.unique(np.stack([src, dst], axis=1)[src != dst], axis=0)  # PSL refuses duplicate rows
        src, dst = pairs[:, 0], pairs[:, 1]
        mean_in = np.bincount(dst, good[src], n) / np.maximum(np.bincount(dst, minlength=n), 1)
        label = np.clip(0.7 * good + 0.3 * mean_in + rng.normal(0, 0.05, n), 0, 1)

        def write(name: str, *cols) -> None:
            lines = ["\t".join(str(c) if isinstance(c, str) else f"{c:.4f}" for c in row) for row in zip(*cols)]
            (data / f"{name}_{split}.txt").write_text("\n".join(lines) + "\n")

        write("good", people, good)
        write("bad", people, bad)
        write("link", people[src], people[dst])
        write("label_targets", people)
        write("label_truth", people, label)
        spec = {"predicates": {"Good/1": "closed", "Bad/1": "closed", "Link/2": "closed", "Label/1": "open"},
                "observations": {p: f"data/{p.lower()}_{split}.txt" for p in ("Good", "Bad", "Link")},
                "targets": {"Label": f"data/label_targets_{split}.txt"},
                "truth": {"Label": f"data/label_truth_{split}.txt"}}
        (folder / f"planted-{split}.data").write_text(json.dumps(spec, indent=1))
    (folder / "planted.psl").write_text("\n".join(RULES) + "\n")

    def files(kind: str) -> dict:
        return {"learn": [f"data/{kind}_learn.txt"], "infer": [f"data/{kind}_eval.txt"]}

    config = {"rules": RULES,
              "predicates": {"Good/1": {"observations": files("good")}, "Bad/1": {"observations": files("bad")},
                             "Link/2": {"observations": files("link")},
                             "Label/1": {"targets": files("label_targets"), "truth": files("label_truth")}},
              "options": {"runtime.log.level": "WARN", "runtime.db.intids": False,
                          "runtime.learn.output.model.path": "java-learned.psl",
                          "runtime.inference.output.results.dir": "java_out"}}
    (folder / "planted.json").write_text(json.dumps(config, indent=1))


def weights(path: Path) -> np.ndarray:
    return np.array([r.weight for r in parse_rules(path.read_text(), dialect="psl")], dtype=float)


def bench_size(folder: Path, n: int, runs: int, cli_jar: str | None) -> list[dict]:
    write_project(folder, n)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    ours_cmd = {"StructuredPerceptron": [sys.executable, "-m", "xcore.psl", "--config", "planted.json", "--learn",
                                         "StructuredPerceptron", "-o", "ours_sp", "-q",
                                         "-D", "runtime.learn.output.model.path=ours_sp/planted-learned.psl"],
                "MaxLikelihoodMPE": [sys.executable, "-m", "xcore.psl", "--learn", "--model", "planted.psl",
                                     "--data", "planted-learn.data", "-o", "ours_mle", "-q"]}
    java_cmd = {"StructuredPerceptron": ["java", "-Xmx4g", "-jar", str(psl_jar()), "planted.json"] if psl_jar() else None,
                "MaxLikelihoodMPE": (["java", "-Xmx4g", "-jar", cli_jar, "--learn", "--model", "planted.psl",
                                      "--data", "planted-learn.data"] if cli_jar else None)}
    java_file = {"StructuredPerceptron": folder / "java-learned.psl", "MaxLikelihoodMPE": folder / "planted-learned.psl"}
    ours_file = {"StructuredPerceptron": folder / "ours_sp" / "planted-learned.psl",
                 "MaxLikelihoodMPE": folder / "ours_mle" / "planted-learned.psl"}
    rows = []
    for method in ("StructuredPerceptron", "MaxLikelihoodMPE"):
        ours, java = [], []
        for _ in range(runs):
            ours.append(run_process(ours_cmd[method], folder, env))
            if java_cmd[method]:
                java.append(run_process(java_cmd[method], folder))
        row = {"method": method, "targets": n, "ours_wall": statistics.median(r.wall for r in ours),
               "ours_cpu": statistics.median(r.cpu for r in ours), "java_wall": np.nan, "java_cpu": np.nan,
               "diff": np.nan}
        if java:
            row.update(java_wall=statistics.median(r.wall for r in java), java_cpu=statistics.median(r.cpu for r in java),
                       diff=float(np.nanmax(np.abs(weights(ours_file[method]) - weights(java_file[method])))))
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    out = ["| method | targets per split | ours wall s | ours CPU s | Java wall s | Java CPU s | wall ratio | "
           "max weight difference |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = r["java_wall"] / r["ours_wall"] if np.isfinite(r["java_wall"]) else np.nan
        out.append(f"| {r['method']} | {r['targets']:,} | {r['ours_wall']:.2f} | {r['ours_cpu']:.2f} | "
                   f"{r['java_wall']:.2f} | {r['java_cpu']:.2f} | {ratio:.1f}x | {r['diff']:.1e} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--folder", type=Path, default=Path("/tmp/xcore_bench_psl_learn"))
    ap.add_argument("--results", type=Path, default=None)
    args = ap.parse_args()
    cli_jar = os.environ.get("XCORE_PSL_CLI_JAR")
    rows = []
    for n in args.sizes:
        rows += bench_size(args.folder / str(n), n, args.runs, cli_jar if cli_jar and Path(cli_jar).is_file() else None)
    text = table(rows)
    print(text)
    if args.results:
        section = (f"## {HEADING}\n\n`python bench/psl_learn.py` ({machine()}; {args.runs} runs per side, "
                   f"alternated, medians). Fresh process against fresh process, files to the learned model "
                   f"(StructuredPerceptron rows also infer on the eval split). Java: pslpython's runtime jar "
                   f"(StructuredPerceptron) and PSL 2.3's psl-cli (MaxLikelihoodMPE).\n\n{text}\n")
        replace_section(args.results, HEADING, section)


if __name__ == "__main__":
    main()
