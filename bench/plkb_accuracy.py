"""PLKB classifier accuracy and explanation accuracy beside the paper and scikit-learn.

    python bench/plkb_accuracy.py [--seeds 10] [--explain-instances 50] [--skip-f1] [--skip-explain]

1. F1 of the Tree KB and the Direct KB (max_k=2) on Mushroom (positive: poisonous), Nursery
   (positive: priority), HIV-1 (746 set, positive: cleaved) and Syn 10/4, 10/8, 12/4, 12/8
   (2,000 strings each), 70/30 stratified split, mean (sd) over seeds, beside the paper's F1
   and CART / random forest / SVM / MLP on the same discretised one-hot features.
2. Explanation accuracy on the Syn sets (seed 0): for correctly classified positive test
   strings, the fraction of the k most decisive features (k = 1..5, Direct KB) whose letter
   matches the seed string, beside SHAP's top-k (gradient boosting, TreeExplainer); on a few
   strings also the KB's own exact Shapley values (their top-k accuracy, agreement with SHAP).
3. The pollution curve (paper Fig. 4) on Mushroom with the Tree and Direct KBs (seed 0).
Prints markdown tables.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from xcore.data.shared import shared_data_dir
from xcore.plkb import PLKBClassifier, make_strings
from xcore.data.benchmarks.tabular import read_hiv1, read_mushroom, read_nursery
from xcore.plkb.experiments import binary_metrics, compare_baselines, pollution_curve
from xcore.plkb.explain import decisive_features, explanation_accuracy, top_k
from xcore.data.generators.strings import PAPER_SETS

DATA = shared_data_dir()
PAPER_F1 = {"Mushroom": 0.99, "Nursery": 0.99, "HIV-1": 0.97, "Syn 10/4": 0.92, "Syn 10/8": 0.95,
            "Syn 12/4": 0.89, "Syn 12/8": 0.94}
SYN_ROWS = 2000


def datasets(seed: int):
    """(name, X, y, positive class) for every benchmark set; Syn strings are regenerated per seed."""
    X, y = read_mushroom(DATA / "mushroom/agaricus-lepiota.data")
    yield "Mushroom", X, y, "p"
    X, y = read_nursery(DATA / "nursery/nursery.data")
    yield "Nursery", X, y, "priority"
    X, y = read_hiv1(DATA / "hiv1/746Data.txt")
    yield "HIV-1", X, y, 1
    for L, A in PAPER_SETS:
        s = make_strings(L, A, n=SYN_ROWS, seed=seed)
        yield s.name, s.X, s.y, True


def split(X, y, positive, seed):
    strat = (pd.Series(np.asarray(y)).astype(str) == str(positive)).to_numpy()
    return train_test_split(X, y, test_size=0.3, random_state=seed, stratify=strat)


def f1_table(seeds: int, max_k: int) -> pd.DataFrame:
    rows = []
    for seed in range(seeds):
        for name, X, y, pos in datasets(seed):
            Xtr, Xte, ytr, yte = split(X, y, pos, seed)
            t0 = time.perf_counter()
            for label, kw in (("Tree", dict(kb="tree")), ("Direct", dict(kb="direct", max_k=max_k))):
                clf = PLKBClassifier(positive_class=pos, random_state=seed, **kw).fit(Xtr, ytr)
                pred = clf.predict_interval(Xte)["positive"].to_numpy()
                rows.append({"dataset": name, "seed": seed, "model": label,
                             "f1": binary_metrics(clf.binary_labels(yte), pred)["f1"]})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # MLP convergence warnings
                base = compare_baselines(clf, Xtr, ytr, Xte, yte, include_kb=False)
            rows += [{"dataset": name, "seed": seed, "model": m, "f1": f} for m, f in zip(base["model"], base["f1"])]
            print(f"  seed {seed} {name}: {time.perf_counter() - t0:.1f} s", flush=True)
    return pd.DataFrame(rows)


def print_f1(df: pd.DataFrame, seeds: int, max_k: int) -> None:
    order = ["Tree", "Direct", "CART", "RF", "SVM", "MLP"]
    g = df.groupby(["dataset", "model"])["f1"]
    mean, sd = g.mean().unstack(), g.std().unstack().fillna(0.0)
    print(f"\nF1 (positive class), mean (sd) over {seeds} seeds, 70/30 split; Direct KB max_k={max_k}\n")
    print("| dataset | paper | " + " | ".join(order) + " |")
    print("|---|---:|" + "---:|" * len(order))
    for name in PAPER_F1:
        if name not in mean.index:
            continue
        cells = [f"{mean.loc[name, m]:.3f} ({sd.loc[name, m]:.3f})" for m in order]
        print(f"| {name} | {PAPER_F1[name]:.2f} | " + " | ".join(cells) + " |")


def explanation_table(n_instances: int, max_k: int, n_shapley: int = 0, ks=(1, 2, 3, 4, 5)) -> pd.DataFrame:
    from xcore.plkb.explain import shapley_values, topk_agreement
    from xcore.plkb.shap_compare import shap_for

    rows = []
    for L, A in PAPER_SETS:
        t0 = time.perf_counter()
        s = make_strings(L, A, n=SYN_ROWS, seed=0)
        Xtr, Xte, ytr, yte = split(s.X, s.y, True, 0)
        clf = PLKBClassifier(kb="direct", max_k=max_k, positive_class=True).fit(Xtr, ytr)
        iv = clf.predict_interval(Xte)
        chosen = np.flatnonzero(iv["positive"].to_numpy() & clf.binary_labels(yte))[:n_instances]
        codes = clf.encode(Xte.iloc[chosen])
        seed_codes = clf.encode(s.seed_frame())[0]
        base = shap_for(clf, Xtr, ytr, model="gbt")
        sv = base.values(clf.discretizer_.transform(Xte.iloc[chosen]))
        phis = [shapley_values(clf.reasoner_, c).phi for c in codes[:n_shapley]]
        for k in ks:
            ours = [explanation_accuracy(decisive_features(clf.reasoner_, c, k, True, max_exhaustive=300).features,
                                         c, seed_codes) for c in codes]
            shap_acc = [explanation_accuracy(top_k(v, k, True), c, seed_codes) for v, c in zip(sv, codes)]
            row = {"set": s.name, "k": k, "ours": float(np.mean(ours)), "shap": float(np.mean(shap_acc)),
                   "instances": len(codes)}
            if phis:
                row["kb_shapley"] = float(np.mean([explanation_accuracy(top_k(p, k, True), c, seed_codes)
                                                   for p, c in zip(phis, codes)]))
                row["agreement"] = float(np.mean([topk_agreement(p, v, k, True) for p, v in zip(phis, sv)]))
                row["shapley_instances"] = len(phis)
            rows.append(row)
        print(f"  {s.name}: {len(codes)} instances, {time.perf_counter() - t0:.1f} s", flush=True)
    return pd.DataFrame(rows)


def print_explanations(df: pd.DataFrame, max_k: int) -> None:
    print(f"\nExplanation accuracy on the synthetic strings (Direct KB max_k={max_k}, seed 0): fraction of the "
          f"k most decisive features matching the seed string; SHAP = gradient boosting + TreeExplainer top-k\n")
    print("| set | instances | " + " | ".join(f"k={k} ours / SHAP" for k in sorted(df.k.unique())) + " |")
    print("|---|---:|" + "---:|" * df.k.nunique())
    for name, g in df.groupby("set", sort=False):
        cells = [f"{r.ours:.2f} / {r.shap:.2f}" for r in g.sort_values("k").itertuples()]
        print(f"| {name} | {int(g.instances.iloc[0])} | " + " | ".join(cells) + " |")
    if "kb_shapley" in df.columns:
        n = int(df.shapley_instances.iloc[0])
        print(f"\nShapley values of the KB classifier (exact, partial queries) on the first {n} of those strings: "
              f"explanation accuracy of their top-k / top-k agreement with SHAP\n")
        print("| set | " + " | ".join(f"k={k}" for k in sorted(df.k.unique())) + " |")
        print("|---|" + "---:|" * df.k.nunique())
        for name, g in df.groupby("set", sort=False):
            cells = [f"{r.kb_shapley:.2f} / {r.agreement:.2f}" for r in g.sort_values("k").itertuples()]
            print(f"| {name} | " + " | ".join(cells) + " |")


def print_pollution(n_test: int = 1000) -> None:
    X, y = read_mushroom(DATA / "mushroom/agaricus-lepiota.data")
    Xtr, Xte, ytr, yte = split(X, y, "p", 0)
    Xte, yte = Xte.iloc[:n_test], yte.iloc[:n_test]
    fractions = (0, 0.25, 0.5, 1, 2, 4)
    curves = {}
    for label, kw in (("Tree", dict(kb="tree")), ("Direct k=2", dict(kb="direct", max_k=2))):
        clf = PLKBClassifier(positive_class="p", **kw).fit(Xtr, ytr)
        curves[label] = pollution_curve(clf, Xte, yte, fractions=fractions)
    print(f"\nPollution (paper Fig. 4): Mushroom ({n_test} test rows), random clauses added as a multiple "
          f"of the KB size (p ~ U(0,1), lengths like the KB's)\n")
    print("| random / KB size | " + " | ".join(f"{k}: random clauses, accuracy, F1" for k in curves) + " |")
    print("|---:|" + "---:|" * len(curves))
    for i, f in enumerate(fractions):
        cells = [f"{c.n_random.iloc[i]}, {c.accuracy.iloc[i]:.3f}, {c.f1.iloc[i]:.3f}" for c in curves.values()]
        print(f"| {f:g} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--max-k", type=int, default=2)
    ap.add_argument("--explain-instances", type=int, default=50)
    ap.add_argument("--shapley-instances", type=int, default=10,
                    help="strings per Syn set for the KB's own Shapley values (2^L LPs each)")
    ap.add_argument("--skip-f1", action="store_true")
    ap.add_argument("--skip-explain", action="store_true")
    ap.add_argument("--skip-pollution", action="store_true")
    args = ap.parse_args()
    if not args.skip_f1:
        print_f1(f1_table(args.seeds, args.max_k), args.seeds, args.max_k)
    if not args.skip_explain:
        print_explanations(explanation_table(args.explain_instances, args.max_k, args.shapley_instances), args.max_k)
    if not args.skip_pollution:
        print_pollution()


if __name__ == "__main__":
    main()
