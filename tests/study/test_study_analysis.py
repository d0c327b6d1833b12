"""Analysis: effect sizes and tests against references, bootstrap intervals, and recovery of planted
differences from simulated participants (between and within subjects), plus the null case."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from study_helpers import make_study, new_store

from xcore.errors import ConfigError
from xcore.study import analyse, simulate
from xcore.study.analysis import ALL, difference_ci, holm, mean_ci, rank_biserial_paired, rank_biserial_u
from xcore.study.report import diverging_figure, html_report

ROOT = Path(__file__).resolve().parents[2]
HIGH = [0.02, 0.05, 0.13, 0.40, 0.40]   # mean 4.11
LOW = [0.15, 0.30, 0.30, 0.15, 0.10]    # mean 2.75


def test_rank_biserial_against_enumeration():
    """r = P(x > y) - P(x < y) over all pairs (ties count half each way) — by brute force."""
    rng = np.random.default_rng(1)
    x, y = rng.integers(1, 6, 9).astype(float), rng.integers(1, 6, 7).astype(float)
    _, p, r = rank_biserial_u(x, y)
    pairs = np.sign(np.subtract.outer(x, y))
    assert r == pytest.approx(pairs.mean())
    assert p == pytest.approx(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue)


def test_matched_pairs_rank_biserial_by_hand():
    x = np.array([5, 4, 4, 3, 5, 2, 4.0])
    y = np.array([3, 4, 2, 4, 1, 2, 1.0])
    _, p, r = rank_biserial_paired(x, y)
    d = np.array([2, 2, -1, 4, 3.0])  # zero differences dropped
    ranks = stats.rankdata(np.abs(d))  # 2.5, 2.5, 1, 5, 4
    assert r == pytest.approx((ranks[d > 0].sum() - ranks[d < 0].sum()) / ranks.sum())
    assert p == pytest.approx(stats.wilcoxon(d).pvalue)


def test_intervals_and_holm_against_references():
    rng = np.random.default_rng(0)
    v = rng.normal(3.0, 1.0, 12)
    lo, hi = mean_ci(v)
    ref = stats.t.interval(0.95, v.size - 1, loc=v.mean(), scale=stats.sem(v))
    assert (lo, hi) == pytest.approx(ref)
    w = rng.normal(2.0, 2.0, 9)
    d, dlo, dhi = difference_ci(v, w, paired=False)
    welch = stats.ttest_ind(v, w, equal_var=False).confidence_interval(0.95)
    assert d == pytest.approx(v.mean() - w.mean()) and (dlo, dhi) == pytest.approx((welch.low, welch.high))
    d, dlo, dhi = difference_ci(v[:9], w, paired=True)
    paired = stats.ttest_rel(v[:9], w).confidence_interval(0.95)
    assert (dlo, dhi) == pytest.approx((paired.low, paired.high))
    # Holm by hand: sorted 0.01, 0.03, 0.04 -> 3*0.01, max(2*0.03, .), max(1*0.04, 0.06)
    assert list(holm(np.array([0.01, 0.04, 0.03]))) == pytest.approx([0.03, 0.06, 0.06])
    assert list(holm(np.array([0.5, 0.9]))) == pytest.approx([1.0, 1.0])


@pytest.fixture(scope="module")
def between(tmp_path_factory):
    store = new_store(tmp_path_factory.mktemp("between"))
    store.publish(make_study(n_items=8))
    simulate(store, "s1", 40, {"A": HIGH, "B": LOW}, seed=3, attention_failure=0.1)
    return store


def test_analysis_recovers_a_planted_between_difference(between):
    study, responses = between.study("s1"), between.responses("s1")
    a = analyse(study, responses, seed=0)
    assert 0 < len(a.excluded) < 12  # careless simulated participants failed the attention check
    means = a.means.set_index(["question_id", "condition"])
    for code, dist in (("A", HIGH), ("B", LOW)):
        planted = float(np.dot(np.arange(1, 6), dist))
        row = means.loc[(ALL, code)]
        assert row["ci_low"] <= planted + 0.15 and planted - 0.15 <= row["ci_high"]
        assert abs(row["mean"] - planted) < 0.25
    test = a.tests[a.tests["question_id"] == ALL].iloc[0]
    assert test["test"] == "Mann-Whitney U" and test["p"] < 1e-4 and test["effect_size"] > 0.8
    # distributions per level match the planted probabilities (pooled over kept answers)
    dist = a.distribution[(a.distribution["question_id"] == "useful_relational")]
    pa = dist[dist["condition"] == "A"]["percent"].to_numpy() / 100
    assert np.abs(pa - np.array(HIGH)).max() < 0.08
    assert set(a.times["condition"]) == {"A", "B"} and (a.times["median_s"] > 1).all()
    report = html_report(a)
    assert report.startswith("<!DOCTYPE html>") and "Mann-Whitney U" in report and "mln:i-explain" in report
    fig = diverging_figure(a, "useful_relational")
    bars = [t for t in fig.data if t.type == "bar"]
    widths = np.abs(np.array([t.x for t in bars], dtype=float)).sum(axis=0)
    assert widths == pytest.approx([100.0, 100.0])  # each condition's bar spans all its answers
    low = [t for t in bars if t.name.startswith(("1 ", "2 "))]
    assert all((np.asarray(t.x) <= 0).all() for t in low)  # disagreement to the left of zero


def test_attention_exclusion_can_be_switched_off(between):
    a = analyse(between.study("s1"), between.responses("s1"), exclude_failed_attention=False)
    assert a.excluded == [] and a.means["participants"].max() == 20


def test_no_difference_when_none_is_planted(tmp_path):
    store = new_store(tmp_path)
    store.publish(make_study(n_items=6))
    simulate(store, "s1", 30, {"A": LOW, "B": LOW}, seed=11)
    a = analyse(store.study("s1"), store.responses("s1"))
    test = a.tests[a.tests["question_id"] == ALL].iloc[0]
    assert test["p"] > 0.05 and abs(test["effect_size"]) < 0.5


def test_within_subject_wilcoxon_recovers_the_difference(tmp_path):
    store = new_store(tmp_path)
    store.publish(make_study(design="within", n_items=8))
    simulate(store, "s1", 16, {"A": LOW, "B": HIGH}, seed=5)
    a = analyse(store.study("s1"), store.responses("s1"))
    test = a.tests[a.tests["question_id"] == ALL].iloc[0]
    assert test["test"] == "Wilcoxon signed-rank" and test["n"] == "16 pairs"
    assert test["p"] < 0.01 and test["effect_size"] < -0.8  # A (low) below B (high)
    # every participant saw both conditions, four items each
    rows = store.responses("s1").drop_duplicates(["participant", "position"])
    assert (rows.groupby(["participant", "condition_code"]).size() == 4).all()


def test_relational_vs_non_relational_parts_recovered(tmp_path):
    """The I-Explain comparison: relational parts planted higher than word parts within condition A only."""
    store = new_store(tmp_path)
    store.publish(make_study(n_items=6))
    simulate(store, "s1", 24, {"A": LOW, "A:useful_relational": HIGH, "B": LOW}, seed=2)
    parts = analyse(store.study("s1"), store.responses("s1")).parts.set_index("condition")
    assert parts.loc["A", "mean_relational"] > parts.loc["A", "mean_non_relational"] + 0.9
    assert parts.loc["A", "p"] < 0.01 and parts.loc["A", "effect_size"] > 0.8
    assert parts.loc["B", "p"] > 0.05


def test_simulation_rejects_bad_distributions(tmp_path):
    store = new_store(tmp_path)
    store.publish(make_study())
    with pytest.raises(ConfigError, match="summing to 1"):
        simulate(store, "s1", 2, {"A": [0.5, 0.5, 0, 0, 0.1], "B": LOW})
    with pytest.raises(ConfigError, match="no rating distribution"):
        simulate(store, "s1", 2, {"A": LOW})
    with pytest.raises(ConfigError, match="unknown condition or question"):
        simulate(store, "s1", 2, {"A": LOW, "B": LOW, "A:nope": LOW})


def test_simulate_command_line(tmp_path):
    study = make_study("cli", n_items=4)
    (tmp_path / "cli.json").write_text(study.to_json())
    db = tmp_path / "cli.sqlite"
    def run(*args):
        return subprocess.run([sys.executable, "-m", "xcore.study", *args], cwd=ROOT, capture_output=True,
                                           text=True, timeout=120)
    out = run("simulate", "--db", str(db), "--definition", str(tmp_path / "cli.json"), "--study", "cli",
              "--participants", "6", "--dist", "A=" + ",".join(map(str, HIGH)), "--dist", "B=" + ",".join(map(str, LOW)))
    assert out.returncode == 0, out.stderr
    out = run("report", "--db", str(db), "--study", "cli", "--out", str(tmp_path / "r.html"))
    assert out.returncode == 0 and (tmp_path / "r.html").stat().st_size > 100_000
    out = run("responses", "--db", str(db), "--study", "cli", "--out", str(tmp_path / "r.csv"))
    assert out.returncode == 0 and len((tmp_path / "r.csv").read_text().splitlines()) > 6 * 4
    bad = run("simulate", "--db", str(db), "--study", "cli", "--dist", "A=x")
    assert bad.returncode == 2 and "error:" in bad.stderr and "Traceback" not in bad.stderr
