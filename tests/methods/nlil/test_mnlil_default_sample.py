"""m-NLIL's own sample (issue 24 item 3): the generated scenes it opens with plant several rules per label,
and a default run learns several distinct rules per label that are the planted ones; when clusters do
collapse (the trains: one rule covers every positive), the run says why in words."""

from __future__ import annotations

import pytest

from xcore.data.generators.scenes import DEFAULT_LABELS, make_scenes
from xcore.data.samples import load_sample
from xcore.methods import REGISTRY, run_method

pytestmark = pytest.mark.slow


def test_the_default_sample_is_the_shipped_generated_scenes():
    spec = REGISTRY["nlil"]
    assert spec.sample == "scenes_demo"
    shipped, made = load_sample("scenes_demo"), make_scenes(n_scenes=60, seed=0)
    assert shipped.target_predicates == made.target_predicates == list(DEFAULT_LABELS)
    for label in DEFAULT_LABELS:
        for part in ("obs", "truth"):
            a = shipped.tables[label][part].sort_values("a0", ignore_index=True)
            b = made.tables[label][part].sort_values("a0", ignore_index=True)
            assert a["a0"].astype(str).tolist() == b["a0"].astype(str).tolist()
            assert a["value"].tolist() == b["value"].tolist()


def test_a_default_run_on_the_default_sample_learns_several_planted_rules_per_label():
    spec = REGISTRY["nlil"]
    ds = load_sample(spec.sample)
    run = run_method("nlil", ds, spec.default_settings(ds), cache=None)
    rules = run.model.rules_
    for label, planted in DEFAULT_LABELS.items():
        mine = rules[(rules["head"] == label) & (rules["cluster"] != "union")]["rule"]
        assert mine.nunique() >= 2, (label, list(mine))
        found = {p for p in planted if any(f"{p.rel}(Z, X) & {p.obj}(Z)" in r for r in mine)}
        assert len(found) >= 2, (label, list(mine))  # distinct rules, and they are the planted alternatives
        assert run.model.collapse_[label] == []
    assert run.metrics["clusters_collapsed"] == 0


def test_a_collapse_is_explained_in_words():
    ds = load_sample("trains_michalski10")
    settings = REGISTRY["nlil"].default_settings(ds).replace(epochs=40, rounds=2, clusters=3)
    run = run_method("nlil", ds, settings, cache=None)
    (note,) = run.model.collapse_["eastbound"]
    rule = run.model.rules_["rule"].iloc[0]
    assert note.startswith("1 distinct rule for eastbound where 3 clusters were asked for")
    assert f"one rule, {rule}, already covers 4 of the 4 positive training examples" in note
    assert "only 4 positive training examples for 3 clusters of at least 2 each" in note
    assert "What happened:" in note


def test_a_collapse_without_a_covering_rule_says_the_clusters_were_not_separated():
    from xcore.nlil.graph import kb_from_dataset, queries
    from xcore.nlil.mnlil import Config, collapse_reason
    from xcore.nlil.rules import Rule, Statement

    ds = make_scenes(n_scenes=40, seed=0)
    kb = kb_from_dataset(ds, exclude=("street",))
    q = queries(ds, kb, "street", "obs")
    car = Rule("street", 1, Statement(("on^-1",), "car"))  # one of three planted alternatives: about a third
    why = collapse_reason(kb, q, [car, car], Config(clusters=3))
    assert why.startswith("1 distinct rule for street where 3 clusters were asked for: the positives were not "
                          "separated")
    share = int(why.split("the best rule covers ")[1].split("%")[0])
    assert 15 <= share <= 60
    assert collapse_reason(kb, q, [car, Rule("street", 1, Statement(("on^-1",), "bus")),
                                   Rule("street", 1, Statement(("near^-1",), "road"))], Config(clusters=3)) is None
