"""Fidelity of every surrogate method to a user's model (issue 28): one command printing a table.

A GCN's node predictions (`xcore.nlil.gnn.gcn_predictions`) on the scene graphs generated from the bundled
GQA frequency tables (`sample_data/nlil_gqa_meta`, `make_scenes(60, seed=0)`) are explained by m-NLIL rules,
DRM feature clauses and ESMS rules; a scikit-learn gradient-boosted classifier of the bundled Titanic-like
table, exported to ONNX, by the classifier's knowledge base (the README's examples). Per method: fidelity
on its held-out targets (agreement; R^2 / MAE of scores), accuracy against the truth beside the user's
model's own, and CPU seconds of the run.

    python bench/surrogate_fidelity.py            # all four
    python bench/surrogate_fidelity.py nlil plkb  # some
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402


def scenes_with_gcn():
    from xcore.data.generators.scenes import make_scenes
    from xcore.data.predictions import read_predictions, with_predictions
    from xcore.nlil.gnn import gcn_predictions

    ds = make_scenes(n_scenes=60, seed=0)
    csv = gcn_predictions(ds, "street", seed=0).to_csv(index=False).encode()
    return ds, with_predictions(ds, read_predictions(("gcn_street.csv", csv), ds))


def titanic_with_gbc():
    from skl2onnx import to_onnx
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from xcore.data.predictions import with_predictions
    from xcore.data.samples import load_sample
    from xcore.explain.model_file import load_model_file

    ds = load_sample("titanic_like")
    table = ds.tabular
    num, cat = ["pclass", "age", "sibsp", "parch", "fare"], ["sex", "embarked"]
    X = table[num + cat].astype({c: "float32" for c in num}).astype({c: object for c in cat}).fillna({c: "" for c in cat})
    model = make_pipeline(ColumnTransformer([("num", SimpleImputer(), num),
                                             ("cat", OneHotEncoder(handle_unknown="ignore"), cat)]),
                          GradientBoostingClassifier(random_state=0)).fit(X, table["survived"])
    data = to_onnx(model, X[:1], options={"zipmap": False}).SerializeToString()
    onnx = load_model_file(("titanic_gbc.onnx", data), ds)
    return ds, with_predictions(ds, onnx.user_predictions(ds))


def settings_for(method: str, ds):
    from xcore.methods import REGISTRY

    base = REGISTRY[method].default_settings(ds)
    return {"nlil": lambda: base.replace(heads=("street",), depth=1),
            "drm": lambda: base.replace(max_draws=1000, folds=5, explain_rows=10),
            "esms": lambda: base.replace(target="street", iterations=10, n_jobs=1),
            "plkb": lambda: base.replace(explain_rows=10)}[method]()


DATA = {"nlil": ("scenes (GQA tables, 60 scenes) + GCN", scenes_with_gcn),
        "drm": ("scenes (GQA tables, 60 scenes) + GCN", scenes_with_gcn),
        "esms": ("scenes (GQA tables, 60 scenes) + GCN", scenes_with_gcn),
        "plkb": ("titanic_like + GBC (ONNX)", titanic_with_gbc)}


def main(argv: list[str]) -> int:
    from xcore.methods import REGISTRY, run_method

    methods = argv or list(DATA)
    cache: dict = {}
    rows = []
    for m in methods:
        name, make = DATA[m]
        if make not in cache:
            cache[make] = make()
        _, swapped = cache[make]
        settings = settings_for(m, swapped)
        c0, t0 = time.process_time(), time.perf_counter()
        run = run_method(m, swapped, settings, cache=None)
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        r = run.metrics
        rows.append({"method": m, "surrogate": REGISTRY[m].surrogate, "data + your model": name,
                     "held-out targets": int(r["fidelity_targets"]), "fidelity": r.get("fidelity"),
                     "R2": r.get("fidelity_r2"), "MAE": r.get("fidelity_mae"),
                     "truth acc. (surrogate)": r.get("truth_accuracy"),
                     "truth acc. (your model)": r.get("your_model_truth_accuracy"),
                     "flagged": bool(r.get("fidelity_low")), "CPU s": cpu, "wall s": wall})
    frame = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(frame.round(3).to_string(index=False))
    print(f"\nload average {os.getloadavg()[0]:.2f} (2 cores); CPU seconds = user+sys of this process")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
