"""Coalitions for I-Explain: object embeddings, clusters, samples, slicing, symmetry dedup and
the importance mapping of dropped clauses, checked on tiny hand-made networks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.errors import XcoreError
from xcore.mln import MLNModel
from xcore.mln.coalitions import (
    cluster_objects,
    cut_coalition,
    n_clusters_for,
    random_coalition,
    sample_objects,
    solve_coalition,
    sub_network,
)
from xcore.mln.embeddings import cooccurrence_pairs, embed_objects
from xcore.mln.network_index import build_index

RULES = """\
1.0 friends(x, y) ^ smokes(x) => smokes(y)
-0.5 smokes(x)
"""


def people_dataset(people: list[str], links: list[tuple[str, str]], observed: dict[str, float] | None = None
                   ) -> RelationalDataset:
    """friends (both directions) over `people`; smokes open except the `observed` ones."""
    observed = observed or {}
    both = links + [(b, a) for a, b in links]
    schema = Schema.of([
        Predicate("friends", 2, ("person", "person"), closed=True, template="{0} is friends with {1}"),
        Predicate("smokes", 1, ("person",), closed=False, template="{0} smokes"),
    ])
    open_ = [p for p in people if p not in observed]
    tables = {
        "friends": {"obs": pd.DataFrame({"a0": [a for a, _ in both], "a1": [b for _, b in both], "value": 1.0})},
        "smokes": {"obs": pd.DataFrame({"a0": list(observed), "value": [float(v) for v in observed.values()]}),
                   "targets": pd.DataFrame({"a0": open_, "value": np.nan})},
    }
    return RelationalDataset(schema, tables, name="tiny_people")


def clause_texts(mln, clauses) -> list[str]:
    """Text of full-network clauses, computed from the program (independently of coalitions)."""
    return [str(mln.program[int(mln.rule[c])].texts(mln.store, [int(mln.ground_row[c])])[0]) for c in clauses]


def cluster_array(mln, clusters: dict[str, int]) -> np.ndarray:
    out = np.full(mln.store.n_constants, -1, dtype=np.int64)
    for name, k in clusters.items():
        out[mln.store.constant_id(name)] = k
    return out


def sampled_array(mln, names) -> np.ndarray:
    out = np.zeros(mln.store.n_constants, dtype=bool)
    for n in names:
        out[mln.store.constant_id(n)] = True
    return out


@pytest.fixture(scope="module")
def tiny():
    data = people_dataset(["a", "b", "c", "d"], [("a", "b"), ("c", "d"), ("a", "c")])
    return MLNModel(RULES).ground(data).mln_


# ---------------------------------------------------------------------- slicing and dedup
def test_coalition_of_all_objects_dedups_by_cluster_signature(tiny):
    mln = tiny
    index = build_index(mln, "person")
    clusters = cluster_array(mln, {"a": 0, "b": 0, "c": 1, "d": 1})
    coal = cut_coalition(index, sampled_array(mln, "abcd"), clusters)
    assert len(coal.members) == 4
    kept = set(clause_texts(mln, coal.clauses))
    assert kept == {"friends(a, b) & smokes(a) -> smokes(b)", "friends(a, c) & smokes(a) -> smokes(c)",
                    "friends(c, a) & smokes(c) -> smokes(a)", "friends(c, d) & smokes(c) -> smokes(d)",
                    "smokes(a)", "smokes(c)"}
    pairs = dict(zip(clause_texts(mln, coal.dropped), clause_texts(mln, coal.representative)))
    assert pairs == {"friends(b, a) & smokes(b) -> smokes(a)": "friends(a, b) & smokes(a) -> smokes(b)",
                     "friends(d, c) & smokes(d) -> smokes(c)": "friends(c, d) & smokes(c) -> smokes(d)",
                     "smokes(b)": "smokes(a)", "smokes(d)": "smokes(c)"}
    # no dedup: every clause kept; singleton clusters: nothing is symmetric
    assert len(cut_coalition(index, sampled_array(mln, "abcd"), clusters, dedup=False).clauses) == mln.n_clauses
    single = cluster_array(mln, {"a": 0, "b": 1, "c": 2, "d": 3})
    assert len(cut_coalition(index, sampled_array(mln, "abcd"), single).dropped) == 0


def test_subset_slicing_and_mapped_importance(tiny):
    mln = tiny
    index = build_index(mln, "person")
    clusters = cluster_array(mln, {"a": 0, "b": 0, "c": 1, "d": 1})
    coal = cut_coalition(index, sampled_array(mln, "abc"), clusters)
    members = set(mln.atoms_text()[coal.members])
    assert members == {"smokes(a)", "smokes(b)", "smokes(c)"}
    assert set(clause_texts(mln, coal.clauses)) == {
        "friends(a, b) & smokes(a) -> smokes(b)", "friends(a, c) & smokes(a) -> smokes(c)",
        "friends(c, a) & smokes(c) -> smokes(a)", "smokes(a)", "smokes(c)"}
    assert dict(zip(clause_texts(mln, coal.dropped), clause_texts(mln, coal.representative))) == {
        "friends(b, a) & smokes(b) -> smokes(a)": "friends(a, b) & smokes(a) -> smokes(b)", "smokes(b)": "smokes(a)"}

    solve_coalition(coal, mln, index, inference="exact")
    # the coalition network is exactly the kept rows over their atoms
    net = coal.network
    np.testing.assert_array_equal(net.S.toarray(), mln.S[coal.clauses][:, coal.network_atoms].toarray())
    # reference: I(f, Q) by enumerating the kept clauses directly from the full incidence
    S = mln.S[coal.clauses][:, coal.network_atoms].toarray().astype(int)
    n = S.shape[1]
    worlds = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)
    sat = (worlds @ np.where(S > 0, 1, 0).T + (1 - worlds) @ np.where(S < 0, 1, 0).T) > 0
    p = np.exp(sat @ mln.weights[coal.clauses])
    p /= p.sum()
    col = {a: j for j, a in enumerate(coal.network_atoms)}
    frame = coal.frame(mln)
    for r in frame.itertuples():
        src = int(r.source_clause)
        if not r.mapped:
            assert src == r.clause
            j = col[r.atom]
            k = list(coal.clauses).index(r.clause)
            on = worlds[:, j] == 1
            ref = (p[on] @ sat[on, k]) / p[on].sum() - p @ sat[:, k]
            assert r.importance == pytest.approx(ref, abs=1e-12)
    # dropped clauses: same value as their representative's literal at the same rule position
    text = dict(zip(range(mln.n_clauses), clause_texts(mln, range(mln.n_clauses))))
    atoms = mln.atoms_text()
    mapped = frame[frame["mapped"]]
    got = {(text[int(r.clause)], atoms[int(r.atom)]): (text[int(r.source_clause)], r.importance)
           for r in mapped.itertuples()}
    own = {(text[int(r.clause)], atoms[int(r.atom)]): r.importance for r in frame[~frame["mapped"]].itertuples()}
    assert set(got) == {("friends(b, a) & smokes(b) -> smokes(a)", "smokes(b)"),
                        ("friends(b, a) & smokes(b) -> smokes(a)", "smokes(a)"), ("smokes(b)", "smokes(b)")}
    assert got[("friends(b, a) & smokes(b) -> smokes(a)", "smokes(b)")][1] == \
        own[("friends(a, b) & smokes(a) -> smokes(b)", "smokes(a)")]
    assert got[("friends(b, a) & smokes(b) -> smokes(a)", "smokes(a)")][1] == \
        own[("friends(a, b) & smokes(a) -> smokes(b)", "smokes(b)")]
    assert got[("smokes(b)", "smokes(b)")][1] == own[("smokes(a)", "smokes(a)")]
    # the importance matrix covers kept and mapped literals in full-network indices
    M = coal.importance_matrix(mln.n_atoms, mln.n_clauses, mln)
    assert M.shape == (mln.n_atoms, mln.n_clauses) and M.nnz == len(frame)


def test_shape_is_part_of_the_signature():
    """a and b in one cluster, but smokes(a) is evidence: friends(a, c) and friends(b, c) fold to
    different shapes, so neither stands for the other."""
    data = people_dataset(["a", "b", "c"], [("a", "c"), ("b", "c")], observed={"a": 1.0})
    mln = MLNModel(RULES).ground(data).mln_
    index = build_index(mln, "person")
    coal = cut_coalition(index, sampled_array(mln, "abc"), cluster_array(mln, {"a": 0, "b": 0, "c": 1}))
    kept = set(clause_texts(mln, coal.clauses))
    assert "friends(b, c) & smokes(b) -> smokes(c)" in kept
    assert "friends(a, c) & smokes(a) -> smokes(c)" in kept  # folded to the unit clause smokes(c)


def test_sub_network_and_random_coalition(tiny):
    mln = tiny
    net, atoms = sub_network(mln, np.array([0, 3]))
    np.testing.assert_array_equal(net.S.toarray(), mln.S[[0, 3]][:, atoms].toarray())
    assert set(atoms) == set(mln.S[[0, 3]].indices)
    rc = random_coalition(mln, 4, np.random.default_rng(0))
    assert len(rc.clauses) == 4 and len(np.unique(rc.clauses)) == 4
    np.testing.assert_array_equal(rc.members, np.unique(mln.S[rc.clauses].indices))
    solve_coalition(rc, mln, inference="exact")
    assert len(rc.entries) == mln.S[rc.clauses].nnz and not rc.mapped.any()


# ---------------------------------------------------------------------- clusters and samples
def test_cluster_counts_and_samples():
    assert n_clusters_for(0.2, 10) == 2 and n_clusters_for(0.25, 10) == 3 and n_clusters_for(0.01, 10) == 1
    assert n_clusters_for(1.0, 7) == 7
    v = np.random.default_rng(0).standard_normal((7, 3))
    np.testing.assert_array_equal(cluster_objects(v, 1.0), np.arange(7))
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2])
    for S, want in ((0.5, [2, 1, 3]), (1.0, [3, 2, 5]), (0.01, [1, 1, 1])):
        m = sample_objects(labels, S, np.random.default_rng(1))
        assert np.bincount(labels[m], minlength=3).tolist() == want
    a = sample_objects(labels, 0.5, np.random.default_rng(5))
    b = sample_objects(labels, 0.5, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)


def test_kmeans_clusters_are_seeded():
    rng = np.random.default_rng(3)
    v = np.concatenate([rng.normal(0, 0.1, (10, 4)), rng.normal(3, 0.1, (10, 4))])
    lab = cluster_objects(v, 0.1, seed=1)
    assert len(set(lab[:10])) == 1 and len(set(lab[10:])) == 1 and lab[0] != lab[10]
    np.testing.assert_array_equal(lab, cluster_objects(v, 0.1, seed=1))


# ---------------------------------------------------------------------- embeddings
def two_blocks(n: int = 10):
    a = [f"a{i}" for i in range(n)]
    b = [f"b{i}" for i in range(n)]
    links = [(x, y) for blk in (a, b) for i, x in enumerate(blk) for y in blk[i + 1:]] + [(a[0], b[0])]
    return MLNModel(RULES).ground(people_dataset(a + b, links)), a, b


@pytest.mark.slow
def test_embeddings_separate_planted_blocks():
    model, a, b = two_blocks()
    emb = embed_objects(model, "person", dim=16, seed=0)
    assert not emb.fallback and emb.n_pairs > 0 and emb.n_isolated == 0
    assert np.allclose(np.linalg.norm(emb.vectors, axis=1), 1.0)
    va, vb = emb.vectors[emb.index_of(a)], emb.vectors[emb.index_of(b)]
    within = np.concatenate([(va @ va.T)[np.triu_indices(len(a), 1)], (vb @ vb.T)[np.triu_indices(len(b), 1)]])
    between = (va @ vb.T).ravel()
    assert within.mean() > between.mean() + 0.5
    lab = cluster_objects(emb.vectors, 0.1, seed=0)  # round(0.1 * 20) = 2 clusters
    la, lb = lab[emb.index_of(a)], lab[emb.index_of(b)]
    assert len(set(la)) == 1 and len(set(lb)) == 1 and la[0] != lb[0]
    # reproducible for a seed, different for another
    np.testing.assert_array_equal(emb.vectors, embed_objects(model, "person", dim=16, seed=0).vectors)
    assert not np.allclose(emb.vectors, embed_objects(model, "person", dim=16, seed=1).vectors)


def test_cooccurrence_pairs_and_contexts():
    data = people_dataset(["a", "b", "c"], [("a", "b"), ("b", "c")], observed={"a": 0.0})
    program = MLNModel(RULES).ground(data).mln_.program
    names = program.store.constants

    def pairs(ctx):
        c, x = cooccurrence_pairs(program, ctx)
        return sorted(zip(names[c], names[x]))

    every = [("a", "b"), ("b", "a"), ("b", "a"), ("a", "b"), ("b", "c"), ("c", "b"), ("c", "b"), ("b", "c")]
    assert pairs("all") == sorted(every)
    # body: friends(a, b) ^ smokes(a) has the observed-false body atom smokes(a)
    assert pairs("body") == sorted([("a", "b"), ("b", "a"), ("b", "c"), ("c", "b"), ("c", "b"), ("b", "c")])
    # satisfied: only the clause whose observed literal ~smokes(a) is true
    assert pairs("satisfied") == [("a", "b"), ("b", "a")]
    with pytest.raises(XcoreError):
        cooccurrence_pairs(program, "some")


def test_embedding_fallback_and_errors():
    data = people_dataset(["a", "b"], [("a", "b")])
    model = MLNModel("-0.5 smokes(x)").ground(data)  # unit clauses only: no pairs
    emb = embed_objects(model, "person", dim=4, seed=2)
    assert emb.fallback and emb.n_pairs == 0 and "random" in emb.note
    np.testing.assert_array_equal(emb.vectors, embed_objects(model, "person", dim=4, seed=2).vectors)
    with pytest.raises(XcoreError, match="unknown domain type"):
        embed_objects(model, "city")
    with pytest.raises(XcoreError):
        embed_objects(model, "person", dim=0)
    with pytest.raises(XcoreError):
        emb.index_of(["zed"])
    with pytest.raises(XcoreError, match="ground"):
        embed_objects(MLNModel(RULES), "person")
