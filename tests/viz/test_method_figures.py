"""The DRM and m-NLIL page figures (moved out of the pages): inputs checked, projections exact."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xcore.viz.common import FigureInputError
from xcore.viz.drm_figures import fold_loss_figure, neighbourhood_figure, neighbourhood_frame, pca_2d
from xcore.viz.nlil_figures import loss_curves_figure


def test_pca_keeps_the_distances_of_points_on_a_plane():
    rng = np.random.default_rng(0)
    plane = rng.normal(size=(12, 2)) @ rng.normal(size=(2, 6))  # rank 2: a 2-D projection loses nothing
    xy = pca_2d(plane)
    d = lambda a: np.linalg.norm(a[:, None] - a[None], axis=-1)  # noqa: E731
    assert np.allclose(d(xy), d(plane))


def test_pca_of_one_direction_or_no_variation():
    assert pca_2d(np.ones((4, 3))).tolist() == [[0.0, 0.0]] * 4
    xy = pca_2d(np.array([[0.0], [1.0], [3.0]]))
    assert xy.shape == (3, 2) and (xy[:, 1] == 0).all()
    assert abs(abs(xy[2, 0] - xy[0, 0]) - 3.0) < 1e-12


def test_neighbourhood_figure_marks_the_instance_and_colours_by_class():
    frame = neighbourhood_frame(np.eye(4), ["t1", "t2", "t3", "t4"], [1, 0, 1, 1])
    assert list(frame["role"]) == ["instance", "neighbour", "neighbour", "neighbour"]
    fig = neighbourhood_figure(frame, radius=3)
    assert "3 training instances" in fig.layout.title.text
    names = {t.name for t in fig.data}
    assert any(n.startswith("1") for n in names) and any(n.startswith("0") for n in names)
    with pytest.raises(FigureInputError):
        neighbourhood_figure(pd.DataFrame({"x": [1]}), radius=1)


def test_loss_figures_draw_one_line_per_curve():
    curves = pd.DataFrame({"fold": ["1", "1", "2"], "epoch": [1, 2, 1], "training loss": [0.7, 0.5, 0.6]})
    assert len(fold_loss_figure(curves).data) == 2
    fig = loss_curves_figure({"a · cluster 0": [1.0, 0.5], "a · cluster 1": [0.9]}, y_title="binary cross-entropy")
    assert [t.name for t in fig.data] == ["a · cluster 0", "a · cluster 1"]
    assert fig.layout.yaxis.title.text == "binary cross-entropy"
    assert not loss_curves_figure({}, y_title="x").data
