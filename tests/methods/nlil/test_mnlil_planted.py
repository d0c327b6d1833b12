"""m-NLIL on planted ground truth: the scene generator's labels are its rules, several alternatives per
label are recovered as separate cluster rules, collapse is reported, fits are deterministic; the GQA
node-task reader and filtered ranking metrics against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.data.generators.scenes import (
    PlantedRule,
    make_scenes,
    planted_rules,
    read_frequencies,
    read_gqa_node_task,
)
from xcore.errors import DataError, XcoreError
from xcore.methods import run_method
from xcore.nlil.graph import kb_from_dataset, queries
from xcore.nlil.kg import filtered_ranks
from xcore.nlil.mnlil import Config, fit_label
from xcore.nlil.rules import Rule, Statement, fires, quality
from xcore.nlil.settings import NLILSettings


def planted_rule(label: str, alt: PlantedRule) -> Rule:
    return Rule(label, 1, Statement((f"{alt.rel}^-1" if alt.into else alt.rel,), alt.obj))


def test_scene_labels_are_the_planted_disjunction_without_noise():
    ds = make_scenes(n_scenes=30, noise=0.0, seed=4)
    from xcore.data.generators.scenes import DEFAULT_LABELS

    for label, alts in DEFAULT_LABELS.items():
        kb = kb_from_dataset(ds, exclude=(label,))
        for part in ("obs", "truth"):
            q = queries(ds, kb, label, part)
            hit = np.zeros(len(q), dtype=bool)
            for alt in alts:
                hit |= fires(planted_rule(label, alt), kb.facts(), q.frame(kb))
            np.testing.assert_array_equal(hit, q.label > 0.5)
    assert planted_rules()["street"][0] == "street(X) <- car(Y) & on(Y, X)"


def test_scene_types_follow_gqa_frequencies_and_bad_arguments_are_data_errors(tmp_path):
    ds = make_scenes(n_scenes=300, objects_per_scene=10, plant_rate=0.0, seed=1)
    counts = {p.name: len(ds.observations(p.name)) for p in ds.schema if p.arity == 1 and p.closed}
    assert max(counts, key=counts.get) == "window"  # GQA's most frequent object
    with pytest.raises(DataError, match="noise"):
        make_scenes(noise=0.7)
    bad = tmp_path / "obj_freq.txt"
    bad.write_text("total obj 3\ncar 2\nbus x\n")
    with pytest.raises(DataError, match="line 3"):
        read_frequencies(bad)


def test_gqa_node_task_reader(tmp_path):
    (tmp_path / "scene1.txt").write_text("car(c1)\non(c1, s1)\n1 street(s1)\n0 street(c1)\n")
    (tmp_path / "scene2.txt").write_text("bus(b)\non(b, s)\n1 street(s)\n")
    ds = read_gqa_node_task(tmp_path, "street")
    assert ds.schema["on"].arity == 2 and not ds.schema["street"].closed
    st = ds.observations("street").sort_values("a0")
    assert list(st["a0"]) == ["scene1_c1", "scene1_s1", "scene2_s"] and list(st["value"]) == [0.0, 1.0, 1.0]
    (tmp_path / "scene3.txt").write_text("on(a b)\n")
    with pytest.raises(DataError, match="scene3.txt, line 1"):
        read_gqa_node_task(tmp_path, "street")


@pytest.fixture(scope="module")
def street():
    ds = make_scenes(n_scenes=60, seed=0)
    kb = kb_from_dataset(ds, exclude=("street",))
    ops = kb.operators()
    return ds, kb, ops, queries(ds, kb, "street", "obs"), queries(ds, kb, "street", "truth")


def test_mnlil_recovers_several_planted_alternatives_and_beats_one_rule(street):
    ds, kb, ops, train, test = street
    multi = fit_label(kb, ops, train, Config(clusters=3, depth=1, epochs=80, rounds=3, seed=0))
    single = fit_label(kb, ops, train, Config(clusters=1, depth=1, statements=6, epochs=80, seed=0))
    from xcore.data.generators.scenes import DEFAULT_LABELS

    planted = {planted_rule("street", a).body for a in DEFAULT_LABELS["street"]}
    found = {r.body for r in multi.rules} & planted
    assert len(found) >= 2, [r.text for r in multi.rules]
    facts, frame = kb.facts(), test.frame(kb)
    q_multi = quality(fires(multi.union, facts, frame), test.label)
    q_single = quality(fires(single.union, facts, frame), test.label)
    assert q_multi["recall"] > q_single["recall"] + 0.2
    assert q_multi["precision"] >= 0.8
    assert sum(len(m) for m in multi.members) == int(train.label.sum())


def test_fit_is_deterministic_under_the_seed(street):
    ds, kb, ops, train, _ = street
    cfg = Config(clusters=2, depth=2, epochs=30, rounds=2, seed=3)
    a, b = fit_label(kb, ops, train, cfg), fit_label(kb, ops, train, cfg)
    assert [r.text for r in a.rules] == [r.text for r in b.rules]
    assert all(np.array_equal(x, y) for x, y in zip(a.members, b.members))
    np.testing.assert_array_equal(a.proba(train.x), b.proba(train.x))


def test_collapse_is_detected_and_reported():
    """Data without latent clusters (one planted rule): the clusters learn the same rule, and m-NLIL says so."""
    ds = make_scenes(n_scenes=60, noise=0.0, labels={"street": (PlantedRule("car", "on"),)}, seed=0)
    kb = kb_from_dataset(ds, exclude=("street",))
    train = queries(ds, kb, "street", "obs")
    res = fit_label(kb, kb.operators(), train, Config(clusters=3, depth=1, epochs=60, rounds=2, lam=0.0, seed=0))
    assert any("same rule" in c for c in res.collapse), res.collapse
    assert res.union.text == "street(X) <- on(Z, X) & car(Z)"
    assert sum(len(m) for m in res.members) == int(train.label.sum())


def test_method_run_on_scenes_reports_rules_and_firing_cluster():
    ds = make_scenes(n_scenes=40, seed=2)
    run = run_method("nlil", ds, NLILSettings(heads=("table",), clusters=2, depth=1, epochs=60, rounds=2),
                     cache=None)
    rules = run.model.rules_
    assert set(rules["cluster"]) == {"0", "1", "union"}
    p = run.predictions
    assert p["target"].str.startswith("table(").all() and p["truth"].notna().all()
    exp = run.explanations["nlil:rules"][0]
    fired = [it.extras["fires"] for it in exp.items]
    row = p.set_index("target").loc[exp.target]
    assert bool(row["rule_fires"]) == any(fired)
    assert run.metrics["recall"] > 0.5
    with pytest.raises(XcoreError, match="not a target"):
        from xcore.nlil.explainers import RuleExplainer
        RuleExplainer().explain(run.model, targets=["table(nope)"])


def test_filtered_ranks_by_hand():
    scores = np.array([[0.9, 0.8, 0.8, 0.1], [0.2, 0.9, 0.5, 0.5], [0.2, 0.9, 0.5, 0.5]])
    known = np.array([[True, False, False, False], [False, True, False, True], [False, False, False, False]])
    # query 0: object 0 is another known truth (filtered); the true object 2 ties with 1: rank 1.5
    # query 1: objects 1 and 3 are other known truths (filtered): rank 1
    # query 2: nothing filtered: object 1 above, object 3 tied: rank 2.5
    np.testing.assert_allclose(filtered_ranks(scores, np.array([2, 2, 2]), known), [1.5, 1.0, 2.5])


def test_gcn_mode_rules_are_faithful_and_compared_with_gnnexplainer():
    pytest.importorskip("torch_geometric")
    from xcore.nlil.gnn import characterization

    assert characterization(0.6, 0.4) == pytest.approx(0.6) and characterization(0.0, 0.2) == 0.0
    ds = make_scenes(n_scenes=40, seed=0)
    run = run_method("nlil", ds, NLILSettings(heads=("street",), mode="gcn", depth=1, epochs=60, rounds=2,
                                              clusters=3, gcn_epochs=150, compare_nodes=5, explain_targets=5,
                                              explainer_epochs=30), cache=None)
    cmp = run.model.gcn_comparison_
    assert list(cmp["explainer"]) == ["m-NLIL rules", "GNNExplainer (top-k edges)"]
    assert (cmp["nodes"] == 5).all() and cmp[["fidelity+", "fidelity-"]].apply(lambda c: c.between(0, 1).all()).all()
    assert run.metrics["rules_agreement_with_gcn"] > 0.8  # the rules reproduce the GCN, not just the truth
    p = run.predictions
    rules = run.model.rules_
    union = rules[rules["cluster"] == "union"].iloc[0]
    assert union["fidelity"] == pytest.approx(((p["gcn"] >= 0.5) == p["rule_fires"]).mean())
    edges = run.explanations["nlil:gnnexplainer"][0]
    assert edges.items and all(it.text.startswith("edge(") for it in edges.items)
    assert run.explanations["nlil:gcn-rules"].score_spec.label == "fidelity to the GCN"


def test_clusters_in_parallel_processes_give_the_sequential_result(street):
    ds, kb, ops, train, _ = street
    cfg = Config(clusters=2, depth=1, epochs=20, rounds=1, seed=0)
    seq = fit_label(kb, ops, train, cfg)
    par = fit_label(kb, ops, train, Config(**{**cfg.__dict__, "n_jobs": 2}))
    assert [r.text for r in par.rules] == [r.text for r in seq.rules]
    np.testing.assert_array_equal(par.proba(train.x), seq.proba(train.x))
