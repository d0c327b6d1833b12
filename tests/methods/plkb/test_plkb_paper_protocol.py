"""The paper's protocol helpers and the Figure 3/4 experiments (issue 11)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from xcore.data.generators.strings import make_strings
from xcore.data.generators.titanic import make_titanic_like
from xcore.errors import XcoreError
from xcore.plkb import PLKBClassifier
from xcore.plkb.experiments import (
    PAPER_MLP_LAYERS,
    balance_replicate,
    knowledge_curve,
    nursery_pair,
    paper_baseline,
    paper_split,
    random_class_pair,
    random_pollution_curve,
    seed_clauses,
    shap_agreement_by_k,
    suggest_kb,
    titanic_paper_table,
)
from xcore.viz.plkb_figures import feature_choice_figure, kb_curve_figure, query_time_figure, shap_agreement_figure


def test_balance_by_replication_is_seeded_and_balanced():
    X = pd.DataFrame({"a": list("abcdefghij")})
    y = pd.Series([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    Xb, yb = balance_replicate(X, y, 1, seed=3)
    assert (yb == 1).sum() == (yb == 0).sum() == 7
    assert set(Xb.a[yb == 1]) <= {"a", "b", "c"} and list(Xb.a[:10]) == list("abcdefghij")
    Xb2, _ = balance_replicate(X, y, 1, seed=3)
    assert Xb.equals(Xb2)
    Xtr, Xte, ytr, yte = paper_split(X, y, 1, seed=0)
    assert len(Xte) == 5 and len(Xtr) + len(Xte) == 14  # sklearn rounds the test share up
    with pytest.raises(XcoreError):
        balance_replicate(X, pd.Series([0] * 10), 1)


def test_nursery_pair_and_random_pair():
    X = pd.DataFrame({"a": range(9)})
    y = pd.Series(list("aaabbbccd"))
    Xp, yp = nursery_pair(X, y, ("a", "c"))
    assert list(yp) == list("aaacc") and list(Xp.a) == [0, 1, 2, 6, 7]
    pair = random_class_pair(y, seed=0, min_rows=2)
    assert pair == tuple(sorted(pair)) and set(pair) <= {"a", "b", "c"}


def test_titanic_table_and_mlp_layers():
    df = make_titanic_like(60, seed=0)
    t = titanic_paper_table(df)
    assert list(t.columns) == ["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked"]
    assert not pd.api.types.is_numeric_dtype(t["Pclass"]) and pd.api.types.is_numeric_dtype(t["Age"])
    assert paper_baseline("MLP", 0).hidden_layer_sizes == PAPER_MLP_LAYERS == (12, 10)


def test_seed_clauses_are_true_on_the_generator():
    s = make_strings(8, 3, n=400, seed=2)
    clf = PLKBClassifier(kb="tree", positive_class=True).fit(s.X, s.y)
    kb = seed_clauses(clf.domain_, s.seed_string, 20, seed=0)
    assert len(kb) == 20 and np.all(kb.prob == 1.0)
    codes = clf.encode(s.X)
    for i in range(len(kb)):  # a row falsifying the clause body is exactly-5-match, hence positive
        feat = kb.atoms[kb.indptr[i] + 1:kb.indptr[i + 1]]
        neg = ~kb.positive[kb.indptr[i] + 1:kb.indptr[i + 1]]
        atoms_of_rows = clf.domain_.offsets[None, :] + codes
        has = (atoms_of_rows[:, :, None] == feat[None, None, :]).any(axis=1)
        body = np.all(np.where(neg[None, :], has, ~has), axis=1)
        assert s.y.to_numpy()[body].all()


def test_knowledge_and_pollution_curves():
    s = make_strings(8, 3, n=600, seed=0)
    Xtr, Xte, ytr, yte = paper_split(s.X, s.y, True, 0)
    clf = PLKBClassifier(kb="tree", positive_class=True).fit(Xtr, ytr)
    before = clf.kb_
    k = knowledge_curve(clf, Xte, yte, s.seed_string, counts=(0, 20, 56))
    assert list(k.n_added) == [0, 20, 56] and clf.kb_ is before
    assert k.f1.iloc[-1] >= k.f1.iloc[0]
    text = "1.0: POS | ~p1=%s\n0.9: POS | ~p2=%s\n" % (s.seed_string[0], s.seed_string[1])
    k2 = knowledge_curve(clf, Xte, yte, counts=(0, 1, 2), clauses=text)
    assert list(k2.kb_size) == [len(before), len(before) + 1, len(before) + 2]
    with pytest.raises(XcoreError):
        knowledge_curve(clf, Xte, yte)
    p = random_pollution_curve(clf, Xte, yte, counts=(0, 50))
    assert list(p.kb_size) == [len(before), len(before) + 50] and clf.kb_ is before
    fig = kb_curve_figure({"true clauses": k, "random clauses": p})
    assert isinstance(fig, go.Figure) and len(fig.data) == 2


def test_shap_agreement_by_k_frames_and_figures():
    pytest.importorskip("shap")
    s = make_strings(6, 3, n=300, seed=0)
    Xtr, Xte, ytr, yte = paper_split(s.X, s.y, True, 0)
    clf = PLKBClassifier(kb="direct", max_k=2, positive_class=True).fit(Xtr, ytr)
    agree, freq = shap_agreement_by_k(clf, Xtr, ytr, Xte.iloc[:8], ks=(1, 2))
    for k, g in agree.groupby("k"):
        assert list(g.overlap) == list(range(k + 1)) and g.share.sum() == pytest.approx(1.0)
        assert g.at_least.iloc[0] == pytest.approx(1.0)
    for (k, m), g in freq.groupby(["k", "method"]):
        assert g.share.sum() == pytest.approx(k)
    assert isinstance(shap_agreement_figure(agree), go.Figure)
    assert len(feature_choice_figure(freq, 2).data) == 2


def test_suggest_kb_prefers_direct_on_strings():
    s = make_strings(10, 4, n=800, seed=0)
    kind, reason = suggest_kb(s.X.assign(label=s.y), "label", True, sample=800)
    assert kind == "direct" and "Direct KB" in reason
    with pytest.raises(XcoreError):
        suggest_kb(s.X, "nope")


def test_query_time_figure():
    t = pd.DataFrame({"solver": ["ours", "ours", "CBC", "CBC"], "clauses": [100, 1000, 100, 1000],
                      "seconds": [0.01, 0.1, 0.1, 1.0]})
    fig = query_time_figure(t)
    assert "size^1.00" in fig.data[0].name
