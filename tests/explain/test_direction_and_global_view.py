"""Direction of explanation items and the global view of a run, against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.explain.direction import DOWN, UNKNOWN, UP, directions, item_direction, signed_scores
from xcore.explain.global_view import global_importance
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec

UNSIGNED = ScoreSpec("|f|", "force magnitude", signed=False)
SIGNED = ScoreSpec("phi", "signed contribution", signed=True)


def item(text, score, **extras):
    return ExplanationItem(kind="ground_rule", text=text, natural=text, score=score, extras=extras)


def test_direction_sources_in_order_of_precedence():
    assert item_direction(item("a", 2.0, force=-0.5)) == DOWN
    assert item_direction(item("a", 2.0, direction=1.0, force=-0.5)) == UP
    assert item_direction(item("a", 2.0, weight=-1.5, sign=1)) == DOWN
    assert item_direction(item("a", 2.0, weight=-1.5, sign=-1)) == UP
    assert item_direction(item("a", 2.0)) == UNKNOWN
    assert item_direction(item("a", -2.0), signed_score=True) == DOWN
    assert item_direction(item("a", 0.0, force=0.0)) == UNKNOWN


def test_signed_scores_use_magnitude_times_direction():
    exp = Explanation("t", items=[item("a", 3.0, force=-1.0), item("b", 2.0), item("c", 1.0, force=4.0)],
                      score_spec=UNSIGNED)
    assert list(directions(exp)) == [DOWN, UNKNOWN, UP]
    assert list(signed_scores(exp)) == [-3.0, 2.0, 1.0]
    signed = Explanation("t", items=[item("a", -3.0), item("b", 2.0)], score_spec=SIGNED)
    assert list(signed_scores(signed)) == [-3.0, 2.0]


def test_global_importance_counts_top_k_shares_and_means_by_lifted_rule():
    r1, r2 = {"rule": "R1"}, {"rule": "R2"}
    exps = ExplanationSet([
        Explanation("t1", items=[item("g1", 4.0, force=1.0, **r1), item("g2", 1.0, force=-1.0, **r2)]),
        Explanation("t2", items=[item("g3", 3.0, force=-1.0, **r2), item("g4", 2.0, force=1.0, **r1),
                                 item("g5", 1.0, force=1.0, **r1)]),
        Explanation("t3", items=[item("x", 5.0)]),
    ], score_spec=UNSIGNED)
    f = global_importance(exps, k=1).set_index("group")
    assert f.loc["R1", "explanations"] == 2 and f.loc["R2", "explanations"] == 2
    assert f.loc["R1", "top_k_share"] == pytest.approx(1 / 3) and f.loc["R2", "top_k_share"] == pytest.approx(1 / 3)
    assert f.loc["x", "top_k_share"] == pytest.approx(1 / 3)
    assert f.loc["R1", "mean_abs_score"] == pytest.approx(7 / 3)
    assert f.loc["R1", "share_up"] == 1.0 and f.loc["R2", "share_up"] == 0.0
    k2 = global_importance(exps, k=2).set_index("group")
    assert k2.loc["R1", "top_k_share"] == pytest.approx(2 / 3) and k2.loc["R2", "top_k_share"] == pytest.approx(2 / 3)
    order = list(global_importance(exps, k=2)["group"])
    assert order[:2] == ["R1", "R2"] or order[:2] == ["R2", "R1"]
    assert np.isclose(global_importance(ExplanationSet([]), k=3).shape[0], 0)
