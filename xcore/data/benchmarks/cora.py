"""Cora citation collective classification as a `RelationalDataset` (tests and benchmarks only).

Reads the Planetoid copy of Cora (Yang, Cohen, Salakhutdinov, ICML 2016; McCallum et al. 2000;
Sen et al. 2008) from ``/work/shared/data/planetoid_cora``. Its licence is unclear: never ship it,
never bundle it with the app. The files are Python pickles, so they are opened only after their
SHA-256 matches the pinned value below, and with an unpickler that admits only the few numpy /
scipy / builtin classes those files use. Nothing from a user is ever unpickled here.

Predicates: ``has_cat(Paper, Cat)`` (the target, 0/1), ``link(Paper, Paper)`` (citations, both
directions), ``has_word(Paper, Word)`` for the `n_words` words most associated with the classes
(chi-squared on the observed papers), ``word_cat(Word, Cat)`` (smoothed share of observed papers
with the word that are in the category) and ``local_cat(Paper, Cat)``, a logistic regression on
all words trained on the observed papers -- the non-explainable local classifier.
A seeded `observed_fraction` of the papers has its labels observed; the other papers' ``has_cat``
atoms are targets with their truth. `subset` keeps a connected-ish sample of that many papers
(breadth-first from seeded start papers) for speed.
"""

from __future__ import annotations

import collections
import hashlib
import io
import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order
from sklearn.feature_selection import chi2
from sklearn.linear_model import LogisticRegression

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.data.shared import shared_data_dir
from xcore.errors import DataError
from xcore.runtime import limited_threads

try:
    from numpy._core.multiarray import _reconstruct as _numpy_reconstruct
except ImportError:  # numpy < 2
    from numpy.core.multiarray import _reconstruct as _numpy_reconstruct  # type: ignore[no-redef]

DEFAULT_ROOT = shared_data_dir() / "planetoid_cora"

CHECKED_FILES: dict[str, str] = {
    "ind.cora.allx": "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543",
    "ind.cora.ally": "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71",
    "ind.cora.graph": "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d",
    "ind.cora.test.index": "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875",
    "ind.cora.tx": "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a",
    "ind.cora.ty": "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad",
    "ind.cora.x": "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab",
    "ind.cora.y": "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1",
}
"""SHA-256 of the Planetoid Cora files (kimiyoung/planetoid @ af6abf4); only these are unpickled."""


def _reconstruct():
    return _numpy_reconstruct


class _CheckedUnpickler(pickle.Unpickler):
    """Admits only the classes the Planetoid files use (arrays, a CSR matrix, a defaultdict of lists)."""

    def find_class(self, module: str, name: str):
        allowed = {
            ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
            ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
            ("numpy", "ndarray"): lambda: np.ndarray,
            ("numpy", "dtype"): lambda: np.dtype,
            ("scipy.sparse.csr", "csr_matrix"): lambda: sp.csr_matrix,
            ("scipy.sparse._csr", "csr_matrix"): lambda: sp.csr_matrix,
            ("collections", "defaultdict"): lambda: collections.defaultdict,
            ("__builtin__", "list"): lambda: list,
            ("builtins", "list"): lambda: list,
        }
        if (module, name) not in allowed:
            raise DataError(f"refusing to unpickle {module}.{name}: not a class the Cora files use")
        return allowed[(module, name)]()


def _read_checked(root: Path, name: str, checked: dict[str, str] | None = None) -> bytes:
    """The bytes of a Planetoid file, refused unless its SHA-256 is the pinned one."""
    checked = CHECKED_FILES if checked is None else checked
    path = root / name
    try:
        data = path.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read Planetoid file: {e.strerror or e}", file=str(path)) from None
    if hashlib.sha256(data).hexdigest() != checked[name]:
        raise DataError(f"checksum mismatch: not the checked Planetoid file {name}, refusing to unpickle it",
                        file=str(path))
    return data


def _load(root: Path, name: str, checked: dict[str, str] | None = None):
    data = _read_checked(root, name, checked)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _CheckedUnpickler(io.BytesIO(data), encoding="latin1").load()


def load_planetoid(root: str | Path, name: str = "cora", checked: dict[str, str] | None = None
                   ) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix]:
    """Features (N x F, binary CSR), labels (N,; -1 = none) and the symmetric adjacency without
    self-loops of the Planetoid files ``ind.<name>.*`` in `root`, each file checked against
    `checked` (SHA-256 by file name; Cora's by default). Nodes without a feature row (15 in
    CiteSeer) get an empty row and label -1."""
    root = Path(root)
    allx, ally = _load(root, f"ind.{name}.allx", checked), _load(root, f"ind.{name}.ally", checked)
    tx, ty = _load(root, f"ind.{name}.tx", checked), _load(root, f"ind.{name}.ty", checked)
    graph = _load(root, f"ind.{name}.graph", checked)
    text = _read_checked(root, f"ind.{name}.test.index", checked).decode("ascii")
    test_idx = np.array(text.split(), dtype=np.int64)
    n = max(len(graph), allx.shape[0] + len(test_idx), int(test_idx.max()) + 1)
    rows = np.concatenate([np.arange(allx.shape[0]), test_idx])
    feats = sp.vstack([sp.csr_matrix(allx), sp.csr_matrix(tx)]).tocoo()
    X = sp.csr_matrix((np.ones(feats.nnz), (rows[feats.row], feats.col)), shape=(n, allx.shape[1]))
    X.data[:] = 1.0
    onehot = np.vstack([np.asarray(ally), np.asarray(ty)])
    labels = np.full(n, -1, dtype=np.int64)
    labels[rows] = np.where(onehot.sum(axis=1) > 0, onehot.argmax(axis=1), -1)
    src = np.repeat(np.fromiter(graph.keys(), dtype=np.int64), [len(v) for v in graph.values()])
    dst = np.fromiter((d for v in graph.values() for d in v), dtype=np.int64)
    keep = src != dst
    adj = sp.csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
    return X, labels, ((adj + adj.T) > 0).astype(np.float64).tocsr()


