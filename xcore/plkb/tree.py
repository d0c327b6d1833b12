"""Tree KB: an ID3 decision tree (multiway categorical splits, entropy gain) turned into clauses.

Each root-to-leaf path ``a1=v1, ..., ak=vk`` becomes ``p: POS | ~a1_v1 | ... | ~ak_vk`` with p the
positive ratio at the leaf (optionally one clause per node, root included). A forest learns
trees on bootstrap samples and takes the union of their clauses. Gains are computed for all
features at once with bincounts; ties go to the lowest feature index (gains are compared after
rounding to 12 decimals so that equal gains tie exactly). Splitting continues at zero gain until
a node is pure or has no feature left that takes two values there, as in plain ID3.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.plkb.kb import KB, clauses_from_conjunctions
from xcore.plkb.literals import Domain


@dataclass
class Node:
    """One tree node: the path that reaches it, its row counts, and its split feature (or leaf)."""

    id: int
    parent: int
    depth: int
    path: tuple[tuple[int, int], ...]
    n: int
    n_pos: int
    p: float
    split: int = -1
    gain: float = float("nan")
    children: list[int] = field(default_factory=list)

    @property
    def is_leaf(self) -> bool:
        return self.split < 0


def entropy(n_pos: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Binary entropy (bits) of positive counts out of totals (0 where the total is 0)."""
    n_pos = np.asarray(n_pos, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(n > 0, n_pos / np.where(n > 0, n, 1), 0.0)
        h = -(np.where(q > 0, q * np.log2(np.where(q > 0, q, 1)), 0.0)
              + np.where(q < 1, (1 - q) * np.log2(np.where(q < 1, 1 - q, 1)), 0.0))
    return np.where(n > 0, h, 0.0)


def information_gains(codes: np.ndarray, y: np.ndarray, cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entropy gain of splitting on every feature (vectorised) and how many values each takes here."""
    m, F = codes.shape
    if m == 0 or F == 0:
        return np.zeros(F), np.zeros(F, dtype=np.int64)
    base = np.concatenate([[0], np.cumsum(cards)[:-1]]).astype(np.int64)
    flat = (codes + base[None, :]).ravel()
    total = int(cards.sum())
    cnt = np.bincount(flat, minlength=total).astype(float)
    pos = np.bincount(flat, weights=np.repeat(y.astype(float), F), minlength=total)
    child = cnt * entropy(pos, cnt)
    feat_of = np.repeat(np.arange(F), cards)
    cond = np.bincount(feat_of, weights=child, minlength=F) / m
    n_values = np.bincount(feat_of, weights=(cnt > 0).astype(float), minlength=F).astype(np.int64)
    h0 = float(entropy(np.array([y.sum()]), np.array([m]))[0])
    return h0 - cond, n_values


def id3(codes: np.ndarray, y: np.ndarray, domain: Domain, max_depth: int | None = None,
        min_samples_split: int = 2, min_gain: float = 0.0, max_features: int | None = None,
        fill_unseen: bool = True, rng: np.random.Generator | None = None) -> list[Node]:
    """Grow an ID3 tree; returns its nodes (node 0 is the root).

    `max_features` draws that many candidate features at random per node (for forests).
    With `fill_unseen`, a split also gets a leaf for every domain value absent from the node's
    rows, carrying the parent's positive ratio (support 0), so every complete query reaches a leaf.
    """
    codes = np.asarray(codes, dtype=np.int64)
    y = np.asarray(y, dtype=bool)
    if codes.ndim != 2 or codes.shape[1] != domain.n_features or len(codes) != len(y):
        raise XcoreError("id3: codes must be (rows, features) matching the domain and labels")
    if len(y) == 0:
        raise XcoreError("id3: no training rows")
    if (codes < 0).any():
        raise XcoreError("id3: training codes must all be known values (discretise missing values first)")
    cards = domain.cardinalities
    nodes: list[Node] = []
    root = Node(0, -1, 0, (), len(y), int(y.sum()), float(y.mean()))
    nodes.append(root)
    stack = [(0, np.arange(len(y)))]
    while stack:
        nid, rows = stack.pop()
        node = nodes[nid]
        if node.n_pos in (0, node.n) or node.n < min_samples_split:
            continue
        if max_depth is not None and node.depth >= max_depth:
            continue
        gains, n_values = information_gains(codes[rows], y[rows], cards)
        allowed = n_values >= 2
        if max_features is not None and rng is not None:
            cand = np.flatnonzero(allowed)
            if len(cand) > max_features:
                keep = rng.choice(cand, size=max_features, replace=False)
                allowed = np.zeros_like(allowed)
                allowed[keep] = True
        if not allowed.any():
            continue
        g = np.where(allowed, np.round(gains, 12), -np.inf)
        f = int(np.argmax(g))
        if g[f] < min_gain - 1e-12:
            continue
        node.split, node.gain = f, float(gains[f])
        col = codes[rows, f]
        counts = np.bincount(col, minlength=cards[f])
        pos_counts = np.bincount(col, weights=y[rows].astype(float), minlength=cards[f])
        order = np.argsort(col, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(counts)])
        for v in range(int(cards[f])):
            if counts[v] == 0 and not fill_unseen:
                continue
            cid = len(nodes)
            n_v, p_v = int(counts[v]), int(pos_counts[v])
            p = p_v / n_v if n_v else node.p
            nodes.append(Node(cid, nid, node.depth + 1, node.path + ((f, v),), n_v, p_v, p))
            node.children.append(cid)
            if n_v:
                stack.append((cid, rows[order[bounds[v]:bounds[v + 1]]]))
    return nodes


def nodes_frame(nodes: list[Node], domain: Domain) -> pd.DataFrame:
    """One row per node (for display): id, parent, depth, path text, n, n_pos, p, split, gain, leaf."""
    return pd.DataFrame({
        "id": [n.id for n in nodes], "parent": [n.parent for n in nodes],
        "depth": [n.depth for n in nodes],
        "path": [", ".join(f"{domain.features[f]}={domain.values[f][v]}" for f, v in n.path) or "(root)"
                 for n in nodes],
        "n": [n.n for n in nodes], "n_pos": [n.n_pos for n in nodes], "p": [n.p for n in nodes],
        "split": [domain.features[n.split] if n.split >= 0 else "" for n in nodes],
        "gain": [n.gain for n in nodes], "leaf": [n.is_leaf for n in nodes],
    })


def tree_kb(nodes: list[Node], domain: Domain, all_nodes: bool = False, source: str = "tree") -> KB:
    """Clauses of a tree: one per leaf path (or per node, root included, with `all_nodes`)."""
    chosen = [n for n in nodes if all_nodes or n.is_leaf]
    feat = np.array([f for n in chosen for f, _ in n.path], dtype=np.int64)
    val = np.array([v for n in chosen for _, v in n.path], dtype=np.int64)
    lengths = np.array([len(n.path) for n in chosen], dtype=np.int64)
    return clauses_from_conjunctions(domain, feat, val, lengths,
                                     np.array([n.p for n in chosen]), np.array([n.n for n in chosen]), source)


def forest_kb(codes: np.ndarray, y: np.ndarray, domain: Domain, n_trees: int = 10,
              max_features: int | str | None = "sqrt", all_nodes: bool = False,
              max_depth: int | None = None, min_samples_split: int = 2, seed: int = 0,
              progress=None) -> KB:
    """Union of the clauses of `n_trees` ID3 trees, each on a bootstrap sample (seeded)."""
    rng = np.random.default_rng(seed)
    F = domain.n_features
    if max_features == "sqrt":
        mf: int | None = max(1, int(np.sqrt(F)))
    elif max_features is None:
        mf = None
    else:
        mf = int(max_features)
    kbs = []
    for t in range(int(n_trees)):
        idx = rng.integers(0, len(y), size=len(y))
        nodes = id3(codes[idx], y[idx], domain, max_depth=max_depth, min_samples_split=min_samples_split,
                    max_features=mf, rng=rng)
        kbs.append(tree_kb(nodes, domain, all_nodes, source=f"tree{t}"))
        if progress is not None:
            progress((t + 1) / n_trees, f"tree {t + 1} of {n_trees}")
    return KB.concat(kbs)
