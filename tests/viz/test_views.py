"""Figures of the shared views: direction colours, additive waterfalls, global view and model quality."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xcore.explain.global_view import global_importance
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.viz import (
    FigureInputError,
    calibration_figure,
    global_importance_figure,
    prediction_kind,
    quality_figures,
    ranked_bar_figure,
    theme,
    waterfall_figure,
)

SIGNED = ScoreSpec("phi", "signed contribution", signed=True, unit="probability")


def shapley(scores=(0.3, -0.2, 0.05), base=0.4, target="row 1"):
    items = [ExplanationItem(kind="feature", text=f"f{i}=v", natural=f"f{i} = v", score=s,
                             direction=int(np.sign(s)), effect=s) for i, s in enumerate(scores)]
    return Explanation(target, prediction=base + sum(scores), items=items, score_spec=SIGNED,
                       meta={"v_empty": base})


def test_ranked_bars_are_coloured_by_direction_with_hatched_unexplainable_items():
    exp = shapley()
    exp.items[1].explainable = False
    fig = ranked_bar_figure(exp)
    by_name = {t.name: t for t in fig.data}
    assert set(by_name) == {"pushes up", "pushes down"}
    assert by_name["pushes up"].marker.color == theme.UP and by_name["pushes down"].marker.color == theme.DOWN
    assert list(by_name["pushes down"].x) == [-0.2] and list(by_name["pushes down"].marker.pattern.shape) == ["/"]
    assert "phi" in fig.layout.xaxis.title.text
    old = ranked_bar_figure(exp, colour_by="explainable")
    assert {t.name for t in old.data} == {"explainable", "not explainable"}
    with pytest.raises(FigureInputError):
        ranked_bar_figure(exp, colour_by="rainbow")


def test_waterfall_runs_from_base_to_prediction():
    exp = shapley(scores=(0.3, -0.2, 0.05, 0.01), base=0.4)
    fig = waterfall_figure(exp, k=2)
    w = fig.data[0]
    assert list(w.measure) == ["absolute", "relative", "relative", "relative", "total"]
    assert list(w.x)[:3] == [0.4, 0.3, -0.2] and w.x[3] == pytest.approx(0.06)
    assert w.y[3].startswith("other (2)")
    assert w.x[0] + sum(w.x[1:4]) == pytest.approx(exp.prediction)
    with pytest.raises(FigureInputError):
        waterfall_figure(Explanation("x", items=exp.items, score_spec=SIGNED))


def test_global_importance_figure_lists_groups_by_share():
    exps = ExplanationSet([shapley(), shapley(scores=(-0.5, 0.1, 0.0), target="row 2")], score_spec=SIGNED)
    frame = global_importance(exps, k=1)
    fig = global_importance_figure(frame, k=1)
    assert list(fig.data[0].y)[0].startswith("1. f0=v") and fig.data[0].x[0] == 1.0


def test_prediction_kinds_and_quality_figures():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 200).astype(float)
    prob = np.clip(truth * 0.6 + rng.random(200) * 0.4, 0, 1)
    probs = pd.DataFrame({"target": [f"a{i}" for i in range(200)], "prediction": prob, "truth": truth})
    assert prediction_kind(probs) == "probability"
    assert [n for n, _ in quality_figures(probs)] == ["calibration", "roc"]
    values = probs.assign(truth=rng.random(200))
    assert prediction_kind(values) == "value" and [n for n, _ in quality_figures(values)] == ["residuals"]
    classes = pd.DataFrame({"target": list("abcd"), "prediction": ["x", "y", "y", "x"], "truth": ["x", "y", "x", "x"],
                            "mid": [0.1, 0.9, 0.7, 0.2]})
    figs = dict(quality_figures(classes, positive="y"))
    assert set(figs) == {"confusion", "roc"}
    z = np.asarray(figs["confusion"].data[0].z)
    assert z.tolist() == [[2, 1], [0, 1]]  # rows: true x, true y; columns: predicted x, predicted y
    assert quality_figures(probs.assign(truth=np.nan)) == []


def test_calibration_bins_match_a_loop_reference():
    rng = np.random.default_rng(1)
    p = rng.random(500)
    t = (rng.random(500) < p).astype(float)
    fig = calibration_figure(t, p, n_bins=5)
    xs, ys = np.asarray(fig.data[1].x), np.asarray(fig.data[1].y)
    for b in range(5):
        sel = (np.minimum((p * 5).astype(int), 4) == b)
        assert xs[b] == pytest.approx(p[sel].mean()) and ys[b] == pytest.approx(t[sel].mean())


def test_embedding_legend_folds_small_clusters_into_other():
    from xcore.viz import embedding_scatter_figure

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.random(200), "y": rng.random(200), "object": [f"o{i}" for i in range(200)],
                          "cluster": np.repeat(np.arange(20), 10)})
    fig = embedding_scatter_figure(frame)
    names = [t.name for t in fig.data]
    assert len(names) == 12 and names[-1] == "other (9 clusters)"
    assert sum(len(t.x) for t in fig.data) == 200


def test_explanation_graph_labels_do_not_crowd_on_the_largest_bundled_case():
    """Radial layers: target centred, items on a ring, atoms spread on an outer ring, labels outwards."""
    from xcore.data.samples import load_sample
    from xcore.methods import run_method
    from xcore.viz import explanation_graph_figure

    run = run_method("esms", load_sample("lastfm_demo"))
    exps = run.explanations["esms:ground-rules"]
    biggest = max(exps, key=lambda e: len({a for it in e.top(14) for a in it.atoms}))
    fig = explanation_graph_figure(biggest, k=14)
    atoms = [t for t in fig.data if t.name in ("observed atoms", "open atoms", "atoms")]
    xy = np.array([(x, y) for t in atoms for x, y in zip(t.x, t.y)])
    assert len(xy) >= 10
    d = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)) + np.eye(len(xy)) * 9
    assert d.min() >= 0.3 - 1e-9  # neighbouring atom labels keep their distance
    for t in atoms:
        for x, pos in zip(t.x, t.textposition):
            assert pos == ("middle right" if x >= 0 else "middle left")
    target = next(t for t in fig.data if t.name == "target")
    assert (target.x[0], target.y[0]) == (0.0, 0.0)
