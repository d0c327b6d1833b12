"""The model as a whole: which rules, formulas or feature clauses explain most predictions.

Ground items are grouped by the lifted rule they instantiate (``extras["rule"]`` when the method
records it, else the item text, as for feature sets), then summarised over every explanation of a
run: mean |score| where the group appears, how often it is in an explanation's top k, and in how
many explanations it appears at all.
"""

from __future__ import annotations

import re

import pandas as pd

from xcore.explain.types import ExplanationSet

GLOBAL_COLUMNS: tuple[str, ...] = ("group", "explanations", "top_k_share", "mean_abs_score", "mean_score",
                                   "share_up", "share_down", "explainable")


_WEIGHT = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*:\s*")


def item_group(text: str, extras: dict) -> str:
    """The lifted rule of a ground item (without its weight prefix), or its own text (feature sets, words)."""
    rule = extras.get("rule")
    return _WEIGHT.sub("", str(rule)) if isinstance(rule, str) and rule else text


def global_importance(explanations: ExplanationSet, k: int = 5) -> pd.DataFrame:
    """One row per group, sorted by how often it is in the top `k`, then by mean |score|."""
    rows = []
    for e_index, exp in enumerate(explanations):
        for rank, it in enumerate(exp.items, start=1):
            rows.append((e_index, rank, item_group(it.text, it.extras), it.score, it.direction, it.explainable))
    if not rows:
        return pd.DataFrame(columns=list(GLOBAL_COLUMNS))
    f = pd.DataFrame(rows, columns=["exp", "rank", "group", "score", "direction", "explainable"])
    f["abs"] = f["score"].abs()
    f["top"] = f["rank"] <= k
    f["up"] = f["direction"] > 0
    f["down"] = f["direction"] < 0
    n = max(len(explanations), 1)
    g = f.groupby("group", sort=False)
    out = pd.DataFrame({
        "explanations": g["exp"].nunique(),
        "top_k_share": f[f["top"]].groupby("group", sort=False)["exp"].nunique().reindex(g.size().index,
                                                                                      fill_value=0) / n,
        "mean_abs_score": g["abs"].mean(),
        "mean_score": g["score"].mean(),
        "share_up": g["up"].mean(),
        "share_down": g["down"].mean(),
        "explainable": g["explainable"].all(),
    }).reset_index()
    out = out.sort_values(["top_k_share", "mean_abs_score"], ascending=[False, False], kind="stable")
    return out[list(GLOBAL_COLUMNS)].reset_index(drop=True)
