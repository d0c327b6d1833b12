"""A LastFM-shaped recommendation dataset generated from a known (planted) process.

Shape of the HetRec-2011 LastFM data as used by PSL's collaborative-filtering model (Kouki et
al., RecSys 2015): users, items (artists), a symmetric friendship graph, ratings in [0, 1], top-k
item-item and user-user similarities and latent-factor predictions. Nothing is downloaded.

Planted process (all seeded, vectorised):

1. Items belong to genres (Zipf-sized); users to communities. Each genre has a taste centroid
   ``c_g`` and each community a centroid ``a_k`` in ``R^d``.
2. User factors ``p_u = a_k(u) + noise``; friendships are a stochastic block model (most friends
   within the community), stored in both directions. *Friend influence*: the effective factors
   are ``p'_u = (1 - lam_f) p_u + lam_f * mean(p_f for friends f)``.
3. *Item-similarity smoothing*: ``q'_i = (1 - lam_s) q_i + lam_s c_g(i)`` (items of one genre
   are alike).
4. Which pairs are rated: every user rates about the same number of items (LastFM keeps each
   user's top artists); a share of them is drawn from the user's favourite genres (softmax of
   ``p'_u . c_g``), the rest by global Zipf popularity.
5. Rating ``r0_ui = clip(sigmoid(z_ui) + N(0, noise^2), 0, 1)`` where ``z`` is the standardised
   score ``b_u + b_i + p'_u . q'_i`` (standardised) plus the user's own *genre taste* ``t_u,g(i)``
   (a full-rank users x genres shock of scale `genre_taste`: seen through the user's ratings of
   similar items, out of reach of a low-rank model).
6. *Friend contagion* at the rating level: ``r_ui = (1 - lam_c) r0_ui + lam_c * mean(r0_fi)`` over
   the friends f of u who rated i (unchanged when none did); rounded to 3 decimals. Steps 5-6 put
   part of the signal where only the relational predicates (friends, similar items) see it; steps
   2-3 act on the factors, which a low-rank predictor captures.
7. A random `target_fraction` of the ratings is held out: targets of ``rating`` with the true
   value in the truth partition. ``rated`` holds every pair (observed and held out).

Derived predicates use the observed ratings only (no leakage of held-out values): item cosine,
item Pearson (cosine of mean-centred columns) and item Jaccard similarities and user cosine
similarity, each kept as the top-k neighbours per item/user (sparse products, never a dense
items x items matrix); ``sgd_rating`` / ``bpmf_rating`` are biased low-rank (truncated SVD)
predictions for every rated pair, standing in for the latent-factor predictors of the PSL model
(marked not explainable); ``avg_user_rating`` / ``avg_item_rating`` are observed means.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from xcore.data.dataset import RelationalDataset
from xcore.data.generators.rating_features import derived_tables
from xcore.data.io import write_psl_folder
from xcore.data.schema import Predicate

PRESETS: dict[str, dict[str, float | int]] = {
    "small": dict(n_users=100, n_items=200, n_ratings=2_000, target_fraction=0.2, k_sim=5),
    "bench": dict(n_users=1_900, n_items=8_000, n_ratings=108_000, target_fraction=1 / 6, k_sim=20),
    "lastfm": dict(n_users=1_892, n_items=17_632, n_ratings=92_000, target_fraction=0.2, k_sim=50,
                   popularity_exponent=1.0),
}
"""Sizes: `small` for the demo, `bench` for the grounding benchmark (~90k observed + 18k target
ratings), `lastfm` the size of the real HetRec LastFM data, with its heavy-tailed (Zipf exponent 1)
artist popularity so that friends and similar users rate overlapping artists as in the real data."""


def lastfm_schema() -> list[Predicate]:
    """The predicates of the LastFM model, with templates and explainability flags."""
    ui, ii, uu = ("user", "item"), ("item", "item"), ("user", "user")
    return [
        Predicate("rated", 2, ui, closed=True, template="{0} rated {1}",
                  description="block predicate: the user has a rating (observed or held out) for the item"),
        Predicate("rating", 2, ui, closed=False, template="{0} likes {1}",
                  description="normalised rating in [0, 1]; open: held-out ratings are targets"),
        Predicate("friend", 2, uu, template="{0} is friends with {1}"),
        Predicate("sim_pearson_items", 2, ii, template="{0} and {1} are rated alike (Pearson)",
                  description="top-k Pearson correlation of observed ratings, positive only"),
        Predicate("sim_cosine_items", 2, ii, template="{0} and {1} are rated alike (cosine)",
                  description="top-k cosine similarity of observed rating columns"),
        Predicate("sim_jaccard_items", 2, ii, template="{0} and {1} are rated by the same users",
                  description="top-k Jaccard overlap of the items' raters"),
        Predicate("sim_cosine_users", 2, uu, template="{0} and {1} rate alike",
                  description="top-k cosine similarity of observed rating rows"),
        Predicate("sgd_rating", 2, ui, explainable=False,
                  template="matrix factorisation (SGD) predicts {0} likes {1}",
                  description="biased low-rank prediction (latent factors, not explainable)"),
        Predicate("bpmf_rating", 2, ui, explainable=False,
                  template="Bayesian matrix factorisation predicts {0} likes {1}",
                  description="shrunk low-rank prediction (latent factors, not explainable)"),
        Predicate("avg_user_rating", 1, ("user",), template="{0} rates highly on average"),
        Predicate("avg_item_rating", 1, ("item",), template="{0} is rated highly on average"),
    ]


@dataclass(frozen=True)
class _Planted:
    user_factors: np.ndarray
    item_factors: np.ndarray
    user_bias: np.ndarray
    item_bias: np.ndarray


def make_lastfm(
    n_users: int = 100,
    n_items: int = 200,
    n_ratings: int = 2_000,
    target_fraction: float = 0.2,
    k_sim: int = 50,
    seed: int = 0,
    *,
    n_factors: int = 8,
    n_genres: int | None = None,
    n_communities: int | None = None,
    friends_per_user: float = 13.4,
    friend_influence: float = 0.3,
    item_smoothing: float = 0.5,
    genre_share: float = 0.5,
    popularity_exponent: float = 0.6,
    noise: float = 0.05,
    genre_taste: float = 0.6,
    friend_contagion: float = 0.4,
    name: str = "lastfm_synthetic",
) -> RelationalDataset:
    """Generate a LastFM-shaped `RelationalDataset` from the planted process in the module doc."""
    _check_sizes(n_users, n_items, n_ratings, target_fraction)
    rng = np.random.default_rng(seed)
    n_genres = n_genres or max(4, n_items // 200)
    n_communities = n_communities or max(2, n_users // 60)
    world = _world(rng, n_users, n_items, n_factors, n_genres, n_communities, friends_per_user, friend_influence,
                   item_smoothing)
    users, items = _rated_pairs(rng, world.planted, world.genre, world.genre_c, n_ratings, genre_share,
                                popularity_exponent)
    r = _ratings(rng, world, users, items, genre_taste, noise, friend_contagion)
    held = np.zeros(len(r), dtype=bool)
    held[rng.choice(len(r), size=int(round(target_fraction * len(r))), replace=False)] = True
    tables = _tables(world, users, items, r, held, k_sim, seed)
    description = (f"Synthetic LastFM-shaped data (seed {seed}): {n_users} users, {n_items} items, "
                   f"{int((~held).sum())} observed and {int(held.sum())} held-out ratings, "
                   f"{len(world.friends[0]) // 2} friendships, top-{k_sim} similarities; planted latent factors "
                   f"with friend influence {friend_influence} and genre smoothing {item_smoothing}, "
                   f"genre taste {genre_taste}, friend contagion {friend_contagion}.")
    return RelationalDataset(lastfm_schema(), tables, name=name, description=description)


def _check_sizes(n_users: int, n_items: int, n_ratings: int, target_fraction: float) -> None:
    """ValueError unless the sizes allow the planted process."""
    if n_users < 2 or n_items < 2:
        raise ValueError("need at least 2 users and 2 items")
    if not 0 < n_ratings <= n_users * n_items // 2:
        raise ValueError(f"n_ratings must be in 1..{n_users * n_items // 2} for this many users and items")
    if not 0.0 <= target_fraction < 1.0:
        raise ValueError("target_fraction must be in [0, 1)")


@dataclass(frozen=True)
class _World:
    """The planted world: genres of items, communities and friendships of users, latent factors."""

    genre: np.ndarray
    genre_c: np.ndarray
    friends: tuple[np.ndarray, np.ndarray]
    adj: sp.csr_matrix
    planted: _Planted
    n_factors: int
    n_genres: int


def _world(rng: np.random.Generator, n_users: int, n_items: int, n_factors: int, n_genres: int, n_communities: int,
           friends_per_user: float, friend_influence: float, item_smoothing: float) -> _World:
    """Steps 1-3 of the module doc: genres, communities, factors pulled towards friends and genres."""
    genre = _zipf_labels(rng, n_items, n_genres)
    community = _zipf_labels(rng, n_users, n_communities)
    genre_c = rng.normal(size=(n_genres, n_factors))
    comm_c = rng.normal(size=(n_communities, n_factors))
    p = comm_c[community] + 0.7 * rng.normal(size=(n_users, n_factors))
    q = rng.normal(size=(n_items, n_factors))
    fu, fv = _friendships(rng, community, friends_per_user)
    adj = sp.csr_matrix((np.ones(len(fu)), (fu, fv)), shape=(n_users, n_users))
    deg = np.asarray(adj.sum(axis=1)).ravel()
    friend_mean = (adj @ p) / np.maximum(deg, 1)[:, None]
    p_eff = np.where(deg[:, None] > 0, (1 - friend_influence) * p + friend_influence * friend_mean, p)
    q_eff = (1 - item_smoothing) * q + item_smoothing * genre_c[genre]
    planted = _Planted(p_eff, q_eff, 0.5 * rng.normal(size=n_users), 0.5 * rng.normal(size=n_items))
    return _World(genre, genre_c, (fu, fv), adj, planted, n_factors, n_genres)


def _ratings(rng: np.random.Generator, w: _World, users: np.ndarray, items: np.ndarray, genre_taste: float,
             noise: float, friend_contagion: float) -> np.ndarray:
    """Steps 5-6: the rating of each rated pair from the planted factors, genre tastes and friends."""
    planted, n_users = w.planted, len(w.planted.user_bias)
    score = planted.user_bias[users] + planted.item_bias[items] + np.einsum(
        "ij,ij->i", planted.user_factors[users], planted.item_factors[items]) / np.sqrt(w.n_factors)
    # a user's own taste for each genre: a full-rank users x genres shock, seen only through the
    # user's ratings of the genre's (similar) items, not by a low-rank model
    taste = genre_taste * rng.normal(size=(n_users, w.n_genres))
    score = score / (score.std() + 1e-12) + taste[users, w.genre[items]]
    z = (score - score.mean()) / (score.std() + 1e-12)
    r0 = np.clip(1 / (1 + np.exp(-z)) + rng.normal(scale=noise, size=len(z)), 0.0, 1.0)
    return _contagion(r0, users, items, w.adj, friend_contagion).round(3)


def _pairs(a: np.ndarray, b: np.ndarray, na: np.ndarray, nb: np.ndarray, v: np.ndarray | None = None) -> pd.DataFrame:
    """A two-argument predicate table of named pairs (value 1 unless given)."""
    return pd.DataFrame({"a0": na.take(a), "a1": nb.take(b), "value": np.ones(len(a)) if v is None else v})


def _tables(w: _World, users: np.ndarray, items: np.ndarray, r: np.ndarray, held: np.ndarray, k_sim: int,
            seed: int) -> dict[str, dict[str, pd.DataFrame]]:
    """Every predicate's tables: ratings observed and held out, friendships, derived predicates."""
    n_users, n_items = len(w.planted.user_bias), len(w.planted.item_bias)
    obs = ~held
    # observed ratings; a rating of exactly 0 stays an explicit entry (it counts as rated)
    R = sp.csr_matrix((r[obs], (users[obs], items[obs])), shape=(n_users, n_items))
    uname, iname = _names("u", n_users), _names("i", n_items)
    fu, fv = w.friends
    tables: dict[str, dict[str, pd.DataFrame]] = {
        "rated": {"obs": _pairs(users, items, uname, iname)},
        "rating": {
            "obs": _pairs(users[obs], items[obs], uname, iname, r[obs]),
            "targets": _pairs(users[held], items[held], uname, iname).drop(columns="value"),
            "truth": _pairs(users[held], items[held], uname, iname, r[held]),
        },
        "friend": {"obs": _pairs(fu, fv, uname, uname)},
    }
    tables.update(derived_tables(R, users, items, uname, iname, k_sim, seed, _pairs))
    return tables


