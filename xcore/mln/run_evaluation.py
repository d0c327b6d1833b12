"""Judging explanation runs against a planted annotation: precision@k, Top-Exp-Acc and Peak-Acc per
method, the C/S sweep of I-Explain (paper Fig. 2) and the per-query table."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.generators.reviews import ReviewAnnotation
from xcore.mln.evaluation import accuracy_curve, precision_table
from xcore.mln.model import MLNModel
from xcore.mln.workflow import ExplainerRun, ExplainSettings, TextSetting, run_explainers
from xcore.runtime import Progress


def evaluation_table(run: ExplainerRun, annotation: ReviewAnnotation, k: int = 5) -> pd.DataFrame:
    """Per method: word and relational precision@k against the annotation, Top-Exp-Acc and Peak-Acc
    (F1 from the explanation formulas alone; the whole top-k list, and the best prefix) and seconds."""
    table = precision_table(run.explanations, annotation, k=k)
    agree = agreeing_queries(run)
    if agree is not None:  # a wrong prediction scores 0 precision: compare on the queries all predict alike
        same = precision_table({m: [e for e in exps if e.target in agree] for m, exps in run.explanations.items()},
                               annotation, k=k)
        table["word_precision_agree"] = same["word_precision"].to_numpy()
        table["relational_precision_agree"] = same["relational_precision"].to_numpy()
        table["n_agree"] = len(agree)
    accs = [accuracy_curve(run.explanations[m], annotation) for m in table["method"]]
    table["top_exp_acc"] = [a.top_exp_acc for a in accs]
    table["peak_acc"] = [a.peak_acc for a in accs]
    table["seconds"] = [round(run.seconds.get(m, float("nan")), 2) for m in table["method"]]
    return table


def agreeing_queries(run: ExplainerRun) -> set[str] | None:
    """Queries on which every Markov-logic method (M-, I-, R-Explain) run predicts the same class
    (prediction >= 0.5); None when fewer than two of them ran."""
    sets = [run.explanations[m] for m in ("M-Explain", "I-Explain", "R-Explain") if m in run.explanations]
    if len(sets) < 2:
        return None
    labels = [{e.target: (e.prediction is not None and e.prediction >= 0.5) for e in s} for s in sets]
    common = set(labels[0]).intersection(*labels[1:])
    return {q for q in common if len({lab[q] for lab in labels}) == 1}


def sweep_coalitions(model: MLNModel, dataset: RelationalDataset, setting: TextSetting,
                     annotation: ReviewAnnotation, Cs: Sequence[float] = (0.1, 0.2, 0.3, 0.5),
                     Ss: Sequence[float] = (0.25, 0.5, 0.75, 1.0), settings: ExplainSettings = ExplainSettings(),
                     k: int = 5, progress: Progress | None = None) -> pd.DataFrame:
    """I-Explain accuracy as C varies (S fixed at `settings.S`) and as S varies (C at `settings.C`)
    (paper Fig. 2): one row per point with parameter, value, word/relational precision@k, Top-Exp-Acc."""
    points = [("C", float(c)) for c in Cs] + [("S", float(s)) for s in Ss]
    report = progress or (lambda f, m: None)
    rows = []
    for i, (param, value) in enumerate(points):
        report(i / len(points), f"I-Explain with {param} = {value:g}")
        one = replace(settings, methods=("I-Explain",), **{param: value})
        run = run_explainers(model, dataset, setting, one)
        row = evaluation_table(run, annotation, k).iloc[0]
        rows.append({"parameter": param, "value": value, "word_precision": row["word_precision"],
                     "relational_precision": row["relational_precision"], "top_exp_acc": row["top_exp_acc"],
                     "seconds": row["seconds"]})
    report(1.0, "done")
    return pd.DataFrame(rows)


def sweep_curves(frame: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """Long form of `sweep_coalitions` rows for one parameter ("C" or "S"): value, series, score
    (series = word_precision, relational_precision, top_exp_acc), sorted by value."""
    part = frame[frame["parameter"] == parameter].sort_values("value")
    return part.melt(id_vars=["value"], value_vars=["word_precision", "relational_precision", "top_exp_acc"],
                     var_name="series", value_name="score")



def query_frame(run: ExplainerRun, annotation: ReviewAnnotation | None = None) -> pd.DataFrame:
    """One row per query: atom, marginal (M-Explain's network), truth, annotated label, correct."""
    frame = run.model.marginals()
    frame = frame[frame["atom"].str.startswith(run.setting.target + "(")].reset_index(drop=True)
    if annotation is not None:
        obj = frame["atom"].str.slice(len(run.setting.target) + 1, -1)
        frame["label"] = obj.map(annotation.labels).astype("Int64")
        frame["correct"] = (frame["marginal"] >= 0.5).astype(int) == frame["label"]
    return frame[[c for c in ("atom", "marginal", "se", "rhat", "truth", "label", "correct") if c in frame.columns]]

