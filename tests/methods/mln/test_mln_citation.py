"""Cora / CiteSeer in the review setting's shape (shared benchmark data; skipped when absent)."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.data.benchmarks.citation import citation_dataset, default_root, load_planetoid_arrays
from xcore.errors import DataError, XcoreError
from xcore.mln.learning import learn_weights
from xcore.mln.model import MLNModel
from xcore.mln.reviews import review_rules


def _need(name: str):
    root = default_root(name)
    if not root.is_dir():
        pytest.skip(f"shared data folder {root} is absent (tests and benchmarks only data)")
    return root


def test_cora_goes_through_the_checked_cora_loader():
    from xcore.data.benchmarks.cora import load_cora_arrays

    root = _need("cora")
    X, y, A = load_planetoid_arrays("cora")
    X2, y2, A2 = load_cora_arrays(root)
    assert (X != X2).nnz == 0 and np.array_equal(y, y2) and (A != A2).nnz == 0
    assert X.shape == (2708, 1433) and A.nnz == 10556


def test_citeseer_arrays_match_the_documented_counts():
    _need("citeseer")
    X, y, A = load_planetoid_arrays("citeseer")
    assert X.shape == (3327, 3703)
    assert int((y >= 0).sum()) == 3312 and y.max() == 5  # 15 nodes have no feature row and no label
    assert X[y < 0].nnz == 0
    assert A.nnz == 9104 and A.diagonal().sum() == 0 and (A != A.T).nnz == 0
    assert set(np.unique(X.data)) == {1.0}


def test_citeseer_files_are_checksummed_before_unpickling(tmp_path):
    _need("citeseer")
    (tmp_path / "ind.citeseer.allx").write_bytes(b"cos\nsystem\n(S'echo hi'\ntR.")
    with pytest.raises(DataError, match=r"ind.citeseer.allx: checksum mismatch"):
        load_planetoid_arrays("citeseer", tmp_path)
    with pytest.raises(DataError, match="cannot read"):
        load_planetoid_arrays("citeseer", tmp_path / "missing")


@pytest.mark.parametrize("name", ["cora", "citeseer"])
def test_citation_dataset_has_the_review_shape(name):
    _need(name)
    c = citation_dataset(name, n_words=30, subset=300, seed=1)
    ds, docs = c.dataset, c.docs
    assert ds.schema.names == ["has_word", "cites", "positive"] and c.link_predicates == ("cites",)
    assert c.annotation is None
    assert len(docs) == 300 and docs.paper.is_unique
    assert set(docs.label) == {0, 1}
    assert docs.label.tolist() == (docs.category == f"c{c.target_class}").astype(int).tolist()
    # default target class: the most frequent class of the subset
    assert docs.category.value_counts().index[0] == f"c{c.target_class}"
    cites = ds.table("cites", "obs")
    pairs = set(zip(cites.a0, cites.a1))
    assert all((b, a) in pairs and a != b for a, b in pairs) and len(pairs) > 100
    assert len(c.vocabulary) == 30 and set(ds.table("has_word", "obs")["a1"]) <= set(c.vocabulary)
    train = docs[docs.split == "train"]
    assert len(train) == 150
    obs = ds.table("positive", "obs").set_index("a0")["value"]
    np.testing.assert_array_equal(obs.loc[train.paper].to_numpy(), train.label.to_numpy())
    truth = ds.table("positive", "truth").set_index("a0")["value"]
    test = docs[docs.split == "test"]
    np.testing.assert_array_equal(truth.loc[test.paper].to_numpy(), test.label.to_numpy())
    again = citation_dataset(name, n_words=30, subset=300, seed=1)
    assert again.docs.equals(docs)


def test_the_review_rule_builder_and_learning_work_on_cora():
    _need("cora")
    c = citation_dataset("cora", target_class=None, n_words=40, subset=400, seed=0)
    rules = review_rules({w: 1.0 for w in c.vocabulary}, {"cites": 1.0}, prior=0.0)
    learned = learn_weights(rules, c.dataset)
    assert learned[-2].text("mln").endswith("cites(r1, r2) ^ positive(r1) => positive(r2)")
    assert learned[-2].weight > 0.2  # citing papers share their class
    acc = {}
    for with_links in (False, True):
        rr = [r for r in learned if with_links or "cites" not in r.text("mln")]
        m = MLNModel(rr).ground(c.dataset).infer("gibbs", n_samples=300, burn_in=100, seed=0)
        mg = m.marginals()
        acc[with_links] = float(((mg.marginal > 0.5) == (mg.truth > 0.5)).mean())
    assert acc[True] > acc[False] > 0.6


def test_bad_arguments_are_refused():
    with pytest.raises(XcoreError, match="unknown citation dataset"):
        citation_dataset("pubmed")
    _need("cora")
    with pytest.raises(XcoreError, match="target_class"):
        citation_dataset("cora", target_class=7)
    with pytest.raises(XcoreError, match="train_fraction"):
        citation_dataset("cora", train_fraction=0.0)
