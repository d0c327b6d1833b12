"""AppTest: a table with the user's ONNX model attached; the classifier page shows the model's own Shapley
values for the selected row beside the KB's decisive features (issue 28)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pagetest import click, errors, page

from xcore.data import load
from xcore.methods.surrogate import attach_user_model

skl2onnx = pytest.importorskip("skl2onnx")
pytestmark = [pytest.mark.xdist_group("app"), pytest.mark.slow]


def texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "subheader", "caption", "header") for e in at.get(kind))


def test_your_models_shapley_values_are_shown_for_the_row_twice():
    from sklearn.ensemble import GradientBoostingClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    y = (X.a + X.b > 0).astype(int)
    ds = load(("t.csv", X.assign(label=y).to_csv(index=False).encode()), fmt="tabular", label="label")
    clf = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(ds.tabular[["a", "b"]], y)
    onx = skl2onnx.to_onnx(clf, ds.tabular[["a", "b"]].to_numpy(np.float32)[:1], options={"zipmap": False})
    attached = attach_user_model(ds, "gbc.onnx", onx.SerializeToString())
    at = page("plkb", attached)
    for _ in range(2):
        click(at, "plkb_train")
        assert not errors(at)
        run = list(at.session_state["_runs"].values())[-1]
        assert "plkb:your-model-shap" in run.explanations
        assert "Shapley values of your model" in texts(at)
