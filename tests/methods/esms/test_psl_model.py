"""PSLModel: Lukasiewicz hinges from grounding, PPLL weights and cache, MAP, predict, text round trip."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xcore.psl.model as model_mod
from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.errors import XcoreError
from xcore.logic.parser import parse_rules
from xcore.psl.data_keys import PPLLCache, dataset_fingerprint
from xcore.psl.inference import map_inference
from xcore.psl.model import PSLModel
from xcore.psl.scores import prediction_metrics


def smokers(seed: int = 0, n: int = 8) -> RelationalDataset:
    """Friends and smokers: friend(P, Q) observed, smokes(P) as smokes(P, 't') open; half labelled."""
    rng = np.random.default_rng(seed)
    people = [f"p{i}" for i in range(n)]
    fr = [(a, b) for a in people for b in people if a != b and rng.random() < 0.35]
    friend = pd.DataFrame({"a0": [a for a, _ in fr], "a1": [b for _, b in fr], "value": rng.uniform(0.3, 1, len(fr))})
    obs = people[: n // 2]
    tgt = people[n // 2:]
    return RelationalDataset(
        [Predicate("friend", 2, ("person", "person"), template="{0} is friends with {1}"),
         Predicate("smokes", 2, ("person", "habit"), closed=False, template="{0} smokes"),
         Predicate("stress", 2, ("person", "habit"), explainable=False)],
        {"friend": {"obs": friend},
         "smokes": {"obs": pd.DataFrame({"a0": obs, "a1": "t", "value": rng.uniform(0, 1, len(obs))}),
                    "targets": pd.DataFrame({"a0": tgt, "a1": "t"}),
                    "truth": pd.DataFrame({"a0": tgt, "a1": "t", "value": rng.uniform(0, 1, len(tgt))})},
         "stress": {"obs": pd.DataFrame({"a0": people, "a1": "t", "value": rng.uniform(0, 1, n)})}},
        name="smokers")


RULES = """
2.0: friend(A, B) & smokes(A, H) -> smokes(B, H) ^2
0.7: stress(A, H) -> smokes(A, H)
1.0: ~smokes(A, H) ^2
"""


def test_ground_rule_hinge_is_lukasiewicz_distance():
    """X1 & Y1 -> Y2 gives max(X1 + Y1 - Y2 - 1, 0) (squared for ^2), Y open and X observed."""
    ds = smokers()
    m = PSLModel(RULES).ground(ds)
    store, g = m.store_, m.grounded_[0]
    rng = np.random.default_rng(1)
    y = rng.random(store.n_targets)
    value = np.where(store.is_target, 0.0, store.value)
    value[store.target_ids] = y
    fr, sa, sb = (value[g.atom_ids[:, j]] for j in range(3))
    expected = np.maximum(fr + sa - sb - 1, 0) ** 2
    form = m.forms_[0]
    h = np.maximum(form.A @ y + form.b, 0)
    np.testing.assert_allclose(h ** 2, expected[form.rows], atol=1e-12)
    # rows dropped from the program are exactly those without a target atom
    has_target = store.is_target[g.atom_ids].any(axis=1)
    np.testing.assert_array_equal(np.flatnonzero(has_target), form.rows)
    prog = m.program_
    assert prog.n_potentials == sum(len(f.rows) for f in m.forms_)
    np.testing.assert_array_equal(prog.squared, np.repeat([True, False, True], [len(f.rows) for f in m.forms_]))


def test_infer_predict_and_warm_start():
    ds = smokers()
    m = PSLModel(RULES).ground(ds)
    res = m.infer()
    ref = map_inference(m.program_, "qp")
    np.testing.assert_allclose(res.y, ref.y, atol=1e-5)
    assert res.energy == pytest.approx(ref.energy, abs=1e-7)
    again = m.infer(warm_start=True)
    assert again.iterations <= res.iterations and np.allclose(again.y, res.y, atol=1e-6)
    pred = m.predict()
    assert list(pred.columns) == ["atom_id", "predicate", "atom", "a0", "a1", "truth", "prediction", "error"]
    assert list(pred["atom"]) == [f"smokes({p}, t)" for p in ("p4", "p5", "p6", "p7")]
    np.testing.assert_allclose(pred["error"], pred["prediction"] - pred["truth"])
    metrics = m.evaluate()
    assert metrics["mse"] == pytest.approx(np.mean(pred["error"] ** 2))


def test_fit_weights_is_ppll_per_rule_and_cached(monkeypatch):
    ds = smokers(3)
    calls = []
    real = model_mod.learn_weight

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(model_mod, "learn_weight", counting)
    cache = PPLLCache()
    m = PSLModel(RULES).fit_weights(ds, cache=cache)
    assert len(calls) == 3 and cache.misses == 3 and len(cache) == 3
    # the same weights as PPLL on each rule's own grounding
    for r, w in zip(m.rules, m.weights):
        one = PSLModel([r]).ground(ds)
        g = one.grounded_[0]
        A, b = g.linear_form(one.store_)
        assert w == pytest.approx(real(A, b, r.squared, one.store_.truth).weight, rel=1e-9, abs=1e-12)
    # a second model sharing two rules (one written differently) costs one call only
    other = parse_rules("5.0: smokes(X, Y) & friend(X, Z) -> smokes(Z, Y) ^2\n1.0: ~smokes(A, H) ^2\n"
                        "1.0: stress(A, H) -> smokes(A, H) ^2")
    m2 = PSLModel(other).fit_weights(ds, cache=cache)
    assert len(calls) == 4 and cache.hits == 2
    assert m2.weights[0] == m.weights[0]
    PSLModel(RULES).fit_weights(ds, cache=cache)
    assert len(calls) == 4  # second fit: no learn_weight call at all
    # other data -> other key
    PSLModel(RULES).fit_weights(smokers(4), cache=cache)
    assert len(calls) == 7


def test_text_round_trip_keeps_weights_exactly():
    ds = smokers(5)
    m = PSLModel(RULES).fit_weights(ds)
    back = PSLModel.from_text(m.to_text())
    assert back.rules == m.rules
    assert back.to_text() == m.to_text()
    np.testing.assert_array_equal(back.weights, m.weights)


def test_hard_rule_becomes_constraint():
    ds = smokers(6)
    with pytest.raises(XcoreError, match="violated by the observations"):
        PSLModel(RULES + "friend(A, B) & smokes(A, H) -> smokes(B, H) .\n").ground(ds)
    stress = ds.tables["stress"]["obs"].copy()
    stress.loc[stress["a0"].isin(["p0", "p1", "p2", "p3"]), "value"] = 1.0  # observed smokers comply
    ds = RelationalDataset(ds.schema, {**ds.tables, "stress": {"obs": stress}})
    m = PSLModel(RULES + "smokes(A, H) -> stress(A, H) .\n").ground(ds)  # smokes <= stress
    assert m.program_.C.shape[0] == 4
    y = m.infer().y
    assert m.program_.constraint_violation(y) < 1e-6
    cap = stress.set_index("a0")["value"]
    assert np.all(y <= cap[["p4", "p5", "p6", "p7"]].to_numpy() + 1e-6)
    free = PSLModel(RULES).ground(ds).infer().y
    assert np.any(free > cap[["p4", "p5", "p6", "p7"]].to_numpy() + 1e-3)  # the constraint binds


def test_target_lookup_and_errors():
    m = PSLModel(RULES).ground(smokers())
    assert m.target_column("smokes(p5, t)") == 1
    assert m.target_column("smokes('p5', 't')") == 1
    assert m.target_column(("smokes", ("p6", "t"))) == 2
    assert m.target_column(3) == 3
    with pytest.raises(XcoreError, match="not a target"):
        m.target_column("smokes(p0, t)")
    with pytest.raises(XcoreError, match="not grounded"):
        PSLModel(RULES).infer()
    with pytest.raises(XcoreError, match="truth labels"):
        ds = smokers()
        ds.tables["smokes"]["truth"] = ds.tables["smokes"]["truth"].iloc[:0]
        PSLModel(RULES).fit_weights(RelationalDataset(ds.schema, ds.tables))


def test_fingerprint_and_metrics():
    a, b = smokers(0), smokers(0)
    assert dataset_fingerprint(a) == dataset_fingerprint(b)
    assert dataset_fingerprint(a) != dataset_fingerprint(smokers(1))
    m = prediction_metrics(np.array([0.2, 0.8, 0.6, 0.1]), np.array([0.0, 1.0, 1.0, np.nan]))
    assert m["n"] == 3 and m["mse"] == pytest.approx((0.04 + 0.04 + 0.16) / 3)
    assert m["auroc"] == 1.0 and m["aupr"] == 1.0


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_weights_are_finite_and_bounded(seed):
    m = PSLModel(RULES).fit_weights(smokers(seed), w_max=50.0)
    assert np.all((m.weights >= 0) & (m.weights <= 50.0))
