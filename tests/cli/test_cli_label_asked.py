"""No silent guesses on tables: a table file without --label exits 2 naming the candidate columns; a
multi-class label asks which class to explain (--positive) instead of picking one."""

from __future__ import annotations

import pandas as pd
import pytest

from xcore.cli import main
from xcore.errors import DataError
from xcore.plkb.settings import PLKBSettings
from xcore.plkb.tables import label_candidates


def _run(argv, capsys):
    code = main(argv)
    return code, capsys.readouterr().err


def test_table_without_label_exits_2_naming_candidates(tmp_path, capsys):
    rows = "\n".join(f"p{i},{i % 3},{'yes' if i % 2 else 'no'},{'S' if i % 4 else 'C'}" for i in range(40))
    f = tmp_path / "my.csv"
    f.write_text("name,pclass,survived,embarked\n" + rows + "\n")
    code, err = _run(["run", "plkb", str(f), "-q", "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert "--label" in err and "survived" in err and "embarked" in err and "pclass" in err
    assert "name," not in err.split("candidates:")[1]  # an identifier is no label candidate
    assert not (tmp_path / "out").exists()


def test_multiclass_label_asks_for_the_class(tmp_path, capsys):
    rows = "\n".join(f"{i % 5},{i % 7},{['setosa', 'versicolor', 'virginica'][i % 3]}" for i in range(60))
    f = tmp_path / "iris.csv"
    f.write_text("a,b,species\n" + rows + "\n")
    code, err = _run(["run", "plkb", str(f), "--label", "species", "-q", "--out", str(tmp_path / "o1")], capsys)
    assert code == 2 and "3 classes" in err and "--positive" in err and "virginica" in err
    code, err = _run(["run", "plkb", str(f), "--label", "species", "--positive", "virginica", "-q",
                      "--set", "explain_rows=3", "--out", str(tmp_path / "o2")], capsys)
    assert code == 0, err
    preds = pd.read_csv(tmp_path / "o2" / "predictions.csv")
    assert set(preds["truth"]) <= {"virginica", "not virginica"}


def test_workflow_refuses_to_pick_a_class_and_candidates_skip_identifiers():
    table = pd.DataFrame({"id": [f"r{i}" for i in range(30)], "x": [i % 4 for i in range(30)],
                          "y": [["a", "b", "c"][i % 3] for i in range(30)]})
    with pytest.raises(DataError, match="3 classes"):
        PLKBSettings(label="y").estimator().fit_table(table)
    assert label_candidates(table) == ["x", "y"]
