"""Loader benchmark: time and peak memory of each loader at 1, 10 and 50 MiB, beside pandas.read_csv.

    python bench/loaders.py                              # print the table
    python bench/loaders.py --results bench/RESULTS.md   # also update the "Data loaders" section
    python bench/loaders.py --sizes 1 --formats triples  # a subset

Every measurement runs in a fresh process (one subprocess each): peak memory is that child's
own peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` read by the child as it finishes),
and nothing is shared between runs. The child imports xcore, pandas and pyarrow before it reads the file; the import
baseline (an idle child that only imports) is reported and subtracted in the "over idle"
column. Data are synthetic, seeded: knowledge-graph triples, a long CSV of facts, a tabular CSV
with 8 features and a label, and Prolog facts. pandas.read_csv reads the same bytes (tab- or
comma-separated, all columns as strings) for scale; it only parses, xcore also validates and
builds a `RelationalDataset` (deduplicated, typed tables with file/line provenance).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.results_file import replace_section  # noqa: E402

MIB = 1024 * 1024
ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("triples", "long_csv", "tabular", "prolog")

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
import pandas as pd, pyarrow
import xcore.data.io as xio
path, mode = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if mode == "xcore":
    ds = xio.load(path)
    n = ds.n_atoms()
elif mode == "pandas":
    sep = "\t" if path.endswith((".tsv", ".txt")) else ","
    df = pd.read_csv(path, sep=sep, header=None if sep == "\t" else "infer", dtype=str,
                     keep_default_na=False)
    n = len(df)
else:
    n = 0
sec = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the child's own peak (KiB on Linux)
print(json.dumps({{"seconds": sec, "rows": int(n), "peak_mib": peak}}))
"""


def generate(fmt: str, size: int, folder: Path, seed: int = 0) -> Path:
    """A synthetic file of about `size` bytes (at most) in the given format."""
    rng = np.random.default_rng(seed)
    n_ent = max(1000, size // 200)
    if fmt == "triples":
        n = size // 16
        h, t = rng.integers(0, n_ent, n), rng.integers(0, n_ent, n)
        r = rng.integers(0, 20, n)
        lines = np.char.add(np.char.add(np.char.add("e", h.astype(str)), "\tr"), r.astype(str))
        lines = np.char.add(np.char.add(lines, "\te"), t.astype(str))
        path, header = folder / "facts.txt", ""
    elif fmt == "long_csv":
        n = size // 28
        h, t = np.arange(n), rng.integers(0, n_ent, n)
        r = rng.integers(0, 20, n)
        v = rng.random(n).round(3).astype(str)
        lines = np.char.add(np.char.add("p", r.astype(str)), ",e")
        lines = np.char.add(np.char.add(np.char.add(lines, h.astype(str)), ",e"), t.astype(str))
        lines = np.char.add(np.char.add(np.char.add(lines, ","), v), ",obs")
        path, header = folder / "facts.csv", "predicate,arg1,arg2,value,partition\n"
    elif fmt == "tabular":
        n = size // 28
        cols = [rng.integers(0, 100, n).astype(str) for _ in range(4)]
        cols += [np.char.add("c", rng.integers(0, 12, n).astype(str)) for _ in range(4)]
        cols.append(np.where(rng.random(n) < 0.5, "yes", "no"))
        lines = cols[0]
        for c in cols[1:]:
            lines = np.char.add(np.char.add(lines, ","), c)
        path, header = folder / "table.csv", ",".join([f"f{i}" for i in range(8)] + ["label"]) + "\n"
    elif fmt == "prolog":
        n = size // 18
        h, t = rng.integers(0, n_ent, n), rng.integers(0, n_ent, n)
        r = rng.integers(0, 20, n)
        lines = np.char.add(np.char.add(np.char.add("r", r.astype(str)), "(e"), h.astype(str))
        lines = np.char.add(np.char.add(np.char.add(lines, ",e"), t.astype(str)), ").")
        path, header = folder / "facts.b", ""
    else:
        raise ValueError(fmt)
    data = (header + "\n".join(lines.tolist()) + "\n").encode()
    if len(data) > size:
        cut = data.rfind(b"\n", 0, size - 1)
        data = data[:cut + 1]
    path.write_bytes(data)
    return path


def generate_in_child(fmt: str, size: int, folder: Path) -> Path:
    """`generate` in a subprocess, so this parent stays small: a child's ru_maxrss starts from
    its parent's resident size (it is inherited across fork and exec)."""
    out = subprocess.run([sys.executable, __file__, "--generate", fmt, str(size), str(folder)],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip().splitlines()[-1])


def measure(path: Path | None, mode: str) -> dict:
    """Seconds and peak RSS (MiB) of one fresh child process loading `path` with `mode`."""
    code = CHILD.format(root=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, str(path or ""), mode], capture_output=True,
                          text=True, timeout=900)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
        return {"seconds": float("nan"), "rows": 0, "peak_mib": float("nan"), "error": err}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def machine() -> str:
    """CPU model, cores, versions and load (the machine is shared)."""
    import duckdb
    import pandas as pd
    import pyarrow as pa

    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = re.search(r"Model name:\s*(.+)", lscpu).group(1).strip()  # type: ignore[union-attr]
    except (OSError, subprocess.CalledProcessError, AttributeError):
        model = platform.processor() or "unknown CPU"
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return (f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, pandas "
            f"{pd.__version__}, pyarrow {pa.__version__}, DuckDB {duckdb.__version__}, numpy "
            f"{np.__version__}; load average before the run {load}")


