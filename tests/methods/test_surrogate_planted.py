"""Surrogates of a user's model on planted ground truth: predictions made by a known rule (not the truth
labels) are recovered as that rule by m-NLIL and DRM with fidelity 1.0 on held-out targets; a model that
flips 20% of its outputs is reproduced with fidelity about 0.8 and flagged; methods that cannot be
surrogates are refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xcore.data import load
from xcore.data.generators.scenes import make_scenes
from xcore.data.predictions import read_predictions, with_predictions
from xcore.errors import XcoreError
from xcore.methods import REGISTRY, run_method
from xcore.methods.surrogate import fidelity_sentence


def _csv(targets, values) -> bytes:
    return ("target,prediction\n" + "".join(f"{t},{int(v)}\n" for t, v in zip(targets, values))).encode()


def _bus_rule_scenes(n_scenes: int = 60, seed: int = 0):
    """Scenes whose labels are the planted street disjunction (with noise), and a user's model that says
    street exactly where a bus is on the object (one alternative only: not the truth labels)."""
    from xcore.nlil.graph import kb_from_dataset
    from xcore.nlil.rules import Rule, Statement, fires

    ds = make_scenes(n_scenes=n_scenes, seed=seed)
    kb = kb_from_dataset(ds, exclude=("street",))
    atoms = pd.concat([ds.tables["street"]["obs"]["a0"], ds.tables["street"]["targets"]["a0"]]).astype(str).unique()
    rule = Rule("street", 1, Statement(("on^-1",), "bus"))
    says = fires(rule, kb.facts(), pd.DataFrame({"x": atoms}))
    return ds, rule, [f"street({a})" for a in atoms], says


@pytest.mark.slow
def test_mnlil_recovers_the_users_rule_with_fidelity_one():
    from xcore.nlil.settings import NLILSettings

    ds, rule, targets, says = _bus_rule_scenes()
    truth = pd.concat([ds.tables["street"]["obs"], ds.tables["street"]["truth"]])
    assert 0.05 < says.mean() < 0.5 and (says != (truth.set_index("a0")["value"].reindex(
        [t[7:-1] for t in targets]).to_numpy() >= 0.5)).sum() > 10  # the model is not the truth
    swapped = with_predictions(ds, read_predictions(("preds.csv", _csv(targets, says)), ds))
    run = run_method("nlil", swapped, NLILSettings(heads=("street",), clusters=1, depth=1, epochs=60, rounds=2),
                     cache=None)
    rules = run.model.rules_
    assert rules.loc[rules["cluster"] == "union", "rule"].item() == rule.text
    assert run.metrics["fidelity"] == 1.0 and run.metrics["fidelity_low"] == 0.0
    held_out = set(ds.tables["street"]["targets"]["a0"].astype(str))
    assert run.metrics["fidelity_targets"] == len(held_out)  # measured on the held-out targets only
    assert run.metrics["truth_accuracy"] < 0.95  # it explains the model, which is not the truth
    p = run.predictions
    assert {"your_model", "truth"} <= set(p.columns)
    np.testing.assert_array_equal((p["prediction"] >= 0.5).to_numpy(), p["your_model"].to_numpy() >= 0.5)
    truth_of = ds.tables["street"]["truth"].assign(a0=lambda t: "street(" + t["a0"].astype(str) + ")")
    np.testing.assert_array_equal(p["truth"].to_numpy(), p["target"].map(dict(zip(truth_of["a0"], truth_of["value"]))))
    exp = run.explanations["nlil:rules"][0]
    assert exp.meta["surrogate_fidelity"].startswith("This explains your model's prediction, which the surrogate "
                                                     "reproduces with fidelity 1.00")


@pytest.mark.slow
def test_drm_recovers_the_users_rule_as_its_explanation_clause():
    from xcore.drm.clauses import Clause, Lit, Var, equivalent
    from xcore.drm.trains import generate_trains, rule_labels

    a, b = Var("A"), Var("B")
    users = Clause(Lit("eastbound", (a,)), (Lit("has_car", (a, b)), Lit("long", (b,)), Lit("closed", (b,))))
    ds = generate_trains(100, seed=0)  # truth: the classic short & closed rule
    says = rule_labels(ds, users)
    trains = ds.truth("eastbound")["a0"].astype(str)
    assert (says != ds.truth("eastbound")["value"].to_numpy()).mean() > 0.3
    swapped = with_predictions(ds, read_predictions(("preds.csv", _csv([f"eastbound({t})" for t in trains], says)), ds))
    settings = REGISTRY["drm"].default_settings(swapped).replace(max_draws=1500, folds=2, explain_rows=100)
    run = run_method("drm", swapped, settings, cache=None)
    m = run.model
    assert any(equivalent(f.clause, users) for f in m.features_)
    assert run.metrics["fidelity"] >= 0.9  # the network's held-out agreement with the user's model
    says_train = m.problem_.labels == 1  # the user's model on the training trains (the surrogate's labels)
    exact = total = 0
    for e in run.explanations["drm:fidelity"]:  # each positive held-out prediction's chosen clause
        if e.prediction != 1 or not e.items:
            continue
        cols = [int(name[1:]) - 1 for name in e.items[0].atoms]
        covered = np.all(m.X_[:, cols] == 1, axis=1)
        total += 1
        exact += int((covered == says_train).all())  # the clause is the user's rule: fidelity 1.0 everywhere
    assert total >= 10 and exact / total >= 0.8


def _flip_table(n: int = 1200, seed: int = 5):
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({f"f{i}": rng.choice(["yes", "no"], n) for i in range(4)})
    table["label"] = rng.choice(["a", "b"], n)  # the truth: unrelated to the model
    rule = np.where(table["f0"] == "yes", "a", "b")
    flipped = rng.random(n) < 0.2
    says = np.where(flipped, np.where(rule == "a", "b", "a"), rule)
    ds = load(("t.csv", table.to_csv(index=False).encode()), fmt="tabular", label="label")
    return ds, says, flipped


@pytest.mark.slow
def test_a_model_flipping_a_fifth_of_its_outputs_gives_fidelity_about_0_8_and_is_flagged():
    ds, says, flipped = _flip_table()
    preds = read_predictions(("preds.csv", _csv_rows(says)), ds)
    run = run_method("plkb", with_predictions(ds, preds), REGISTRY["plkb"].default_settings(ds).replace(
        explain_rows=3), cache=None)
    p = run.predictions
    rows = p["target"].str[4:].astype(int).to_numpy()
    assert (p["prediction"].to_numpy() == np.where(ds.tabular["f0"].to_numpy()[rows] == "yes", "a", "b")).all()
    expected = 1.0 - flipped[rows].mean()  # it learned the rule, so it misses exactly the flipped outputs
    assert run.metrics["fidelity"] == pytest.approx(expected)
    assert abs(run.metrics["fidelity"] - 0.8) < 0.05
    assert run.metrics["fidelity_low"] == 1.0
    text, low = fidelity_sentence(run.metrics)
    assert low and "Warning: low fidelity" in text
    assert run.explanations["plkb:decisive"][0].meta["surrogate_low"] is True


def _csv_rows(says) -> bytes:
    return ("target,prediction\n" + "".join(f"row {i},{v}\n" for i, v in enumerate(says))).encode()


@pytest.mark.slow
def test_methods_that_are_not_surrogates_are_refused_and_the_catalog_says_which_are():
    from xcore.methods.catalog import catalog

    assert {k for k, v in catalog().items() if v.surrogate} == {"esms", "plkb", "drm", "nlil"}
    ds = make_scenes(n_scenes=10, seed=0)
    atoms = ds.tables["street"]["targets"]["a0"].astype(str)
    swapped = with_predictions(ds, read_predictions(("p.csv", _csv([f"street({a})" for a in atoms],
                                                                      np.zeros(len(atoms)))), ds))
    with pytest.raises(XcoreError, match=r"not a surrogate method\); methods that can: esms"):
        run_method("mln", swapped, cache=None)


@pytest.mark.slow
def test_esms_fits_to_soft_predictions_and_reports_r2_and_mae():
    from xcore.data.samples import load_sample

    ds = load_sample("lastfm_demo")
    settings = REGISTRY["esms"].default_settings(ds).replace(iterations=3, n_jobs=1)
    target, cols = settings.target, list(ds.schema[settings.target].columns)
    atoms = pd.concat([ds.tables[target][p] for p in ("obs", "truth", "targets")]).drop_duplicates(cols)
    rng = np.random.default_rng(0)  # a soft model: the ratings with noise
    values = np.clip(atoms["value"].fillna(0.5).to_numpy() + rng.normal(0, 0.1, len(atoms)), 0.01, 0.99).round(3)
    text = "target,prediction\n" + "".join(f"\"{target}({', '.join(r)})\",{v}\n"
                                         for r, v in zip(atoms[cols].astype(str).itertuples(index=False), values))
    preds = read_predictions(("soft.csv", text.encode()), ds)
    assert preds.kind == "score"
    run = run_method("esms", with_predictions(ds, preds), settings, cache=None)
    assert "fidelity" not in run.metrics and {"fidelity_r2", "fidelity_mae"} <= set(run.metrics)
    p = run.predictions
    assert p["your_model"].notna().all() and run.metrics["fidelity_targets"] == len(p)
    ss = ((p["prediction"] - p["your_model"]) ** 2).sum()
    assert run.metrics["fidelity_r2"] == pytest.approx(1 - ss / ((p["your_model"] - p["your_model"].mean()) ** 2).sum())
    assert run.metrics["fidelity_mae"] == pytest.approx((p["prediction"] - p["your_model"]).abs().mean())
    assert run.metrics["fidelity_mae"] == pytest.approx(run.metrics["mae"])  # ESMS fitted to the user's values
    assert run.metrics["fidelity_low"] == float(run.metrics["fidelity_r2"] < 0.5)
