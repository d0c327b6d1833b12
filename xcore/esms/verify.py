"""Interventions that check ground-rule explanations against the fitted PSL model (`xcore verify`).

A ground rule's claim (its signed force on the target) is checked by removing that one ground rule
(weight 0), re-running MAP inference warm-started at the run's MAP state, and reading the target's
value: the value with the rule minus the value without it.
"""

from __future__ import annotations

import copy

import numpy as np

from xcore.explain.types import Explanation
from xcore.methods.base import Measurement, Run
from xcore.psl.inference import map_inference

TOLERANCE = 1e-6
"""MAP values are solved to about this precision; smaller changes count as not moved."""


def value_without(prog, y: np.ndarray, column: int, rows: np.ndarray, method: str) -> np.ndarray:
    """The target's MAP value minus its value with each ground row's weight set to 0 (one warm-started
    solve per removed rule; the program itself is left unchanged)."""
    changes = np.full(len(rows), np.nan)
    for i, r in enumerate(rows):  # one MAP solve per intervention
        if r < 0:
            continue
        variant = copy.copy(prog)
        variant.w = prog.w.copy()
        variant.w[r] = 0.0
        changes[i] = y[column] - map_inference(variant, method, y0=y).y[column]
    return changes


def measure_ground_rules(run: Run, exp: Explanation, k: int) -> Measurement | None:
    """Change of the target's MAP value when each of its top-`k` ground rules is removed."""
    psl = run.model.applied(None)  # the model as applied to the run's held-out part
    prog, y = psl.program_, psl.y_
    column = exp.meta.get("target_column")
    if prog is None or y is None or column is None:
        return None
    rows = np.array([int(it.extras.get("ground_row", -1)) for it in exp.top(k)], dtype=np.int64)
    method = psl.inference if psl.inference != "auto" else "auto"
    return Measurement(value_without(prog, y, int(column), rows, method), TOLERANCE,
                       "ground rule removed, MAP re-inferred")