def run(sizes: list[int], formats: list[str]) -> tuple[str, list[dict]]:
    """Measure every format and size; the markdown table and the raw rows."""
    base = measure(None, "idle")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in formats:
            for mib in sizes:
                folder = Path(tmp) / f"{fmt}_{mib}"
                folder.mkdir()
                path = generate_in_child(fmt, mib * MIB - 1024, folder)
                mb = path.stat().st_size / MIB
                for mode in ("xcore", "pandas"):
                    r = measure(path, mode)
                    r.update(format=fmt, mib=mib, file_mib=mb, mode=mode)
                    rows.append(r)
                    print(f"{fmt:9s} {mib:3d} MiB {mode:7s} {r['seconds']:7.2f} s  peak {r['peak_mib']:7.0f} MiB"
                          f"  {r.get('error', '')}", flush=True)
                path.unlink()
    lines = [f"Idle child (imports only): peak {base['peak_mib']:.0f} MiB.", "",
             "| format | file MiB | loader | seconds | peak RSS MiB | over idle MiB | over idle / file | atoms or rows |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        over = r["peak_mib"] - base["peak_mib"]
        name = "xcore `load`" if r["mode"] == "xcore" else "pandas.read_csv"
        lines.append(f"| {r['format']} | {r['file_mib']:.1f} | {name} | {r['seconds']:.2f} | "
                     f"{r['peak_mib']:.0f} | {over:.0f} | {over / r['file_mib']:.1f}x | "
                     f"{r['rows']:,} |" + (f" error: {r['error']}" if r.get("error") else ""))
    return "\n".join(lines) + "\n", rows


def write_results(path: Path, info: str, body: str, rows: list[dict]) -> None:
    """Write the "Data loaders" section of RESULTS.md."""
    worst = [r for r in rows if r["mode"] == "xcore" and r["mib"] == 50]
    goal = ""
    if worst:
        t = max(r["seconds"] for r in worst)
        m = max(r["peak_mib"] for r in worst)
        goal = (f"At 50 MiB the slowest xcore loader took {t:.1f} s (goal: under 5 s) and the largest "
                f"peak was {m:.0f} MiB (goal: under 500 MiB, i.e. 10x the input).\n")
    section = (f"## Data loaders\n\nCommand: `python bench/loaders.py` ({date.today().isoformat()}).\n"
               f"Machine: {info}.\n\n{__doc__.split(chr(10) + chr(10), 2)[2].strip()}\n\n{body}\n{goal}")
    replace_section(path, "Data loaders", section)


def main() -> None:
    """Command line: sizes, formats and the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 50], help="sizes in MiB")
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS)
    parser.add_argument("--results", type=Path, help="update the Data loaders section of this file")
    parser.add_argument("--generate", nargs=3, metavar=("FORMAT", "BYTES", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        print(generate(args.generate[0], int(args.generate[1]), Path(args.generate[2])))
        return
    info = machine()
    t0 = time.perf_counter()
    body, rows = run(args.sizes, args.formats)
    print(f"\nMachine: {info}\n\n{body}\n({time.perf_counter() - t0:.0f} s)")
    if args.results:
        write_results(args.results, info, body, rows)


if __name__ == "__main__":
    main()
