"""Issue 31: why choosing between every feature and distinct columns loses to distinct forced on Mut188.

Per feature seed and data fold, networks on every feature and on the distinct columns (of the fold's
training compounds) are trained separately with `net_seeds` network seeds; their inner validation loss
and accuracy and their test probabilities are kept, and several selection rules are scored on the
same networks: loss choice (the current rule), accuracy choice, distinct unless every-feature wins by a
margin, distinct forced, and ensembles (mean probability) over network seeds and over both sets.

    python bench/drm_selection.py [DRAWS [NET_SEEDS [FEATURE_SEED ...]]]
"""
import os
import sys
import time

import numpy as np

from xcore.drm.features import Evaluator, distinct_columns, draw_features
from xcore.drm.mutagenesis import load_mutagenesis
from xcore.drm.network import train_network
from xcore.drm.problem import build_problem
from xcore.drm.runs import default_settings

ds = load_mutagenesis(numbers=os.environ.get("DRM_NUMBERS", "quartiles"))
s = default_settings(ds)
problem = build_problem(ds, exclude=("cv_fold",))
fold_of = dict(zip(ds.observations("cv_fold")["a0"].astype(str), ds.observations("cv_fold")["a1"].astype(str)))
folds = np.unique([fold_of[e] for e in problem.examples], return_inverse=True)[1]
y = problem.labels
draws = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
net_seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
K = folds.max() + 1
for fseed in [int(a) for a in sys.argv[3:]] or [0, 1, 2]:
    feats = draw_features(problem, draws, seed=fseed, max_literals=s.max_literals, depth=2)
    X = Evaluator(problem).matrix(feats).astype(np.float32)
    c0 = time.process_time()
    # rec[set][seed] -> per fold (val loss, val acc, test proba)
    loss = np.zeros((2, net_seeds, K))
    vacc = np.zeros((2, net_seeds, K))
    proba = [[[None] * K for _ in range(net_seeds)] for _ in range(2)]
    for k in range(K):
        tr, te = folds != k, folds == k
        Xtr = X[tr]
        sets = (np.arange(X.shape[1]), distinct_columns(Xtr))
        for si, cols in enumerate(sets):
            for ns in range(net_seeds):
                net = train_network(Xtr[:, cols], y[tr], s.hidden, s.learning_rates, s.dropout, s.max_epochs, ns,
                                    s.weight_decays, s.inner_folds)
                loss[si, ns, k], vacc[si, ns, k] = net.set_losses[0], net.set_accuracies[0]
                proba[si][ns][k] = net.proba(X[te][:, cols])
    cpu = time.process_time() - c0
    yte = [y[folds == k] for k in range(K)]
    n = len(y)

    def acc(pick):  # pick(k) -> test proba of fold k
        return sum(int(((pick(k) >= 0.5) == yte[k]).sum()) for k in range(K)) / n

    rules = {}
    for ns in range(net_seeds):
        rules.setdefault("all", []).append(acc(lambda k: proba[0][ns][k]))
        rules.setdefault("distinct", []).append(acc(lambda k: proba[1][ns][k]))
        rules.setdefault("choose by loss", []).append(
            acc(lambda k: proba[int(loss[1, ns, k] < loss[0, ns, k])][ns][k]))
        rules.setdefault("choose by accuracy (ties: loss)", []).append(acc(lambda k: proba[
            int((vacc[1, ns, k], -loss[1, ns, k]) > (vacc[0, ns, k], -loss[0, ns, k]))][ns][k]))
        for m in (0.02, 0.05):
            rules.setdefault(f"distinct unless all's loss lower by {m}", []).append(
                acc(lambda k: proba[int(loss[0, ns, k] > loss[1, ns, k] - m)][ns][k]))
        rules.setdefault("mean of all and distinct", []).append(
            acc(lambda k: (proba[0][ns][k] + proba[1][ns][k]) / 2))
    rules["distinct, mean over net seeds"] = [acc(lambda k: np.mean([proba[1][ns][k] for ns in range(net_seeds)], 0))]
    rules["all, mean over net seeds"] = [acc(lambda k: np.mean([proba[0][ns][k] for ns in range(net_seeds)], 0))]
    rules["both sets, mean over net seeds"] = [acc(lambda k: np.mean(
        [proba[si][ns][k] for si in (0, 1) for ns in range(net_seeds)], 0))]
    rules["set by mean loss over seeds, then seed mean"] = [acc(lambda k: np.mean(
        [proba[int(loss[1, :, k].mean() < loss[0, :, k].mean())][ns][k] for ns in range(net_seeds)], 0))]
    print(f"feature seed {fseed}: {len(feats)} features; network CPU s {cpu:.1f}; distinct chosen by loss "
          f"{(loss[1] < loss[0]).mean():.2f}; inner loss all {loss[0].mean():.3f} distinct {loss[1].mean():.3f}; "
          f"inner acc all {vacc[0].mean():.3f} distinct {vacc[1].mean():.3f}", flush=True)
    for r, v in rules.items():
        print(f"  {r:50s} {np.mean(v):.3f}  {' '.join(f'{x:.3f}' for x in v)}", flush=True)
