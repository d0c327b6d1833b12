"""m-NLIL overheads (issue 31 items 5-6): the sparse node embedding equals a dense per-node recount, is not
built when one cluster never uses it, and one DuckDB store runs all rules of a label in one query with the
same answers as executing each rule on its own."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.data.generators.scenes import make_scenes
from xcore.nlil import mnlil
from xcore.nlil.graph import kb_from_dataset, queries
from xcore.nlil.mnlil import Config, fit_label, node_embedding
from xcore.nlil.rules import FactStore, Rule, Statement, fires


@pytest.fixture(scope="module")
def scenes():
    ds = make_scenes(n_scenes=12, seed=3)
    kb = kb_from_dataset(ds, exclude=("street",))
    return ds, kb, kb.operators()


def test_sparse_embedding_equals_a_dense_recount(scenes):
    _, kb, ops = scenes
    U = ops.filters.numpy()  # (Ku, N)
    ku, n = U.shape
    ref = np.zeros((n, ku + ops.n_binary * ku))
    ref[:, :ku] = U.T
    for s, d, k in zip(ops.src.numpy(), ops.dst.numpy(), ops.op.numpy()):
        ref[d, ku + (k - 1) * ku: ku + k * ku] += U[:, s]
    ref = np.log1p(ref)
    norm = np.linalg.norm(ref, axis=1, keepdims=True)
    ref = ref / np.where(norm > 0, norm, 1.0)
    emb = node_embedding(ops)
    assert emb.shape == ref.shape and emb.nnz < 0.2 * emb.shape[0] * emb.shape[1]
    np.testing.assert_allclose(emb.toarray(), ref, atol=1e-12)


def test_one_cluster_never_builds_the_embedding(scenes, monkeypatch):
    ds, kb, ops = scenes
    q = queries(ds, kb, "street", "obs")

    def boom(_):
        raise AssertionError("node_embedding built for one cluster")

    monkeypatch.setattr(mnlil, "node_embedding", boom)
    fit_label(kb, ops, q, Config(clusters=1, depth=1, epochs=2, rounds=1))
    with pytest.raises(AssertionError, match="built for one cluster"):
        fit_label(kb, ops, q, Config(clusters=2, depth=1, epochs=2, rounds=1))


def test_one_store_runs_every_rule_at_once_as_each_rule_alone(scenes):
    ds, kb, _ = scenes
    q = queries(ds, kb, "street", "obs")
    frame = q.frame(kb)
    rules = [Rule("street", 1, Statement(("on^-1",), t)) for t in ("car", "bus", "plate")] + \
            [Rule("street", 1, Statement(("near", "on^-1"), "car"))]
    store = FactStore(kb.facts())
    together = store.fires(rules, frame)
    alone = np.stack([fires(r, kb.facts(), frame) for r in rules], axis=1)
    np.testing.assert_array_equal(together, alone)
    assert together.any(0).sum() >= 2  # the rules do fire somewhere
    assert kb.store() is kb.store()  # registered once per KB


@pytest.mark.slow
def test_cancel_interrupts_rule_training_within_two_seconds():
    import threading
    import time

    from xcore.errors import Cancelled
    from xcore.methods import run_method
    from xcore.nlil.settings import NLILSettings
    from xcore.runtime import cancellable

    ds = make_scenes(n_scenes=12, seed=3)
    stop, seen, when = threading.Event(), [], {}

    def trigger():
        when["t"] = time.perf_counter()
        stop.set()

    timer = threading.Timer(1.0, trigger)

    def report(fraction, message):  # cancel one second into training (a fresh process first imports torch's
        seen.append(message)        # optimiser and scikit-learn, which no progress check can interrupt)
        if "epoch" in message and not timer.is_alive() and not stop.is_set():
            timer.start()

    try:
        with pytest.raises(Cancelled):
            run_method("nlil", ds, NLILSettings(heads=("street",), epochs=5000, rounds=2, depth=1),
                       progress=cancellable(report, stop), cache=None)
    finally:
        timer.cancel()
    assert time.perf_counter() - when["t"] < 2.0
    assert any("cluster 1" in m and "epoch" in m for m in seen)  # training reported per epoch


def _truth_only(ds, head: str, keep=None):
    """`ds` with the head's labelled observations and truth as its targets with truth (no held-out set)."""
    import pandas as pd

    from xcore.data.dataset import RelationalDataset

    tab = ds.tables[head]
    lab = pd.concat([tab["obs"], tab["truth"]], ignore_index=True)
    lab = lab if keep is None else lab[keep(lab)].reset_index(drop=True)
    tables = dict(ds.tables)
    tables[head] = {"obs": tab["obs"].iloc[:0], "targets": lab[["a0"]], "truth": lab}
    return RelationalDataset(ds.schema, tables, name="truth only")


def test_without_a_held_out_set_the_run_holds_out_examples_stratified_and_disjoint(scenes):
    from xcore.data import splits
    from xcore.nlil.runs import held_out_units, train_test
    from xcore.nlil.settings import NLILSettings

    ds = _truth_only(scenes[0], "street")
    s = NLILSettings(heads=("street",), holdout=0.25)
    units = splits.units(ds, ["street"])
    test_units, heads, split = held_out_units(ds, s)
    held = units[units["unit"].isin(test_units)]
    assert heads == ["street"] and "held out" in split["street"]
    assert len(held) == round(0.25 * len(units)) and abs(held["stratum"].mean() - units["stratum"].mean()) < 0.05
    train, test, _ = train_test(ds, s)
    train_atoms = set("street(" + train.tables["street"]["targets"]["a0"].astype(str) + ")")
    assert not train_atoms & set(test_units) and len(train_atoms) + len(test_units) == len(units)
    assert set("street(" + test.tables["street"]["targets"]["a0"].astype(str) + ")") == set(test_units)
    few = _truth_only(scenes[0], "street",
                      keep=lambda lab: (lab["value"] < 0.5) | lab.index.isin(lab.index[lab["value"] >= 0.5][:3]))
    assert int((splits.units(few, ["street"])["stratum"] >= 0.5).sum()) == 3
    # too few positives to split: trained and tested on the same examples, and said so
    assert held_out_units(few, s)[0] == [] and train_test(few, s)[0] is few
