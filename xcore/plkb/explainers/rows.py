"""Which rows the classifier's explainers explain, and the per-row loop they share (one LP search or
Shapley computation per row: the unit of work is a row)."""

from __future__ import annotations

from typing import Callable

from xcore.data.dataset import RelationalDataset
from xcore.data.splits import row_text
from xcore.explain.types import Explanation
from xcore.plkb.estimator import PLKBEstimator
from xcore.runtime import Progress, scaled


def fitted_reason(model: object) -> str | None:
    """Why an explainer of the classifier cannot explain `model`, or None."""
    if not isinstance(model, PLKBEstimator):
        return "explains the probabilistic-logic classifier only"
    return None if model.is_fitted() else "the model is not fitted"


def targets_of(model: PLKBEstimator, data: RelationalDataset | None, targets: list[str] | None) -> list[str]:
    """`targets`, else the first `explain_rows` rows of `data` (else of the held-out rows)."""
    if targets is not None:
        return list(targets)
    return [row_text(i) for i in model.rows(data).index[: model.settings.explain_rows]]


def per_row(model: PLKBEstimator, data: RelationalDataset | None, targets: list[str] | None,
            progress: Progress | None, one: Callable[[str], Explanation], what: str) -> list[Explanation]:
    """`one(target)` for each requested row, progress after each."""
    model.check_fitted()
    wanted = targets_of(model, data, targets)
    report = scaled(progress, 0.0, 1.0)
    exps = []
    for i, target in enumerate(wanted):
        exps.append(one(target))
        report((i + 1) / max(len(wanted), 1), f"{what} {target}")
    return exps

