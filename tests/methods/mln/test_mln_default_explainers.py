"""The Markov-logic page's defaults only offer the bag-of-words baselines (LIME, SHAP) when the query
predicate has observed labels of both classes to train them on: on the trains (no observed eastbound
atoms) the default run used to fail with "no observed eastbound atoms to train the bag-of-words
classifier on" although the page said the data applies."""

from __future__ import annotations

from xcore.data.samples import load_sample
from xcore.methods import REGISTRY, run_method


def test_defaults_leave_out_the_word_baselines_without_observed_labels():
    ds = load_sample("trains_michalski10")
    spec = REGISTRY["mln"]
    assert spec.applicable(ds) is None
    settings = spec.default_settings(ds)
    assert "mln:lime" not in settings.explainers and "mln:shap" not in settings.explainers
    run = run_method("mln", ds, settings, cache=None)
    assert len(run.predictions) > 0


def test_defaults_keep_them_where_both_classes_are_observed():
    settings = REGISTRY["mln"].default_settings(load_sample("reviews_demo"))
    assert {"mln:lime", "mln:shap"} <= set(settings.explainers)
