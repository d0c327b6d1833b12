"""PSL MAP inference benchmark: our grounding + L-BFGS-B beside the Java PSL engine (ADMM).

    python bench/psl_map.py                      # bench preset (~750k ground rules), print the tables
    python bench/psl_map.py --preset small       # quick run
    python bench/psl_map.py --results bench/RESULTS.md   # also update the "PSL MAP inference" section

Model: the five collaborative-filtering rules of `bench/grounding.py` plus the prior
``1.0: ~rating(U, I) ^2``. The prior is needed: every one of the five rules has `rating` in its
head, so y = 1 satisfies them all and the MAP problem without it is degenerate (energy 0 at the
all-ones corner, no unique minimiser). With it the energy is strictly convex: one MAP state.

Ours, timed end to end from the dataset (best of 3 after a warm-up): AtomStore, SQL grounding,
Lukasiewicz linear forms, the hinge program and MAP by L-BFGS-B (`map_inference`, tol 1e-10).
Java PSL: the engine bundled in the `pslpython` package (optional `bench` extra), run as
``java -jar psl-runtime.jar config.json`` on the same data files and rules, ADMM with tight
tolerances; its inferred values are read back and OUR energy function is evaluated at them
(same objective). Independent check: HiGHS QP (`map_inference(method="qp")`) and consensus ADMM
on the `small` preset must reach the L-BFGS-B energy.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.results_file import replace_section  # noqa: E402

from bench.grounding import RULES as FIVE_RULES  # noqa: E402
from bench.grounding import machine  # noqa: E402
from xcore.data.generators import lastfm_preset  # noqa: E402
from xcore.logic.atoms import AtomStore  # noqa: E402
from xcore.logic.grounding import ground  # noqa: E402
from xcore.psl import PSLModel, map_inference  # noqa: E402
from xcore.psl.model import assemble_program, rule_form  # noqa: E402

PRIOR = "1.0: ~rating(U, I) ^2\n"
RULES = FIVE_RULES + PRIOR
PSL_TIMEOUT = 240.0
"""Seconds allowed to the Java engine before it is stopped (keeps the bench near 5 minutes)."""

PSL_OPTIONS = {
    "runtime.log.level": "INFO",
    "runtime.db.intids": False,
    "admmreasoner.epsilonabs": 1e-7,
    "admmreasoner.epsilonrel": 1e-7,
    "admmreasoner.maxiterations": 100000,
    "reasoner.objectivebreak": False,
    "reasoner.variablemovementbreak": False,
}
"""ADMM to tight tolerance (defaults are epsilonabs 1e-5, epsilonrel 1e-3). PSL stores truth values
as float32, so 1e-9 is out of reach: ADMM then runs to the iteration cap (31 s on `small`)."""


# ---------------------------------------------------------------------- ours
def ours_end_to_end(ds, rules_text: str):
    """Dataset -> MAP state with our stack; returns the fitted PSLModel."""
    model = PSLModel(rules_text, inference="lbfgs")
    model.ground(ds)
    model.infer(warm_start=False)
    return model


def best_of(fn, repeats: int = 3):
    """Best wall time of `repeats` runs after a warm-up, and the last result."""
    fn()
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def stage_times(ds, rules) -> dict[str, float]:
    """Wall seconds per stage of our pipeline (one run after the end-to-end timing warmed caches)."""
    out = {}
    t = time.perf_counter()
    store = AtomStore.from_dataset(ds)
    out["store"] = time.perf_counter() - t
    t = time.perf_counter()
    gp = ground(rules, store)
    out["ground"] = time.perf_counter() - t
    t = time.perf_counter()
    forms = [rule_form(g, store) for g in gp]
    prog = assemble_program(forms, rules, store.n_targets)
    out["linear"] = time.perf_counter() - t
    res = map_inference(prog, "lbfgs")
    out["map"] = res.seconds
    out["map_iterations"] = res.iterations
    return out


# ---------------------------------------------------------------------- Java PSL
def psl_jar() -> Path | None:
    """The PSL runtime jar bundled in `pslpython`, or None when the package is absent."""
    try:
        import pslpython
    except ImportError:
        return None
    jar = Path(pslpython.__file__).resolve().parent / "psl-runtime.jar"
    return jar if jar.exists() else None


def java_version() -> str | None:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "([^"]+)"', out.stderr + out.stdout)
    return m.group(1) if m else None


def write_psl_folder(ds, rules_text: str, folder: Path) -> Path:
    """Tab-separated data files (args, then truth value) and a runtime config; returns its path."""
    predicates = {}
    for name, parts in ds.tables.items():
        pred = ds.predicate(name)
        cols = list(pred.columns)
        entry = {}
        for part, key, with_value in (("obs", "observations", True), ("targets", "targets", False),
                                      ("truth", "truth", True)):
            t = parts.get(part)
            if t is None or not len(t):
                continue
            fname = f"{name}_{part}.txt"
            t[cols + (["value"] if with_value else [])].to_csv(folder / fname, sep="\t", header=False,
                                                               index=False, float_format="%.6g")
            entry[key] = [fname]
        if entry:
            predicates[f"{name}/{pred.arity}"] = entry
    rules = [line.strip() for line in rules_text.splitlines() if line.strip() and not line.startswith("#")]
    config = {"rules": rules, "predicates": predicates,
              "options": {**PSL_OPTIONS, "runtime.inference.output.results.dir": str(folder / "inferred")}}
    path = folder / "config.json"
    path.write_text(json.dumps(config, indent=1), encoding="utf-8")
    return path


def run_psl(jar: Path, config: Path, timeout: float = PSL_TIMEOUT) -> dict:
    """Run the Java engine; wall seconds, log-derived stage seconds and the inferred ratings."""
    t = time.perf_counter()
    proc = subprocess.run(["java", "-Xmx6g", "-jar", str(jar), str(config)], capture_output=True, text=True,
                          timeout=timeout, cwd=config.parent)
    wall = time.perf_counter() - t
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise RuntimeError(f"PSL exited with {proc.returncode}:\n{log[-3000:]}")
    out = config.parent / "inferred"
    files = list(out.glob("*.txt"))
    frames = [pd.read_csv(f, sep="\t", header=None, dtype={0: str, 1: str}) for f in files
              if f.stem.lower() == "rating"]
    if not frames:
        raise RuntimeError(f"PSL wrote no RATING results in {out}:\n{log[-3000:]}")
    inferred = frames[0].rename(columns={0: "a0", 1: "a1", 2: "value"})
    return {"wall": wall, "log": log, "inferred": inferred, **psl_log_times(log)}


def psl_log_times(log: str) -> dict:
    """Grounding / optimisation seconds and ADMM iterations from PSL's log (ms timestamps)."""
    stamps = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^(\d+)\s+\[[^\]]*\]\s+\w+\s+\S+\s+-\s+(.*)$",
                                                                   log, re.M)]

    def first(pattern: str) -> int | None:
        for ms, msg in stamps:
            if re.search(pattern, msg, re.I):
                return ms
        return None

    out: dict = {}
    g0, g1 = first(r"^Grounding out model|^Grounding "), first(r"Grounding complete|ground rules? (created|generated)")
    o0, o1 = first(r"Beginning inference"), first(r"Inference complete|Optimization completed|Final Objective")
    if g0 is not None and g1 is not None:
        out["psl_ground"] = (g1 - g0) / 1000
    if o0 is not None and o1 is not None:
        out["psl_infer"] = (o1 - o0) / 1000
    m = re.findall(r"Final Objective: ([-+\d.eE]+).*?Total Number of Iterations: (\d+)", log)
    if m:
        out["psl_objective"], out["psl_iterations"] = float(m[-1][0]), int(m[-1][1])
    return out


