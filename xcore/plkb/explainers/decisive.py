"""The paper's explanation: the k features of a row whose sub-query decides its prediction most firmly."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.explain.types import Explanation, ExplanationSet
from xcore.methods.base import Explainer, Measurement, Run
from xcore.plkb.estimator import PLKBEstimator
from xcore.plkb.explainers.rows import fitted_reason, per_row, targets_of
from xcore.plkb.scores import DECISIVE, DECISIVE_SCORE, decides, undecided_note
from xcore.plkb.verify import measure_decisive
from xcore.runtime import Progress


def decisive_for_row(model: PLKBEstimator, x: pd.DataFrame, k: int,
                     codes: np.ndarray | None = None) -> tuple[Explanation, int]:
    """The row's decisive-feature explanation with k features, or (with `k_auto`) with the smallest k
    from `k` up to `k_max` whose best set decides the prediction; returns it and the k used."""
    s = model.settings
    n = x.shape[1]
    used = min(k, n)
    if codes is None:  # once: each k below searches the same query
        codes = model.classifier_.encode(x)[0]
    exp = model.classifier_.explain(codes, used).to_explanation()
    while s.k_auto and not decides(exp.items) and used < min(s.k_max, n):
        used += 1
        exp = model.classifier_.explain(codes, used).to_explanation()
    return exp, used


class DecisiveExplainer(Explainer):
    """The k features of a row whose sub-query decides its prediction most firmly (the paper's explanation).

    Parameters
    ----------
    k : int, optional
        Features per explanation (default: the model's `settings.k`).
    """

    name = DECISIVE
    title = "Decisive features"
    score_spec = DECISIVE_SCORE
    settings_fields = ("k", "k_auto", "k_max", "explain_rows")
    prediction_column = "mid"  # the ω(POS) midpoint behind the predicted class

    def __init__(self, k: int | None = None) -> None:
        self.k = k

    def measure(self, run: Run, data: RelationalDataset | None, explanation: Explanation,
                k: int) -> Measurement | None:
        """ω(POS) knowing only each set's features minus knowing none (`xcore.plkb.verify`)."""
        return measure_decisive(run, explanation, k)

    def supports(self, model: object) -> str | None:
        return fitted_reason(model)

    def explain(self, model: PLKBEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        k = self.k or model.settings.k
        wanted = targets_of(model, data, targets)
        rows = [model.row(t, data) for t in wanted]
        codes = dict(zip(wanted, model.classifier_.encode(pd.concat(rows)))) if rows else {}  # one batch
        x_of = dict(zip(wanted, rows))

        def one(target: str) -> Explanation:
            exp, used = decisive_for_row(model, x_of[target], k, codes[target])
            meta = {**exp.meta, "k": used, "k_asked": k, **undecided_note(exp.items, used)}
            if used > k and decides(exp.items):
                meta["note"] = f"No set of {k} features decides this row; the smallest that does has {used}."
            return replace(exp, meta=meta, target=target,
                           target_text=f"{target}: {model.settings.label} predicted {exp.meta.get('prediction', '')}")

        exps = per_row(model, data, wanted, progress, one, "decisive features of")
        return self.finish(ExplanationSet(exps, method=self.name, meta={"k": k}))
