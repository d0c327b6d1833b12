"""m-NLIL on heads with very few positives: when every cluster falls below the minimum size after a
reassignment, the largest survives (it used to end in numpy's "argmin of an empty sequence", seen
on friends_smokers with the page's defaults); an embedding without features starts one cluster
(family: KMeans "Found array with 0 feature(s)")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.methods import run_method
from xcore.nlil.mnlil import Config, _initial
from xcore.nlil.settings import NLILSettings


def few_positives() -> RelationalDataset:
    """Three positives of `h`, each reached through another relation (so their embeddings differ)."""
    people = [f"p{i}" for i in range(9)]
    rels = {"r1": [("p0", "p3")], "r2": [("p1", "p4")], "r3": [("p2", "p5"), ("p6", "p7")]}
    tables = {r: {"obs": pd.DataFrame(pairs, columns=["a0", "a1"])} for r, pairs in rels.items()}
    truth = pd.DataFrame({"a0": people, "value": [1.0, 1.0, 1.0] + [0.0] * 6})
    tables["h"] = {"targets": truth[["a0"]].assign(value=np.nan), "truth": truth}
    preds = [Predicate(r, 2) for r in rels] + [Predicate("h", 1, closed=False)]
    return RelationalDataset(Schema.of(preds), tables)


def test_every_cluster_below_the_minimum_keeps_the_largest():
    settings = NLILSettings(heads=("h",), clusters=3, rounds=3, epochs=20, seed=0, n_jobs=1, init="kmeans")
    run = run_method("nlil", few_positives(), settings, cache=None)
    assert len(run.model.rules_) >= 1  # it ran to the end and learned the surviving cluster's rule


def test_an_embedding_without_features_starts_one_cluster():
    emb = np.zeros((7, 0))
    assign = _initial(emb, None, None, None, Config(clusters=3, init="kmeans"))  # type: ignore[arg-type]
    assert assign.tolist() == [0] * 7
