"""Aleph's own example problems (friguzzi/aleph ``prolog/examples``): load each ``.b/.f/.n`` problem
through `xcore.data.load` (rule-defined background run by SWI-Prolog) and run DRM where the target
is unary; one fresh process per problem.

    XCORE_SHARED_DATA=/work/shared/data python bench/aleph_examples.py [--no-drm]

The reference column quotes Aleph's own ``typescript`` for that folder where it states a training
accuracy; DRM's figure is its cross-validated accuracy (DRM's default settings).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, os, sys, time
out = {}
t0 = time.perf_counter()
stem = sys.argv[1]
try:
    from xcore.data import load
    files = [(os.path.basename(f), open(f, "rb").read()) for f in (stem + ".b", stem + ".f", stem + ".n")
             if os.path.exists(f)]
    t = time.perf_counter()
    ds = load(files)
    out["load_s"] = time.perf_counter() - t
    out["loaded"] = True
    out["predicates"] = len(ds.predicates)
    out["targets"] = [f"{p}/{ds.schema[p].arity}" for p in ds.target_predicates]
    out["swipl"] = "evaluated by SWI-Prolog" in ds.description
    from xcore.methods import REGISTRY, run_method
    spec = REGISTRY["drm"]
    why = spec.applicable(ds)
    if why is not None:
        out["drm"] = "n/a: " + why.split(":")[0][:80]
    elif sys.argv[2] == "1":
        t = time.perf_counter()
        run = run_method("drm", ds, spec.default_settings(ds), cache=None)
        out["drm_s"] = time.perf_counter() - t
        m = run.metrics
        out["drm"] = ", ".join(f"{k} {m[k]:.3g}" for k in ("accuracy", "features") if k in m)
except Exception as e:
    out["error"] = f"{type(e).__name__}: {str(e)[:160]}"
print(json.dumps(out))
"""


def reference(folder: Path) -> str:
    """Aleph's training accuracy from the folder's typescript, when it states one."""
    ts = folder / "typescript"
    if not ts.is_file():
        return "no typescript"
    m = re.search(r"Accuracy = ([0-9.]+)", ts.read_text(errors="replace"))
    return f"Aleph training accuracy {m.group(1)}" if m else "typescript states no accuracy"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-drm", action="store_true")
    ap.add_argument("--only", nargs="*", default=None, help="problems as folder/stem, e.g. numbers/guess")
    args = ap.parse_args()
    root = Path(os.environ.get("XCORE_SHARED_DATA", "/work/shared/data")) / "aleph_examples"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print("| problem | loaded | load s | predicates | targets | SWI-Prolog used | DRM | DRM s | reference |")
    print("|---|---|---:|---:|---|---|---|---:|---|")
    for b in sorted(root.glob("*/*.b")):
        if args.only is not None and f"{b.parent.name}/{b.stem}" not in args.only:
            continue
        stem = str(b)[:-2]
        proc = subprocess.run([sys.executable, "-c", CHILD, stem, "0" if args.no_drm else "1"], capture_output=True,
                              text=True, env=env, timeout=3600)
        try:
            r = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            r = {"error": (proc.stderr or "no output").strip().splitlines()[-1][:160]}
        name = f"{b.parent.name}/{b.stem}"
        drm = r.get("drm", r.get("error", ""))
        print(f"| {name} | {'yes' if r.get('loaded') else 'no'} | {r.get('load_s', 0):.2f} | {r.get('predicates', '')} | "
              f"{', '.join(r.get('targets', [])) or '-'} | {'yes' if r.get('swipl') else 'no'} | {drm} | "
              f"{r.get('drm_s', 0):.1f} | {reference(b.parent)} |", flush=True)


if __name__ == "__main__":
    main()
