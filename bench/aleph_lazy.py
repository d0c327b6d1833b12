"""DRM with and without Aleph's ``lazy_evaluate``: the same problem with its ``:- lazy_evaluate(gteq/2).``
directive and without it (the bottom clause's constants), k-fold held-out accuracy, features and CPU
seconds, each configuration in a fresh process.

    XCORE_SHARED_DATA=/work/shared/data python bench/aleph_lazy.py [--folds 4] [--draws 4 2000]

Problems: Aleph's numbers/ineq (9 examples; skipped without XCORE_SHARED_DATA) and a planted threshold
(60 examples, one value each, positive when it is at least 50; the lazy definition returns the value
T maximising positives minus negatives at or above T).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

PLANTED = """:- modeh(1,p(+ex)).
:- modeb(*,val(+ex,-number)).
:- modeb(1,gteq(+number,#number)).
:- determination(p/1,val/2).
:- determination(p/1,gteq/2).
{lazy}
gteq([P,N],V) :- !, append(P,N,All), sort(All,Cs),
    findall(S-T, (member(T,Cs), above(T,P,A), above(T,N,B), S is B-A), L), keysort(L,[_-V|_]).
gteq(X,V) :- number(X), number(V), !, X >= V.
gteq(X,X).
above(T,Xs,K) :- include(=<(T),Xs,Ys), length(Ys,K).
"""

CHILD = r"""
import json, resource, sys, time
import numpy as np
from xcore.data import load
from xcore.drm.settings import DRMSettings
from xcore.methods.evaluate import KFold, evaluate
problem, lazy, draws, folds = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4])
if problem == "planted":
    values = np.random.default_rng(0).permutation(100)[:60]
    bk = open(sys.argv[5]).read().replace("{lazy}", ":- lazy_evaluate(gteq/2)." if lazy else "")
    bk += "".join(f"val(e{i},{x}).\n" for i, x in enumerate(values))
    pos = "".join(f"p(e{i}).\n" for i, x in enumerate(values) if x >= 50)
    neg = "".join(f"p(e{i}).\n" for i, x in enumerate(values) if x < 50)
    files = [("t.b", bk.encode()), ("t.f", pos.encode()), ("t.n", neg.encode())]
else:
    stem = sys.argv[5]
    b = open(stem + ".b", "rb").read()
    files = [("ineq.b", b if lazy else b.replace(b":- lazy_evaluate(gteq/2).", b"")),
             ("ineq.f", open(stem + ".f", "rb").read()), ("ineq.n", open(stem + ".n", "rb").read())]
ds = load(files)
t0 = time.process_time()
ev = evaluate("drm", ds, DRMSettings(max_draws=draws, explain_rows=1, folds=folds), split=KFold(folds, seed=0))
own = time.process_time() - t0
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"accuracy": ev.metrics["accuracy"], "majority": ev.metrics.get("baseline_accuracy"), "cpu": own + kids.ru_utime + kids.ru_stime}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--draws", type=int, nargs="*", default=[4, 2000])
    args = ap.parse_args()
    shared = os.environ.get("XCORE_SHARED_DATA")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    planted = Path("/tmp") / f"xcore-bench-aleph-lazy-{os.getpid()}.b"
    planted.write_text(PLANTED)
    jobs = [("planted", d, str(planted)) for d in args.draws]
    if shared:
        jobs.insert(0, ("numbers/ineq", 2000, str(Path(shared) / "aleph_examples" / "numbers" / "ineq")))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {args.folds} folds (KFold seed 0)")
    print("| problem | draws | lazy_evaluate | held-out accuracy | majority | CPU s |")
    print("|---|---:|---|---:|---:|---:|")
    for name, draws, arg in jobs:
        for lazy in (True, False):
            out = subprocess.run([sys.executable, "-c", CHILD, "planted" if name == "planted" else "ineq",
                                  "1" if lazy else "0", str(draws), str(args.folds), arg],
                                 capture_output=True, text=True, env=env)
            if out.returncode:
                print(f"| {name} | {draws} | {'yes' if lazy else 'no'} | error: {out.stderr.strip()[-160:]} | | |")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            maj = "" if r["majority"] is None else f"{r['majority']:.3f}"
            print(f"| {name} | {draws} | {'yes' if lazy else 'no'} | {r['accuracy']:.3f} | {maj} | {r['cpu']:.1f} |",
                  flush=True)
    planted.unlink(missing_ok=True)
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
