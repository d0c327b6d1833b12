"""`xcore run METHOD DATA --explain-predictions FILE` and `--model FILE.onnx`: bad predictions, refused model
files and methods that are not surrogates exit 2 naming file, line or column; a good file prints the
surrogate's fidelity first."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pandas as pd
import pytest

from xcore.cli import EXIT_BAD_INPUT, EXIT_OK, main


def run_cli(*argv: str) -> tuple[int, str, str]:
    out = io.StringIO()
    import contextlib

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), out=out)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    rng = np.random.default_rng(3)
    n = 200
    frame = pd.DataFrame({"f0": rng.choice(["yes", "no"], n), "f1": rng.choice(["u", "v", "w"], n),
                          "label": rng.choice(["a", "b"], n)})
    path = tmp_path_factory.mktemp("cli") / "table.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize("body, words", [
    ("target,prediction\nrow 0,a\nrow 999,b\n", "preds.csv, line 3: column target: unknown target 'row 999'"),
    ("target,prediction\nrow 0,a\nrow 0,b\n", "preds.csv, line 3: column target: duplicate target 'row 0'"),
    ("target,prediction,score\nrow 0,a,0.5\nrow 1,b,lots\n", "preds.csv, line 3: column score: 'lots' is not a number"),
    ("", "preds.csv: the predictions file is empty"),
])
def test_bad_predictions_exit_2_naming_file_line_and_column(tmp_path, table_file, body, words):
    path, _ = table_file
    preds = tmp_path / "preds.csv"
    preds.write_text(body, encoding="utf-8")
    code, out, err = run_cli("run", "plkb", str(path), "--label", "label", "--explain-predictions", str(preds),
                             "--out", str(tmp_path / "out"), "-q")
    assert code == EXIT_BAD_INPUT and words in err, err
    assert not (tmp_path / "out").exists()


def test_model_files_other_than_onnx_exit_2_and_are_not_unpickled(tmp_path, table_file):
    path, _ = table_file
    bad = tmp_path / "model.pkl"
    bad.write_bytes(pickle.dumps({"not": "loaded"}))
    code, _, err = run_cli("run", "plkb", str(path), "--label", "label", "--model", str(bad), "-q")
    assert code == EXIT_BAD_INPUT and "never unpickles" in err and "model.pkl" in err


def test_a_method_that_is_not_a_surrogate_exits_2_naming_those_that_are(tmp_path, table_file):
    path, _ = table_file
    preds = tmp_path / "p.csv"
    preds.write_text("target,prediction\nrow 0,a\n", encoding="utf-8")
    code, _, err = run_cli("run", "mln", "sample:reviews_demo", "--explain-predictions", str(preds), "-q")
    assert code == EXIT_BAD_INPUT and "not a surrogate method" in err and "nlil (m-NLIL rules)" in err


@pytest.mark.slow
def test_good_predictions_print_the_fidelity_first(tmp_path, table_file):
    path, frame = table_file
    says = np.where(frame["f0"] == "yes", "a", "b")  # a model that reads f0 only (not the label)
    preds = tmp_path / "preds.csv"
    pd.DataFrame({"target": [f"row {i}" for i in range(len(frame))], "prediction": says}).to_csv(preds, index=False)
    code, out, err = run_cli("run", "plkb", str(path), "--label", "label", "--explain-predictions", str(preds),
                             "--set", "explain_rows=3", "--out", str(tmp_path / "out"), "-q")
    assert code == EXIT_OK, err
    lines = [ln for ln in out.splitlines() if not ln.startswith("wrote ")]
    assert lines[0].startswith("This explains your model's prediction, which the surrogate reproduces with "
                               "fidelity 1.00 (agreement on 60 held-out targets)")
    assert "fidelity 1" in lines[2] and "fidelity_targets 60" in lines[1]
    metrics = pd.read_json(tmp_path / "out" / "metrics.json", typ="series")
    assert metrics["fidelity"] == 1.0 and "truth_accuracy" in metrics
    assert "surrogate-fidelity" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_surrogate_run_is_verified_with_the_same_predictions(tmp_path, table_file):
    path, frame = table_file
    preds = tmp_path / "preds.csv"
    pd.DataFrame({"target": [f"row {i}" for i in range(len(frame))],
                  "prediction": np.where(frame["f1"] == "u", "a", "b")}).to_csv(preds, index=False)
    code, _, err = run_cli("run", "plkb", str(path), "--label", "label", "--explain-predictions", str(preds),
                           "--set", "explain_rows=5", "--out", str(tmp_path / "out"), "-q")
    assert code == EXIT_OK, err
    code, out, err = run_cli("verify", str(tmp_path / "out"), "--data", str(path), "--label", "label",
                             "--explain-predictions", str(preds), "-k", "2", "-q")
    assert code == EXIT_OK, err
    assert "plkb:decisive" in out
    code, _, err = run_cli("verify", str(tmp_path / "out"), "--data", str(path), "--label", "label", "-q")
    assert code == EXIT_BAD_INPUT and "fingerprint" in err.lower()  # without the predictions: other data
