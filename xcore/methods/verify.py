"""`xcore verify`: each explanation checked against the fitted model by intervention.

For every explained prediction (all, or the given targets) and each of its top-k items, the
explainer's `measure` takes the item away the way the method defines it (remove the ground rule, set
the formula's weight to 0, mask the features or the word, re-infer) and reports the prediction with
the item minus the prediction without it. An item agrees when that change has its stated direction;
changes within the measurement's tolerance count as "not moved". Explainers whose score is not an
effect (fidelity, coverage, precision, edge masks) are reported as not directional, never checked by
an invented test.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import ExplanationSet
from xcore.methods import run_method
from xcore.methods.base import Run
from xcore.methods.driver import agreement
from xcore.methods.registry import REGISTRY
from xcore.runtime import Progress, scaled

SUMMARY_COLUMNS: tuple[str, ...] = ("explainer", "predictions", "items", "directed", "agreed", "opposite",
                                    "not_moved", "rank_correlation", "seconds", "how")
ITEM_COLUMNS: tuple[str, ...] = ("explainer", "target", "rank", "text", "direction", "stated_effect",
                                 "measured_change", "tolerance", "verdict")


@dataclass
class Verification:
    """The result of verifying a run: one summary row per explainer and one row per checked item."""

    summary: pd.DataFrame
    items: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no directed item moved the prediction against its stated direction."""
        return bool((self.items["verdict"] != "opposite").all()) if len(self.items) else True

    def table(self) -> str:
        """The summary as a fixed-width text table (the command's output)."""
        shown = self.summary.copy()
        shown["rank_correlation"] = shown["rank_correlation"].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
        shown["seconds"] = shown["seconds"].map(lambda v: f"{v:.2f}")
        with pd.option_context("display.max_colwidth", 70, "display.width", 220):
            return shown.to_string(index=False)


def _verdicts(directions: np.ndarray, agree: np.ndarray) -> list[str]:
    out = []
    for d, a in zip(directions, agree):
        out.append("undirected" if d == 0 else "agreed" if a > 0 else "opposite" if a < 0 else "not moved")
    return out


def _verify_explainer(run: Run, data: RelationalDataset | None, name: str, algo: Any, chosen: list, k: int,
                      report: Progress | None) -> tuple[tuple, list[tuple]]:
    """(summary row, item rows) of one explainer: each chosen explanation's top-`k` items measured by
    its intervention (`Explainer.measure`) against their stated directions."""
    t0 = time.perf_counter()
    rows: list[tuple] = []
    stated, measured, how, n_items, n_directed = [], [], "", 0, 0
    agreed = opposite = flat = 0
    for j, exp in enumerate(chosen):
        top = exp.top(k)
        if not top:
            continue
        m = None if algo is None else algo.measure(run, data, exp, k)
        d = np.array([it.direction for it in top], dtype=np.int64)
        n_items += len(top)
        if m is None:
            rows += [(name, exp.target, r + 1, it.text, int(it.direction), it.effect, math.nan, math.nan,
                      "undirected") for r, it in enumerate(top)]
            continue
        how = m.how or how
        change = np.asarray(m.change, dtype=np.float64)[: len(top)]
        agree = agreement(d, change, m.tolerance)
        n_directed += int((d != 0).sum())
        agreed += int(((agree > 0) & (d != 0)).sum())
        opposite += int(((agree < 0) & (d != 0)).sum())
        flat += int(((agree == 0) & (d != 0)).sum())
        for r, (it, c, v) in enumerate(zip(top, change, _verdicts(d, agree))):
            rows.append((name, exp.target, r + 1, it.text, int(it.direction), it.effect, float(c),
                         float(m.tolerance), v))
            if it.direction != 0 and np.isfinite(c):
                stated.append(it.effect if it.effect is not None else abs(it.score) * it.direction)
                measured.append(c)
        if report is not None:
            report((j + 1) / max(len(chosen), 1), f"verified {exp.target}")
    rho = math.nan
    if len(stated) >= 3 and np.ptp(stated) > 0 and np.ptp(measured) > 0:
        rho = float(spearmanr(stated, measured).statistic)
    directed = algo is not None and algo.score_spec.directed and n_directed > 0
    return (name, len(chosen), n_items, n_directed, agreed, opposite, flat, rho, time.perf_counter() - t0,
            how if directed else "not directional"), rows


def verify_run(run: Run, data: RelationalDataset | None = None, targets: list[str] | None = None, k: int = 5,
               explanations: dict[str, ExplanationSet] | None = None, explainers: list[str] | None = None,
               progress: Progress | None = None) -> Verification:
    """Check the top-`k` items of `explanations` (default: the run's own) against `run.model` by
    intervention; `targets` limits the predictions checked; `explainers` the explainers."""
    if run.model is None:
        raise XcoreError("this run has no fitted model to intervene on (read from a bundle?): refit it first "
                         "(`xcore verify` does, from the bundle's settings and data)")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise XcoreError(f"k must be a positive integer, got {k!r}")
    explanations = run.explanations if explanations is None else explanations
    table = REGISTRY[run.method].explainer_objects()
    names = [n for n in explanations if explainers is None or n in explainers]
    if explainers is not None:
        unknown = [n for n in explainers if n not in explanations]
        if unknown:
            raise XcoreError(f"no explanations by {unknown[0]!r} in this run; it has {', '.join(explanations)}")
    summary, rows = [], []
    for i, name in enumerate(names):
        exps = explanations[name]
        chosen = [e for e in exps if targets is None or e.target in targets]
        if targets is not None:
            missing = sorted(set(targets) - {e.target for e in exps})
            if missing and len(names) == 1:
                raise XcoreError(f"{name} has no explanation of {missing[0]!r}")
        report = scaled(progress, i / max(len(names), 1), (i + 1) / max(len(names), 1))
        row, items = _verify_explainer(run, data, name, table.get(name), chosen, k, report)
        summary.append(row)
        rows += items
    return Verification(pd.DataFrame(summary, columns=list(SUMMARY_COLUMNS)),
                        pd.DataFrame(rows, columns=list(ITEM_COLUMNS)))


def rebuild_run(bundle: Run, data: RelationalDataset, progress: Progress | None = None) -> tuple[Run, list[str]]:
    """A run with a fitted model for a bundle read from disk: the bundle's method and settings refit on
    `data` (which must have the bundle's data fingerprint); returns it and what was done, in words."""
    spec = REGISTRY[bundle.method]
    if bundle.fingerprint and data.fingerprint() != bundle.fingerprint:
        raise XcoreError(f"the data given ({data.name!r}) is not the data of this run: its fingerprint "
                         f"{data.fingerprint()[:12]} differs from the bundle's {bundle.fingerprint[:12]}")
    settings = spec.settings_type.parse(bundle.settings_dict)
    notes = [f"the bundle holds no model: refit {bundle.method} from its settings on {data.name!r} "
             f"(data fingerprint {data.fingerprint()[:12]} matches)"]
    return run_method(bundle.method, data, settings, progress=progress, cache=None, fits=None), notes


def measured_table(verification: Verification, explainer: str) -> pd.DataFrame:
    """The checked items of one explainer (for the page's Verify view)."""
    return verification.items[verification.items["explainer"] == explainer].reset_index(drop=True)

