"""Agreement between explainers: top-k overlap and Spearman checked against brute force and the
closed-form formula, planted agreement and disagreement, the `xcore compare` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xcore.compare import (
    agreement_frame,
    check_same_data,
    compare_runs,
    disagreements,
    explainer_columns,
    pair_summary,
    rank_correlation,
    top_items_table,
    top_k_overlap,
)
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.methods import Run, prediction_frame

ROOT = Path(__file__).resolve().parents[2]


def explanation(target: str, texts: list[str]) -> Explanation:
    """Items in the given order (scores decreasing, so rank = position)."""
    items = [ExplanationItem(kind="feature", text=t, natural=t, score=float(len(texts) - i))
             for i, t in enumerate(texts)]
    return Explanation(target=target, items=items)


def a_run(method: str, sets: dict[str, dict[str, list[str]]], fingerprint: str = "fp") -> Run:
    exps = {name: ExplanationSet([explanation(t, texts) for t, texts in by_target.items()], method=name)
            for name, by_target in sets.items()}
    targets = list(next(iter(sets.values())))
    return Run(method=method, settings={}, fingerprint=fingerprint, dataset="toy",
               predictions=prediction_frame(targets, [0.5] * len(targets)), explanations=exps)


def test_overlap_and_spearman_match_brute_force_and_the_formula():
    rng = np.random.default_rng(7)
    pool = [f"f{i}" for i in range(12)]
    for _ in range(200):
        a = list(rng.permutation(pool)[: rng.integers(0, 12)])
        b = list(rng.permutation(pool)[: rng.integers(0, 12)])
        k = int(rng.integers(1, 8))
        depth = min(k, len(a), len(b))
        expected = np.nan if depth == 0 else sum(x in b[:k] for x in a[:k]) / depth
        assert top_k_overlap(a, b, k) == pytest.approx(expected, nan_ok=True)
        shared = [x for x in a if x in b]
        rho, n = rank_correlation(a, b)
        assert n == len(shared)
        if n < 2:
            assert np.isnan(rho)
            continue
        # ranks 1..n of the shared items in each list; no ties: rho = 1 - 6 sum d^2 / (n (n^2 - 1))
        ra = np.arange(1, n + 1)
        order_b = sorted(shared, key=b.index)
        rb = np.array([order_b.index(x) + 1 for x in shared])
        assert rho == pytest.approx(1 - 6 * np.sum((ra - rb) ** 2) / (n * (n * n - 1)))


def test_planted_agreement_and_disagreement_are_found_and_ordered():
    same = ["a", "b", "c", "d", "e"]
    run = a_run("toy", {
        "x": {"t1": same, "t2": same, "t3": ["a", "b", "c"]},
        "y": {"t1": same, "t2": list(reversed(same)), "t3": ["p", "q", "r"]},
    })
    columns = explainer_columns([run])
    frame = agreement_frame(columns, k=3)
    got = frame.set_index("target")
    assert got.loc["t1", "overlap"] == 1 and got.loc["t1", "spearman"] == pytest.approx(1)
    assert got.loc["t2", "overlap"] == pytest.approx(1 / 3) and got.loc["t2", "spearman"] == pytest.approx(-1)
    assert got.loc["t3", "overlap"] == 0 and np.isnan(got.loc["t3", "spearman"]) and got.loc["t3", "n_shared"] == 0
    worst = disagreements(frame)
    assert worst["target"].tolist() == ["t3", "t2", "t1"]  # least agreement first
    pairs = pair_summary(frame)
    assert pairs.loc[0, "targets"] == 3 and pairs.loc[0, "mean_overlap"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    table = top_items_table(columns, "t3", k=4)
    assert table["x"].tolist() == ["a", "b", "c", ""] and table["y"].tolist() == ["p", "q", "r", ""]


def test_the_overlap_matrix_is_symmetric_with_the_pair_means():
    run = a_run("toy", {"x": {"t": ["a", "b"]}, "y": {"t": ["a", "c"]}, "z": {"t": ["d", "e"]}})
    frame = agreement_frame(explainer_columns([run]), k=2)
    from xcore.viz.agreement import agreement_figures

    box, scatter, heat = agreement_figures(frame)
    z = np.array(heat.data[0].z)
    assert list(heat.data[0].x) == ["x", "y", "z"]
    np.testing.assert_allclose(z, [[1, 0.5, 0], [0.5, 1, 0], [0, 0, 1]])


def test_two_runs_of_one_method_are_labelled_apart_and_must_share_data():
    r1 = a_run("m", {"m:e": {"t": ["a", "b"]}})
    r2 = a_run("m", {"m:e": {"t": ["b", "a"]}})
    columns, frame = compare_runs([r1, r2], k=2, names=["low", "high"])
    assert list(columns) == ["low/m:e", "high/m:e"]
    assert frame.loc[0, "overlap"] == 1 and frame.loc[0, "spearman"] == pytest.approx(-1)
    with pytest.raises(XcoreError, match="different data"):
        check_same_data([r1, a_run("m", {"m:e": {"t": ["a"]}}, fingerprint="other")])
    with pytest.raises(XcoreError, match="at least two explainers"):
        explainer_columns([r1])


def test_compare_command_prints_pairs_and_disagreements_and_writes_html(tmp_path):
    run = a_run("toy", {"x": {"t1": ["a", "b", "c"], "t2": ["a", "b"]}, "y": {"t1": ["a", "b", "c"], "t2": ["z"]}})
    other = a_run("toy2", {"z": {"t1": ["c", "b", "a"], "t2": ["b"]}})
    (tmp_path / "one.json").write_text(run.to_json())
    (tmp_path / "two.json").write_text(other.to_json())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "xcore", "compare", str(tmp_path / "one.json"), str(tmp_path / "two.json"), "-k", "2",
           "--out", str(tmp_path / "c.html"), "--csv", str(tmp_path / "c.csv")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Agreement between explainers")
    worst = lines.index("Targets where they disagree most")
    assert lines[worst + 2].split()[0] == "t2"  # t2 disagrees most, listed first
    csv = pd.read_csv(tmp_path / "c.csv")
    assert len(csv) == 6 and set(csv["target"]) == {"t1", "t2"}
    html = (tmp_path / "c.html").read_text()
    assert html.count("Plotly.newPlot") == 3 and 'id="disagreements"' in html  # box, scatter, overlap matrix
    (tmp_path / "far.json").write_text(a_run("toy", {"x": {"t1": ["a"]}}, fingerprint="elsewhere").to_json())
    bad = subprocess.run([*cmd[:4], str(tmp_path / "one.json"), str(tmp_path / "far.json")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "different data" in bad.stderr