def lastfm_preset(preset: str = "small", seed: int = 0, **overrides: object) -> RelationalDataset:
    """`make_lastfm` with the sizes of a named preset (`PRESETS`): 'small', 'bench' or 'lastfm'."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    kwargs = {**PRESETS[preset], **overrides}
    return make_lastfm(seed=seed, name=f"lastfm_{preset}", **kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- planted process
def _names(prefix: str, n: int) -> pd.api.extensions.ExtensionArray:
    """Zero-padded names as a pandas string array (Arrow-backed: `take` is fast and copy-free)."""
    width = len(str(n - 1))
    return pd.array(np.char.add(prefix, np.char.zfill(np.arange(n).astype(str), width)), dtype="str")


def _zipf_labels(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Labels 0..k-1 for n objects with Zipf-like group sizes (every group non-empty when n >= k)."""
    w = 1.0 / np.arange(1, k + 1) ** 0.7
    labels = rng.choice(k, size=n, p=w / w.sum())
    labels[rng.permutation(n)[: min(n, k)]] = np.arange(min(n, k))
    return labels


def _friendships(rng: np.random.Generator, community: np.ndarray, per_user: float) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric stochastic-block friendships (80% within the community), both directions."""
    n = len(community)
    m = int(n * per_user / 2)
    u = rng.integers(n, size=2 * m)
    same = rng.random(2 * m) < 0.8
    order = np.argsort(community, kind="stable")
    start = np.searchsorted(community[order], community[u], side="left")
    end = np.searchsorted(community[order], community[u], side="right")
    within = order[start + (rng.random(2 * m) * (end - start)).astype(np.int64)]
    v = np.where(same, within, rng.integers(n, size=2 * m))
    keep = u != v
    a, b = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
    key = np.unique(a.astype(np.int64) * n + b)
    if len(key) > m:
        key = np.sort(rng.choice(key, size=m, replace=False))
    a, b = key // n, key % n
    both_a, both_b = np.concatenate([a, b]), np.concatenate([b, a])
    order = np.lexsort((both_b, both_a))
    return both_a[order], both_b[order]


def _contagion(r0: np.ndarray, users: np.ndarray, items: np.ndarray, adj: sp.csr_matrix,
               strength: float) -> np.ndarray:
    """Friend contagion at the rating level: each rating moves a share `strength` towards the
    mean of the user's friends' ratings of the same item (when some friend rated it)."""
    if strength <= 0 or adj.nnz == 0:
        return r0
    shape = (adj.shape[0], int(items.max()) + 1)
    R0 = sp.csr_matrix((r0, (users, items)), shape=shape)
    B = sp.csr_matrix((np.ones(len(r0)), (users, items)), shape=shape)
    A = (adj > 0).astype(np.float64)
    total = _values_at(A @ R0, users, items)
    count = _values_at(A @ B, users, items)
    mean = np.divide(total, count, out=r0.copy(), where=count > 0)
    return np.clip((1 - strength) * r0 + strength * mean, 0.0, 1.0)


def _values_at(M: sp.spmatrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Entries of sparse `M` at (rows, cols) (0 where not stored), vectorised."""
    return np.asarray(M.tocsr()[rows, cols]).ravel()


