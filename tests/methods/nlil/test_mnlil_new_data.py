"""m-NLIL predicts data it was not fitted on: scenes with entities it has never seen are predicted from
their own facts (the networks weigh relations, not entities); the fitted data's facts reuse the fit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from xcore.data.generators.scenes import make_scenes
from xcore.methods.registry import REGISTRY
from xcore.nlil.graph import kb_from_dataset
from xcore.nlil.transfer import aligned_kb, same_facts

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("mnlil-new-data")]  # one worker: the module fixture is fitted once


def renamed(ds, prefix: str):
    """`ds` with every constant renamed (`prefix` added): the same kind of scenes, entities never seen."""
    tables = {p: {part: t.assign(**{c: prefix + t[c].astype(str) for c in t.columns if c.startswith("a")})
                  for part, t in parts.items()} for p, parts in ds.tables.items()}
    return dataclasses.replace(ds, tables=tables, name=ds.name + "_renamed")


@pytest.fixture(scope="module")
def fitted():
    train = make_scenes(n_scenes=30, noise=0.0, seed=4)
    settings = REGISTRY["nlil"].default_settings(train).replace(rounds=2, epochs=60)
    return train, settings.estimator().fit(train)


def test_new_scenes_with_unseen_entities_are_predicted_from_their_own_facts(fitted):
    train, est = fitted
    new = renamed(make_scenes(n_scenes=20, noise=0.0, seed=9), "new_")
    seen = set(kb_from_dataset(train).entities)
    preds = est.predict(new)
    assert not set(preds["target"].str.extract(r"\((.*)\)")[0]) & seen  # every target entity is new
    labelled = preds["truth"].notna()
    assert labelled.sum() >= 20
    truth = preds.loc[labelled, "truth"].to_numpy() >= 0.5
    assert np.mean((preds.loc[labelled, "prediction"].to_numpy() >= 0.5) == truth) >= 0.9
    # the lifted rules are executed on the new facts: the planted labels are exactly the rules' union
    assert np.mean(preds.loc[labelled, "rule_fires"].to_numpy() == truth) >= 0.9
    rules = est.rule_frame(new)
    assert (rules.loc[rules["cluster"] == "union", "test_support"] > 0).all()


def test_other_facts_under_the_same_names_are_not_read_from_the_fit(fitted):
    """Scenes of another seed reuse entity names (s0_t0, ...) with other facts: they are predicted on
    their own facts, exactly as the same scenes under new names."""
    _, est = fitted
    other = make_scenes(n_scenes=20, noise=0.0, seed=9)
    a = est.predict(other)
    b = est.predict(renamed(other, "new_"))
    np.testing.assert_allclose(a["prediction"].to_numpy(), b["prediction"].to_numpy(), atol=1e-6)
    np.testing.assert_array_equal(a["rule_fires"].to_numpy(), b["rule_fires"].to_numpy())


def test_the_fitted_data_reuses_the_fitted_facts(fitted):
    train, est = fitted
    for h, kb in est.kbs_.items():
        assert same_facts(aligned_kb(train, kb, h), kb)
        assert est.on_data(h, train)[0] is kb
    pd_fitted, pd_again = est.predict(), est.predict(train)
    np.testing.assert_allclose(pd_again.set_index("target").loc[pd_fitted["target"], "prediction"].to_numpy(),
                               pd_fitted["prediction"].to_numpy(), atol=1e-9)


def test_networks_on_new_facts_leave_the_fit_unchanged(fitted):
    train, est = fitted
    before = est.predict(train)["prediction"].to_numpy().copy()
    est.predict(make_scenes(n_scenes=10, noise=0.0, seed=11))
    np.testing.assert_array_equal(est.predict(train)["prediction"].to_numpy(), before)
    h = next(iter(est.labels_))
    assert all(m.ops is est.labels_[h].models[0].ops for m in est.labels_[h].models)
