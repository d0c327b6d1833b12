"""ESMS's estimator is the algorithm (issue 33): `fit` learns from every labelled target it is given (its
own validation split inside), the registered run holds out the test part with the shared split, and
the page's split sizes are the sizes the run uses."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from xcore.data import load
from xcore.data.samples import load_sample
from xcore.esms.runs import held_out_split, reinfer
from xcore.esms.settings import ESMSSettings
from xcore.esms.split_sizes import split_sizes
from xcore.methods import run_method
from xcore.methods.evaluate import Holdout, held_out_parts

QUICK = dict(target="rating", block="rated", iterations=2, rules_per_model=3, n_jobs=1, seed=3)


def atoms(ds, predicate):
    """The target atoms of `predicate` with a truth value, as (a0, a1) tuples."""
    return {tuple(r) for r in ds.truth(predicate)[["a0", "a1"]].astype(str).to_numpy()}


@pytest.mark.slow
def test_run_predicts_exactly_the_shared_held_out_part_with_the_page_sizes():
    ds = load_sample("lastfm_demo")
    settings = ESMSSettings(**QUICK)
    run = run_method("esms", ds, settings, cache=None, fits=None)
    est = settings.estimator()
    units = est.units(ds)
    held = set(units["unit"].iloc[held_out_parts(units, Holdout(settings.test_fraction, settings.seed))[0]])
    assert set(run.predictions["target"]) == held and run.predictions["truth"].notna().all()
    sizes = split_sizes(ds, "rating", settings.valid_fraction, settings.test_fraction)
    assert (run.metrics["n_train"], run.metrics["n_valid"], run.metrics["n_test"]) == \
        (sizes["train"], sizes["validation"], sizes["test"])
    assert set(run.explanations["esms:ground-rules"].targets) == held
    assert "esms" not in run.extras


@pytest.mark.slow
def test_fit_sees_no_held_out_atom_and_predicts_new_data():
    ds = load_sample("lastfm_demo")
    est, train, test = held_out_split(ds, ESMSSettings(**QUICK))
    est.fit(train)
    held = atoms(test, "rating")
    assert held and not held & atoms(est.train_, "rating")
    assert est.n_train_ + est.n_valid_ == len(atoms(train, "rating"))
    assert not held & {tuple(r) for r in est.model_.predict()[["a0", "a1"]].astype(str).to_numpy()}
    predictions = est.predict(test)
    assert len(predictions) == len(test.targets("rating"))
    assert est.history_ is est.search_.history_ and est.rules_ == est.search_.best_rules_


def tiny_all_positive(n=6):
    rows = [(f"u{i}", f"i{(i * 7) % n}") for i in range(n)] + [(f"u{i}", f"i{(i * 3 + 1) % n}") for i in range(n)]
    lines = ["predicate,arg1,arg2,value,partition"] + [f"likes,{a},{b},1,truth" for a, b in rows] \
        + [f"likes,{a},{b},,targets" for a, b in rows] \
        + [f"knows,u{i},u{(i + 1) % n},1,obs" for i in range(n)]
    return load(("facts.csv", ("\n".join(lines) + "\n").encode()), fmt="long_csv")


def test_closed_world_training_part_keeps_held_out_atoms_unknown():
    """The closed-world negatives are read once, before the split: the training part's held-out atoms
    must not come back as negatives when `fit` reads it (that would label held-out positives 0)."""
    ds = tiny_all_positive()
    settings = ESMSSettings(target="likes", closed_world=True, iterations=1, rules_per_model=2, n_jobs=1)
    est, train, test = held_out_split(ds, settings)
    closed = est.prepared(ds)
    domain = set(itertools.product((f"u{i}" for i in range(6)), (f"i{j}" for j in range(6))))
    assert atoms(closed, "likes") == domain  # every atom of the domain is labelled (0 where absent)
    assert len(atoms(train, "likes")) + len(atoms(test, "likes")) == len(domain)
    est.fit(train)
    held = atoms(test, "likes")
    assert not held & atoms(est.train_, "likes")
    truth = est.train_.truth("likes")
    assert len(truth) == len(atoms(est.train_, "likes")) and np.isin(truth["value"], [0.0, 1.0]).all()


@pytest.mark.slow
def test_reinfer_applies_edited_rules_to_the_same_held_out_atoms():
    ds = load_sample("lastfm_demo")
    run = run_method("esms", ds, ESMSSettings(**QUICK), cache=None, fits=None)
    edited = reinfer(run, "1.0: sgd_rating(U, I) & rated(U, I) -> rating(U, I) ^2\n0: ~rating(U, I) ^2\n")
    assert set(edited.predictions["target"]) == set(run.predictions["target"])
    assert edited.model.edited_ and not run.model.edited_
    assert len(edited.model.rules_) == 2 and edited.model.rules_[1].weight > 0  # weight 0: learned by PPLL
    assert edited.model.history_ is run.model.history_
