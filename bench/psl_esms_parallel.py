"""ESMS search: wall time for n_jobs=1 vs 2 threads vs 2 processes, and BLAS threads in MAP.

Run: python bench/psl_esms_parallel.py [iterations]   (LastFM-shaped 'small' data, L_M = 15)
Prints one table per question; every configuration must give identical search results.
"""

from __future__ import annotations

import sys
import time

import pandas as pd

from xcore.data.generators import lastfm_preset
from xcore.esms.search import ESMSSearch
from xcore.esms.validation_split import split_targets
from xcore.psl.inference import map_inference
from xcore.runtime import limited_threads


def main(iterations: int = 30) -> None:
    ds = lastfm_preset("small", seed=0)
    train, valid = split_targets(ds, "rating", 0.3, seed=0)
    rows, results = [], {}
    for label, kw in [("1 job", dict(n_jobs=1)), ("2 threads", dict(n_jobs=2, executor="thread")),
                      ("2 processes", dict(n_jobs=2, executor="process"))]:
        s = ESMSSearch("rating", rules_per_model=15, iterations=iterations, block="rated", seed=0, **kw)
        t0 = time.perf_counter()
        s.fit(train, valid)
        wall = time.perf_counter() - t0
        h = s.history_
        results[label] = h[["score", "rules"]]
        rows.append({"config": label, "wall_s": wall, "ground_s": h["ground_seconds"].sum(),
                     "ppll_s": h["ppll_seconds"].sum(), "map_s": h["map_seconds"].sum(),
                     "best": s.best_score_})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    ref = results["1 job"]
    same = all(ref["score"].equals(r["score"]) and list(ref["rules"]) == list(r["rules"]) for r in results.values())
    print(f"identical results across configurations: {same}")

    prog = s.best_model_.program_
    timing = []
    for label, ctx in [("BLAS default threads", None), ("BLAS 1 thread", limited_threads)]:
        t0 = time.perf_counter()
        for _ in range(5):
            if ctx is None:
                res = map_inference(prog, "lbfgs")
            else:
                with ctx():
                    res = map_inference(prog, "lbfgs")
        timing.append({"map": label, "seconds_per_solve": (time.perf_counter() - t0) / 5,
                       "atoms": prog.n_atoms, "potentials": prog.n_potentials, "energy": res.energy})
    print(pd.DataFrame(timing).to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
