"""`xcore evaluate METHOD DATA`: the shared held-out evaluation on the command line — the tables it prints
are `xcore.methods.evaluate.evaluate`'s own figures, the files hold every held-out prediction once, and
bad flags exit 2 naming the flag."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from xcore import cli
from xcore.data.samples import load_sample
from xcore.methods import REGISTRY
from xcore.methods.evaluate import Holdout, KFold, evaluate

QUICK = ("--set", "explain_rows=1")
"""The classifier on its titanic sample: a few seconds per fold."""


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = cli.main(["evaluate", *argv], out=out)
    return code, out.getvalue()


def reference(split) -> object:
    """The library's evaluation with the same settings and split (the figures the command must print)."""
    data = load_sample("titanic_like")
    settings = REGISTRY["plkb"].default_settings(data).replace(explain_rows=1)
    return evaluate("plkb", data, settings, split=split)


@pytest.mark.slow
def test_k_folds_print_and_write_the_librarys_figures(tmp_path):
    code, text = run_cli("plkb", "sample:titanic_like", *QUICK, "--folds", "3", "--seed", "2", "--out", str(tmp_path), "-q")
    assert code == 0, text
    ref = reference(KFold(3, seed=2))
    folds = pd.read_csv(tmp_path / "folds.csv")
    assert folds["fold"].tolist() == [0, 1, 2]
    pd.testing.assert_frame_equal(folds, ref.folds, check_dtype=False)
    preds = pd.read_csv(tmp_path / "predictions.csv")
    assert preds["target"].is_unique and len(preds) == int(folds["n_test"].sum())  # every unit held out once
    assert sorted(preds["fold"].unique()) == [0, 1, 2]
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics == pytest.approx({k: v for k, v in ref.metrics.items() if v == v})  # JSON holds no NaN
    assert {"accuracy", "baseline_accuracy", "auroc", "baseline_auroc"} <= set(metrics)
    assert "3 folds (seed 2) of the labelled units" in text
    accuracy = next(line for line in text.splitlines() if line.split()[:1] == ["accuracy"])
    model, baseline = map(float, accuracy.split()[1:3])
    assert model == pytest.approx(ref.metrics["accuracy"], abs=1e-4)
    assert baseline == pytest.approx(ref.metrics["baseline_accuracy"], abs=1e-4)
    assert "majority class" in accuracy


@pytest.mark.slow
def test_a_hold_out_split_is_the_default_and_takes_its_test_size(tmp_path):
    code, text = run_cli("plkb", "sample:titanic_like", *QUICK, "--test-size", "0.2", "-q")
    assert code == 0, text
    ref = reference(Holdout(0.2, seed=0))
    assert "hold-out of 0.2" in text and f"over {len(ref.predictions)} predictions" in text
    row = text.splitlines()[2].split()  # fold, n_train, n_test, ...
    assert [int(row[0]), int(row[1]), int(row[2])] == ref.folds[["fold", "n_train", "n_test"]].iloc[0].tolist()


@pytest.mark.parametrize("argv, message", [
    (("plkb", "sample:titanic_like", "--folds", "1"), "--folds: must be at least 2, got 1"),
    (("plkb", "sample:titanic_like", "--test-size", "1.5"), "--test-size: must be a fraction between 0 and 1"),
    (("plkb", "sample:titanic_like", "--seed", "-1"), "--seed: must be at least 0"),
    (("nope", "sample:titanic_like"), "unknown method 'nope'"),
    (("plkb", "sample:nope"), "no bundled sample 'nope'"),
    (("plkb", "sample:titanic_like", "--set", "no_such=1"), "no_such"),
    (("plkb", "sample:titanic_like", "--set", "k"), "--set needs key=value"),
    (("plkb", "sample:titanic_like", "--folds-from", "cv_fold"), "fold predicate 'cv_fold' is not a predicate"),
    (("mln", "sample:reviews_demo", "--folds-from", "positive"), "fold predicate 'positive' must be binary"),
])
def test_bad_input_exits_2_naming_what_is_wrong(argv, message, capsys):
    code, _ = run_cli(*argv)
    assert code == 2
    assert message in capsys.readouterr().err


def test_folds_and_test_size_together_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["evaluate", "plkb", "sample:titanic_like", "--folds", "3", "--test-size", "0.2"])
    assert stop.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
