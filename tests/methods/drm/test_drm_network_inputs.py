"""The network's inputs: features drawn as different clauses often share an extension (Mutagenesis 188:
2,122 features, 202 distinct columns), and repeated inputs multiply a feature's weight under one weight
decay, so the inner validation chooses between every feature and one column per distinct extension."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.drm.features import Evaluator, distinct_columns, draw_features
from xcore.drm.mutagenesis import load_mutagenesis
from xcore.drm.network import train_network
from xcore.drm.problem import build_problem
from xcore.drm.runs import default_settings
from xcore.drm.trains import generate_trains


def test_distinct_columns_against_a_set_of_tuples():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2, size=(30, 12)).astype(np.int8)
    X = base[:, rng.integers(0, 12, size=40)]  # 40 columns drawn from 12, many repeated
    idx = distinct_columns(X)
    seen: dict[tuple, int] = {}
    for j in range(X.shape[1]):
        seen.setdefault(tuple(X[:, j]), j)
    assert idx.tolist() == sorted(seen.values())  # the first column of each extension, in order
    assert distinct_columns(np.zeros((3, 0), dtype=np.int8)).tolist() == []


def test_validation_chooses_the_input_columns_with_the_lower_loss():
    """Issue 31: the inner validation picks between every column and one per distinct extension; the loss
    it records for each set equals a search on that set alone, and the lower one wins."""
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2, size=(60, 6))
    y = (base[:, 0] | base[:, 1]).astype(np.int64)
    X = base[:, np.r_[np.arange(6), rng.integers(0, 6, size=24)]].astype(np.float32)  # 30 columns, 6 extensions
    sets = (np.arange(30), distinct_columns(X))
    assert len(sets[1]) == 6
    grid = dict(hidden_grid=((8,),), lrs=(0.05,), dropout=0.0, max_epochs=30, seed=0, weight_decays=(0.0, 0.01),
                inner=2)
    net = train_network(X, y, column_sets=sets, **grid)
    alone = [train_network(X[:, c], y, **grid) for c in sets]
    np.testing.assert_allclose(net.set_losses, [min(n.val_loss) for n in alone], atol=1e-6)
    chosen = int(np.argmin(net.set_losses))
    assert net.columns.tolist() == sets[chosen].tolist() and net.model[0].in_features == len(sets[chosen])


@pytest.mark.slow
def test_network_and_linear_model_take_the_chosen_columns():
    ds = generate_trains(40, seed=2)
    s = default_settings(ds).replace(max_draws=400, folds=2, inner_folds=2, max_epochs=10, explain_rows=1)
    assert s.distinct_inputs  # on by default: validation chooses
    est = s.estimator().fit(ds)
    once = distinct_columns(est.X_)
    assert len(once) < est.X_.shape[1]  # random trains give repeated extensions
    assert est.inputs_.tolist() in (once.tolist(), list(range(est.X_.shape[1])))
    assert est.inputs_.tolist() == est.net_.columns.tolist() and len(est.net_.set_losses) == 2
    assert est.net_.model[0].in_features == len(est.inputs_)
    assert est.linear_.model.coef_.shape[1] == len(est.inputs_)
    every = s.replace(distinct_inputs=False).estimator().fit(ds)
    assert every.inputs_.tolist() == list(range(every.X_.shape[1])) and len(every.net_.set_losses) == 1
    assert every.net_.model[0].in_features == every.X_.shape[1]


@pytest.mark.slow
def test_mutagenesis_features_repeat_extensions():
    ds = load_mutagenesis()
    problem = build_problem(ds, exclude=("cv_fold",))
    X = Evaluator(problem).matrix(draw_features(problem, 1000, seed=0))
    assert len(distinct_columns(X)) < 0.5 * X.shape[1]
