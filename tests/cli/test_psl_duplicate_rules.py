"""`python -m xcore.psl` skips a rule Java PSL counts as already added (its contrapositive, with another
weight), says so naming file and line, and infers the same values as without it, as Java's runtime does."""

from __future__ import annotations

import pytest
from test_psl_command import read_values, run, write_data_project


@pytest.mark.slow
def test_a_contrapositive_of_an_earlier_rule_is_skipped_with_a_warning(tmp_path):
    write_data_project(tmp_path / "plain")
    res = run("--model", "likes.psl", "--data", "likes.data", "--output", "out", cwd=tmp_path / "plain")
    assert res.returncode == 0, res.stderr
    _, model = write_data_project(tmp_path / "dup")
    model.write_text(model.read_text() + "5: !Likes(U, I) -> !Rated(U, I)\n")
    dup = run("--model", "likes.psl", "--data", "likes.data", "--output", "out", cwd=tmp_path / "dup")
    assert dup.returncode == 0, dup.stderr
    warning = [line for line in dup.stderr.splitlines() if line.startswith("warning:") and "same rule" in line]
    assert len(warning) == 1
    assert "likes.psl:5: rule `5: !Likes(U, I) -> !Rated(U, I)`" in warning[0]
    assert "`2: Rated(U, I) -> Likes(U, I)` (line 2)" in warning[0]
    assert read_values(tmp_path / "dup" / "out" / "LIKES.txt") == read_values(tmp_path / "plain" / "out" / "LIKES.txt")
    potentials = [line for line in dup.stderr.splitlines() if "potentials" in line]
    assert potentials[0].split(" potentials")[0].split(", ")[-1] == \
        [line for line in res.stderr.splitlines() if "potentials" in line][0].split(" potentials")[0].split(", ")[-1]
