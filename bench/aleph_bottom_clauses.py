"""Our bottom clauses beside Aleph's own: every ``[bottom clause]`` in the Aleph examples'
``typescript`` files (friguzzi/aleph ``prolog/examples``) against `saturate_examples` (SWI-Prolog
on the same ``.b/.f/.n`` files), literal for literal up to a renaming of variables.

    XCORE_SHARED_DATA=/work/shared/data python bench/aleph_bottom_clauses.py [--details]

Columns: the folder and problem, the example, Aleph's and our literal counts, whether the literal
sets are equal up to renaming, whether the predicates come in the same order, and what differs.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from xcore.data.io.prolog_saturation import saturate_examples  # noqa: E402
from xcore.logic.aleph_typescript import bottom_clauses, predicate_of, same_up_to_renaming  # noqa: E402


def compare_folder(folder: Path) -> list[dict]:
    """One row per bottom clause of the folder's typescript."""
    refs = bottom_clauses((folder / "typescript").read_text(errors="replace"))
    rows = []
    groups: dict[tuple, list] = {}
    for r in refs:
        groups.setdefault((r.stem, tuple(sorted(r.settings.items()))), []).append(r)
    for (stem, settings), items in groups.items():
        read = lambda s: (folder / f"{stem}.{s}").read_bytes() if (folder / f"{stem}.{s}").exists() else b""  # noqa: E731
        extra = {k: v for k, v in settings if k in ("i",)}
        ours = saturate_examples(read("b"), read("f"), read("n"), [r.example for r in items], extra)
        for r, o in zip(items, ours):
            mapping = same_up_to_renaming(r.head, r.body, o.head, o.body)
            a, b = Counter(map(predicate_of, r.body)), Counter(map(predicate_of, o.body))
            diff = []
            if a - b:
                diff.append("Aleph only: " + ", ".join(f"{k} x{v}" for k, v in (a - b).items()))
            if b - a:
                diff.append("ours only: " + ", ".join(f"{k} x{v}" for k, v in (b - a).items()))
            if not diff and mapping is None:
                diff.append("same predicates, different arguments")
            rows.append({"folder": folder.name, "stem": stem, "example": r.example, "aleph": len(r.body),
                         "ours": len(o.body), "match": mapping is not None,
                         "order": [predicate_of(x) for x in r.body] == [predicate_of(x) for x in o.body],
                         "diff": "; ".join(diff), "aleph_clause": f"{r.head} :- {', '.join(r.body)}",
                         "our_clause": o.text, "problems": o.problems, "line": r.line})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--details", action="store_true", help="print both clauses of every mismatch")
    args = ap.parse_args()
    root = Path(os.environ.get("XCORE_SHARED_DATA", "/work/shared/data")) / "aleph_examples"
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    t0 = time.perf_counter()
    rows = []
    for folder in sorted(p.parent for p in root.glob("*/typescript")):
        rows += compare_folder(folder)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("| folder / problem | example | literals Aleph / ours | equal up to renaming | same predicate order | "
          "difference |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['folder']}/{r['stem']} | `{r['example']}` | {r['aleph']} / {r['ours']} | "
              f"{'yes' if r['match'] else 'no'} | {'yes' if r['order'] else 'no'} | {r['diff']} |")
    n = len(rows)
    print(f"\n{sum(r['match'] for r in rows)} of {n} bottom clauses equal up to renaming; "
          f"{sum(r['order'] for r in rows)} in the same predicate order. "
          f"{time.perf_counter() - t0:.1f} s wall, SWI-Prolog CPU {cpu.ru_utime + cpu.ru_stime:.1f} s")
    if args.details:
        for r in rows:
            if not r["match"]:
                print(f"\n{r['folder']}/{r['stem']} {r['example']} (typescript line {r['line']}):\n"
                      f"  Aleph: {r['aleph_clause']}\n  ours:  {r['our_clause']}\n  {r['problems'][:2]}")


if __name__ == "__main__":
    main()