def psl_solution(store: AtomStore, inferred: pd.DataFrame) -> tuple[np.ndarray, int]:
    """PSL's inferred values in our target order (NaN where PSL reported nothing)."""
    y = np.full(store.n_targets, np.nan)
    ids = store.lookup("rating", inferred[["a0", "a1"]].astype(str))
    ok = ids >= 0
    cols = store.target_index[ids[ok]]
    keep = cols >= 0
    y[cols[keep]] = inferred["value"].to_numpy(dtype=np.float64)[ok][keep]
    return y, int(np.isnan(y).sum())


# ---------------------------------------------------------------------- independent check
def independent_check() -> list[str]:
    """On the small preset: L-BFGS-B, HiGHS QP and consensus ADMM must agree on the MAP energy."""
    ds = lastfm_preset("small", seed=0)
    model = PSLModel(RULES, inference="lbfgs").ground(ds)
    prog = model.program_
    rows = ["| solver (small preset) | energy | relative gap to L-BFGS-B | seconds |", "|---|---:|---:|---:|"]
    ref = map_inference(prog, "lbfgs")
    for method in ("lbfgs", "qp", "admm"):
        res = ref if method == "lbfgs" else map_inference(prog, method, tol=1e-10, max_iter=200_000)
        gap = (res.energy - ref.energy) / max(abs(ref.energy), 1e-300)
        rows.append(f"| {res.method} | {res.energy:.10f} | {gap:+.2e} | {res.seconds:.3f} |")
    rows.insert(0, f"Independent check ({prog.n_potentials:,} potentials over {prog.n_atoms:,} targets):\n")
    return rows


