"""Loader benchmark: time and peak memory of each loader at 1, 10 and 50 MiB, beside pandas.read_csv.

    python bench/loaders.py                              # print the table
    python bench/loaders.py --results bench/RESULTS.md   # also update the "Data loaders" section
    python bench/loaders.py --sizes 1 --formats triples  # a subset
    python bench/loaders.py --before ../old --repeat 3   # beside older code, alternating, medians

Every measurement runs in a fresh process (one subprocess each): peak memory is that child's
own peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` read by the child as it finishes),
and nothing is shared between runs. The child imports xcore, pandas and pyarrow before it reads the file; the import
baseline (an idle child that only imports) is reported and subtracted in the "over idle"
column. Data are synthetic, seeded: knowledge-graph triples, a long CSV of facts, a tabular CSV
with 8 features and a label, Prolog facts, and quoted CSVs (the long CSV and the table with
every text cell in double quotes, 1% of the arguments and feature texts holding a comma and ``""`` escapes). pandas.read_csv reads the same bytes (tab- or
comma-separated, all columns as strings) for scale; it only parses, xcore also validates and
builds a `RelationalDataset` (deduplicated, typed tables with file/line provenance). With
``--before``, the same children import an older checkout of xcore ("before" rows), alternating
with this one (A B A B); with ``--repeat`` every figure is the median of that many runs.
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
FORMATS = ("triples", "long_csv", "tabular", "prolog", "quoted_csv", "quoted_tabular")

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
import pandas as pd, pyarrow
import xcore.data.io as xio
path, mode = sys.argv[1], sys.argv[2]
if mode.startswith("app"):  # what the Data page imports to show an upload
    import os, streamlit as st
    from xcore.viz import predicate_graph_figure, value_histogram_figure
    try:
        from ui.common import cached_upload  # the Data page's own cached loader
    except ImportError:
        try:
            from pages.common import cached_upload  # where it lived before app_pages/ and ui/
        except ImportError:  # older code had it in pages/home.py (which runs the page on import)

            @st.cache_data(max_entries=8)
            def cached_upload(filename, data):  # as that pages/home.py: the dataset is pickled into the cache
                return xio.load((filename, data))
t0 = time.perf_counter()
if mode == "app":  # the upload path of the Data page, bytes to the summary it draws
    data = open(path, "rb").read()
    ds = cached_upload(os.path.basename(path), data)
    summary = ds.summary()
    figure = predicate_graph_figure(ds.predicate_graph())
    first = ds.predicates[0].name
    shown = (ds.preview(first, 50), value_histogram_figure(ds.value_histogram(first, "obs")),
             None if ds.tabular is None else ds.tabular.head(50))
    n = ds.n_atoms()
elif mode == "xcore":
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
    elif fmt in ("quoted_csv", "quoted_tabular"):  # every text cell quoted; a few hold "", commas
        n = size // 34  # rows of about 38 bytes: the file is cut at `size`
        odd = rng.random(n) < 0.01

        def quoted(texts: np.ndarray, plain: bool = False) -> np.ndarray:
            if not plain:
                texts = np.where(odd, np.char.add(texts, ', say ""hi""'), texts)
            return np.char.add(np.char.add('"', texts), '"')
        if fmt == "quoted_csv":
            h, t = np.arange(n), rng.integers(0, n_ent, n)
            cols = [quoted(np.char.add("p", rng.integers(0, 20, n).astype(str)), plain=True),
                    quoted(np.char.add("e", h.astype(str))), quoted(np.char.add("e", t.astype(str))),
                    rng.random(n).round(3).astype(str), quoted(np.full(n, "obs"), plain=True)]
            path, header = folder / "facts.csv", '"predicate","arg1","arg2","value","partition"\n'
        else:
            cols = [rng.integers(0, 100, n).astype(str) for _ in range(4)]
            cols += [quoted(np.char.add("c", rng.integers(0, 12, n).astype(str))) for _ in range(4)]
            cols.append(quoted(np.where(rng.random(n) < 0.5, "yes", "no")))
            path, header = folder / "table.csv", ",".join([f'"f{i}"' for i in range(8)] + ['"label"']) + "\n"
        lines = cols[0]
        for c in cols[1:]:
            lines = np.char.add(np.char.add(lines, ","), c)
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


def measure(path: Path | None, mode: str, root: Path = ROOT) -> dict:
    """Seconds and peak RSS (MiB) of one fresh child process loading `path` with `mode`, importing
    xcore from `root` (this checkout, or the one given by ``--before``)."""
    code = CHILD.format(root=str(root))
    proc = subprocess.run([sys.executable, "-c", code, str(path or ""), mode], capture_output=True,
                          text=True, timeout=900)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
        return {"seconds": float("nan"), "rows": 0, "peak_mib": float("nan"), "error": err}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_sides(path: Path | None, sides: list[tuple[str, str, Path]], repeat: int) -> dict[str, dict]:
    """Each side (label, child mode, root) `repeat` times, alternating sides (A B A B: the machine
    is shared, so load changes hit both alike); per side the median seconds and peak."""
    runs: dict[str, list[dict]] = {label: [] for label, _, _ in sides}
    for k in range(repeat):
        for label, mode, root in (sides if k % 2 == 0 else sides[::-1]):
            runs[label].append(measure(path, mode, root))
    out = {}
    for label, rs in runs.items():
        ok = [r for r in rs if "error" not in r]
        if not ok:
            out[label] = rs[0]
            continue
        out[label] = {"seconds": float(np.median([r["seconds"] for r in ok])),
                      "peak_mib": float(np.median([r["peak_mib"] for r in ok])), "rows": ok[0]["rows"]}
    return out


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


APP_BYTES = 47_000_000
"""Size of the upload in the app-path rows: the 47 MB CSV of issue 14 (rough edge 8)."""
APP_FORMATS = ("tabular", "long_csv")


def _sides(before: Path | None, mode: str, pandas: bool) -> list[tuple[str, str, Path]]:
    sides = [("xcore", mode, ROOT)]
    if before is not None:
        sides.append(("xcore before", mode, before))
    if pandas:
        sides.append(("pandas.read_csv", "pandas", ROOT))
    return sides


def run(sizes: list[int], formats: list[str], before: Path | None = None,
        repeat: int = 1) -> tuple[str, list[dict]]:
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
                for label, r in measure_sides(path, _sides(before, "xcore", True), repeat).items():
                    r.update(format=fmt, mib=mib, file_mib=mb, mode=label)
                    rows.append(r)
                    print(f"{fmt:9s} {mib:3d} MiB {label:16s} {r['seconds']:7.2f} s  peak {r['peak_mib']:7.0f} MiB"
                          f"  {r.get('error', '')}", flush=True)
                path.unlink()
    lines = [f"Idle child (imports only): peak {base['peak_mib']:.0f} MiB.", "",
             "| format | file MiB | loader | seconds | peak RSS MiB | over idle MiB | over idle / file | atoms or rows |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        over = r["peak_mib"] - base["peak_mib"]
        name = {"xcore": "xcore `load`", "xcore before": "xcore `load` before"}.get(r["mode"], r["mode"])
        lines.append(f"| {r['format']} | {r['file_mib']:.1f} | {name} | {r['seconds']:.2f} | "
                     f"{r['peak_mib']:.0f} | {over:.0f} | {over / r['file_mib']:.1f}x | "
                     f"{r['rows']:,} |" + (f" error: {r['error']}" if r.get("error") else ""))
    return "\n".join(lines) + "\n", rows


def run_app(formats: list[str], before: Path | None = None, repeat: int = 1) -> tuple[str, list[dict]]:
    """The Data page's upload path (issue 14, rough edge 8) for 47 MB CSVs: the markdown and the rows.

    The child reads the file's bytes, loads them through ``st.cache_data`` as ``pages/home.py`` does
    (Streamlit pickles the dataset into its cache), then builds what the page shows: the summary,
    the predicate graph figure, a preview, a value histogram and the table's head.
    """
    base = measure(None, "app_idle")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in formats:
            folder = Path(tmp) / f"app_{fmt}"
            folder.mkdir()
            path = generate_in_child(fmt, APP_BYTES, folder)
            with open(path, "rb") as f:
                n_rows = sum(1 for _ in f) - 1
            for label, r in measure_sides(path, _sides(before, "app", False), repeat).items():
                r.update(format=fmt, file_mb=path.stat().st_size / 1e6, data_rows=n_rows, mode=label)
                rows.append(r)
                print(f"app {fmt:9s} {label:16s} {r['seconds']:7.2f} s  peak {r['peak_mib']:7.0f} MiB"
                      f"  {r.get('error', '')}", flush=True)
            path.unlink()
    lines = [f"Idle child (the page's imports: xcore, pandas, pyarrow, streamlit, plotly): peak "
             f"{base['peak_mib']:.0f} MiB.", "",
             "| upload | file MB | CSV rows | code | seconds | peak RSS MiB | over idle MiB | atoms |",
             "|---|---:|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['format']} CSV | {r['file_mb']:.1f} | {r['data_rows']:,} | {r['mode']} | "
                     f"{r['seconds']:.2f} | {r['peak_mib']:.0f} | {r['peak_mib'] - base['peak_mib']:.0f} | "
                     f"{r['rows']:,} |" + (f" error: {r['error']}" if r.get("error") else ""))
    return "\n".join(lines) + "\n", rows


def write_results(path: Path, info: str, body: str, rows: list[dict], app_body: str = "",
                  command: str = "python bench/loaders.py") -> None:
    """Write the "Data loaders" section of RESULTS.md."""
    worst = [r for r in rows if r["mode"] == "xcore" and r["mib"] == 50]
    goal = ""
    if worst:
        t = max(r["seconds"] for r in worst)
        m = max(r["peak_mib"] for r in worst)
        goal = (f"At 50 MiB the slowest xcore loader took {t:.1f} s (goal: under 5 s) and the largest "
                f"peak was {m:.0f} MiB (goal: under 500 MiB, i.e. 10x the input).\n")
    app = f"\n### Upload path of the Data page (issue 14, rough edge 8)\n\n{run_app.__doc__.split(chr(10) + chr(10))[1].strip()}\n\n{app_body}" \
        if app_body else ""
    section = (f"## Data loaders\n\nCommand: `{command}` ({date.today().isoformat()}).\n"
               f"Machine: {info}.\n\n{__doc__.split(chr(10) + chr(10), 2)[2].strip()}\n\n{body}\n{goal}{app}")
    replace_section(path, "Data loaders", section)


def main() -> None:
    """Command line: sizes, formats, the code to compare with, repeats and the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 50], help="sizes in MiB")
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS)
    parser.add_argument("--before", type=Path, help="a checkout of older code to measure beside this one")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side (alternating; medians)")
    parser.add_argument("--no-app", action="store_true", help="skip the app upload-path rows")
    parser.add_argument("--results", type=Path, help="update the Data loaders section of this file")
    parser.add_argument("--generate", nargs=3, metavar=("FORMAT", "BYTES", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        print(generate(args.generate[0], int(args.generate[1]), Path(args.generate[2])))
        return
    info = machine()
    t0 = time.perf_counter()
    body, rows = run(args.sizes, args.formats, args.before, args.repeat)
    app_body = "" if args.no_app else run_app(list(APP_FORMATS), args.before, args.repeat)[0]
    print(f"\nMachine: {info}\n\n{body}\n{app_body}\n({time.perf_counter() - t0:.0f} s)")
    if args.results:
        command = "python " + " ".join(["bench/loaders.py", *sys.argv[1:]])
        write_results(args.results, info, body, rows, app_body, command)


if __name__ == "__main__":
    main()
