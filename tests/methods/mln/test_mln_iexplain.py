"""I-Explain / R-Explain: agreement with M-Explain when every object is its own cluster and all are
sampled, borrowing by substitution, aggregation, reproducibility and parameter errors."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from xcore.data.dataset import RelationalDataset
from xcore.data.samples import load_sample
from xcore.data.schema import Predicate, Schema
from xcore.errors import XcoreError
from xcore.explain.rank_aggregation import cemc
from xcore.explain.types import Explanation, ExplanationSet
from xcore.mln import MLNModel, importance
from xcore.mln.coalition_tables import substitute_formulas
from xcore.mln.iexplain import IExplainer
from xcore.mln.network_index import build_index
from xcore.mln.rexplain import RExplainer

FS_RULES = """\
1.5 smokes(x) => cancer(x)
1.1 friends(x, y) ^ smokes(x) => smokes(y)
-0.5 smokes(x)
-0.3 cancer(x)
"""
REVIEW_RULES = """\
1.5 has_word(r, "great") => positive(r)
1.0 has_word(r, "good") => positive(r)
-1.5 has_word(r, "bad") => positive(r)
-1.0 has_word(r, "awful") => positive(r)
0.1 has_word(r, "food") => positive(r)
0.8 same_user(r1, r2) ^ positive(r1) => positive(r2)
"""
FAST_GIBBS = {"n_samples": 200, "burn_in": 50, "n_chains": 2}


def review_dataset() -> RelationalDataset:
    """Ten reviews: r0-r4 positive (great/good), r5-r9 negative (bad/awful), all mention food;
    r0, r1, r5, r6 are labelled; three same-user links."""
    words = {"r0": ["great", "food"], "r1": ["good", "food"], "r2": ["great", "good"], "r3": ["great", "food"],
             "r4": ["good"], "r5": ["bad", "food"], "r6": ["awful"], "r7": ["bad", "awful", "food"],
             "r8": ["bad"], "r9": ["awful", "food"]}
    label = {r: float(int(r[1]) < 5) for r in words}
    hw = [(r, w) for r, ws in words.items() for w in ws]
    links = [("r0", "r2"), ("r5", "r7"), ("r3", "r8")]
    links = links + [(b, a) for a, b in links]
    train = ["r0", "r1", "r5", "r6"]
    test = [r for r in words if r not in train]
    schema = Schema.of([
        Predicate("has_word", 2, ("review", "word"), closed=True, template="review {0} contains '{1}'"),
        Predicate("same_user", 2, ("review", "review"), closed=True, template="{0} and {1} have the same author"),
        Predicate("positive", 1, ("review",), closed=False, template="{0} is positive"),
    ])
    tables = {
        "has_word": {"obs": pd.DataFrame({"a0": [r for r, _ in hw], "a1": [w for _, w in hw], "value": 1.0})},
        "same_user": {"obs": pd.DataFrame({"a0": [a for a, _ in links], "a1": [b for _, b in links], "value": 1.0})},
        "positive": {"obs": pd.DataFrame({"a0": train, "value": [label[r] for r in train]}),
                     "targets": pd.DataFrame({"a0": test, "value": np.nan}),
                     "truth": pd.DataFrame({"a0": test, "value": [label[r] for r in test]})},
    }
    return RelationalDataset(schema, tables, name="tiny_reviews")


@pytest.fixture(scope="module")
def fs_model():
    return MLNModel(FS_RULES).ground(load_sample("friends_smokers"))


@pytest.fixture(scope="module")
def reviews():
    return MLNModel(REVIEW_RULES).ground(review_dataset())


# ---------------------------------------------------------------------- agreement with M-Explain
@pytest.mark.slow
def test_every_object_its_own_cluster_equals_m_explain_exact(fs_model):
    m = fs_model.infer("exact")
    ref = importance(m.mln_, m.result_)
    ie = IExplainer(C=1.0, S=1.0, T=2, top_k=4, inference="exact").fit(m, "person")
    assert (ie.clusters_ == np.arange(len(ie.clusters_))).all()
    for c in ie.coalition_details_:
        assert not c.mapped.any() and len(c.dropped) == 0
        np.testing.assert_array_equal(c.entries, np.arange(m.mln_.nnz))
        np.testing.assert_allclose(c.importance, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ie.betas_, [0.5, 0.5])
    for q in range(m.mln_.n_atoms):
        mine, theirs = ie.explain(q), m.explain(q, top_k=4)
        assert [it.text for it in mine.items] == [it.text for it in theirs.items]
        assert [it.score for it in mine.items] == pytest.approx([it.score for it in theirs.items], abs=1e-12)
        assert mine.prediction == pytest.approx(theirs.prediction, abs=1e-12)
        for a, b in zip(mine.items, theirs.items):
            assert (a.atoms, a.target_index, a.roles, a.observed, a.natural) == \
                   (b.atoms, b.target_index, b.roles, b.observed, b.natural)
            for key in ("rule", "rule_index", "clause", "weight", "hard", "sign", "estimable"):
                assert a.extras[key] == b.extras[key]
            assert a.extras["expected"] == pytest.approx(b.extras["expected"], abs=1e-12)


def test_every_object_its_own_cluster_equals_m_explain_gibbs_same_seed(fs_model):
    opts = dict(FAST_GIBBS, seed=11)
    m = fs_model.infer("gibbs", **opts)
    ref = m.importance()["importance"].to_numpy()
    ie = IExplainer(C=1.0, S=1.0, T=1, gibbs_options=opts).fit(m, "person")
    c = ie.coalition_details_[0]
    np.testing.assert_array_equal(c.entries, np.arange(m.mln_.nnz))
    np.testing.assert_array_equal(c.importance, ref)  # the same network and seed: the same samples


# ---------------------------------------------------------------------- borrowing
def test_substitution_maps_formulas_to_the_borrowers_ground_formulas():
    people = ["a", "b", "c", "d"]
    links = [("a", "c"), ("b", "c"), ("a", "d")]
    links = links + [(y, x) for x, y in links]
    schema = Schema.of([Predicate("friends", 2, ("person", "person")),
                        Predicate("smokes", 1, ("person",), closed=False)])
    data = RelationalDataset(schema, {
        "friends": {"obs": pd.DataFrame({"a0": [x for x, _ in links], "a1": [y for _, y in links], "value": 1.0})},
        "smokes": {"targets": pd.DataFrame({"a0": people, "value": np.nan})}})
    mln = MLNModel("1.0 friends(x, y) ^ smokes(x) => smokes(y)\n-0.5 smokes(x)").ground(data).mln_
    index = build_index(mln, "person")
    text = {c: str(mln.program[int(mln.rule[c])].texts(mln.store, [int(mln.ground_row[c])])[0])
            for c in range(mln.n_clauses)}
    col = {t: i for i, t in enumerate(mln.atoms_text())}
    lender, borrower = col["smokes(a)"], col["smokes(b)"]
    own = mln.clauses_of(lender)
    mapped = substitute_formulas(index, own, np.full(len(own), lender), np.full(len(own), borrower))
    got = {text[c]: (text[m] if m >= 0 else None) for c, m in zip(own, mapped)}
    assert got == {"smokes(a)": "smokes(b)",
                   "friends(a, c) & smokes(a) -> smokes(c)": "friends(b, c) & smokes(b) -> smokes(c)",
                   "friends(c, a) & smokes(c) -> smokes(a)": "friends(c, b) & smokes(c) -> smokes(b)",
                   "friends(a, d) & smokes(a) -> smokes(d)": None,  # b and d are not friends
                   "friends(d, a) & smokes(d) -> smokes(a)": None}


def test_queries_outside_a_coalition_borrow_from_their_nearest_neighbour(reviews):
    ie = IExplainer(C=0.5, S=0.3, T=4, top_k=5, inference="exact", seed=1).fit(reviews, "review")
    mln = reviews.mln_
    atoms = mln.atoms_text()
    text = {c: str(mln.program[int(mln.rule[c])].texts(mln.store, [int(mln.ground_row[c])])[0])
            for c in range(mln.n_clauses)}
    emb = ie.embedding_
    n_borrowed = 0
    for coal, table in zip(ie.coalition_details_, ie._tables):
        own_atoms = set(np.unique(table["atom"][table["lender"] < 0]).tolist())
        for q in range(mln.n_atoms):
            if q in set(coal.members.tolist()):
                assert (table["lender"][table["atom"] == q] < 0).all()
                continue
            rows = np.flatnonzero(table["atom"] == q)
            if not len(rows):
                continue
            lenders = set(table["lender"][rows].tolist())
            assert len(lenders) == 1
            lender = lenders.pop()
            # the lender is the nearest query (embedding of its review) among those with a list
            name = lambda a: re.match(r"positive\((\w+)\)", atoms[a]).group(1)  # noqa: E731
            d = {a: np.linalg.norm(emb.vector(name(a)) - emb.vector(name(q))) for a in own_atoms}
            assert d[lender] == pytest.approx(min(d.values()))
            # each borrowed formula is the lender's with the lender's review replaced by q's
            lender_list = table["clause"][(table["atom"] == lender) & (table["lender"] < 0)]
            expect = [re.sub(rf"\b{name(lender)}\b", name(q), text[c]) for c in lender_list]
            got = [text[c] for c in table["clause"][rows]]
            assert got == [t for t in expect if t in got] and set(got) <= set(expect)
            assert all(atoms[q] in t for t in got)
            n_borrowed += len(rows)
    assert n_borrowed > 0
    # borrowed formulas show up in the explanations
    s = ie.explain_all()
    assert sum(it.extras["n_borrowed"] for e in s for it in e.items) > 0


# ---------------------------------------------------------------------- explanations
@pytest.mark.slow
def test_review_explanations_are_complete_and_reproducible(reviews):
    def run():
        return IExplainer(C=0.3, S=0.5, T=3, top_k=3, gibbs_options=FAST_GIBBS, seed=4).fit(reviews, "review")

    ie = run()
    s = ie.explain_all()
    assert isinstance(s, ExplanationSet) and len(s) == reviews.mln_.n_atoms and s.method == "I-Explain"
    for e in s:
        assert e.method == "I-Explain" and e.ordering == "given" and e.n_items <= 3
        # the model ran no inference: a query in no coalition network has no prediction
        assert (e.prediction is None) == (e.meta["coalitions_with_query"] == 0)
        assert e.prediction is None or 0 <= e.prediction <= 1
        for rank, it in enumerate(e.items, 1):
            assert it.kind == "ground_formula" and it.atoms[it.target_index] == e.target
            assert it.extras["aggregated_rank"] == rank and it.extras["n_coalitions"] >= 1
        assert Explanation.from_json(e.to_json()).to_dict() == e.to_dict()
    assert len(ie.betas_) == 3 and len(ie.coalitions_) == 3
    # the ranking is CEMC over the non-empty coalition lists (weights beta); the score is the
    # beta-weighted mean importance over the coalitions that ranked the formula
    n_cemc = 0
    for q, e in enumerate(s):
        lists = ie.lists_for(q)
        used = [i for i, lst in enumerate(lists) if lst]
        ranking = [it.extras["clause"] for it in e.items]
        if not used:
            assert ranking == []
            continue
        if any(lists[i] != lists[used[0]] for i in used):
            n_cemc += 1
            k = min(3, len({c for i in used for c in lists[i]}))
            assert ranking == cemc([lists[i] for i in used], weights=ie.betas_[used], k=k, seed=4).ranking
        else:
            assert ranking == lists[used[0]]
        for it in e.items:
            vals, wts = [], []
            for i in used:
                t = ie._tables[i]
                hit = (t["atom"] == q) & (t["clause"] == it.extras["clause"])
                if hit.any():
                    vals.append(float(t["importance"][hit][0]))
                    wts.append(ie.betas_[i])
            assert it.extras["n_coalitions"] == len(vals)
            assert it.score == pytest.approx(np.dot(vals, wts) / np.sum(wts), abs=1e-12)
    assert n_cemc > 0
    assert all(set(c) <= set(ie.embedding_.names) for c in ie.coalitions_)
    again = run()
    assert again.explain_all().to_json() == s.to_json()
    np.testing.assert_array_equal(again.betas_, ie.betas_)
    assert all((a == b).all() for a, b in zip(again.coalitions_, ie.coalitions_))
    other = IExplainer(C=0.3, S=0.5, T=3, top_k=3, gibbs_options=FAST_GIBBS, seed=5).fit(reviews, "review")
    assert not np.array_equal(other.sampled_, ie.sampled_)


def test_coalition_frame_and_progress(reviews):
    calls = []
    ie = IExplainer(C=0.3, S=0.5, T=2, gibbs_options=FAST_GIBBS).fit(
        reviews, "review", progress=lambda f, m: calls.append((f, m)))
    assert calls[0][0] == 0 and calls[-1][0] == 1.0
    assert [f for f, _ in calls] == sorted(f for f, _ in calls)
    # the five stages, plus (throttled) reports from inside the skip-gram training and the Gibbs sweeps
    stages = [m for _, m in calls if "skip-gram" not in m and "Gibbs" not in m]
    assert len(stages) == 5 and "clusters" in stages[1] and stages[2].startswith("coalition 1/2")
    f = ie.coalition_frame()
    assert list(f.columns) == ["object", "x", "y", "cluster", "n_coalitions"]
    assert list(f["object"]) == [f"r{i}" for i in range(10)]
    assert f["cluster"].nunique() == 3  # round(0.3 * 10)
    np.testing.assert_array_equal(f["n_coalitions"], ie.sampled_.sum(axis=0))
    assert np.isfinite(f[["x", "y"]].to_numpy()).all()


def test_r_explain_matches_sizes_and_borrows_nothing(reviews):
    ie = IExplainer(C=0.3, S=0.5, T=3, top_k=3, inference="exact").fit(reviews, "review")
    r = RExplainer(top_k=3, match=ie, inference="exact", seed=2).fit(reviews)
    assert [c.n_clauses for c in r.coalition_details_] == [c.n_clauses for c in ie.coalition_details_]
    for c, t in zip(r.coalition_details_, r._tables):
        assert (t["lender"] < 0).all()
        assert set(np.unique(t["atom"]).tolist()) <= set(c.members.tolist())
    s = r.explain_all()
    assert s.method == "R-Explain" and all(e.method == "R-Explain" for e in s)
    again = RExplainer(top_k=3, match=ie, inference="exact", seed=2).fit(reviews)
    assert again.explain_all().to_json() == s.to_json()
    f = r.coalition_frame()
    assert list(f.columns) == ["object", "x", "y", "cluster", "n_coalitions"]
    np.testing.assert_array_equal(f["cluster"], ie.clusters_)
    # without a match: a fraction of the clauses; queries in no coalition get no items
    r2 = RExplainer(T=2, size=0.2, inference="exact").fit(reviews, "review")
    n = round(0.2 * reviews.mln_.n_clauses)
    assert [c.n_clauses for c in r2.coalition_details_] == [n, n]
    covered = set(np.concatenate([c.members for c in r2.coalition_details_]).tolist())
    for q in range(reviews.mln_.n_atoms):
        assert (r2.explain(q).n_items > 0) == (q in covered and bool(len(reviews.mln_.clauses_of(q))))


def test_bad_parameters_raise(reviews):
    for kw in ({"C": 0}, {"C": 1.5}, {"C": float("nan")}, {"S": 0.0}, {"S": -0.1}, {"S": 2}, {"T": 0},
               {"T": 1.5}, {"top_k": 0}, {"embedding_dim": 0}, {"inference": "bp"}, {"C": True}):
        with pytest.raises(XcoreError):
            IExplainer(**kw).fit(reviews, "review")
    with pytest.raises(XcoreError, match="unknown domain type"):
        IExplainer().fit(reviews, "restaurant")
    with pytest.raises(XcoreError, match="no query atom"):
        IExplainer().fit(reviews, "word")
    with pytest.raises(XcoreError, match="ground"):
        IExplainer().fit(MLNModel(REVIEW_RULES), "review")
    with pytest.raises(XcoreError, match="fit"):
        IExplainer().explain(0)
    with pytest.raises(XcoreError):
        RExplainer(size=0).fit(reviews)
    with pytest.raises(XcoreError):
        RExplainer(T=0).fit(reviews)
    with pytest.raises(XcoreError, match="fitted"):
        RExplainer(match=IExplainer()).fit(reviews)
    ie = IExplainer(T=1, inference="exact").fit(reviews, "review")
    with pytest.raises(XcoreError):
        ie.explain("positive(r0)")  # evidence, not a query atom
