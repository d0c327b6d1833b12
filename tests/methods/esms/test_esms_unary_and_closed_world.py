"""ESMS on unary targets (the app's opening sample) and on all-positive targets (closed-world reading)."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from xcore.data.samples import load_sample
from xcore.errors import XcoreError
from xcore.esms.data_reading import closed_world
from xcore.esms.settings import ESMSSettings
from xcore.esms.templates import UNARY_TEMPLATES, fill_templates
from xcore.methods import REGISTRY, run_method


def test_unary_templates_fill_the_friends_and_smokers_schema():
    ds = load_sample("friends_smokers")
    rules = fill_templates(ds.schema, "smokes")
    texts = {r.text("psl").split(": ", 1)[1] for r in rules}
    assert "friends(A, B) & smokes(B) -> smokes(A) ^2" in texts  # neighbour through a link
    assert "cancer(A) -> smokes(A) ^2" in texts                   # attribute
    assert "~smokes(A) ^2" in texts and "smokes(A) ^2" in texts   # priors
    assert {r.name for r in rules} <= {t.name for t in UNARY_TEMPLATES}
    assert all(len(r.head) == 1 and r.head[0].atom.predicate == "smokes" for r in rules)


def test_esms_runs_on_the_sample_the_app_opens_with():
    ds = load_sample("friends_smokers")
    assert REGISTRY["esms"].applicable(ds) is None
    run = run_method("esms", ds, ESMSSettings(target="smokes", iterations=3, rules_per_model=4), cache=None)
    assert run.predictions["target"].str.startswith("smokes(").all()
    assert all(it.kind == "rule" for it in run.summary.items)


def tiny(truth_rows):
    from xcore.data import load

    lines = ["predicate,arg1,arg2,value,partition"] + [f"likes,{a},{b},1,truth" for a, b in truth_rows] \
        + [f"likes,{a},{b},,targets" for a, b in truth_rows] + ["knows,x,y,1,obs", "knows,y,z,1,obs"]
    return load(("facts.csv", ("\n".join(lines) + "\n").encode()), fmt="long_csv")


def test_closed_world_adds_exactly_the_absent_atoms_of_the_domain():
    ds = tiny([("a", "p"), ("b", "q")])
    cw = closed_world(ds, "likes")
    expected = set(itertools.product("ab", "pq")) - {("a", "p"), ("b", "q")}
    truth = cw.truth("likes")
    zeros = {tuple(r) for r in truth.loc[truth["value"] == 0.0, ["a0", "a1"]].to_numpy()}
    assert zeros == expected and len(cw.targets("likes")) == 4
    with pytest.raises(XcoreError, match="above the limit of 1"):
        closed_world(ds, "likes", limit=1)


def test_all_positive_target_is_refused_without_the_closed_world_and_learned_with_it():
    ds = load_sample("family")
    settings = REGISTRY["esms"].default_settings(ds).replace(iterations=5)
    assert settings.closed_world
    with pytest.raises(XcoreError, match="no negative labels"):
        run_method("esms", ds, settings.replace(closed_world=False), cache=None)
    run = run_method("esms", ds, settings, cache=None)
    assert set(pd.unique(run.predictions["truth"])) == {0.0, 1.0}
    assert run.metrics["auroc"] > 0.8
