"""Command-line start-up: wall and CPU seconds of `xcore methods` and `xcore run --help`, fresh processes.

    python bench/startup.py                                  # this checkout, 5 runs per command
    python bench/startup.py --before /tmp/old --repeat 5     # beside an older checkout, alternating
    python bench/startup.py --results bench/RESULTS.md       # also update the "Command-line start-up" section

Every run is a fresh ``python -m xcore ...`` process with PYTHONPATH at the checkout; wall time is
from spawn to exit, CPU the child's user + system seconds (`os.wait4`), which a loaded machine
inflates less than wall time. With ``--before``, the two checkouts alternate (A B A B) so that both
see the same load; the load average is read before and after. The table gives the median and the
range of each figure.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.results_file import replace_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COMMANDS: dict[str, list[str]] = {"xcore methods": ["methods"], "xcore run --help": ["run", "--help"]}


def one_run(checkout: Path, argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh `python -m xcore argv` with `checkout` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "xcore", *argv], env=env, cwd=checkout,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{checkout}: xcore {' '.join(argv)} exited {proc.returncode}: "
                         f"{proc.stderr.read().decode()[-400:] if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def measure(checkouts: dict[str, Path], repeat: int) -> list[dict]:
    """Every (checkout, command) run `repeat` times, the checkouts alternating within each round."""
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(repeat):
        for command, argv in COMMANDS.items():
            for name, path in checkouts.items():
                times.setdefault((name, command), []).append(one_run(path, argv))
    rows = []
    for (name, command), runs in times.items():
        wall = [w for w, _ in runs]
        cpu = [c for _, c in runs]
        rows.append({"code": name, "command": command, "runs": len(runs),
                     "wall": statistics.median(wall), "wall_lo": min(wall), "wall_hi": max(wall),
                     "cpu": statistics.median(cpu), "cpu_lo": min(cpu), "cpu_hi": max(cpu)})
    return sorted(rows, key=lambda r: (list(COMMANDS).index(r["command"]), r["code"] != "before"))


def table(rows: list[dict]) -> str:
    lines = ["| command | code | runs | wall s, median (min-max) | CPU s, median (min-max) |",
             "|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| `{r['command']}` | {r['code']} | {r['runs']} | {r['wall']:.2f} ({r['wall_lo']:.2f}-"
                     f"{r['wall_hi']:.2f}) | {r['cpu']:.2f} ({r['cpu_lo']:.2f}-{r['cpu_hi']:.2f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="an older checkout to time beside this one")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--results", type=Path, help="update this RESULTS.md")
    ap.add_argument("--note", default="", help="a sentence on the machine's load for the results file")
    args = ap.parse_args(argv)
    checkouts = {"before": args.before.resolve()} if args.before else {}
    checkouts["this"] = ROOT
    before_load = load()
    rows = measure(checkouts, args.repeat)
    after_load = load()
    text = table(rows)
    print(f"load average before {before_load}; after {after_load}")
    print(text)
    if args.results:
        section = (f"## Command-line start-up\n\nCommand: `python bench/startup.py"
                   f"{' --before OLD' if args.before else ''} --repeat {args.repeat}` ({date.today()}).\n"
                   f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}; load average before the runs {before_load}, after {after_load}."
                   f"{' ' + args.note if args.note else ''}\n\n"
                   "Each run is a fresh `python -m xcore ...` process (spawn to exit); CPU is the child's user + "
                   "system time. \"before\" is the code before issue 29 (the listing imported every method "
                   "package: torch, scikit-learn, scipy, DuckDB), \"this\" reads the light method catalog "
                   "(`xcore/methods/catalog.json`). The checkouts alternate within each round. Goal: both "
                   "commands under 0.5 s on an idle machine.\n\n" + text + "\n")
        replace_section(args.results, "Command-line start-up", section)


if __name__ == "__main__":
    main()
