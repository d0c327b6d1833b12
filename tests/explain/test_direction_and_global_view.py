"""Typed directions of explanation items, their one renderer, old files' directions, and the global view."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xcore.explain.global_view import global_importance
from xcore.explain.render import DOWN, NONE, UP, bar_values, directions, reason_line
from xcore.explain.types import (
    Explanation,
    ExplanationError,
    ExplanationItem,
    ExplanationSet,
    ScoreSpec,
    legacy_direction,
)

UNSIGNED = ScoreSpec("|f|", "force magnitude", signed=False)
SIGNED = ScoreSpec("phi", "signed contribution", signed=True)


def item(text, score, direction=0, effect=None, **extras):
    return ExplanationItem(kind="ground_rule", text=text, natural=text, score=score, direction=direction,
                           effect=effect, extras=extras)


def test_direction_is_a_field_validated_against_its_effect():
    assert item("a", 2.0, direction=-1, effect=-0.5).direction == DOWN
    with pytest.raises(ExplanationError, match="direction"):
        item("a", 1.0, direction=2)
    with pytest.raises(ExplanationError, match="direction"):
        item("a", 1.0, direction=True)
    with pytest.raises(ExplanationError, match="disagrees"):
        item("a", 1.0, direction=1, effect=-0.2)
    with pytest.raises(ExplanationError, match="finite"):
        item("a", 1.0, direction=1, effect=float("nan"))


def test_legacy_direction_sources_in_order_of_precedence():
    assert legacy_direction(item("a", 2.0, force=-0.5), False) == DOWN
    old = ExplanationItem(kind="ground_rule", text="a", natural="a", score=2.0,
                          extras={"direction": 1.0, "force": -0.5})
    assert legacy_direction(old, False) == UP
    assert legacy_direction(item("a", 2.0, weight=-1.5, sign=1), False) == DOWN
    assert legacy_direction(item("a", 2.0, weight=-1.5, sign=-1), False) == UP
    assert legacy_direction(item("a", 2.0), False) == NONE
    assert legacy_direction(item("a", -2.0), True) == DOWN


def test_version_2_files_get_their_directions_on_reading():
    exp = Explanation("t", items=[item("a", 3.0, force=-1.0), item("b", 2.0, weight=2.0, sign=-1)],
                      score_spec=UNSIGNED)
    data = exp.to_dict()
    data["version"] = 2
    for it in data["items"]:
        del it["direction"], it["effect"]
    back = Explanation.from_json(json.dumps(data))
    assert [it.direction for it in back.items] == [DOWN, DOWN]
    assert Explanation.from_json(exp.to_json()).items[0].direction == NONE  # v3: the field, nothing guessed


def test_bar_values_use_magnitude_times_direction():
    exp = Explanation("t", items=[item("a", 3.0, -1), item("b", 2.0), item("c", 1.0, 1)], score_spec=UNSIGNED)
    assert list(directions(exp)) == [DOWN, NONE, UP]
    assert list(bar_values(exp)) == [-3.0, 2.0, 1.0]


def test_words_follow_the_direction_field_never_the_score_sign():
    spec = ScoreSpec("I(f, Q)", "importance", signed=False)
    positive_score_pushing_down = item("has_word(r3, mediocre) -> positive(r3)", 0.992, direction=-1)
    line = reason_line(positive_score_pushing_down, spec)
    assert "pushes it down" in line and "pushes it up" not in line
    assert "pushes" not in reason_line(item("x", 0.5), ScoreSpec("fidelity", "f", directed=False))


def test_global_importance_counts_top_k_shares_and_means_by_lifted_rule():
    r1, r2 = {"rule": "R1"}, {"rule": "R2"}
    exps = ExplanationSet([
        Explanation("t1", items=[item("g1", 4.0, 1, **r1), item("g2", 1.0, -1, **r2)]),
        Explanation("t2", items=[item("g3", 3.0, -1, **r2), item("g4", 2.0, 1, **r1),
                                 item("g5", 1.0, 1, **r1)]),
        Explanation("t3", items=[item("x", 5.0)]),
    ], score_spec=UNSIGNED)
    f = global_importance(exps, k=1).set_index("group")
    assert f.loc["R1", "explanations"] == 2 and f.loc["R2", "explanations"] == 2
    assert f.loc["R1", "top_k_share"] == pytest.approx(1 / 3) and f.loc["R2", "top_k_share"] == pytest.approx(1 / 3)
    assert f.loc["x", "top_k_share"] == pytest.approx(1 / 3)
    assert f.loc["R1", "mean_abs_score"] == pytest.approx(7 / 3)
    assert f.loc["R1", "share_up"] == 1.0 and f.loc["R2", "share_up"] == 0.0
    assert f.loc["R2", "share_down"] == 1.0 and f.loc["x", "share_down"] == 0.0 and f.loc["x", "share_up"] == 0.0
    k2 = global_importance(exps, k=2).set_index("group")
    assert k2.loc["R1", "top_k_share"] == pytest.approx(2 / 3) and k2.loc["R2", "top_k_share"] == pytest.approx(2 / 3)
    order = list(global_importance(exps, k=2)["group"])
    assert order[:2] == ["R1", "R2"] or order[:2] == ["R2", "R1"]
    assert np.isclose(global_importance(ExplanationSet([]), k=3).shape[0], 0)


def test_global_view_of_undirected_scores_is_grey_not_down():
    from xcore.viz import global_importance_figure, theme

    spec = ScoreSpec("fidelity", "share of neighbours", directed=False)
    exps = ExplanationSet([Explanation("t1", items=[item("c1", 0.9)]), Explanation("t2", items=[item("c1", 0.8)])],
                          score_spec=spec)
    fig = global_importance_figure(global_importance(exps, k=1))
    assert list(fig.data[0].marker.color) == [theme.UNKNOWN]
    assert "no direction" in fig.data[0].hovertext[0]
