"""The planted links between generated reviews: reviews choose restaurants of their latent group, and
reviews sharing a user or a restaurant are linked (a few partners each) plus random noise links."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd


def link_tables(groups: Mapping[str, np.ndarray], label: np.ndarray, names: np.ndarray, max_links: int,
                noise_share: float, rng: np.random.Generator) -> tuple[dict[str, pd.DataFrame], frozenset]:
    """Per link predicate (review -> its group, e.g. its user): the link table (group links plus
    `noise_share` as many noise links) and the set of true links (group links joining the same label)."""
    frames, true_sets = {}, []
    for pred, group in groups.items():
        a, b = group_links(group, max_links, rng)
        na, nb = noise_links(group, int(round(noise_share * len(a) / 2)), rng)
        la, lb = np.concatenate([a, na]), np.concatenate([b, nb])
        order = np.lexsort((lb, la))
        frames[pred] = pd.DataFrame({"a0": names[la[order]], "a1": names[lb[order]], "value": 1.0})
        true = label[a] == label[b]
        true_sets.append(frozenset(zip([pred] * int(true.sum()), names[a[true]], names[b[true]])))
    return frames, frozenset().union(*true_sets)


def choose_restaurants(group: np.ndarray, rest_group: np.ndarray, loyalty: float,
                       rng: np.random.Generator) -> np.ndarray:
    """Per review: a uniform restaurant of its group (probability `loyalty`, if the group has one),
    else a uniform restaurant."""
    n, n_rest = len(group), len(rest_group)
    order = np.argsort(rest_group, kind="stable")
    lo = np.searchsorted(rest_group[order], group, side="left")
    hi = np.searchsorted(rest_group[order], group, side="right")
    own = order[np.minimum(lo + (rng.random(n) * (hi - lo)).astype(np.int64), n_rest - 1)]
    anywhere = rng.integers(0, n_rest, n)
    return np.where((rng.random(n) < loyalty) & (hi > lo), own, anywhere)


def group_links(group: np.ndarray, max_links: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric within-group links: each item draws up to `max_links` distinct partners of its group."""
    n = len(group)
    if max_links <= 0 or n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.argsort(group, kind="stable")
    g = group[order]
    start = np.searchsorted(g, g, side="left")
    size = np.searchsorted(g, g, side="right") - start
    pos = np.arange(n) - start
    width = int(size.max()) - 1
    if width <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    offsets = np.arange(1, width + 1)
    valid = offsets[None, :] < size[:, None]
    keys = np.where(valid, rng.random((n, width)), np.inf)
    pick = np.argsort(keys, axis=1, kind="stable")[:, :max_links]
    ok = np.take_along_axis(valid, pick, axis=1)
    i, j = np.nonzero(ok)
    partner = start[i] + (pos[i] + offsets[pick[i, j]]) % size[i]
    return symmetric(order[i], order[partner])


def noise_links(group: np.ndarray, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """At most `m` distinct random undirected pairs from different groups (so never a group link),
    in both directions."""
    n = len(group)
    if m <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, b = rng.integers(0, n, 2 * m), rng.integers(0, n, 2 * m)
    keep = group[a] != group[b]
    a, b = a[keep][:m], b[keep][:m]
    return symmetric(a, b)


def symmetric(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct undirected pairs of (a, b) (self pairs dropped), in both directions, sorted."""
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    pairs = np.unique(np.column_stack([lo, hi]), axis=0) if len(lo) else np.zeros((0, 2), np.int64)
    both = np.concatenate([pairs, pairs[:, ::-1]])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    return both[:, 0].astype(np.int64), both[:, 1].astype(np.int64)
