"""The LastFM-shaped generator: sizes, determinism, derived predicates recomputed by brute force,
the planted signal, and the shipped demo sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xcore.data.generators import LASTFM_PRESETS, lastfm_preset, make_lastfm
from xcore.data.samples import sample_data_dir


@pytest.fixture(scope="module")
def small():
    return lastfm_preset("small", seed=0)


def _pairs(df: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(df["a0"], df["a1"]))


def test_sizes_and_partitions(small):
    n = LASTFM_PRESETS["small"]["n_ratings"]
    assert len(small.observations("rated")) == n
    obs, tgt, truth = small.observations("rating"), small.targets("rating"), small.truth("rating")
    assert len(tgt) == round(0.2 * n) and len(obs) + len(tgt) == n
    assert _pairs(obs) | _pairs(tgt) == _pairs(small.observations("rated"))
    assert not _pairs(obs) & _pairs(tgt)
    assert _pairs(truth) == _pairs(tgt)
    assert set(small.types()) == {"user", "item"}
    for p in small.predicates:
        for part in ("obs", "truth"):
            v = small.table(p.name, part)["value"]
            assert v.between(0, 1).all(), p.name
    flags = {p.name: (p.closed, p.explainable) for p in small.predicates}
    assert flags["rating"] == (False, True) and flags["rated"] == (True, True)
    assert not flags["sgd_rating"][1] and not flags["bpmf_rating"][1] and flags["sim_cosine_items"][1]
    assert small.predicate("friend").render(["u01", "u02"]) == "u01 is friends with u02"


def test_same_seed_same_data_other_seed_other_data(small):
    again = lastfm_preset("small", seed=0)
    other = lastfm_preset("small", seed=1)
    for p in small.schema.names:
        for part in ("obs", "targets", "truth"):
            pd.testing.assert_frame_equal(small.table(p, part), again.table(p, part))
    assert not small.observations("rating").equals(other.observations("rating"))


def test_friendships_are_symmetric_without_self_loops(small):
    f = small.observations("friend")
    pairs = _pairs(f)
    assert pairs == {(b, a) for a, b in pairs}
    assert all(a != b for a, b in pairs)
    assert len(pairs) / small.constants("user").size > 5  # about 13 friends each


def _dense_obs(ds) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """Observed ratings as a dense matrix and the mask of observed pairs (ratings may be 0)."""
    obs = ds.observations("rating")
    users, items = sorted(ds.constants("user")), sorted(ds.constants("item"))
    R = np.zeros((len(users), len(items)))
    rated = np.zeros_like(R, dtype=bool)
    ui = {u: k for k, u in enumerate(users)}
    ii = {i: k for k, i in enumerate(items)}
    R[obs["a0"].map(ui), obs["a1"].map(ii)] = obs["value"]
    rated[obs["a0"].map(ui), obs["a1"].map(ii)] = True
    return R, rated, users, items


def _check_top_k(table: pd.DataFrame, S: np.ndarray, names: list[str], k: int) -> None:
    """Every kept neighbour has the right similarity and is among the k best of its row."""
    idx = {n: j for j, n in enumerate(names)}
    np.fill_diagonal(S, -np.inf)
    a = table["a0"].map(idx).to_numpy()
    b = table["a1"].map(idx).to_numpy()
    np.testing.assert_allclose(table["value"], np.clip(S[a, b], 0, 1).round(3), atol=1e-9)
    assert (a != b).all() and table.groupby("a0").size().max() <= k
    kth = np.sort(S, axis=1)[:, -k]  # k-th largest per row
    assert (S[a, b] >= kth[a] - 1e-9).all()
    full = pd.Series(a).value_counts()
    positive = (S > 1e-9).sum(axis=1)
    for row, count in full.items():  # a row keeps min(k, #positive) neighbours
        assert count == min(k, positive[row])


def test_similarities_match_brute_force_on_observed_ratings(small):
    k = LASTFM_PRESETS["small"]["k_sim"]
    R, rated, users, items = _dense_obs(small)
    norm_i = np.linalg.norm(R, axis=0)
    C = R.T @ R / np.outer(np.where(norm_i > 0, norm_i, 1), np.where(norm_i > 0, norm_i, 1))
    _check_top_k(small.observations("sim_cosine_items"), C, items, k)
    inter = rated.T.astype(float) @ rated.astype(float)
    size = rated.sum(axis=0)
    J = inter / np.maximum(size[:, None] + size[None, :] - inter, 1)
    _check_top_k(small.observations("sim_jaccard_items"), J, items, k)
    centred = np.where(rated, R - R.sum(0) / np.maximum(rated.sum(0), 1), 0.0)
    nc = np.linalg.norm(centred, axis=0)
    P = centred.T @ centred / np.outer(np.where(nc > 0, nc, 1), np.where(nc > 0, nc, 1))
    _check_top_k(small.observations("sim_pearson_items"), P, items, k)
    norm_u = np.linalg.norm(R, axis=1)
    U = R @ R.T / np.outer(np.where(norm_u > 0, norm_u, 1), np.where(norm_u > 0, norm_u, 1))
    _check_top_k(small.observations("sim_cosine_users"), U, users, k)


def test_averages_and_predictions_cover_rated_pairs(small):
    R, rated, users, items = _dense_obs(small)
    avg = small.observations("avg_user_rating").set_index("a0")["value"]
    obs = small.observations("rating")
    want = obs.groupby("a0")["value"].mean().round(3)
    np.testing.assert_allclose(avg.loc[want.index], want, atol=1e-9)
    for p in ("sgd_rating", "bpmf_rating"):
        assert _pairs(small.observations(p)) == _pairs(small.observations("rated"))
    assert rated.sum() == len(obs) and (R[rated] == 0).any()  # zero ratings exist and count


def test_planted_signal_is_recoverable(small):
    truth = small.truth("rating")
    sgd = small.observations("sgd_rating")
    m = truth.merge(sgd, on=["a0", "a1"], suffixes=("", "_sgd"))
    assert np.corrcoef(m["value"], m["value_sgd"])[0, 1] > 0.5  # held-out ratings are predictable
    obs, friends = small.observations("rating"), small.observations("friend")
    f = truth.merge(friends.rename(columns={"a0": "u", "a1": "a0"})[["u", "a0"]], on="a0").merge(
        obs.rename(columns={"a0": "u", "value": "fv"}), on=["u", "a1"])
    g = f.groupby(["a0", "a1"]).agg(v=("value", "first"), fv=("fv", "mean"))
    assert len(g) > 50 and np.corrcoef(g["v"], g["fv"])[0, 1] > 0.3  # friends rate alike


@pytest.mark.slow
def test_mid_size_generation_scales_and_validates_arguments():
    ds = make_lastfm(n_users=300, n_items=1200, n_ratings=12_000, target_fraction=0.1, k_sim=10, seed=3)
    assert len(ds.observations("rated")) == 12_000 and len(ds.targets("rating")) == 1_200
    assert ds.observations("sim_cosine_items").groupby("a0").size().max() <= 10
    with pytest.raises(ValueError):
        make_lastfm(n_users=3, n_items=3, n_ratings=100)
    with pytest.raises(ValueError):
        lastfm_preset("huge")


def test_shipped_demo_sample_is_the_small_preset(small):
    from xcore.data import load_sample
    from xcore.logic import parse_rules
    from xcore.logic.grounding import ground

    folder = sample_data_dir() / "lastfm_demo"
    if not folder.is_dir():
        pytest.skip("sample_data/lastfm_demo not generated")
    ds = load_sample("lastfm_demo")

    def canonical(t: pd.DataFrame) -> pd.DataFrame:
        args = [c for c in t.columns if c != "value"]
        t = t.assign(**{c: t[c].astype(str) for c in args})
        return t.sort_values(args).reset_index(drop=True)

    for p in small.schema.names:
        for part in ("obs", "targets", "truth"):
            got, want = canonical(ds.table(p, part)), canonical(small.table(p, part))
            args = [c for c in want.columns if c != "value"]
            assert got[args].equals(want[args]), (p, part)
            np.testing.assert_allclose(got["value"], want["value"], atol=1e-12)
    sizes = (folder.stat().st_size + sum(f.stat().st_size for f in folder.iterdir()))
    assert sizes < 300_000
    rules = parse_rules((folder / "model.psl").read_text())
    prog = ground(rules, ds)
    assert all(g.n > 0 for g in prog)


def test_friend_contagion_matches_a_loop_reference():
    """Each rating moves `strength` of the way to the mean of its raters' friends' ratings of the item."""
    import scipy.sparse as sp

    from xcore.data.generators.lastfm import _contagion

    rng = np.random.default_rng(3)
    n_u, n_i = 12, 9
    keys = rng.choice(n_u * n_i, size=50, replace=False)
    users, items = keys // n_i, keys % n_i
    r0 = rng.random(50)
    a, b = rng.integers(0, n_u, 30), rng.integers(0, n_u, 30)
    keep = a != b
    adj = sp.csr_matrix((np.ones(2 * keep.sum()), (np.r_[a[keep], b[keep]], np.r_[b[keep], a[keep]])),
                        shape=(n_u, n_u))
    got = _contagion(r0, users, items, adj, 0.4)
    rating = {(u, i): v for u, i, v in zip(users, items, r0)}
    friends = {u: set(adj[u].indices) for u in range(n_u)}
    for k, (u, i) in enumerate(zip(users, items)):
        vals = [rating[f, i] for f in friends[u] if (f, i) in rating]
        want = r0[k] if not vals else 0.6 * r0[k] + 0.4 * np.mean(vals)
        assert got[k] == pytest.approx(want)


@pytest.mark.slow
def test_relational_signal_beyond_latent_factors():
    """With contagion and genre tastes planted, friends' observed ratings of the same item explain
    held-out ratings beyond the low-rank `sgd_rating`; without them they hardly do."""

    def gain(**kw) -> float:
        ds = make_lastfm(n_users=300, n_items=600, n_ratings=9_000, k_sim=10, seed=1,
                         popularity_exponent=1.0, **kw)
        truth = ds.truth("rating")[["a0", "a1", "value"]]
        sgd = ds.observations("sgd_rating").rename(columns={"value": "sgd"})
        obs = ds.observations("rating").rename(columns={"a0": "f", "value": "fv"})
        fr = ds.observations("friend")[["a0", "a1"]].rename(columns={"a0": "f", "a1": "a0"})
        fmean = (truth[["a0", "a1"]].merge(fr, on="a0").merge(obs[["f", "a1", "fv"]], on=["f", "a1"])
                 .groupby(["a0", "a1"]).fv.mean().rename("fmean"))
        m = truth.merge(sgd[["a0", "a1", "sgd"]], on=["a0", "a1"]).merge(fmean, on=["a0", "a1"])
        X = np.column_stack([m["sgd"], m["fmean"], np.ones(len(m))])
        coef, *_ = np.linalg.lstsq(X, m["value"], rcond=None)
        base = np.mean((m["value"] - m["sgd"]) ** 2)
        return 1 - np.mean((X @ coef - m["value"]) ** 2) / base

    planted = gain()  # about 0.55 (seed 1)
    assert planted > 0.35
    assert gain(friend_contagion=0.0, genre_taste=0.0) < 0.5 * planted  # about 0.17
