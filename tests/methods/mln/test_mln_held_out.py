"""Markov logic as an estimator: `predict(new data)` infers the new data's query atoms from its own
evidence (checked against exact enumeration), the run holds out labelled atoms, and bundles written
with the old explainer names (``lime``, ``shap``) still load."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.data.generators.friends_smokers import friends_smokers_dataset
from xcore.data.samples import load_sample
from xcore.logic.grounding import ground
from xcore.logic.parser import parse_rules
from xcore.methods import REGISTRY, Run, run_method
from xcore.methods.evaluate import Holdout, evaluate, held_out_parts
from xcore.mln.network import build_ground_mln
from xcore.mln.settings import MLNSettings
from xcore.mln.synthetic import FRIENDS_SMOKERS_RULES


def _brute_force_marginals(rules: str, data) -> dict[str, float]:
    """P(atom) of every query atom of `data` by enumerating all worlds of its folded network."""
    program = ground(parse_rules(rules, dialect="mln"), data)
    mln = build_ground_mln(program)
    n = mln.n_atoms
    worlds = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(np.int8)
    logw = mln.log_weight(worlds)
    p = np.exp(logw - logw.max())
    p /= p.sum()
    return dict(zip(mln.atoms_text().tolist(), (p @ worlds).tolist()))


def test_predict_infers_the_held_out_atoms_from_the_new_datas_evidence():
    ds = friends_smokers_dataset(6, avg_friends=2.0, seed=0)
    settings = MLNSettings(target="smokes", rules=FRIENDS_SMOKERS_RULES, inference="exact",
                           explainers=("mln:m-explain",))
    est = settings.estimator()
    units = est.units(ds)
    assert set(units["predicate"]) == {"smokes"} and len(units) >= 3
    test_units = units["unit"].iloc[held_out_parts(units, Holdout(0.5, seed=0))[0]].tolist()
    train, test = est.holdout(ds, test_units)
    est.fit(train)
    assert not set(test_units) & set(est.predict()["target"])  # training data does not hold them
    got = est.predict(test).set_index("target")["prediction"]
    want = _brute_force_marginals(FRIENDS_SMOKERS_RULES, test)
    assert set(test_units) <= set(got.index)
    for atom in got.index:
        assert got[atom] == pytest.approx(want[atom], abs=1e-9)
    # the training labels are the test data's evidence: without them the held-out marginals differ
    without = _brute_force_marginals(FRIENDS_SMOKERS_RULES, ds)
    assert max(abs(without[a] - got[a]) for a in test_units) > 1e-3


@pytest.mark.slow
def test_evaluate_on_the_sample_uses_its_model_not_zero_weights():
    """Parts of a sample ("reviews_demo (train)") start from the sample's model.mln: the held-out
    marginals are informative (they were all about 0.5 when the parts fell back to zero weights)."""
    ds = load_sample("reviews_demo")
    settings = REGISTRY["mln"].default_settings(ds).replace(n_samples=100, burn_in=20, T=3)
    ev = evaluate("mln", ds, settings, Holdout(0.25, seed=0))
    assert ev.predictions["prediction"].std() > 0.2
    assert ev.metrics["accuracy"] >= 0.85 > ev.metrics["baseline_accuracy"]
    assert ev.metrics["mse"] < 0.1 < ev.metrics["baseline_mse"]


@pytest.mark.slow
def test_run_explains_and_scores_only_the_held_out_atoms():
    ds = friends_smokers_dataset(6, avg_friends=2.0, seed=0)
    settings = MLNSettings(target="cancer", rules=FRIENDS_SMOKERS_RULES, inference="exact",
                           explainers=("mln:m-explain",), test_size=0.5)
    run = run_method("mln", ds, settings, cache=None)
    units = settings.estimator().units(ds)
    held = set(units["unit"].iloc[held_out_parts(units, Holdout(0.5, seed=0))[0]])
    labelled = run.predictions.dropna(subset=["truth"])
    assert set(labelled["target"]) == held
    assert run.model.split_sizes_ == (len(units) - len(held), len(held))
    assert held <= set(run.explanations["mln:m-explain"].targets)
    assert "workflow" not in run.extras and "setting" not in run.extras


def test_old_explainer_names_still_load():
    ds = friends_smokers_dataset(6, avg_friends=2.0, seed=0)
    settings = MLNSettings(target="cancer", rules=FRIENDS_SMOKERS_RULES, inference="exact",
                           explainers=("mln:m-explain",))
    bundle = run_method("mln", ds, settings, cache=None).bundle()
    bundle["settings"]["explainers"] = ["mln:m-explain", "lime", "shap"]  # as an older xcore wrote them
    bundle["explanations"]["lime"] = bundle["explanations"]["mln:m-explain"]
    old = Run.from_bundle(bundle)
    assert "mln:lime" in old.explanations and "lime" not in old.explanations  # read under today's name
    assert isinstance(old.settings, MLNSettings)  # the old names in the settings are today's too
    assert old.settings.explainers == ("mln:m-explain", "mln:lime", "mln:shap")
    assert MLNSettings.parse(dict(bundle["settings"])).explainers == ("mln:m-explain", "mln:lime", "mln:shap")
    assert MLNSettings(explainers=("shap",)).explainers == ("mln:shap",)
