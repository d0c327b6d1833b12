"""PLKBClassifier end to end, discretisation, data readers, synthetic strings, experiments, SHAP."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from test_plkb_learners import Q0101, four_bit

from xcore.data.benchmarks.tabular import (
    read_hiv1,
    read_mushroom,
    read_nursery,
    read_titanic,
)
from xcore.data.generators.strings import make_strings
from xcore.data.generators.titanic import TITANIC_COLUMNS, make_titanic_like
from xcore.data.shared import shared_data_dir
from xcore.errors import DataError, ParseError, SchemaError, XcoreError
from xcore.explain.types import Explanation
from xcore.plkb import KB, PLKBClassifier
from xcore.plkb.discretize import Discretizer
from xcore.plkb.experiments import binary_metrics, compare_baselines, pollution_curve, random_clauses

DATA = shared_data_dir()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared benchmark data not present")


@pytest.fixture(scope="module")
def mushroom():
    X, y = read_mushroom(DATA / "mushroom/agaricus-lepiota.data")
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(X))
    tr, te = idx[:1500], idx[1500:1800]
    return X.iloc[tr], y.iloc[tr], X.iloc[te], y.iloc[te]


# ---------------------------------------------------------------------- data
@needs_data
def test_readers_shapes_and_labels():
    X, y = read_mushroom(DATA / "mushroom/agaricus-lepiota.data")
    assert X.shape == (8124, 22) and y.value_counts().to_dict() == {"e": 4208, "p": 3916}
    X, y = read_nursery(DATA / "nursery/nursery.data")
    assert X.shape == (12960, 8) and y.nunique() == 5
    X, y = read_hiv1(DATA / "hiv1/746Data.txt")
    assert X.shape == (746, 8) and list(X.columns) == [f"P{i}" for i in range(1, 9)]
    assert y.value_counts().to_dict() == {1: 402, -1: 344}
    X, y = read_titanic(DATA / "titanic/train.csv")
    assert X.shape == (891, 7) and int(y.sum()) == 342


def test_reader_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "hiv.txt"
    bad.write_text("h\n" * 9 + "AAAKFERQ,-1\nAAAK,1\n")
    with pytest.raises(DataError, match=r"hiv.txt, line 11: expected OCTAMER,LABEL"):
        read_hiv1(bad)
    csv = tmp_path / "m.data"
    csv.write_text("a,b\n1,2\n3,4,5\n")
    with pytest.raises(DataError, match=r"m.data, line 3"):
        read_mushroom(csv)
    with pytest.raises(DataError, match="file not found"):
        read_nursery(tmp_path / "missing.data")


def test_titanic_like_generator():
    a, b = make_titanic_like(300, seed=1), make_titanic_like(300, seed=1)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == TITANIC_COLUMNS and len(a) == 300
    assert a.groupby("Sex")["Survived"].mean()["female"] > a.groupby("Sex")["Survived"].mean()["male"] + 0.2
    assert a["Age"].isna().any()


def test_synthetic_strings_are_balanced_with_planted_matches():
    s = make_strings(12, 4, n=400, seed=3)
    assert s.X.shape == (400, 12) and s.y.sum() == 200
    counts = s.matches.sum(axis=1)
    assert (counts[s.y.to_numpy()] == 5).all() and (counts[~s.y.to_numpy()] != 5).all()
    seed_row = np.array(s.seed_string)
    assert np.array_equal(s.matches, s.X.to_numpy() == seed_row)
    assert make_strings(12, 4, n=400, seed=3).X.equals(s.X)
    assert s.name == "Syn 12/4"


# ---------------------------------------------------------------------- discretisation
def test_discretizer_quantile_bins_and_overrides():
    X = pd.DataFrame({"x": np.arange(1, 101, dtype=float), "k": [1, 2] * 50, "c": ["a", None] * 50})
    X.loc[0, "x"] = np.nan
    d = Discretizer(n_bins=4, bins={"k": [1.5]}).fit(X)
    out = d.transform(X)
    # x = 2..100: quartiles 26.5, 51, 75.5; bins are right-closed
    assert sorted(out["x"].unique()) == sorted(["NA", "le26.5", "26.5to51", "51to75.5", "gt75.5"])
    assert out.loc[1, "x"] == "le26.5" and out.loc[50, "x"] == "26.5to51" and out.loc[99, "x"] == "gt75.5"
    assert out["k"].tolist()[:2] == ["le1.5", "gt1.5"]
    assert out["c"].tolist()[:2] == ["a", "NA"]
    assert d.value_text("x", "26.5to51") == "26.5 < x <= 51" and d.value_text("c", "a") == "c = a"
    few = Discretizer(n_bins=4).fit(pd.DataFrame({"p": [1, 2, 3, 1]}))
    assert few.transform(pd.DataFrame({"p": [3]}))["p"].tolist() == ["3"]
    with pytest.raises(DataError, match="unknown column"):
        Discretizer(bins={"zz": 3}).fit(X)


def test_classifier_domain_keeps_bin_order_and_canonical_numbers():
    X = pd.DataFrame({"x": np.arange(40, dtype=float), "cls": [1, 2, 3, 1] * 10})
    y = (X["x"] > 20).to_numpy()
    clf = PLKBClassifier().fit(X, y)
    assert clf.domain_.values[0] == ("le9.75", "9.75to19.5", "19.5to29.25", "gt29.25")
    assert clf.domain_.values[1] == ("1", "2", "3")
    # 3.0, "3" and 3 are the same category; a missing key leaves the feature out of the query
    assert clf.encode({"cls": 3.0}).tolist() == clf.encode({"cls": "3"}).tolist() == [[-1, 2]]


# ---------------------------------------------------------------------- classifier
@pytest.mark.slow
@needs_data
def test_tree_and_direct_classify_mushroom(mushroom):
    Xtr, ytr, Xte, yte = mushroom
    for kind, kw, floor in (("tree", {}, 0.97), ("direct", {"max_k": 2}, 0.7)):
        clf = PLKBClassifier(kb=kind, positive_class="p", **kw).fit(Xtr, ytr)
        assert clf.positive_class_ == "p" and list(clf.classes_) == ["e", "p"]
        iv = clf.predict_interval(Xte)
        assert ((iv.lo <= iv.mid + 1e-12) & (iv.mid <= iv.hi + 1e-12)).all()
        f1 = binary_metrics(clf.binary_labels(yte), iv.positive)["f1"]
        assert f1 >= floor, (kind, f1)
        assert set(clf.predict(Xte)) <= {"e", "p"}
        assert clf.predict_proba(Xte.iloc[:5]).shape == (5, 2)
        assert clf.score(Xte, yte) == pytest.approx(np.mean(iv.positive.to_numpy() == clf.binary_labels(yte)))
        # the KB text round-trips
        assert KB.from_text(clf.kb_text(), clf.domain_).equals(clf.kb_)


@needs_data
def test_partial_queries_and_predictions_frame(mushroom):
    Xtr, ytr, Xte, yte = mushroom
    clf = PLKBClassifier(kb="direct", max_k=1, positive_class="p").fit(Xtr, ytr)
    frame = clf.predictions_frame(Xte.iloc[:20], yte.iloc[:20])
    assert list(frame.columns) == ["row", "lo", "hi", "mid", "prediction", "n_clauses", "truth", "correct"]
    partial = clf.predict_interval(Xte.iloc[:20][["odor", "gill-size"]])
    assert (partial["n_clauses"] == 2).all()  # one single-feature clause per given feature
    assert json.loads(frame.to_json(orient="records"))[0]["row"] == Xte.index[0]


def test_multiclass_label_is_one_vs_rest():
    X = pd.DataFrame({"a": list("xxyyzz") * 5})
    y = pd.Series(list("ppqqrr") * 4 + list("pppppp"))
    clf = PLKBClassifier(kb="tree").fit(X, y)
    assert clf.positive_class_ == "p"  # most frequent of three
    assert list(clf.classes_) == ["not p", "p"]
    assert clf.binary_labels(["p", "q", "r"]).tolist() == [True, False, False]
    clf2 = PLKBClassifier(kb="tree", positive_class="r").fit(X, y)
    assert clf2.predict(pd.DataFrame({"a": ["z", "x"]})).tolist() == ["r", "not r"]
    with pytest.raises(DataError, match="does not occur"):
        PLKBClassifier(positive_class="s").fit(X, y)


def test_knowledge_clauses_are_used_like_learned_ones():
    X, y, dom, _ = four_bit()
    q = pd.DataFrame([Q0101])
    clf = PLKBClassifier(kb="tree").fit(X, y)
    assert clf.predict_interval(q)["positive"].item()  # POS | ~a4_1 with p = 1 decides 0101
    with_knowledge = PLKBClassifier(kb="tree", knowledge="0.0: POS | ~a1_0\n0.0: POS | ~a2_1").fit(X, y)
    iv = with_knowledge.predict_interval(q).iloc[0]
    assert iv["n_clauses"] == 3 and iv["mid"] == pytest.approx(0.0, abs=1e-6) and not iv["positive"]
    added = clf.add_knowledge("0.0: POS | ~a1_0\n0.0: POS | ~a3_0")
    assert len(added) == 2 and set(clf.kb_.source[-2:]) == {"user"}
    assert not clf.predict_interval(q)["positive"].item()
    with pytest.raises(SchemaError, match="unknown feature 'a9'"):
        clf.add_knowledge("0.5: POS | ~a9_1")
    with pytest.raises(ParseError):
        clf.add_knowledge("0.5 POS")


def test_explain_shapley_and_exports():
    X, y, dom, _ = four_bit()
    clf = PLKBClassifier(kb="direct", max_k=4).fit(X, y)
    q = pd.DataFrame([Q0101])
    e = clf.explain(q, k=1, target="row 0101")
    assert e.features == ["a1"] and e.values == ["0"] and str(e.prediction) == "False"
    assert e.natural == ["a1 = 0"]
    assert list(e.candidates["query"]) == ["a1=0", "a2=1", "a3=0", "a4=1"]
    assert e.clauses["clause"].tolist() == ["POS | ~a1_0"]
    json.dumps(e.to_dict())
    ex = e.to_explanation()
    assert isinstance(ex, Explanation) and ex.items[0].atoms == ["a1_0"]
    assert Explanation.from_json(ex.to_json()).to_dict() == ex.to_dict()
    sh = clf.shapley(q)
    assert sh.phi.sum() == pytest.approx(sh.v_full - sh.v_empty, abs=1e-9)
    summary = clf.kb_summary()
    assert summary["clauses"] == len(clf.kb_) and summary["full_lp"]["rows"] > 0
    assert clf.lp_size(q)["clauses"] == 9
    assert "boole_c0" in clf.lp_file_text(q)
    assert clf.tree_frame() is None


def test_pulp_solver_agrees_with_highs_in_the_classifier():
    X, y, dom, _ = four_bit()
    rows = pd.DataFrame([list(f"{i:04b}") for i in range(16)], columns=["a1", "a2", "a3", "a4"])
    a = PLKBClassifier(kb="direct", max_k=2).fit(X, y).predict_interval(rows.iloc[::3])
    b = PLKBClassifier(kb="direct", max_k=2, solver="pulp").fit(X, y).predict_interval(rows.iloc[::3])
    np.testing.assert_allclose(a[["lo", "hi"]].to_numpy(), b[["lo", "hi"]].to_numpy(), atol=1e-6)


def test_bad_inputs_raise_xcore_errors():
    X, y, _, _ = four_bit()
    with pytest.raises(XcoreError, match="kb must be"):
        PLKBClassifier(kb="forest").fit(X, y)
    with pytest.raises(DataError, match="labels"):
        PLKBClassifier().fit(X, y[:3])
    with pytest.raises(XcoreError, match="not fitted"):
        PLKBClassifier().predict(X)
    with pytest.raises(DataError, match="single class"):
        PLKBClassifier().fit(X, np.ones(len(X), bool))


# ---------------------------------------------------------------------- experiments
def test_random_clauses_shape():
    _, _, dom, _ = four_bit()
    kb = random_clauses(dom, 200, lengths=[1, 3], seed=0)
    assert len(kb) == 200 and set(kb.lengths.tolist()) == {2, 4}
    assert ((kb.prob >= 0) & (kb.prob <= 1)).all() and set(kb.source) == {"random"}
    feats = dom.atom_feature[kb.atoms[kb.atoms > 0]]
    cl = kb.lit_clause[kb.atoms > 0]
    assert len(set(zip(cl.tolist(), feats.tolist()))) == len(feats)  # distinct features per clause


def test_pollution_curve_and_baselines():
    df = make_titanic_like(400, seed=2)
    X, y = df[["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked"]], df["Survived"]
    Xtr, ytr, Xte, yte = X.iloc[:280], y.iloc[:280], X.iloc[280:], y.iloc[280:]
    clf = PLKBClassifier(kb="tree").fit(Xtr, ytr)
    base_acc = clf.score(Xte, yte)
    kb_before = clf.kb_
    curve = pollution_curve(clf, Xte, yte, fractions=(0, 1.0))
    assert curve["accuracy"].iloc[0] == pytest.approx(base_acc)
    assert curve["kb_size"].tolist() == [len(kb_before), 2 * len(kb_before)]
    assert clf.kb_ is kb_before
    res = compare_baselines(clf, Xtr, ytr, Xte, yte, models=("CART", "RF", "SVM"))
    assert res["model"].tolist() == ["PLKB (tree)", "CART", "RF", "SVM"]
    assert res["f1"].between(0, 1).all() and res["accuracy"].iloc[0] == pytest.approx(base_acc)


def test_shap_comparison():
    pytest.importorskip("shap")
    from xcore.plkb.shap_compare import compare_with_shap, shap_for

    df = make_titanic_like(300, seed=4)
    X, y = df[["Pclass", "Sex", "Age", "Fare"]], df["Survived"]
    clf = PLKBClassifier(kb="direct", max_k=2).fit(X, y)
    base = shap_for(clf, X, y, model="gbt")
    Xd = clf.discretizer_.transform(X.iloc[:5])
    sv = base.values(Xd)
    assert sv.shape == (5, 4)
    # SHAP is additive: expected value + sum of values = the model's log-odds
    margin = base.model_.decision_function(base.encoder_.transform(Xd.astype(str)))
    np.testing.assert_allclose(base.explainer_.expected_value + sv.sum(axis=1), margin, atol=1e-6)
    frame, summary = compare_with_shap(clf, base, X.iloc[[0]], k=2)
    assert set(frame.columns) >= {"feature", "phi_kb", "phi_shap", "rank_kb", "rank_shap"}
    assert 0 <= summary["agreement"] <= 1 and frame["top_kb"].sum() == 2