def _rated_pairs(rng, planted: _Planted, genre: np.ndarray, genre_c: np.ndarray, n_ratings: int,
                 genre_share: float, popularity_exponent: float) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (user, item) pairs: near-equal counts per user, from favourite genres or by popularity."""
    n_users, n_items = len(planted.user_factors), len(genre)
    pop = 1.0 / (1 + rng.permutation(n_items)) ** popularity_exponent
    by_genre = np.lexsort((np.arange(n_items), genre))
    g_sorted = genre[by_genre]
    cum_in_genre = np.cumsum(pop[by_genre])
    g_start = np.searchsorted(g_sorted, np.arange(len(genre_c)), side="left")
    g_end = np.searchsorted(g_sorted, np.arange(len(genre_c)), side="right")
    base = np.concatenate([[0.0], cum_in_genre])
    cum_pop = np.cumsum(pop)
    affinity = planted.user_factors @ genre_c.T / np.sqrt(genre_c.shape[1])
    pref = np.exp(2.0 * (affinity - affinity.max(axis=1, keepdims=True)))
    pref_cum = np.cumsum(pref / pref.sum(axis=1, keepdims=True), axis=1)
    activity = rng.lognormal(sigma=0.25, size=n_users)
    activity /= activity.sum()

    keys = np.zeros(0, dtype=np.int64)
    for _ in range(20):  # a few rounds of top-up until enough distinct pairs
        need = int((n_ratings - len(keys)) * 1.3) + 16
        u = np.repeat(np.arange(n_users), rng.multinomial(need, activity))
        from_genre = rng.random(len(u)) < genre_share
        g = (pref_cum[u] < rng.random(len(u))[:, None]).sum(axis=1).clip(0, len(genre_c) - 1)
        lo, hi = base[g_start[g]], base[g_end[g]]
        in_genre = by_genre[np.searchsorted(cum_in_genre, lo + rng.random(len(u)) * (hi - lo), side="right")
                            .clip(g_start[g], np.maximum(g_end[g] - 1, g_start[g]))]
        popular = np.searchsorted(cum_pop, rng.random(len(u)) * cum_pop[-1], side="right").clip(0, n_items - 1)
        i = np.where(from_genre & (g_end[g] > g_start[g]), in_genre, popular)
        keys = np.unique(np.concatenate([keys, u.astype(np.int64) * n_items + i]))
        if len(keys) >= n_ratings:
            break
    keys = np.sort(rng.choice(keys, size=n_ratings, replace=False))
    return keys // n_items, keys % n_items


# ---------------------------------------------------------------------- bundled demo sample
DEMO_RULES = """\
# Collaborative-filtering rules in the style of PSL's LastFM model (Kouki et al., RecSys 2015).
1.0: rated(U, I1) & rated(U, I2) & rating(U, I1) & sim_cosine_items(I1, I2) -> rating(U, I2) ^2
1.0: rated(U, I1) & rated(U, I2) & rating(U, I1) & sim_pearson_items(I1, I2) -> rating(U, I2) ^2
1.0: rated(U, I1) & rated(U, I2) & rating(U, I1) & sim_jaccard_items(I1, I2) -> rating(U, I2) ^2
1.0: rated(U, I1) & rated(U, I2) & ~rating(U, I1) & sim_cosine_items(I1, I2) -> ~rating(U, I2) ^2
1.0: rated(U1, I) & rated(U2, I) & rating(U1, I) & sim_cosine_users(U1, U2) -> rating(U2, I) ^2
1.0: rated(U1, I) & rated(U2, I) & ~rating(U1, I) & sim_cosine_users(U1, U2) -> ~rating(U2, I) ^2
1.0: rated(U1, I) & rated(U2, I) & rating(U1, I) & friend(U1, U2) -> rating(U2, I) ^2
1.0: rated(U, I) & sgd_rating(U, I) -> rating(U, I) ^2
1.0: rated(U, I) & rating(U, I) -> sgd_rating(U, I) ^2
1.0: rated(U, I) & bpmf_rating(U, I) -> rating(U, I) ^2
1.0: rated(U, I) & rating(U, I) -> bpmf_rating(U, I) ^2
1.0: rated(U, I) & avg_user_rating(U) -> rating(U, I) ^2
1.0: rated(U, I) & rating(U, I) -> avg_user_rating(U) ^2
1.0: rated(U, I) & avg_item_rating(I) -> rating(U, I) ^2
1.0: rated(U, I) & rating(U, I) -> avg_item_rating(I) ^2
"""
"""The demo model shipped next to the sample data (``model.psl``)."""

DEMO_README = """\
# Last.fm demo (synthetic recommendation data)

