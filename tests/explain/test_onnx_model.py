"""A user's own table model as an ONNX file: a scikit-learn GradientBoostingClassifier exported here gives
the same predictions through onnxruntime, its Shapley values match shap's on the original model, and
other model files or inputs that do not match the table's columns are refused with clear errors."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("onnxruntime")
skl2onnx = pytest.importorskip("skl2onnx")

from sklearn.ensemble import GradientBoostingClassifier  # noqa: E402

from xcore.data import load  # noqa: E402
from xcore.errors import DataError  # noqa: E402
from xcore.explain.model_file import exact_shapley, load_model_file  # noqa: E402

COLS = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.integers(0, 3, n).astype(float),
                      "d": rng.normal(size=n)})
    y = ((X.a + X.b * X.c) > 0.3).astype(int)
    ds = load(("t.csv", X.assign(label=y).to_csv(index=False).encode()), fmt="tabular", label="label")
    clf = GradientBoostingClassifier(n_estimators=30, max_depth=2, random_state=0).fit(ds.tabular[COLS], y)
    onx = skl2onnx.to_onnx(clf, ds.tabular[COLS].to_numpy(np.float32)[:1], options={"zipmap": False})
    return ds, clf, onx.SerializeToString()


def test_onnx_export_gives_the_same_predictions_through_onnxruntime(fitted):
    ds, clf, data = fitted
    model = load_model_file(("gbc.onnx", data), ds)
    assert model.columns == COLS and model.classes == ["0", "1"]
    labels, proba = model.run(ds.tabular)
    np.testing.assert_array_equal(labels.astype(int), clf.predict(ds.tabular[COLS]))
    np.testing.assert_allclose(proba[:, 1], clf.predict_proba(ds.tabular[COLS])[:, 1], atol=1e-5)
    preds = model.user_predictions(ds)
    assert list(preds.frame["prediction"]) == [str(v) for v in clf.predict(ds.tabular[COLS])]
    assert preds.model is model and preds.frame["score"].notna().all()


@pytest.mark.slow
def test_shapley_values_of_the_onnx_model_match_shap_on_the_original_model(fitted):
    shap = pytest.importorskip("shap")
    ds, clf, data = fitted
    model = load_model_file(("gbc.onnx", data), ds)
    table = ds.tabular
    bg = table.drop(index=[5, 17]).sample(40, random_state=0)
    for ix in (5, 17):
        ours = model.shapley(table.loc[[ix]], bg)
        ref = shap.KernelExplainer(lambda a: clf.predict_proba(a)[:, 1], bg[COLS].to_numpy())
        theirs = np.asarray(ref.shap_values(table.loc[[ix], COLS].to_numpy(), nsamples=2 ** len(COLS) + 200,
                                            silent=True)).reshape(-1)
        np.testing.assert_allclose(ours, theirs, atol=2e-3)
        # the exact values of the sklearn model itself agree with the ONNX model's to float32 precision
        exact = exact_shapley(lambda f: clf.predict_proba(f[COLS])[:, 1], table.loc[[ix]], bg, COLS)
        np.testing.assert_allclose(ours, exact, atol=1e-5)
        p = model.proba_of(table.loc[[ix]])[0]
        assert ours.sum() == pytest.approx(p - model.proba_of(bg).mean(), abs=1e-5)  # efficiency
    exp = model.shap_explanation(table, "row 5")
    assert [it.direction for it in exp.items] == [int(np.sign(it.score)) for it in exp.items]
    assert exp.items[0].atoms == ["a"]


def test_shapley_values_are_exact_against_brute_force_permutations():
    from itertools import permutations

    rng = np.random.default_rng(1)
    cols = ["x", "y", "z"]
    bg = pd.DataFrame(rng.normal(size=(6, 3)), columns=cols)
    row = pd.DataFrame([[0.5, -1.0, 2.0]], columns=cols)
    f = lambda fr: fr["x"] * fr["y"] + np.maximum(fr["z"], 0) * fr["x"]  # noqa: E731
    phi = exact_shapley(f, row, bg, cols)
    brute = np.zeros(3)
    for order in permutations(range(3)):
        for b in range(len(bg)):
            cur = bg.iloc[[b]].reset_index(drop=True).copy()
            before = float(f(cur).iloc[0])
            for j in order:
                cur[cols[j]] = row[cols[j]].to_numpy()
                after = float(f(cur).iloc[0])
                brute[j] += after - before
                before = after
    np.testing.assert_allclose(phi, brute / (6 * len(bg)), atol=1e-12)


@pytest.mark.parametrize("name, content, words", [
    ("model.pkl", pickle.dumps({"a": 1}), "a Python pickle is not accepted: xcore never unpickles"),
    ("model.joblib", b"\x80\x04...", "a joblib pickle is not accepted"),
    ("model.pt", b"PK\x03\x04", "a PyTorch pickle is not accepted"),
    ("model.onnx", pickle.dumps([1, 2]), "is a pickle or a zip archive, not an ONNX model"),
    ("model.xyz", b"abc", "only ONNX model files (.onnx) are accepted"),
    ("model.onnx", b"not onnx at all", "not a readable ONNX model"),
])
def test_other_model_files_are_refused_and_never_unpickled(fitted, name, content, words):
    ds, _, _ = fitted
    with pytest.raises(DataError) as err:
        load_model_file((name, content), ds)
    assert words in str(err.value) and err.value.file == name


def test_inputs_that_do_not_match_the_tables_columns_name_the_columns(fitted):
    from skl2onnx.common.data_types import FloatTensorType

    ds, clf, _ = fitted
    wide = GradientBoostingClassifier(n_estimators=5, random_state=0).fit(
        np.c_[ds.tabular[COLS].to_numpy(), ds.tabular[COLS].to_numpy()], ds.tabular["label"])
    onx = skl2onnx.convert_sklearn(wide, initial_types=[("input", FloatTensorType([None, 8]))])
    with pytest.raises(DataError) as err:
        load_model_file(("wide.onnx", onx.SerializeToString()), ds)
    assert "one tensor 'input' of 8 features" in str(err.value) and "a, b, c, d" in str(err.value)
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    renamed = ds.tabular[COLS].rename(columns={"a": "speed"}).astype(np.float32)
    pipe = make_pipeline(ColumnTransformer([("all", "passthrough", list(renamed.columns))]),
                         GradientBoostingClassifier(n_estimators=5, random_state=0)).fit(renamed, ds.tabular["label"])
    named = skl2onnx.to_onnx(pipe, renamed[:1])  # one input per column: speed, b, c, d
    with pytest.raises(DataError) as err:
        load_model_file(("named.onnx", named.SerializeToString()), ds)
    assert "inputs 'speed' are not columns of the table" in str(err.value)
    assert "the table's columns: a, b, c, d" in str(err.value)


@pytest.mark.slow
def test_a_table_model_runs_as_the_classifiers_surrogate_with_shap_and_what_if(fitted):
    from xcore.data.predictions import with_predictions
    from xcore.methods import REGISTRY, run_method

    ds, clf, data = fitted
    model = load_model_file(("gbc.onnx", data), ds)
    swapped = with_predictions(ds, model.user_predictions(ds))
    run = run_method("plkb", swapped, REGISTRY["plkb"].default_settings(ds).replace(explain_rows=3), cache=None)
    assert 0.0 <= run.metrics["fidelity"] <= 1.0 and "fidelity_r2" in run.metrics
    shap_set = run.explanations["plkb:your-model-shap"]
    assert len(shap_set) == 3
    row = shap_set[0].target
    ix = int(row[4:])
    np.testing.assert_allclose(shap_set[0].prediction, clf.predict_proba(ds.tabular.loc[[ix], COLS])[0, 1], atol=1e-5)
    assert "surrogate_fidelity" not in shap_set[0].meta  # it explains the model itself
    assert "surrogate_fidelity" in run.explanations["plkb:decisive"][0].meta
    values = ds.tabular.loc[ix, COLS].to_dict()
    what = run.model.what_if(values)
    assert what.meta["your_model"] == str(clf.predict(ds.tabular.loc[[ix], COLS])[0])
    assert what.meta["note"].startswith("Your model predicts")
