"""One suite over every registered method (as scikit-learn's `check_estimator`): settings validation,
fit/predict/explain shapes, score meanings, determinism under a seed, JSON round trips, xcore errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from xcore.data.samples import load_sample
from xcore.errors import ConfigError, NotFittedError, XcoreError
from xcore.explain.types import ExplanationSet, ScoreSpec
from xcore.methods import PREDICTION_COLUMNS, REGISTRY, Estimator, Run, RunCache, Settings, run_method

METHODS = list(REGISTRY)
QUICK = {"esms": {"iterations": 4, "rules_per_model": 5}, "mln": {"T": 3, "n_samples": 300, "burn_in": 50},
         "plkb": {"explain_rows": 10},
         "drm": {"max_draws": 200, "folds": 2, "hidden": [[16]], "learning_rates": [0.01], "max_epochs": 30,
                 "explain_rows": 4},
         "nlil": {"epochs": 40, "rounds": 2, "clusters": 2}}
"""Smaller settings so the suite stays fast; every other field is the method's default for its sample."""

pytestmark = pytest.mark.xdist_group("contract")


def quick_settings(key: str) -> tuple[object, Settings]:
    spec = REGISTRY[key]
    ds = load_sample(spec.sample)
    return ds, spec.default_settings(ds).replace(**QUICK.get(key, {}))


@pytest.fixture(scope="module", params=METHODS)
def fitted(request):
    """(key, dataset, settings, run) for each registered method, computed once."""
    key = request.param
    ds, settings = quick_settings(key)
    run = run_method(key, ds, settings, cache=None)
    return key, ds, settings, run


def test_registry_keys_and_specs_are_complete():
    assert METHODS[:3] == ["esms", "mln", "plkb"]
    for key in METHODS:
        spec = REGISTRY[key]
        assert spec.key == key and spec.title and spec.explainers
        assert issubclass(spec.settings_type, Settings)
        assert spec.applicable(load_sample(spec.sample)) is None


def test_unknown_method_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        REGISTRY["nope"]


@pytest.mark.parametrize("key", METHODS)
def test_settings_are_frozen_hashable_and_validated(key):
    _, settings = quick_settings(key)
    assert hash(settings) == hash(settings.replace())
    assert settings.key() == type(settings).parse(json.loads(json.dumps(settings.to_dict()))).key()
    with pytest.raises(Exception):
        settings.seed = 3  # frozen
    with pytest.raises(ConfigError, match="no_such_field"):
        settings.replace(no_such_field=1)
    with pytest.raises(ConfigError, match="seed"):
        settings.replace(seed=-1)
    for name, field in type(settings).model_fields.items():
        if field.annotation in (float,):
            with pytest.raises(ConfigError, match=name):
                settings.replace(**{name: float("nan")})
    assert isinstance(ConfigError("x"), ValueError)


@pytest.mark.parametrize("key", METHODS)
def test_estimator_init_only_stores_and_refuses_before_fit(key):
    _, settings = quick_settings(key)
    est = settings.estimator()
    assert isinstance(est, Estimator)
    assert est.get_params() == {"settings": settings}
    assert not est.is_fitted()
    with pytest.raises(NotFittedError):
        est.predict()


def test_run_shapes_and_score_meanings(fitted):
    key, ds, settings, run = fitted
    assert run.method == key and run.fingerprint == ds.fingerprint()
    assert list(run.predictions.columns[:3]) == list(PREDICTION_COLUMNS)
    assert len(run.predictions) > 0 and run.predictions["target"].is_unique
    assert run.model.is_fitted()
    assert run.explanations, "a run explains its predictions"
    spec = REGISTRY[key]
    for name, exps in run.explanations.items():
        assert name in spec.explainers and exps.method == name
        assert isinstance(exps.score_spec, ScoreSpec) and exps.score_spec.measures
        assert len(exps) > 0
        for e in exps:
            assert e.method == name and e.score_spec == exps.score_spec
            assert e.target in set(run.predictions["target"])
    assert run.summary is not None and run.summary.items and run.summary.score_spec is not None
    assert run.metrics and all(np.isfinite(v) for v in run.metrics.values() if isinstance(v, float))


