"""Random trains with a planted rule: labels against a direct Python check of the cars, the rule among
the drawn features, and DRM's top explanations recovering the rule."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.drm.clauses import equivalent
from xcore.drm.runs import default_settings, run
from xcore.drm.trains import CLASSIC, generate_trains
from xcore.errors import ConfigError


def test_labels_follow_the_hidden_rule_by_direct_check():
    ds = generate_trains(60, seed=4)
    has = ds.observations("has_car")
    short = set(ds.observations("short")["a0"])
    closed = set(ds.observations("closed")["a0"])
    east = {t for t, c in zip(has["a0"], has["a1"]) if c in short and c in closed}
    truth = ds.truth("eastbound")
    assert {t for t, v in zip(truth["a0"], truth["value"]) if v == 1.0} == east
    assert 0 < len(east) < 60


def test_generator_is_seeded_and_checks_its_input():
    a, b = generate_trains(30, seed=1), generate_trains(30, seed=1)
    assert a.fingerprint() == b.fingerprint() and a.fingerprint() != generate_trains(30, seed=2).fingerprint()
    with pytest.raises(ConfigError, match="n"):
        generate_trains(1)


def test_drm_recovers_the_planted_rule():
    ds = generate_trains(100, seed=0)
    settings = default_settings(ds).replace(max_draws=1500, folds=2, min_neighbours=30, explain_rows=100,
                                            hidden=((32,),), learning_rates=(0.01,))
    r = run(ds, settings)
    m = r.model
    assert any(equivalent(f.clause, CLASSIC) for f in m.features_)
    # the run's figures are held out: the model never saw the predicted trains
    assert r.metrics["test_examples"] == 50 and len(m.X_) == 50
    assert not set(r.predictions["target"]) & {m.target_of(i) for i in range(len(m.X_))}
    assert r.metrics["accuracy"] >= 0.8
    labels = m.problem_.labels  # the planted rule on the training trains
    exact = total = 0
    for e in r.explanations["drm:fidelity"]:
        if e.prediction != 1 or not e.items:
            continue
        cols = [int(name[1:]) - 1 for name in e.items[0].atoms]
        covered = np.all(m.X_[:, cols] == 1, axis=1).astype(int)
        total += 1
        exact += int((covered == labels).all())
    assert total >= 10 and exact / total >= 0.6
