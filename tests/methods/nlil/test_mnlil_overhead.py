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
    from xcore.nlil.method import NLILSettings
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


def test_without_a_held_out_set_examples_are_split_stratified_and_disjoint():
    from xcore.nlil.graph import Queries
    from xcore.nlil.method import split_by_example

    label = np.array([1] * 12 + [0] * 8, dtype=np.float32)
    q = Queries("h", 1, np.arange(20), None, label)
    train, test, note = split_by_example(q, 0.25, seed=0)
    assert len(train) + len(test) == 20 and not set(train.x) & set(test.x)
    assert (test.label > 0.5).sum() == 3 and (test.label < 0.5).sum() == 2
    assert "held out" in note
    few = q.subset(np.arange(20) >= 9)  # 3 positives: too few to split, said by a None note
    tr, te, none = split_by_example(few, 0.25, seed=0)
    assert none is None and len(tr) == len(te) == len(few)
