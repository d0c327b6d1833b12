"""Analysis of a study's answers: counts, rating distributions, means with bootstrap intervals, tests.

The unit of analysis is the participant (answers of one person are not independent): each test and
interval uses per-participant mean ratings. Intervals are Student-t intervals: of each condition's mean
over participant means, and of the difference between two conditions (Welch between subjects, paired
within subjects). The percentile bootstrap they replace covered only 0.82-0.94 of the time at 5-20
participants; the t interval covers 0.93-0.97 there (tests/study/test_study_coverage.py). Between
subjects: two-sided Mann-Whitney U with the rank-biserial correlation; within subjects: two-sided
Wilcoxon signed-rank on paired means with the matched-pairs rank-biserial correlation. p-values are
Holm-adjusted (statsmodels) over all condition pairs and questions. Participants failing an attention
check are left out by default (and counted); answers whose participant row is missing (orphans) are
kept and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from xcore.errors import XcoreError
from xcore.optional_deps import import_optional
from xcore.study.definition import Study

ALL = "(all ratings)"
"""The pseudo-question pooling every rated question of a participant."""


@dataclass
class StudyAnalysis:
    """The tables of one analysis (plain pandas frames, ready for display, CSV and the HTML report)."""

    study: Study
    ratings: pd.DataFrame
    """Rated answers kept: participant, condition_code, question_id, item_id, rating."""
    counts: pd.DataFrame
    distribution: pd.DataFrame
    means: pd.DataFrame
    tests: pd.DataFrame
    parts: pd.DataFrame
    times: pd.DataFrame
    excluded: list[int]
    n_participants: int
    orphans: int = 0
    """Participants whose enrolment row is missing but whose answers are stored (kept in the analysis)."""
    orphan_answers: int = 0


INTERVAL = "Student-t"
"""The interval every mean and difference gets (named in tables and the report)."""


def mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Student-t interval of the mean of `values` (participant means: close to normal, so it covers at the
    stated level even with 5 participants, where a bootstrap interval is too narrow)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (np.nan, np.nan)
    if values.size == 1:
        return (float(values[0]), float(values[0]))
    half = stats.t.ppf(0.5 + level / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
    return float(values.mean() - half), float(values.mean() + half)


def difference_ci(x: np.ndarray, y: np.ndarray, paired: bool, level: float = 0.95) -> tuple[float, float, float]:
    """(mean x - mean y, low, high): a paired t interval on the differences, or Welch's interval."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if paired:
        d = x - y
        lo, hi = mean_ci(d, level)
        return float(d.mean()), lo, hi
    if x.size < 2 or y.size < 2 or (x.var() == 0 and y.var() == 0):
        d = float(x.mean() - y.mean()) if x.size and y.size else float("nan")
        return d, (d if x.size > 1 and y.size > 1 else float("nan")), (d if x.size > 1 and y.size > 1 else float("nan"))
    res = stats.ttest_ind(x, y, equal_var=False)
    ci = res.confidence_interval(level)
    return float(x.mean() - y.mean()), float(ci.low), float(ci.high)