def test_fit_returns_self_and_predict_matches_the_run(fitted):
    """A run's predictions are a fresh estimator's, fitted without the units the run holds out and
    predicting them (the shared held-out protocol of `xcore.methods.evaluate`); a run with a ``fold``
    column predicted fold by fold, each fold's units by a fit without them."""
    key, ds, settings, run = fitted
    units = set(settings.estimator().units(ds)["unit"].astype(str))
    preds = run.predictions
    groups = [part for _, part in preds.groupby("fold", sort=True)] if "fold" in preds else [preds]
    assert len(groups) >= 1
    for part in groups:
        held = sorted(set(part["target"].astype(str)) & units)
        assert held, "a run predicts labelled units"
        est = settings.estimator()
        # the run held these units out; when it predicts them all, the data's targets are its own held-out
        # set (m-NLIL trains on the head's observed atoms) and the run fits on the data as it is
        train, test = est.holdout(ds, held) if len(held) < len(units) else (ds, ds)
        assert est.fit(train) is est
        again = est.predict(test).set_index("target").loc[part["target"]].reset_index()
        columns = [c for c in part.columns if c != "fold"]
        pd.testing.assert_frame_equal(again[columns], part[columns].reset_index(drop=True), check_exact=False,
                                      atol=1e-9, check_dtype=False)


def test_every_explainer_says_whether_it_supports_the_model(fitted):
    key, ds, settings, run = fitted
    from importlib import import_module

    module = import_module(REGISTRY[key].run.__module__)
    for name in REGISTRY[key].explainers:
        explainer = module.EXPLAINERS[name]
        assert explainer.name == name
        assert explainer.supports(object()) is not None  # a reason, not an exception
        if explainer.supports(run.model) is None:
            target = run.explanations[next(iter(run.explanations))].targets[0]
            one = explainer.explain(run.model, ds, targets=[target])
            assert isinstance(one, ExplanationSet) and one.targets == [target]
            assert one.score_spec == explainer.score_spec


def test_same_seed_same_run(fitted):
    key, ds, settings, run = fitted
    again = run_method(key, ds, settings, cache=None)
    pd.testing.assert_frame_equal(again.predictions, run.predictions)
    for name, exps in run.explanations.items():
        assert again.explanations[name].to_dict() == exps.to_dict()


def test_bundle_round_trips_through_json(fitted):
    _, _, _, run = fitted
    text = run.to_json()
    back = Run.from_bundle(text)
    assert back.bundle() == json.loads(text)
    assert back.model is None and back.method == run.method
    assert type(back.settings) is type(run.settings) and back.settings == run.settings  # typed again
    assert list(back.predictions.columns) == list(run.predictions.columns)


def test_bad_bundles_are_xcore_errors():
    for bad in ("{", "[]", '{"format": "xcore.run", "version": 99}', '{"format": "xcore.run", "version": 1}'):
        with pytest.raises(XcoreError):
            Run.from_bundle(bad)


def evidence_only():
    """Observations and nothing to predict: no method can run on it."""
    from xcore.data import load

    return load(("facts.csv", b"predicate,arg1,arg2,value,partition\nknows,a,b,1,obs\nknows,b,c,1,obs\n"),
                fmt="long_csv")


@pytest.mark.parametrize("key", METHODS)
def test_inapplicable_data_is_an_xcore_error_with_the_reason(key):
    ds = evidence_only()
    reason = REGISTRY[key].applicable(ds)
    assert reason
    with pytest.raises(XcoreError, match="cannot run"):
        run_method(key, ds, cache=None)


def test_run_cache_serves_repeats_and_is_bounded():
    ds, settings = quick_settings("plkb")
    cache = RunCache(max_entries=2)
    first = run_method("plkb", ds, settings, cache=cache)
    assert run_method("plkb", ds, settings, cache=cache) is first and cache.hits == 1
    for seed in (1, 2):
        run_method("plkb", ds, settings.replace(seed=seed), cache=cache)
    assert len(cache) == 2
    assert run_method("plkb", ds, settings, cache=cache) is not first  # evicted, recomputed


