"""What both DRM explainers share: which targets they explain and the feature definitions of a clause."""

from __future__ import annotations

from typing import Any, Iterator

from xcore.data.dataset import RelationalDataset
from xcore.drm.cross_fit import CrossFittedDRM
from xcore.drm.estimator import DRMEstimator, Rows
from xcore.drm.explain import LocalExplanation
from xcore.methods.base import Explainer
from xcore.runtime import Progress, scaled


def unsupported(model: Any) -> str | None:
    """Why a DRM explainer cannot explain `model`, or None."""
    if not isinstance(model, (DRMEstimator, CrossFittedDRM)):
        return "explains a deep relational machine only"
    return None if model.is_fitted() else "the model is not fitted"


def wanted_targets(model: DRMEstimator | CrossFittedDRM, data: RelationalDataset | None,
                   targets: list[str] | None) -> tuple[list[str], Rows]:
    """(the targets to explain: `targets`, else the first `explain_rows` examples of `data`; their rows)."""
    rows = model.rows(data)
    return (list(targets) if targets is not None else rows[0][: model.settings.explain_rows]), rows


def definitions(model: DRMEstimator, feats: tuple[int, ...]) -> dict[str, str]:
    """Feature name -> its Prolog definition, for the features of one clause."""
    return {model.features_[f].name: model.features_[f].definition() for f in feats}


class NeighbourhoodExplainer(Explainer):
    """What both DRM explainers share: their settings (the Hamming neighbourhood and the clause search)
    and the models they explain (a fitted DRM)."""

    settings_fields = ("hamming", "min_neighbours", "beam", "max_body", "explain_rows")

    def supports(self, model: Any) -> str | None:
        return unsupported(model)


def local_of(model: DRMEstimator | CrossFittedDRM, target: str, data: RelationalDataset | None,
             rows: Rows, fold_rows: dict[int, Rows]) -> tuple[DRMEstimator, LocalExplanation]:
    """(the model that explains `target`, its local explanation): the fold model that did not see it in a
    cross-fitted run; `rows` (from `wanted_targets`) are reused when that is `model` itself, and each fold
    model's rows of `data` are computed once per explain call (`fold_rows`, the caller's)."""
    own = model.for_target(target)
    if own is model:
        return own, own.local(target, data, rows=rows)
    if id(own) not in fold_rows:
        fold_rows[id(own)] = own.rows(data)
    return own, own.local(target, data, rows=fold_rows[id(own)])


def explained_locals(model: DRMEstimator | CrossFittedDRM, data: RelationalDataset | None, targets: list[str] | None,
                     progress: Progress | None = None) -> Iterator[tuple[str, DRMEstimator, LocalExplanation]]:
    """(target, the model that explains it, its local explanation) for each wanted target, in order, each
    fold model's rows computed once; `progress` hears each target."""
    model.check_fitted()
    wanted, rows = wanted_targets(model, data, targets)
    fold_rows: dict[int, Rows] = {}
    report = scaled(progress, 0.0, 1.0)
    for n, target in enumerate(wanted):
        own, loc = local_of(model, target, data, rows, fold_rows)
        yield target, own, loc
        report((n + 1) / max(len(wanted), 1), f"explained {target}")
