"""ESMS search: splits, planted-rule recovery, reproducibility (seed, n_jobs), caches, gamma sweep."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.data.shared import shared_data_dir
from xcore.errors import XcoreError
from xcore.esms.rule_preparation import SearchCache
from xcore.esms.search import HISTORY_COLUMNS, ESMSSearch
from xcore.esms.templates import DEFAULT_TEMPLATES
from xcore.esms.validation_split import split_targets, three_way_split
from xcore.logic.parser import parse_rules
from xcore.logic.rule_identity import rule_key
from xcore.psl.explainable_rules import is_alpha_explainable
from xcore.psl.model import PSLModel

PLANTED = """6.0: likes(A, B) & sim(B, C) -> likes(A, C) ^2
3.0: pop(B) -> likes(A, B) ^2
2.0: ~likes(A, B) ^2"""

TEMPLATES = tuple(t for t in DEFAULT_TEMPLATES
                  if t.name in ("path2", "similarity", "local_second", "local_first", "prior_false", "prior_true"))


def planted(seed: int = 0, n_people: int = 10, n_items: int = 12) -> RelationalDataset:
    """Truth of likes(U, I) = MAP of the PLANTED model; distractors rnd, friend, shiny, old."""
    rng = np.random.default_rng(seed)
    people, items = [f"u{i}" for i in range(n_people)], [f"i{i}" for i in range(n_items)]

    def pairs_of(xs, p):
        return [(a, b) for a in xs for b in xs if a != b and rng.random() < p]

    def t2(pairs):
        return pd.DataFrame({"a0": [a for a, _ in pairs], "a1": [b for _, b in pairs],
                             "value": rng.uniform(0.3, 1, len(pairs))})

    def t1(xs, lo=0.0, hi=1.0):
        return pd.DataFrame({"a0": xs, "value": rng.uniform(lo, hi, len(xs))})

    pairs = pd.DataFrame([(p, i) for p in people for i in items], columns=["a0", "a1"])
    seen = rng.random(len(pairs)) < 0.3
    obs = pairs[seen].assign(value=rng.uniform(0, 1, int(seen.sum())))
    targets = pairs[~seen].reset_index(drop=True)
    schema = [Predicate("likes", 2, ("user", "item"), closed=False, template="{0} likes {1}"),
              Predicate("sim", 2, ("item", "item"), template="{0} is similar to {1}"),
              Predicate("rnd", 2, ("item", "item")), Predicate("friend", 2, ("user", "user")),
              Predicate("pop", 1, ("item",)), Predicate("shiny", 1, ("item",)),
              Predicate("old", 1, ("user",), explainable=False)]
    tables = {"sim": {"obs": t2(pairs_of(items, 0.25))}, "rnd": {"obs": t2(pairs_of(items, 0.25))},
              "friend": {"obs": t2(pairs_of(people, 0.2))}, "pop": {"obs": t1(items, 0.0, 0.8)},
              "shiny": {"obs": t1(items)}, "old": {"obs": t1(people)}}
    base = RelationalDataset(schema, {**tables, "likes": {"obs": obs, "targets": targets}})
    y = PSLModel(PLANTED).ground(base).infer().y
    return RelationalDataset(schema, {**tables, "likes": {"obs": obs, "targets": targets,
                                                          "truth": targets.assign(value=y)}}, name="planted")


@pytest.fixture(scope="module")
def data():
    return split_targets(planted(), "likes", 0.3, seed=0)


def search(**kw) -> ESMSSearch:
    args = dict(rules_per_model=4, iterations=24, templates=TEMPLATES, n_jobs=1, seed=0)
    return ESMSSearch("likes", **{**args, **kw})


# ---------------------------------------------------------------------- splits
@pytest.mark.slow
def test_split_targets_partitions_labels_and_observes_training_labels():
    ds = planted()
    lab = ds.tables["likes"]["truth"]
    train, valid = split_targets(ds, "likes", 0.25, seed=3)
    tr, va = train.tables["likes"], valid.tables["likes"]
    key = lambda df: set(zip(df["a0"], df["a1"]))  # noqa: E731
    assert key(tr["truth"]) | key(va["truth"]) == key(lab) and not key(tr["truth"]) & key(va["truth"])
    assert key(tr["targets"]) == key(tr["truth"]) and key(va["targets"]) == key(va["truth"])
    assert len(va["truth"]) == round(0.25 * len(lab))
    # validation observes the training labels with their true values; training knows nothing of validation
    merged = tr["truth"].merge(va["obs"], on=["a0", "a1"], suffixes=("", "_obs"))
    assert len(merged) == len(tr["truth"]) and np.allclose(merged["value"], merged["value_obs"])
    assert not key(tr["obs"]) & key(va["truth"])
    again = split_targets(ds, "likes", 0.25, seed=3)[1].tables["likes"]["truth"]
    pd.testing.assert_frame_equal(again, va["truth"])
    assert key(split_targets(ds, "likes", 0.25, seed=4)[1].tables["likes"]["truth"]) != key(va["truth"])
    with pytest.raises(XcoreError, match="valid_fraction"):
        split_targets(ds, "likes", 1.0)


def test_three_way_split():
    ds = planted()
    train, valid, test = three_way_split(ds, "likes", 0.2, 0.2, seed=0)
    n = len(ds.tables["likes"]["truth"])
    sizes = [len(d.tables["likes"]["truth"]) for d in (train, valid, test)]
    assert sum(sizes) == n and abs(sizes[2] - 0.2 * n) <= 1 and abs(sizes[1] - 0.2 * n) <= 1
    n_obs = len(ds.tables["likes"]["obs"])
    assert len(test.tables["likes"]["obs"]) == n_obs + sizes[0] + sizes[1]
    assert len(valid.tables["likes"]["obs"]) == n_obs + sizes[0]


# ---------------------------------------------------------------------- search
def test_search_recovers_planted_rules_and_beats_priors(data):
    train, valid = data
    s = search().fit(train, valid)
    got = {rule_key(r) for r in s.best_rules_ if r.weight > 0}
    want = {rule_key(r) for r in parse_rules(PLANTED)}
    assert want <= got
    prior = PSLModel("1.0: ~likes(A, B) ^2\n1.0: likes(A, B) ^2").fit_weights(train).ground(valid)
    prior.infer()
    assert s.best_score_ < prior.evaluate()["mse"] / 5
    assert s.best_model_.evaluate()["mse"] == pytest.approx(s.best_score_, rel=1e-6)
    h = s.history_
    assert list(h.columns) == list(HISTORY_COLUMNS) and len(h) == 24
    assert h["best_score"].is_monotonic_decreasing and h["best_score"].iloc[-1] == s.best_score_
    assert (h["n_rules"] == 4).all()
    assert s.cache_.ppll.misses == len({rule_key(r) for rs in h["rules"] for r in parse_rules("\n".join(rs))})


@pytest.mark.slow
def test_search_is_reproducible_and_independent_of_n_jobs(data):
    train, valid = data
    runs = [search(n_jobs=1).fit(train, valid), search(n_jobs=1).fit(train, valid),
            search(n_jobs=2).fit(train, valid)]
    cols = ["iteration", "score", "mse", "mep1", "n_rules", "n_explainable"]
    for other in runs[1:]:
        pd.testing.assert_frame_equal(runs[0].history_[cols], other.history_[cols])
        assert list(runs[0].history_["rules"]) == list(other.history_["rules"])
        assert other.best_model_.to_text() == runs[0].best_model_.to_text()
    different = search(seed=1).fit(train, valid)
    assert list(different.history_["rules"]) != list(runs[0].history_["rules"])


@pytest.mark.slow
def test_process_pool_gives_the_same_result(data):
    train, valid = data
    a = search(iterations=6).fit(train, valid)
    b = search(iterations=6, n_jobs=2, executor="process").fit(train, valid)
    np.testing.assert_array_equal(a.history_["score"], b.history_["score"])


def test_cache_is_shared_and_progress_reported(data):
    train, valid = data
    cache = SearchCache()
    seen = []
    search(cache=cache).fit(train, valid, progress=lambda f, m: seen.append((f, m)))
    misses = cache.ppll.misses
    fracs = [f for f, _ in seen]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0 and all(isinstance(m, str) for _, m in seen)
    s2 = search(cache=cache, seed=5).fit(train, valid)
    assert cache.ppll.misses == misses  # every rule of this small pool was learned already
    assert s2.history_["ppll_seconds"].sum() == 0.0


@pytest.mark.slow
def test_gamma_one_keeps_only_explainable_rules_and_sweep_frame(data):
    train, valid = data
    s = search(gamma=1.0).fit(train, valid)
    schema = train.schema
    assert all(is_alpha_explainable(r, schema, 0.25) for r in s.best_rules_)
    assert (s.history_["n_explainable"] == s.history_["n_rules"]).all()
    sweep = search(iterations=8).gamma_sweep(train, valid, grid=[0.0, 0.5, 1.0])
    assert list(sweep["gamma"]) == [0.0, 0.5, 1.0]
    for col in ("mse", "mae", "mep1", "mep2", "mep3", "n_rules", "n_explainable", "rules", "model_text"):
        assert col in sweep.columns
    assert (sweep["mep1"] <= sweep["mep2"]).all() and (sweep["mep2"] <= sweep["mep3"]).all()
    last = sweep.iloc[-1]
    assert last["n_explainable"] == last["n_rules"]
    assert (sweep["evaluated_on"] == "validation").all()
    # evaluated on a test set when given (the validation labels are then observations)
    tr, va, te = three_way_split(planted(), "likes", 0.2, 0.2, seed=1)
    on_test = search(iterations=4).gamma_sweep(tr, va, grid=[0.0], test_ds=te)
    assert on_test["evaluated_on"].iloc[0] == "test" and np.isfinite(on_test["mse"].iloc[0])


def test_too_large_rules_are_skipped_and_reported(data):
    train, valid = data
    s = search(iterations=4, ground_limit=60).fit(train, valid)
    assert s.skipped_rules_ and (s.history_["n_skipped"] > 0).any()
    assert np.isfinite(s.best_score_)


def test_binary_metric_and_bad_arguments(data):
    train, valid = data

    def binarise(ds):
        t = ds.tables["likes"]
        tables = {**ds.tables, "likes": {**t, "truth": t["truth"].assign(value=(t["truth"]["value"] > 0.3) * 1.0)}}
        return RelationalDataset(ds.schema, tables)

    s = search(metric="auroc", iterations=6).fit(binarise(train), binarise(valid))
    assert s.best_score_ == s.history_["score"].max() and 0.5 < s.best_score_ <= 1.0
    with pytest.raises(XcoreError, match="0/1 validation labels"):
        search(metric="aupr", iterations=2).fit(train, valid)
    with pytest.raises(XcoreError, match="unknown metric"):
        ESMSSearch("likes", metric="accuracy")
    with pytest.raises(XcoreError, match="gamma"):
        ESMSSearch("likes", gamma=2.0)


@pytest.mark.slow
def test_on_generated_lastfm_with_block_predicate():
    from xcore.data.generators import lastfm_preset

    ds = lastfm_preset("small", seed=0)
    train, valid = split_targets(ds, "rating", 0.3, seed=0)
    s = ESMSSearch("rating", rules_per_model=5, iterations=4, block="rated", n_jobs=2, seed=0,
                   templates=[t for t in DEFAULT_TEMPLATES if t.name != "path3"]).fit(train, valid)
    assert np.isfinite(s.best_score_) and s.best_score_ < 0.2
    assert all("rated(" in r.text() for r in s.best_rules_ if r.body)
    e = s.best_model_.explain_all(top_k=3)
    assert len(e) == s.best_model_.store_.n_targets


# ---------------------------------------------------------------------- Cora (benchmark data, never shipped)
CORA = shared_data_dir() / "planetoid_cora"


@pytest.mark.skipif(not CORA.exists(), reason="shared Cora data not available")
def test_cora_dataset_and_a_short_search(tmp_path):
    import shutil

    from xcore.data.benchmarks.cora import load_cora_arrays, load_cora_dataset
    from xcore.errors import DataError

    X, labels, adj = load_cora_arrays(CORA)
    assert X.shape == (2708, 1433) and np.bincount(labels).tolist() == [351, 217, 418, 818, 426, 298, 180]
    assert adj.nnz == 10556 and (adj != adj.T).nnz == 0
    ds = load_cora_dataset(CORA, subset=200, seed=0)
    hc = ds.tables["has_cat"]
    assert len(hc["obs"]) + len(hc["targets"]) == 200 * 7
    assert (hc["truth"].groupby("a0")["value"].sum() == 1).all()  # one category per paper
    assert not ds.predicate("local_cat").explainable
    train, valid = split_targets(ds, "has_cat", 0.5, seed=0)
    s = ESMSSearch("has_cat", rules_per_model=4, iterations=6, metric="aupr", seed=0,
                   templates=[t for t in DEFAULT_TEMPLATES if t.name != "path3"]).fit(train, valid)
    base = hc["truth"]["value"].mean()
    assert s.best_score_ > base + 0.2  # far above the AUPR of a constant prediction
    # a tampered copy is refused before anything is unpickled
    for f in CORA.iterdir():
        shutil.copy(f, tmp_path / f.name)
    data = bytearray((tmp_path / "ind.cora.ally").read_bytes())
    data[-3] ^= 1
    (tmp_path / "ind.cora.ally").write_bytes(bytes(data))
    with pytest.raises(DataError, match="checksum"):
        load_cora_arrays(tmp_path)
    # and the unpickler itself admits only the classes those files use
    import io
    import pickle
    from collections import OrderedDict

    from xcore.data.benchmarks.cora import _CheckedUnpickler

    with pytest.raises(DataError, match="refusing to unpickle"):
        _CheckedUnpickler(io.BytesIO(pickle.dumps(OrderedDict(a=1))), encoding="latin1").load()
