"""Verification by intervention on every method's own sample: `xcore run` then `xcore verify`, each a
fresh process as a user runs them; prints one table (items checked, agreement, seconds per explainer).

    python bench/verify.py [--k 3] [--methods esms mln plkb drm nlil] [--targets N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLES = {"esms": "lastfm_demo", "mln": "reviews_demo", "plkb": "titanic_like", "drm": "trains_michalski10",
           "nlil": "trains_michalski10"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=list(SAMPLES))
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--targets", type=int, default=0, help="verify only the first N explained targets (0: all)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in args.methods:
            out = Path(tmp) / m
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "xcore", "run", m, f"sample:{SAMPLES[m]}", "--out", str(out),
                            "--quiet", "--cards", "0"], check=True, capture_output=True, text=True)
            t_run = time.perf_counter() - t0
            cmd = [sys.executable, "-m", "xcore", "verify", str(out), "-k", str(args.k), "--quiet"]
            if args.targets:
                bundle = json.loads((out / "run.json").read_text())
                first = next(iter(bundle["explanations"].values()))["explanations"][: args.targets]
                cmd += ["--targets", *[e["target"] for e in first]]
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True)
            t_verify = time.perf_counter() - t0
            print(f"## {m} on {SAMPLES[m]}: run {t_run:.1f} s, verify {t_verify:.1f} s (refit included), "
                  f"exit {done.returncode}")
            print(done.stdout.strip() or done.stderr.strip())
            rows.append((m, t_run, t_verify, done.returncode))
    print("\nmethod  run_s  verify_s  exit")
    for m, a, b, c in rows:
        print(f"{m:6} {a:6.1f} {b:9.1f} {c:5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
