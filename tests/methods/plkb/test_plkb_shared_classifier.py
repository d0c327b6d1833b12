"""A fitted classifier is shared (the process-wide run cache hands one to every session): experiments
run from two sessions at once give what they give one after the other, and leave the classifier as it was."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from xcore.data.generators.titanic import make_titanic_like
from xcore.plkb import PLKBClassifier
from xcore.plkb.experiments import pollution_curve, random_pollution_curve


@pytest.fixture(scope="module")
def fitted():
    df = make_titanic_like(400, seed=2)
    X, y = df[["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked"]], df["Survived"]
    clf = PLKBClassifier(kb="tree").fit(X.iloc[:280], y.iloc[:280])
    return clf, X.iloc[280:], y.iloc[280:]


def test_with_kb_is_a_copy_and_the_original_keeps_its_kb(fitted):
    clf, Xte, yte = fitted
    kb, reasoner = clf.kb_, clf.reasoner_
    polluted = pollution_curve(clf, Xte, yte, fractions=(2.0,))
    other = clf.with_kb(clf.kb_.__class__.concat([kb, kb]))
    assert other is not clf and len(other.kb_) == 2 * len(kb)
    assert clf.kb_ is kb and clf.reasoner_ is reasoner and polluted["kb_size"].iloc[0] == 3 * len(kb)


@pytest.mark.slow
def test_two_sessions_run_experiments_on_one_classifier_at_once(fitted):
    clf, Xte, yte = fitted
    kb = clf.kb_

    def jobs() -> list[pd.DataFrame]:
        return [pollution_curve(clf, Xte, yte, fractions=(0, 0.5, 1, 2), seed=3),
                random_pollution_curve(clf, Xte, yte, counts=(0, 20, 60), seed=1)]

    sequential = jobs() + jobs()
    results: dict[int, list[pd.DataFrame]] = {}
    barrier = threading.Barrier(2)

    def session(i: int) -> None:
        barrier.wait()
        results[i] = jobs()

    threads = [threading.Thread(target=session, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    for i in range(2):
        for got, want in zip(results[i], sequential[:2]):
            pd.testing.assert_frame_equal(got, want)
    assert clf.kb_ is kb
