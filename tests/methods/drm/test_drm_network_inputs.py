"""The network's inputs are the distinct feature columns: features drawn as different clauses often
share an extension (Mutagenesis 188: 2,122 features, 202 distinct columns), and repeated inputs
multiply a feature's weight under one weight decay."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.drm.features import Evaluator, distinct_columns, draw_features
from xcore.drm.mutagenesis import load_mutagenesis
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


@pytest.mark.slow
def test_network_and_linear_model_see_each_extension_once():
    ds = generate_trains(40, seed=2)
    s = default_settings(ds).replace(max_draws=400, folds=2, inner_folds=2, max_epochs=10, explain_rows=1,
                                     distinct_inputs=True)
    est = s.estimator().fit(ds)
    inputs = est.X_[:, est.inputs_]
    assert len({tuple(c) for c in inputs.T}) == inputs.shape[1] == len({tuple(c) for c in est.X_.T})
    assert inputs.shape[1] < est.X_.shape[1]  # random trains give repeated extensions
    first = est.net_.model[0]
    assert first.in_features == inputs.shape[1]
    every = s.replace(distinct_inputs=False).estimator().fit(ds)
    assert every.inputs_.tolist() == list(range(every.X_.shape[1]))
    assert every.net_.model[0].in_features == every.X_.shape[1]


@pytest.mark.slow
def test_mutagenesis_features_repeat_extensions():
    ds = load_mutagenesis()
    problem = build_problem(ds, exclude=("cv_fold",))
    X = Evaluator(problem).matrix(draw_features(problem, 1000, seed=0))
    assert len(distinct_columns(X)) < 0.5 * X.shape[1]