def load_cora_arrays(root: str | Path = DEFAULT_ROOT) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix]:
    """Features (N x 1433, binary CSR), labels (N,) in 0..6 and the symmetric adjacency (N x N)."""
    return load_planetoid(root, "cora", CHECKED_FILES)


def cora_schema() -> list[Predicate]:
    """Predicates of the Cora collective-classification model (templates for explanations)."""
    return [
        Predicate("has_cat", 2, ("paper", "cat"), closed=False, template="{0} is about {1}",
                  description="target: the paper's category (one-hot over 7 categories)"),
        Predicate("link", 2, ("paper", "paper"), template="{0} and {1} cite each other"),
        Predicate("has_word", 2, ("paper", "word"), template="{0} contains the word {1}"),
        Predicate("word_cat", 2, ("word", "cat"), template="the word {0} indicates {1}",
                  description="smoothed share of observed papers with the word that are in the category"),
        Predicate("local_cat", 2, ("paper", "cat"), explainable=False,
                  template="the word classifier says {0} is about {1}",
                  description="logistic regression on the bag of words (not explainable)"),
    ]


def load_cora_dataset(root: str | Path = DEFAULT_ROOT, subset: int | None = None,
                      observed_fraction: float = 0.5, n_words: int = 50, seed: int = 0) -> RelationalDataset:
    """Cora as a `RelationalDataset` with target ``has_cat``; see the module docstring."""
    if not 0.0 < observed_fraction < 1.0:
        raise DataError(f"observed_fraction must be in (0, 1), got {observed_fraction}")
    X, labels, adj = load_cora_arrays(root)
    rng = np.random.default_rng(seed)
    nodes = np.flatnonzero(labels >= 0)
    if subset is not None and subset < len(nodes):
        nodes = snowball_sample(adj, nodes, int(subset), rng)
    X, labels, adj = X[nodes], labels[nodes], adj[nodes][:, nodes].tocoo()
    n, n_cat = len(nodes), int(labels.max()) + 1
    paper = np.array([f"paper{i}" for i in nodes], dtype=object)
    cats = np.array([f"c{c}" for c in range(n_cat)], dtype=object)
    observed = np.zeros(n, dtype=bool)
    observed[rng.permutation(n)[: max(1, int(round(observed_fraction * n)))]] = True

    onehot = np.eye(n_cat)[labels]
    Xo, yo = X[observed], labels[observed]
    scores, _ = chi2(Xo, yo)
    words = np.argsort(-np.nan_to_num(scores), kind="stable")[:n_words]
    word_names = np.array([f"w{w}" for w in words], dtype=object)
    W = X[:, words].tocoo()
    counts = (X[observed][:, words].T @ onehot[observed])  # words x cats
    share = (np.asarray(counts) + 1.0) / (np.asarray(counts).sum(axis=1, keepdims=True) + n_cat)
    with limited_threads(1):  # small problem: OpenBLAS threads only spin (see bench/psl_esms_parallel.py)
        clf = LogisticRegression(max_iter=2000, C=1.0, random_state=seed).fit(Xo, yo)
    proba = np.zeros((n, n_cat))
    proba[:, clf.classes_] = clf.predict_proba(X)

    pc = np.repeat(np.arange(n), n_cat), np.tile(np.arange(n_cat), n)
    frame = pd.DataFrame({"a0": paper[pc[0]], "a1": cats[pc[1]], "value": onehot[pc].astype(float)})
    is_obs = observed[pc[0]]
    wi, ci = np.repeat(np.arange(len(words)), n_cat), np.tile(np.arange(n_cat), len(words))
    tables = {
        "has_cat": {"obs": frame[is_obs].reset_index(drop=True),
                    "targets": frame[~is_obs][["a0", "a1"]].reset_index(drop=True),
                    "truth": frame[~is_obs].reset_index(drop=True)},
        "link": {"obs": pd.DataFrame({"a0": paper[adj.row], "a1": paper[adj.col], "value": 1.0})},
        "has_word": {"obs": pd.DataFrame({"a0": paper[W.row], "a1": word_names[W.col], "value": 1.0})},
        "word_cat": {"obs": pd.DataFrame({"a0": word_names[wi], "a1": cats[ci], "value": share[wi, ci].round(4)})},
        "local_cat": {"obs": pd.DataFrame({"a0": paper[pc[0]], "a1": cats[pc[1]],
                                           "value": proba[pc].round(4)})},
    }
    desc = (f"Cora (Planetoid copy; tests and benchmarks only): {n} papers, {len(adj.row) // 2} citations, "
            f"{n_words} words, {int(observed.sum())} papers with observed labels (seed {seed}).")
    return RelationalDataset(cora_schema(), tables, name="cora", description=desc)


def snowball_sample(adj: sp.csr_matrix, nodes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """About `k` labelled nodes by breadth-first search from random starts (keeps citation links)."""
    allowed = np.zeros(adj.shape[0], dtype=bool)
    allowed[nodes] = True
    taken = np.zeros(adj.shape[0], dtype=bool)
    order = rng.permutation(nodes)
    for start in order:
        if taken.sum() >= k:
            break
        if taken[start]:
            continue
        reach = breadth_first_order(adj, int(start), directed=False, return_predecessors=False)
        reach = reach[allowed[reach] & ~taken[reach]][: k - int(taken.sum())]
        taken[reach] = True
    return np.flatnonzero(taken)