# ---------------------------------------------------------------------- run
def run(preset: str, skip_psl: bool = False) -> tuple[str, dict]:
    t = time.perf_counter()
    ds = lastfm_preset(preset, seed=0)
    t_gen = time.perf_counter() - t

    t_ours, model = best_of(lambda: ours_end_to_end(ds, RULES))
    prog, res = model.program_, model.map_
    n_ground = model.grounded_.n_ground_rules
    n_prior = model.grounded_[len(model.rules) - 1].n
    stages = stage_times(ds, model.rules)
    e_ours = res.energy

    lines = [f"Data: {ds.description} (generated in {t_gen:.1f} s, not timed).",
             f"Model: the five rules of `bench/grounding.py` plus the prior `{PRIOR.strip()}` "
             f"(needed: without it y = 1 has energy 0). Ground rules: {n_ground:,} ({n_prior:,} of them the "
             f"prior's); potentials with a "
             f"target: {prog.n_potentials:,} over {prog.n_atoms:,} target atoms.", ""]
    figures: dict = {"n_ground": n_ground, "ours": t_ours, "energy_ours": e_ours, **stages}

    psl_note = ""
    psl: dict | None = None
    jar, jv = psl_jar(), java_version()
    if skip_psl:
        psl_note = "Java PSL skipped (--no-psl)."
    elif jar is None:
        psl_note = ("Java PSL skipped: the `pslpython` package is not installed "
                    "(`pip install -e .[bench]` installs it).")
    elif jv is None:
        psl_note = "Java PSL skipped: no `java` on PATH (PSL needs Java 8+; 17 is used here)."
    else:
        folder = Path(tempfile.mkdtemp(prefix="xcore_psl_"))
        try:
            config = write_psl_folder(ds, RULES, folder)
            psl = run_psl(jar, config)
            y_psl, missing = psl_solution(model.store_, psl["inferred"])
            if missing:
                raise RuntimeError(f"PSL reported no value for {missing} target atoms")
            psl["energy"] = prog.energy(np.clip(y_psl, 0.0, 1.0))
            psl["max_diff"] = float(np.abs(y_psl - res.y).max())
        except subprocess.TimeoutExpired:
            psl_note = f"Java PSL stopped after {PSL_TIMEOUT:.0f} s (time limit of this bench)."
            psl = None
        except Exception as e:  # report, do not hide: the table says why PSL is missing
            psl_note = f"Java PSL failed: {e}"
            psl = None
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    lines += ["| engine | end to end s | grounding s | inference s | iterations | energy (our objective) |",
              "|---|---:|---:|---:|---:|---:|"]
    lines.append(f"| ours: AtomStore + SQL grounding + linear forms + L-BFGS-B (best of 3) | {t_ours:.2f} | "
                 f"{stages['store'] + stages['ground'] + stages['linear']:.2f} | {stages['map']:.2f} | "
                 f"{stages['map_iterations']} | {e_ours:.9f} |")
    if psl is not None:
        g = psl.get("psl_ground")
        i = psl.get("psl_infer")
        lines.append(f"| Java PSL {psl_version(jar)} (ADMM, eps 1e-7; JVM start + data load included) | "
                     f"{psl['wall']:.2f} | {'' if g is None else f'{g:.2f}'} | {'' if i is None else f'{i:.2f}'} | "
                     f"{psl.get('psl_iterations') or ''} | {psl['energy']:.9f} |")
        rel = (psl["energy"] - e_ours) / abs(e_ours)
        ratio = psl["wall"] / t_ours
        figures.update(psl_wall=psl["wall"], psl_energy=psl["energy"], rel=rel, ratio=ratio,
                       psl_ground=g, psl_infer=i)
        lines += ["", f"Energy: PSL's state minus ours, relative: {rel:+.2e} (goal: within 1e-6; negative would "
                  f"mean PSL found a lower energy). Largest difference in a target value: {psl['max_diff']:.2e}. "
                  f"PSL's own reported objective: {psl.get('psl_objective', float('nan')):.6g} (float32).",
                  f"End to end, ours is {ratio:.1f}x faster than the Java engine (goal: at least 15x)."]
    else:
        lines += ["", psl_note]
    lines += [""] + independent_check()
    return "\n".join(lines), figures


