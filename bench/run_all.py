"""Run every benchmark in this folder, one after another (`make bench`); each prints its own table."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ["grounding.py", "psl_map.py", "psl_learn.py", "esms_search.py", "esms_accuracy.py", "psl_esms_parallel.py",
           "mln_gibbs.py", "plkb_lp.py", "plkb_accuracy.py", "iexplain_precision.py"]


def main() -> int:
    failed = []
    for name in SCRIPTS:
        path = HERE / name
        if not path.exists():
            continue
        print(f"\n===== {name} =====", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, str(path)], cwd=HERE.parent)
        print(f"----- {name}: exit {rc}, {time.perf_counter() - t0:.1f} s", flush=True)
        if rc:
            failed.append(name)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
