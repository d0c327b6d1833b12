"""Scoring one ESMS candidate model on the validation data: its cached rule blocks stacked into one
hinge program, MAP inference, the validation metrics and MEP@1..3.

Each evaluation is a pure function of (`EvalData`, task), so it may run on any worker (threads,
processes or a Dask cluster) in any order and still give the same history.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from xcore.logic.ast import Rule
from xcore.psl.explain import mep_from_program
from xcore.psl.inference import map_inference
from xcore.psl.rule_forms import RuleForm, assemble_program
from xcore.psl.scores import prediction_metrics

REFERENCE_MAP_TOL = 1e-10
"""L-BFGS-B gradient tolerance of the reference path (as `map_inference`'s default)."""
FAST_MAP_TOL = 1e-10
"""L-BFGS-B gradient tolerance of the fast path. Kept at the reference value: on the LastFM-size
candidates, 1e-8 .. 1e-6 saved 1% of the iterations (the squared-hinge restarts dominate) for a
change of up to 1.7e-9 in a candidate's MSE (bench/RESULTS.md, "ESMS search")."""
WARM_START = "none"
"""Fast path: "union" starts every candidate's MAP from the MAP state of the union of all candidates'
rules (one solve, the same start for every candidate, so results do not depend on scheduling);
"none" from 0.5, as the reference. Off: on LastFM size "union" saved 17% of the L-BFGS-B iterations
but moved candidate MSEs by up to 1e-8, which flips near-ties (on the planted data of
tests/methods/esms/test_esms_search.py it chose another model), so the choice would no longer be
the reference's."""

Task = tuple[list[Rule], list[str], np.ndarray]
"""One candidate to score: its weighted rules, their block keys and which of them are explainable."""


@dataclass
class EvalData:
    """What every candidate evaluation reads (shipped once per worker): cached validation blocks,
    the validation truth and how MAP is run. `y0` is the warm start shared by all candidates."""

    forms: dict[str, RuleForm]
    truth: np.ndarray
    n_targets: int
    inference: str
    metric: str
    tol: float
    y0: np.ndarray | None = None


def evaluate_candidate(data: EvalData, task: Task) -> dict:
    """Evaluate one candidate: stack its cached blocks, MAP on the validation program, metrics, MEP@1..3.

    A pure function of (data, task): results do not depend on where or in which order it runs.
    """
    rules, keys, rule_expl = task
    prog = assemble_program([data.forms[k] for k in keys], rules, data.n_targets)
    row_expl = rule_expl[prog.rule_index] if len(rules) else np.zeros(0, bool)
    t0 = time.perf_counter()
    res = map_inference(prog, data.inference, y0=data.y0, tol=data.tol)
    t1 = time.perf_counter()
    m = prediction_metrics(res.y, data.truth)
    m.update(mep_from_program(prog, res.y, row_expl, (1, 2, 3)))
    return {"metrics": m, "map_seconds": t1 - t0, "score_seconds": time.perf_counter() - t1,
            "map_iterations": res.iterations, "converged": res.converged, "score": m[data.metric]}


def union_start(data: EvalData, tasks: list[Task]) -> np.ndarray:
    """The MAP state of the union of all candidates' rules: every candidate's warm start (deterministic)."""
    seen: dict[str, Rule] = {}
    for rules, keys, _ in tasks:
        for r, k in zip(rules, keys):
            seen.setdefault(k, r)
    keys = sorted(seen)
    soft = [k for k in keys if not seen[k].is_hard]
    prog = assemble_program([data.forms[k] for k in soft], [seen[k] for k in soft], data.n_targets)
    return map_inference(prog, data.inference, tol=data.tol).y


def history_row(iteration: int, drawn: int, rules: list[Rule], rule_expl: np.ndarray, result: dict,
                first: dict[str, float]) -> dict:
    """One row of the search history: a candidate's scores, sizes, stage seconds and rules."""
    m = result["metrics"]
    return {"iteration": iteration, "score": result["score"],
            **{k: m[k] for k in ("mse", "rmse", "mae", "aupr", "auroc", "mep1", "mep2", "mep3")},
            "n_rules": len(rules), "n_explainable": int(rule_expl.sum()), "n_skipped": drawn - len(rules),
            "ground_seconds": first.get("ground", 0.0), "ppll_seconds": first.get("ppll", 0.0),
            "map_seconds": result["map_seconds"], "score_seconds": result["score_seconds"],
            "map_iterations": result["map_iterations"], "converged": result["converged"],
            "rules": [r.text("psl") for r in rules]}
