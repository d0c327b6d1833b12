"""What the Data page's "Explain your own model" block calls: a predictions CSV or an ONNX file attached to
the current dataset (other model files refused, a second attachment refused), and the line it shows."""

from __future__ import annotations

import pickle

import pandas as pd
import pytest

from xcore.data import load
from xcore.errors import DataError, XcoreError
from xcore.methods.surrogate import attach_user_model, attached_summary, fidelity_sentence


@pytest.fixture(scope="module")
def table():
    frame = pd.DataFrame({"x": ["a", "b", "a", "c"] * 5, "label": ["p", "q"] * 10})
    return load(("t.csv", frame.to_csv(index=False).encode()), fmt="tabular", label="label")


def test_a_predictions_csv_is_attached_and_summarised(table):
    assert attached_summary(table) is None
    out = attach_user_model(table, "mine.csv", b"target,prediction\nrow 0,q\nrow 1,p\n")
    assert out.user_predictions is not None and list(out.tabular["label"][:3]) == ["q", "p", None]
    said = attached_summary(out)
    assert "2 classes from the predictions in mine.csv" in said and "plkb (the classifier's knowledge base)" in said
    with pytest.raises(XcoreError, match="already attached"):
        attach_user_model(out, "again.csv", b"target,prediction\nrow 0,q\n")


def test_model_files_other_than_onnx_are_refused_unread(table):
    with pytest.raises(DataError, match="never unpickles"):
        attach_user_model(table, "model.joblib", pickle.dumps(object))
    with pytest.raises(DataError, match="only ONNX model files"):
        attach_user_model(table, "model.h5x", b"...")


def test_the_sentence_leads_with_fidelity_and_warns_when_low():
    good = fidelity_sentence({"fidelity": 0.93, "fidelity_targets": 40, "truth_accuracy": 0.7,
                              "your_model_truth_accuracy": 0.75, "fidelity_low": 0.0})
    assert good == ("This explains your model's prediction, which the surrogate reproduces with fidelity 0.93 "
                    "(agreement on 40 held-out targets). Against the data's truth: surrogate accuracy 0.70, your "
                    "model's 0.75.", False)
    low_text, low = fidelity_sentence({"fidelity": 0.61, "fidelity_targets": 40, "fidelity_low": 1.0})
    assert low and "Warning: low fidelity" in low_text
    r2_text, r2_low = fidelity_sentence({"fidelity_r2": 0.3, "fidelity_mae": 0.2, "fidelity_targets": 9})
    assert r2_low and "score R² 0.30, MAE 0.200" in r2_text
    assert fidelity_sentence({"accuracy": 0.9}) is None