def test_changed_flags_are_a_different_run():
    ds, settings = quick_settings("esms")
    flipped = ds.with_flags("friend", explainable=not ds.predicate("friend").explainable)
    assert flipped.fingerprint() != ds.fingerprint()
    cache = RunCache()
    a = run_method("esms", ds, settings.replace(explainable=None), cache=cache)
    b = run_method("esms", flipped, settings.replace(explainable=None), cache=cache)
    assert a is not b and cache.misses == 2


def test_foreign_errors_are_wrapped(monkeypatch):
    ds, settings = quick_settings("plkb")
    import xcore.plkb.method as m

    def boom(*a, **k):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(m.PLKBEstimator, "fit", boom)
    with pytest.raises(XcoreError, match="ZeroDivisionError") as info:
        run_method("plkb", ds, settings, cache=None, fits=None)  # no cached fit: the broken one runs
    assert isinstance(info.value.__cause__, ZeroDivisionError)


# ---------------------------------------------------------------------- one claim in every view (issue 32)
def _views_of(exp, name):
    """Every rendering of one explanation: bar traces, the item table, text, report card, study screen."""
    from xcore.explain.render import item_table
    from xcore.explain.text import explanation_text
    from xcore.report import card_body
    from xcore.study.build import render
    from xcore.viz import ranked_bar_figure

    return (ranked_bar_figure(exp, k=5), item_table(exp, 5), explanation_text(exp, k=5),
            card_body(exp, k=5), render(exp, k=5))


def test_every_view_states_the_items_own_direction(fitted):
    from xcore.explain.render import LEGEND, direction_phrase

    key, ds, settings, run = fitted
    for name, exps in run.explanations.items():
        for exp in list(exps)[:3]:
            if not exp.items:
                continue
            bars, table, text, card, study = _views_of(exp, name)
            top = exp.top(5)
            by_trace = {label: list(t.y) for t in bars.data for label in [t.name]}
            for rank, it in enumerate(top, start=1):
                label = LEGEND[it.direction]
                assert any(y.startswith(f"{rank}.") for y in by_trace.get(label, [])), (name, rank, label)
                assert table.loc[rank - 1, "direction"] == label
            lines = [ln for ln in text.splitlines() if ln[:2].rstrip(".").isdigit()]
            for line, it in zip(lines, [i for i in top if i.score != 0 or i.direction != 0]):
                phrase = direction_phrase(it.direction)
                if phrase:
                    assert phrase in line, (name, line)
                other = direction_phrase(-it.direction) if it.direction else "pushes it"
                assert other not in line, (name, line)
            by_words = {" ".join((it.natural or it.text).split()): it.direction for it in top}
            for reason, line in zip(study.reasons, study.text.splitlines()[1:]):  # the participant's screen
                want = by_words[reason.natural] if exps.score_spec is None or exps.score_spec.directed else 0
                assert reason.direction == want, (name, reason)
                assert (direction_phrase(want) in line) if want else ("pushes it" not in line), (name, line)
            assert "pushes it" not in card or any(it.direction for it in top)


def test_the_explained_prediction_is_the_models(fitted):
    from xcore.methods import validate

    key, ds, settings, run = fitted
    spec = REGISTRY[key]
    for name, exps in run.explanations.items():
        algo = spec.explainer_objects()[name]
        validate(exps, algo, run.predictions)  # raises on a direction or prediction that differs
        column = algo.prediction_column
        if column is None:
            continue
        model = run.predictions.set_index("target")[column]
        for exp in list(exps)[:5]:
            if exp.prediction is not None:
                assert exp.prediction == pytest.approx(float(model[exp.target]), abs=1e-6)