def rank_biserial_u(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Mann-Whitney U (two-sided), its p-value and the rank-biserial r = 2U/(n_x n_y) - 1 (> 0: x higher)."""
    res = stats.mannwhitneyu(x, y, alternative="two-sided")
    r = 2 * float(res.statistic) / (len(x) * len(y)) - 1
    return float(res.statistic), float(res.pvalue), r


def rank_biserial_paired(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Wilcoxon signed-rank (two-sided, zero differences dropped), p-value and matched-pairs
    rank-biserial r = (R+ - R-)/(R+ + R-) (> 0: x higher)."""
    d = np.asarray(x, float) - np.asarray(y, float)
    nz = d[d != 0]
    if nz.size == 0:
        return 0.0, 1.0, 0.0
    res = stats.wilcoxon(nz, alternative="two-sided")
    ranks = stats.rankdata(np.abs(nz))
    plus, minus = ranks[nz > 0].sum(), ranks[nz < 0].sum()
    return float(res.statistic), float(res.pvalue), float((plus - minus) / (plus + minus))


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (statsmodels' `multipletests`)."""
    # statsmodels costs about a fifth of scipy.stats again: only when an analysis is run
    multipletests = import_optional("statsmodels.stats.multitest").multipletests

    p = np.asarray(p, dtype=float)
    return p if p.size == 0 else multipletests(p, method="holm")[1]


def failed_attention(study: Study, responses: pd.DataFrame) -> list[int]:
    """Participants who gave a wrong answer to any attention check."""
    checks = {q.id: q.expected for q in study.questions if q.kind == "attention"}
    if not checks or responses.empty:
        return []
    att = responses[responses["question_id"].isin(list(checks))]
    wrong = att["answer"].astype(str) != att["question_id"].map(lambda q: str(checks[q]))
    return sorted(int(p) for p in att.loc[wrong, "participant"].unique())


def _ratings(study: Study, kept: pd.DataFrame, rated: dict) -> pd.DataFrame:
    """One row per numeric answer to a rating question: participant, condition_code, question_id, item_id, rating."""
    r = kept[kept["question_id"].isin(list(rated))].copy() if len(kept) else pd.DataFrame(
        columns=["participant", "condition_code", "question_id", "item_id", "answer"])
    r["rating"] = pd.to_numeric(r["answer"], errors="coerce")
    r = r.dropna(subset=["rating"])
    return r[["participant", "condition_code", "question_id", "item_id", "rating"]].reset_index(drop=True)


def _condition_tables(rated: dict, questions: list[str], codes: list[str], both: pd.DataFrame, groups: dict,
                      level: float) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(counts, distribution, means) per question and condition; means with Student-t intervals over
    participant means."""
    count_rows, dist_rows, mean_rows = [], [], []
    empty = pd.Series(dtype=float)
    for qid in questions:
        scale = rated[qid].scale if qid in rated else max((q.scale for q in rated.values()), default=5)
        for code in codes:
            sel = both[(both["question_id"] == qid) & (both["condition_code"] == code)]["rating"].to_numpy()
            per_v = groups.get((qid, code), empty).to_numpy(dtype=float)
            count_rows.append({"question_id": qid, "condition": code, "responses": int(sel.size),
                               "participants": int(per_v.size)})
            if qid in rated:
                levels = np.bincount(sel.astype(int), minlength=scale + 1)[1:scale + 1] if sel.size else np.zeros(scale)
                dist_rows += [{"question_id": qid, "condition": code, "level": lv + 1, "anchor": rated[qid].anchors[lv],
                               "count": int(levels[lv]),
                               "percent": float(100 * levels[lv] / sel.size) if sel.size else 0.0}
                              for lv in range(scale)]
            lo, hi = mean_ci(per_v, level)
            mean_rows.append({"question_id": qid, "condition": code, "participants": int(per_v.size),
                              "mean": float(per_v.mean()) if per_v.size else np.nan, "ci_low": lo, "ci_high": hi,
                              "response_mean": float(sel.mean()) if sel.size else np.nan})
    distribution = pd.DataFrame(dist_rows, columns=["question_id", "condition", "level", "anchor", "count", "percent"])
    return pd.DataFrame(count_rows), distribution, pd.DataFrame(mean_rows)


TEST_COLUMNS = ["question_id", "a", "b", "test", "n", "statistic", "p", "p_holm", "effect_size", "effect", "mean_a",
                "mean_b", "difference", "diff_ci_low", "diff_ci_high"]


def _pair_test(design: str, xa: pd.Series, xb: pd.Series, level: float) -> dict | None:
    """The rank test and difference interval of two conditions' participant means (None: too few)."""
    if design == "between":
        if len(xa) < 2 or len(xb) < 2:
            return None
        stat, p, eff = rank_biserial_u(xa.to_numpy(), xb.to_numpy())
        diff = difference_ci(xa.to_numpy(), xb.to_numpy(), paired=False, level=level)
        test, n = "Mann-Whitney U", f"{len(xa)} vs {len(xb)}"
    else:
        paired = pd.concat([xa.rename("a"), xb.rename("b")], axis=1, join="inner")
        if len(paired) < 2:
            return None
        stat, p, eff = rank_biserial_paired(paired["a"].to_numpy(), paired["b"].to_numpy())
        diff = difference_ci(paired["a"].to_numpy(), paired["b"].to_numpy(), paired=True, level=level)
        test, n = "Wilcoxon signed-rank", f"{len(paired)} pairs"
    return {"test": test, "n": n, "statistic": stat, "p": p, "effect_size": eff, "effect": "rank-biserial r",
            "mean_a": float(xa.mean()), "mean_b": float(xb.mean()), "difference": diff[0],
            "diff_ci_low": diff[1], "diff_ci_high": diff[2]}


def _pair_tests(study: Study, questions: list[str], codes: list[str], groups: dict, level: float) -> pd.DataFrame:
    """Every pair of conditions per question: the design's rank test, effect size, difference with its
    interval, and Holm-adjusted p-values."""
    rows = []
    for qid in questions:
        for a, b in combinations(codes, 2):
            xa, xb = groups.get((qid, a)), groups.get((qid, b))
            result = None if xa is None or xb is None else _pair_test(study.design, xa, xb, level)
            if result is not None:
                rows.append({"question_id": qid, "a": a, "b": b, **result})
    tests = pd.DataFrame(rows, columns=TEST_COLUMNS)
    tests["p_holm"] = holm(tests["p"].to_numpy()) if len(tests) else []
    return tests


def analyse(study: Study, responses: pd.DataFrame, seed: int = 0, exclude_failed_attention: bool = True,
            level: float = 0.95) -> StudyAnalysis:
    """Every table of the analysis of `responses` (as `StudyStore.responses` returns them)."""
    rated = {q.id: q for q in study.questions if q.rated}
    if not rated:
        raise XcoreError(f"study {study.id!r} has no rating questions to analyse")
    excluded = failed_attention(study, responses) if exclude_failed_attention else []
    kept = responses[~responses["participant"].isin(excluded)] if len(responses) else responses
    ratings = _ratings(study, kept, rated)
    both = pd.concat([ratings, ratings.assign(question_id=ALL)], ignore_index=True)
    codes = [c.code for c in study.conditions]
    questions = [q for q in rated] + [ALL]
    # participant means per condition and question: the unit of every interval and test
    pm = both.groupby(["question_id", "condition_code", "participant"], sort=False)["rating"].mean()
    groups = {k: g.droplevel([0, 1]) for k, g in pm.groupby(level=[0, 1], sort=False)}
    counts, distribution, means = _condition_tables(rated, questions, codes, both, groups, level)
    n_part = int(responses["participant"].nunique()) if len(responses) else 0
    orphan = responses["orphan"].astype(bool) if "orphan" in responses else pd.Series(False, index=responses.index)
    return StudyAnalysis(study=study, ratings=ratings, counts=counts, distribution=distribution, means=means,
                         tests=_pair_tests(study, questions, codes, groups, level), parts=_part_tests(study, ratings),
                         times=_times(kept, codes), excluded=excluded, n_participants=n_part,
                         orphans=int(responses.loc[orphan, "participant"].nunique()),
                         orphan_answers=int(orphan.sum()))


def _part_tests(study: Study, ratings: pd.DataFrame) -> pd.DataFrame:
    """The I-Explain comparison: relational vs non-relational part ratings, paired by participant, per condition."""
    rel = [q.id for q in study.questions if q.kind == "feature" and q.part == "relational"]
    non = [q.id for q in study.questions if q.kind == "feature" and q.part == "non_relational"]
    cols = ["condition", "participants", "mean_relational", "mean_non_relational", "statistic", "p", "effect_size"]
    if not rel or not non or ratings.empty:
        return pd.DataFrame(columns=cols)
    kind = ratings["question_id"].map(lambda q: "rel" if q in rel else ("non" if q in non else None))
    sub = ratings.assign(kind=kind).dropna(subset=["kind"])
    rows = []
    for code, g in sub.groupby("condition_code"):
        wide = g.groupby(["participant", "kind"])["rating"].mean().unstack().dropna()
        if "rel" not in wide or "non" not in wide or len(wide) < 2:
            continue
        stat, p, eff = rank_biserial_paired(wide["rel"].to_numpy(), wide["non"].to_numpy())
        rows.append({"condition": code, "participants": len(wide), "mean_relational": float(wide["rel"].mean()),
                     "mean_non_relational": float(wide["non"].mean()), "statistic": stat, "p": p,
                     "effect_size": eff})
    return pd.DataFrame(rows, columns=cols)


def _times(responses: pd.DataFrame, codes: list[str]) -> pd.DataFrame:
    """Seconds per item screen by condition (one value per participant and screen)."""
    cols = ["condition", "screens", "median_s", "mean_s"]
    if responses.empty:
        return pd.DataFrame(columns=cols)
    screens = responses.drop_duplicates(["participant", "position"])
    g = screens.groupby("condition_code")["response_ms"]
    out = pd.DataFrame({"screens": g.size(), "median_s": g.median() / 1000, "mean_s": g.mean() / 1000})
    out = out.reindex(codes).fillna({"screens": 0}).reset_index(names="condition")
    return out[cols]
