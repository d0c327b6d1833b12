"""Interventions that check the classifier's explanations against its LP inference (`xcore verify`).

A decisive set claims that knowing only its features moves ω(POS) from the undecided state: it is
checked by masking every other feature of the row (then every feature) and solving the LP again. A
Shapley value is checked by masking that one feature of the full row: ω(POS) with minus without it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.explain.types import Explanation
from xcore.methods.base import Measurement, Run

TOLERANCE = 1e-7
"""LP interval midpoints are exact to about this precision."""


def _mids(model, rows: pd.DataFrame) -> np.ndarray:
    return model.classifier_.predict_interval(rows)["mid"].to_numpy(dtype=np.float64)


def _masked(row: pd.DataFrame, keep: list[list[str]] | None, drop: list[list[str]] | None) -> pd.DataFrame:
    """Copies of the one-row frame, one per feature list: only `keep[i]` known, or `drop[i]` unknown."""
    out = []
    for feats in keep if keep is not None else drop:  # type: ignore[union-attr]
        r = row.copy().astype(object)
        cols = [c for c in r.columns if (str(c) not in feats) == (keep is not None)]
        r.loc[:, cols] = None
        out.append(r)
    frame = pd.concat(out, ignore_index=True)
    for c in row.columns:  # numeric columns stay numeric so their bins apply
        if pd.api.types.is_numeric_dtype(row[c]):
            frame[c] = pd.to_numeric(frame[c], errors="coerce")
    return frame


def measure_decisive(run: Run, exp: Explanation, k: int) -> Measurement | None:
    """ω(POS) midpoint knowing only each top set's features minus knowing none of the row's features."""
    model = run.model
    row = model.row(exp.target)
    sets = [[str(f) for f in it.extras.get("features", [])] for it in exp.top(k)]
    if not sets or not all(sets):
        return None
    mids = _mids(model, _masked(row, [[]] + sets, None))
    return Measurement(mids[1:] - mids[0], TOLERANCE, "only the set's features known vs none, LP re-solved")


def measure_shapley(run: Run, exp: Explanation, k: int) -> Measurement | None:
    """ω(POS) midpoint of the full row minus the row with each top feature masked."""
    model = run.model
    row = model.row(exp.target)
    feats = [[it.text.split("=", 1)[0]] for it in exp.top(k)]
    full = _mids(model, row)[0]
    return Measurement(full - _mids(model, _masked(row, None, feats)), TOLERANCE,
                       "the feature masked in the full row, LP re-solved")