def test_verify_agrees_on_every_directed_item(fitted):
    from xcore.methods.verify import verify_run

    key, ds, settings, run = fitted
    first = next(iter(run.explanations.values()))
    result = verify_run(run, ds, k=3, targets=first.targets[:4])
    assert result.ok, result.items[result.items["verdict"] == "opposite"]
    for row in result.summary.itertuples(index=False):
        spec = REGISTRY[key].explainer_objects()[row.explainer].score_spec
        assert (row.how == "not directional") == (not spec.directed or row.directed == 0)


def test_verify_fails_on_a_deliberately_flipped_item(fitted):
    from dataclasses import replace

    from xcore.explain.types import ExplanationSet
    from xcore.methods.verify import verify_run

    key, ds, settings, run = fitted
    first = next(iter(run.explanations.values()))
    result = verify_run(run, ds, k=3, targets=first.targets[:6])
    moved = result.items[result.items["verdict"] == "agreed"]
    if not len(moved):
        pytest.skip(f"{key}'s explainers give no directed item that moves its prediction")
    row = moved.iloc[0]
    exps = run.explanations[row.explainer]
    exp = exps[row.target]
    items = list(exp.items)
    i = int(row["rank"]) - 1
    flipped = items[i]
    items[i] = replace(flipped, direction=-flipped.direction, score=-flipped.score if
                       REGISTRY[key].explainer_objects()[row.explainer].score_spec.signed else flipped.score,
                       effect=None if flipped.effect is None else -flipped.effect)
    bad = ExplanationSet([replace(exp, items=items, ordering="given")], method=exps.method,
                         score_spec=exps.score_spec)
    check = verify_run(run, ds, k=3, explanations={row.explainer: bad})
    assert not check.ok and int(check.summary["opposite"].sum()) == 1


def test_reexplaining_with_other_explainer_settings_does_not_refit(monkeypatch):
    from xcore.methods import FITS

    ds, settings = quick_settings("plkb")
    est_type = REGISTRY["plkb"].estimator_type
    calls = []
    original = est_type.fit

    def counting(self, *a, **kw):
        calls.append(1)
        return original(self, *a, **kw)

    monkeypatch.setattr(est_type, "fit", counting)
    fits = RunCache(max_entries=4)
    a = run_method("plkb", ds, settings, cache=None, fits=fits)
    b = run_method("plkb", ds, settings.replace(k=3, explain_rows=5), cache=None, fits=fits)
    assert len(calls) == 1 and len(b.explanations["plkb:decisive"]) == 5
    assert b.model is not a.model and b.model.classifier_ is a.model.classifier_  # a copy, not the shared one
    assert a.model.settings == settings  # the cached model kept its own settings
    run_method("plkb", ds, settings.replace(seed=settings.seed + 1), cache=None, fits=fits)
    assert len(calls) == 2  # a model setting refits
    assert FITS is not fits


def test_version_1_bundles_are_read_with_their_directions(fitted):
    _, _, _, run = fitted
    data = json.loads(run.to_json())
    data["version"] = 1
    for s in data["explanations"].values():
        for e in s["explanations"]:
            e["version"] = 2
            for it in e["items"]:
                it.pop("direction"), it.pop("effect")
            e.pop("prediction_kind")
        s["version"] = 2
    old = Run.from_bundle(json.dumps(data))
    for name, exps in run.explanations.items():
        spec = exps.score_spec
        for e in list(exps)[:3]:
            back = old.explanations[name][e.target]
            if spec is not None and spec.signed:  # a signed score's sign was its direction in version 2
                assert [it.direction for it in back.items] == [it.direction for it in e.items]


def test_a_bundle_whose_settings_no_longer_validate_keeps_them_as_written(fitted):
    _, _, _, run = fitted
    data = json.loads(run.to_json())
    data["settings"]["a_field_removed_since"] = 3  # written by an older xcore
    old = Run.from_bundle(json.dumps(data))
    assert isinstance(old.settings, dict) and old.settings["a_field_removed_since"] == 3
    assert old.settings_dict == data["settings"]
    del data["settings"]["a_field_removed_since"]
    data["settings"].pop(next(iter(data["settings"])))  # written before that field was added
    assert isinstance(Run.from_bundle(json.dumps(data)).settings, dict)
