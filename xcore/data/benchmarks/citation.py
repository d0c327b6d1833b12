"""Cora / CiteSeer as review-like Markov-logic data (tests and benchmarks only, never shipped).

The same predicates and roles as the review setting (`xcore.data.generators.reviews`), so
`xcore.mln.reviews.review_rules` builds the model: ``has_word(P, W)`` (the paper contains word W, anonymous ``w123``; the
`n_words` most class-informative words by chi-squared on the training papers), ``cites(P1, P2)``
(citations, both directions) and the target ``positive(P)`` = the paper is in `target_class`
(one vs rest). A seeded `train_fraction` of the papers is training data (``positive`` observed),
the rest are targets with truth. No annotation (planted truth) exists for these data.

The Planetoid pickles are opened only through the checked loader of `xcore.data.benchmarks.cora` (SHA-256
pinned files, an unpickler that admits a few numpy/scipy classes), `load_planetoid`, with
Cora's or CiteSeer's pinned checksums.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.feature_selection import chi2

from xcore.data.benchmarks.cora import CHECKED_FILES as CORA_CHECKED
from xcore.data.benchmarks.cora import load_planetoid, snowball_sample
from xcore.data.dataset import RelationalDataset
from xcore.data.generators.reviews import TARGET, WORD, review_schema
from xcore.data.shared import shared_data_dir
from xcore.errors import XcoreError

NAMES: dict[str, str] = {"cora": "planetoid_cora", "citeseer": "planetoid_citeseer"}
"""Dataset name -> folder under the shared data directory."""

CITESEER_CHECKED: dict[str, str] = {
    "ind.citeseer.allx": "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668",
    "ind.citeseer.ally": "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95",
    "ind.citeseer.graph": "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7",
    "ind.citeseer.test.index": "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4",
    "ind.citeseer.tx": "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21",
    "ind.citeseer.ty": "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce",
    "ind.citeseer.x": "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6",
    "ind.citeseer.y": "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924",
}
"""SHA-256 of the Planetoid CiteSeer files (kimiyoung/planetoid @ af6abf4); only these are unpickled."""


@dataclass
class CitationData:
    """A citation network in the review setting's shape (no annotation: nothing is planted)."""

    dataset: RelationalDataset
    docs: pd.DataFrame
    """One row per paper: paper, label (0/1: in the target class), category (``c<k>``), split, text (its words)."""
    vocabulary: list[str]
    name: str
    target_class: int
    link_predicates: tuple[str, ...] = ("cites",)
    annotation: None = None


def default_root(name: str) -> Path:
    """The shared-data folder of `name` ("cora" or "citeseer")."""
    return shared_data_dir() / NAMES[_check_name(name)]


def _check_name(name: str) -> str:
    if name not in NAMES:
        raise XcoreError(f"unknown citation dataset {name!r}; use one of {', '.join(NAMES)}")
    return name


def load_planetoid_arrays(name: str = "cora", root: str | Path | None = None
                          ) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix]:
    """Features (N x F binary CSR), labels (N,; -1 = no label) and symmetric adjacency without
    self-loops, through the checked loader `xcore.data.benchmarks.cora.load_planetoid` with the pinned
    checksums of `name`; CiteSeer nodes without a feature row (15 of them) get label -1."""
    root = Path(root) if root is not None else default_root(name)
    checked = CORA_CHECKED if _check_name(name) == "cora" else CITESEER_CHECKED
    return load_planetoid(root, name, checked)


def citation_dataset(name: str = "cora", target_class: int | None = None, n_words: int = 40, subset: int | None = 400,
                     seed: int = 0, root: str | Path | None = None, train_fraction: float = 0.5) -> CitationData:
    """`name` ("cora"/"citeseer") as review-like MLN data (module docstring): `subset` labelled papers
    (breadth-first snowball from seeded starts, keeps citations; None = all), target ``positive(P)``
    = paper in class `target_class` (None: the most frequent class of the subset -- a snowball
    sample is dominated by a few classes), the `n_words` words with the largest chi-squared score
    on the training papers."""
    _check_name(name)
    if not 0.0 < train_fraction < 1.0:
        raise XcoreError(f"train_fraction must be strictly between 0 and 1, got {train_fraction}")
    X, labels, adj = load_planetoid_arrays(name, root)
    n_classes = int(labels.max()) + 1
    if target_class is not None and not 0 <= int(target_class) < n_classes:
        raise XcoreError(f"target_class must be in 0..{n_classes - 1} for {name}, got {target_class}")
    if int(n_words) < 1:
        raise XcoreError(f"n_words must be >= 1, got {n_words}")
    rng = np.random.default_rng(seed)
    nodes = np.flatnonzero(labels >= 0)
    if subset is not None and int(subset) < len(nodes):
        nodes = snowball_sample(adj, nodes, int(subset), rng)
    X, labels, A = X[nodes].tocsr(), labels[nodes], adj[nodes][:, nodes].tocoo()
    n = len(nodes)
    if target_class is None:
        target_class = int(np.argmax(np.bincount(labels, minlength=n_classes)))
    y = (labels == int(target_class)).astype(np.int64)
    train = np.zeros(n, dtype=bool)
    train[rng.permutation(n)[: min(max(1, int(round(train_fraction * n))), n - 1)]] = True
    if len(np.unique(y[train])) < 2:
        raise XcoreError(f"the training papers of this subset are all in or all outside class {target_class}; "
                         f"use a larger subset or another seed")
    scores, _ = chi2(X[train], y[train])
    words = np.argsort(-np.nan_to_num(scores), kind="stable")[: int(n_words)]
    vocab = np.array([f"w{w}" for w in words], dtype=object)
    W = X[:, words].tocoo()
    paper = np.array([f"paper{i}" for i in nodes], dtype=object)
    lab = y.astype(float)
    tables = {
        WORD: {"obs": pd.DataFrame({"a0": paper[W.row], "a1": vocab[W.col], "value": 1.0})},
        "cites": {"obs": pd.DataFrame({"a0": paper[A.row], "a1": paper[A.col], "value": 1.0})},
        TARGET: {"obs": pd.DataFrame({"a0": paper[train], "value": lab[train]}),
                 "targets": pd.DataFrame({"a0": paper[~train]}),
                 "truth": pd.DataFrame({"a0": paper[~train], "value": lab[~train]})},
    }
    cls = f"c{int(target_class)}"  # the Planetoid files carry class indices only
    schema = review_schema("paper", {"cites": "{0} and {1} are linked by a citation"},
                           target_template=f"{{0}} is about {cls}")
    desc = (f"{name} (Planetoid copy; tests and benchmarks only): {n} papers, {len(A.row) // 2} citations, "
            f"{len(vocab)} words, target = class {cls} vs rest, {int(train.sum())} training "
            f"papers (seed {seed}).")
    ds = RelationalDataset(schema, tables, name=f"{name}_{cls.lower()}", description=desc)
    text = pd.Series(vocab[W.col]).groupby(W.row).agg(" ".join).reindex(np.arange(n), fill_value="")
    docs = pd.DataFrame({"paper": paper, "label": y,
                         "category": [f"c{c}" for c in labels.tolist()],
                         "split": np.where(train, "train", "test"), "text": text.to_numpy(dtype=object)})
    return CitationData(ds, docs, vocab.tolist(), name, int(target_class))