def psl_version(jar: Path) -> str:
    try:
        import importlib.metadata as md

        return md.version("pslpython")
    except Exception:
        return ""


def update_results(path: Path, body: str, info: str) -> None:
    """Replace (or append) the "## PSL MAP inference" section of the results file."""
    section = (f"## PSL MAP inference\n\nCommand: `python bench/psl_map.py` ({time.strftime('%Y-%m-%d')}).\n"
               f"Machine: {info}.\n\n{body}\n\n"
               "Notes. Java PSL is the engine bundled in `pslpython` (optional `bench` extra), run as a "
               "fresh `java -jar` process on the same rules and tab-separated data files; its grounding "
               "and inference seconds come from its log timestamps. ADMM tolerances are set tight "
               "(epsilonabs = epsilonrel = 1e-7, objective and movement breaks off) so that its energy "
               "can be compared; the energy of both states is computed with our energy function over "
               "the ground rules that contain a target (ground rules over observations only are constants "
               "in both engines; PSL's own float32 objective agrees). Java PSL is timed once (a fresh JVM, "
               "as a user runs it), ours best of 3 after a warm-up; our grounding column is store + SQL + "
               "linear forms from one further run. Most ground rules (those whose every `rating` atom is "
               "observed) contain no target, so they do not enter the hinge program of either engine. A "
               "first run of this script at load average 2.5 gave 1.40 s for ours and 30.9 s for Java PSL "
               "(22.1x), relative energy difference 1.1e-12. ADMM tolerances of 1e-9 are out of reach "
               "for PSL (float32 values): it then runs to the iteration cap (31 s on the `small` preset "
               "alone). The issue's figures for scale (measured on this machine type, not by "
               "this script): Java PSL 34 s end to end on a 347k-rule model (21 s grounding, 3.4 s ADMM); "
               "a plain pandas + scipy L-BFGS-B script 4.7 s.\n")
    replace_section(path, "PSL MAP inference", section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="bench", choices=["small", "bench", "lastfm"])
    parser.add_argument("--no-psl", action="store_true", help="skip the Java engine")
    parser.add_argument("--results", type=Path, help="update the PSL MAP inference section of this file")
    args = parser.parse_args()
    info = machine() + (f"; Java {java_version()}" if java_version() else "")
    body, _ = run(args.preset, args.no_psl)
    print(f"Machine: {info}\n")
    print(body)
    if args.results:
        update_results(args.results, body, info)
        print(f"\nwrote {args.results}")


if __name__ == "__main__":
    main()
