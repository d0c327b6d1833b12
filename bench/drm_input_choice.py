"""Issue 31: Mut188 with the data's 10 folds, features drawn once per feature seed (label-free, as the paper draws them),
then per fold a network whose inner validation chooses between every feature and distinct columns; prints
accuracy beside L2 logistic regression on the chosen inputs and the network part's CPU seconds.

    python bench/drm_input_choice.py [DRAWS [FEATURE_SEED ...]]
"""
import sys
import time

import numpy as np

from xcore.drm.estimator import input_candidates
from xcore.drm.features import Evaluator, distinct_columns, draw_features
from xcore.drm.linear import fit_linear
from xcore.drm.mutagenesis import load_mutagenesis
from xcore.drm.network import train_network
from xcore.drm.problem import build_problem
from xcore.drm.runs import default_settings

ds = load_mutagenesis()
s = default_settings(ds)
problem = build_problem(ds, exclude=("cv_fold",))
fold_of = dict(zip(ds.observations("cv_fold")["a0"].astype(str), ds.observations("cv_fold")["a1"].astype(str)))
folds = np.unique([fold_of[e] for e in problem.examples], return_inverse=True)[1]
y = problem.labels
draws = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
for fseed in [int(a) for a in sys.argv[2:]] or [0, 1, 2]:
    feats = draw_features(problem, draws, seed=fseed, max_literals=s.max_literals, depth=2)
    X = Evaluator(problem).matrix(feats).astype(np.float32)
    c0 = time.process_time()
    acc, lin, chose = [], [], []
    for k in range(folds.max() + 1):
        tr, te = folds != k, folds == k
        Xtr = X[tr]
        net = train_network(Xtr, y[tr], s.hidden, s.learning_rates, s.dropout, s.max_epochs, 0, s.weight_decays,
                            s.inner_folds, column_sets=input_candidates(Xtr, True))
        cols = net.columns
        acc.append(float(np.mean((net.proba(X[te][:, cols]) >= 0.5) == y[te])))
        lin.append(float(np.mean((fit_linear(Xtr[:, cols], y[tr]).proba(X[te][:, cols]) >= 0.5) == y[te])))
        chose.append("distinct" if len(cols) < X.shape[1] else "all")
    cpu = time.process_time() - c0
    print(f"feature seed {fseed}: {len(feats)} features, {len(distinct_columns(X))} distinct; network "
          f"{np.mean(acc):.3f} ({np.std(acc):.3f}); linear {np.mean(lin):.3f} ({np.std(lin):.3f}); chose "
          f"{chose.count('distinct')}/10 distinct; network CPU s {cpu:.1f}", flush=True)
