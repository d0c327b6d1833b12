"""Entity-resolution (linqs/psl-examples, `.data` + `.psl` unchanged) MAP inference at real size, fresh
process per solver: `python bench/psl_er.py [DOMAIN] [TIMEOUT_S]`. Data: the synthetic files of
`tests/methods/esms/test_psl_examples.py::write_synthetic_data` over DOMAIN constants (default 9:
162 targets, ~491,000 potentials). Prints one row per solver: CPU seconds of the whole process and of
inference, energy; a solver over TIMEOUT_S (default 120) is shown as not finished."""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "methods" / "esms"))


def main() -> None:
    import test_psl_examples as t

    k = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    timeout = float(sys.argv[2]) if len(sys.argv) > 2 else 120.0
    root = Path(tempfile.mkdtemp(prefix="psl_er_"))
    try:
        t.copy_project("entity-resolution/cli/x", root)
        t.write_synthetic_data(root / "cli" / "entity-resolution.data", seed=3, domain=tuple(str(i) for i in range(k)))
        print("| solver | process CPU s | inference CPU s | energy | targets | potentials |")
        print("|---|---:|---:|---:|---:|---:|")
        for method in ("auto", "qp", "admm"):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            try:
                r = subprocess.run([sys.executable, "-m", "xcore.psl", "--data", str(root / "cli" / "entity-resolution.data"),
                                    "--model", str(root / "cli" / "entity-resolution.psl"), "-o", str(root / method),
                                    "--method", method], capture_output=True, text=True, timeout=timeout,
                                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
            except subprocess.TimeoutExpired:
                print(f"| {method} | > {timeout:.0f} (wall, not finished) | | | | |")
                continue
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            m = re.search(r"([\d,]+) target atoms, ([\d,]+) potentials, energy ([\d.e+-]+) \((\S+)\)", r.stderr)
            inf = re.search(r"in-process CPU: .*infer ([\d.]+) s", r.stderr)
            print(f"| {method} ({m.group(4) if m else '?'}) | {cpu:.2f} | {inf.group(1) if inf else '?'} | "
                  f"{m.group(3) if m else r.stderr[-200:]} | {m.group(1) if m else ''} | {m.group(2) if m else ''} |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
