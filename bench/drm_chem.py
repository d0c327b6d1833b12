"""Issue 31: DRM's network against L2 logistic regression on Mut188 (the data's 10 folds) and Canc330 (the
run's seeded 10 folds), for loader options (atom charge thresholds) and network grids.

Features are drawn once per feature seed from every compound (labels unused, as the paper draws them) and
cached under $DRM_CACHE (default /tmp/drm_chem); per fold the network's inner validation chooses inputs,
sizes, learning rate, weight decay (the settings' grid unless overridden) on the fold's training compounds
only; the test fold is scored once. Prints accuracy mean (sd over folds) per network seed and their mean,
the linear model on the chosen inputs, and the network part's CPU seconds.

    python bench/drm_chem.py mut|canc [--charges K] [--draws N] [--feature-seed S] [--net-seeds N]
        [--hidden "32;64,32"] [--wd "0.001,0.01,0.03"] [--dropout P] [--lr "0.01"] [--epochs N] [--retrains R]
"""
import argparse
import os
import time
from pathlib import Path

import numpy as np

from xcore.drm.carcinogenesis import load_carcinogenesis
from xcore.drm.estimator import DRMEstimator, input_candidates
from xcore.drm.features import Evaluator, distinct_columns, draw_features
from xcore.drm.folds import fold_parts
from xcore.drm.linear import fit_linear
from xcore.drm.mutagenesis import load_mutagenesis
from xcore.drm.network import train_network
from xcore.drm.problem import build_problem
from xcore.drm.runs import default_settings

ap = argparse.ArgumentParser()
ap.add_argument("data", choices=["mut", "canc"])
ap.add_argument("--charges", type=int, default=0)
ap.add_argument("--numbers", default="quartiles")
ap.add_argument("--draws", type=int, default=10000)
ap.add_argument("--feature-seed", type=int, default=0)
ap.add_argument("--net-seeds", type=int, default=3)
ap.add_argument("--hidden", default="")
ap.add_argument("--wd", default="")
ap.add_argument("--lr", default="")
ap.add_argument("--dropout", type=float, default=None)
ap.add_argument("--epochs", type=int, default=None)
ap.add_argument("--inner", type=int, default=None)
ap.add_argument("--no-distinct", action="store_true")
ap.add_argument("--retrains", type=int, default=1, help="retrain the chosen network from this many seeds (mean)")
args = ap.parse_args()

if args.data == "mut":
    ds = load_mutagenesis(numbers=args.numbers, charges=args.charges)
else:
    ds, _ = load_carcinogenesis("/work/shared/data/carcinogenesis", charges=args.charges)
s = default_settings(ds)
exclude = (s.fold_predicate,) if s.fold_predicate else ()
problem = build_problem(ds, exclude=exclude)
index = {e: i for i, e in enumerate(problem.examples)}
folds = np.zeros(len(problem.examples), dtype=np.int64)
for k, part in enumerate(fold_parts(DRMEstimator(s), ds)):
    for t in part:
        folds[index[t[len(problem.target) + 1:-1]]] = k
y = problem.labels
K = int(folds.max()) + 1

cache = Path(os.environ.get("DRM_CACHE", "/tmp/drm_chem"))
cache.mkdir(parents=True, exist_ok=True)
path = cache / f"{args.data}_c{args.charges}_{args.numbers}_{args.draws}_{args.feature_seed}.npy"
t0 = time.process_time()
if path.exists():
    X = np.load(path)
else:
    feats = draw_features(problem, args.draws, seed=args.feature_seed, max_literals=s.max_literals, depth=2)
    X = Evaluator(problem).matrix(feats).astype(np.float32)
    np.save(path, X)
feature_cpu = time.process_time() - t0

hidden = tuple(tuple(int(h) for h in a.split(",")) for a in args.hidden.split(";")) if args.hidden else s.hidden
wds = tuple(float(w) for w in args.wd.split(",")) if args.wd else s.weight_decays
lrs = tuple(float(w) for w in args.lr.split(",")) if args.lr else s.learning_rates
dropout = s.dropout if args.dropout is None else args.dropout
epochs = args.epochs or s.max_epochs
inner = args.inner or s.inner_folds
print(f"{ds.name}: {X.shape[1]} features ({len(distinct_columns(X))} distinct), charges {args.charges}, "
      f"feature seed {args.feature_seed}, feature CPU s {feature_cpu:.1f}; grid hidden {hidden} wd {wds} lr {lrs} "
      f"dropout {dropout} epochs {epochs} inner {inner}", flush=True)
c0 = time.process_time()
nets, lins = [], []
for ns in range(args.net_seeds):
    acc, lin, chose, picks = np.zeros(K), np.zeros(K), 0, []
    for k in range(K):
        tr, te = folds != k, folds == k
        Xtr = X[tr]
        net = train_network(Xtr, y[tr], hidden, lrs, dropout, epochs, ns, wds, inner,
                            column_sets=input_candidates(Xtr, not args.no_distinct), retrains=args.retrains)
        cols = net.columns
        acc[k] = np.mean((net.proba(X[te][:, cols]) >= 0.5) == y[te])
        lin[k] = np.mean((fit_linear(Xtr[:, cols], y[tr]).proba(X[te][:, cols]) >= 0.5) == y[te])
        chose += len(cols) < X.shape[1]
        picks.append(f"{net.hidden}/{net.weight_decay:g}/{net.epochs}")
    n = len(y)
    sizes = np.bincount(folds)
    nets.append(float(acc @ sizes / n))
    lins.append(float(lin @ sizes / n))
    print(f"  net seed {ns}: network {nets[-1]:.3f} ({acc.std():.3f}); linear {lins[-1]:.3f} ({lin.std():.3f}); "
          f"distinct {chose}/{K}; per fold {' '.join(f'{a:.3f}' for a in acc)}; picks {' '.join(picks)}", flush=True)
print(f"mean over {args.net_seeds} network seeds: network {np.mean(nets):.3f} (sd {np.std(nets):.3f}), linear "
      f"{np.mean(lins):.3f}; network CPU s {time.process_time() - c0:.1f}", flush=True)