A small **synthetic** dataset with the shape of the HetRec-2011 Last.fm data as used by PSL's
collaborative-filtering model: {summary}

Predicates: `rated/2` (block predicate: the pair has a rating, observed or held out),
`rating/2` (open: observed ratings; held-out ratings are targets with truth values),
`friend/2`, item similarities `sim_cosine_items/2`, `sim_pearson_items/2`,
`sim_jaccard_items/2` and user similarity `sim_cosine_users/2` (top-{k} neighbours, from
observed ratings only), latent-factor predictions `sgd_rating/2` and `bpmf_rating/2` (marked
not explainable) and the averages `avg_user_rating/1`, `avg_item_rating/1`. `model.psl` holds
collaborative-filtering rules in the style of the PSL model.

The ratings come from a known planted process (latent factors with friend influence and genre
smoothing, per-user genre tastes, friend contagion of ratings, Zipf item popularity, Gaussian noise); see the docstring of
`xcore/data/generators/lastfm.py`. Regenerate with
`python -c "from xcore.data.generators.lastfm import write_lastfm_demo; write_lastfm_demo('sample_data/lastfm_demo')"`.

**Citation**: the shape follows P. Kouki, S. Fakhraei, J. Foulds, M. Eirinaki and L. Getoor,
"HyPER: A Flexible and Extensible Probabilistic Framework for Hybrid Recommender Systems",
RecSys 2015, and the HetRec 2011 Last.fm dataset (GroupLens). No real data is included.

**Licence**: generated by xcore and released under the project's licence (MIT).

**Changes**: none (generated data; preset `small`, seed {seed}).
"""


def write_lastfm_demo(folder: str = "sample_data/lastfm_demo", seed: int = 0) -> RelationalDataset:
    """Write the `small` preset as a PSL folder with README.md and model.psl; returns the dataset."""
    ds = lastfm_preset("small", seed=seed)
    ds.name = "lastfm_demo"
    path = Path(folder)
    write_psl_folder(ds, path)
    (path / "model.psl").write_text(DEMO_RULES, encoding="utf-8")
    (path / "README.md").write_text(
        DEMO_README.format(summary=ds.description, k=PRESETS["small"]["k_sim"], seed=seed), encoding="utf-8")
    return ds
