"""The probabilistic-logic classifier as a registered method: its `MethodSpec`."""

from __future__ import annotations

from xcore.data.dataset import RelationalDataset
from xcore.methods.base import MethodSpec
from xcore.plkb.estimator import PLKBEstimator
from xcore.plkb.explainers import EXPLAINERS
from xcore.plkb.runs import run
from xcore.plkb.scores import DECISIVE, MODEL_SHAP, SHAPLEY
from xcore.plkb.settings import PLKBSettings
from xcore.plkb.tables import identifier_columns, table_of


def applicable(dataset: RelationalDataset) -> str | None:
    """Why the classifier cannot run on `dataset`, or None when it can."""
    if dataset.tabular is None or dataset.label is None:
        return ("it classifies the rows of a table with a label column: load a tabular CSV (e.g. the "
                "Mushroom sample) or generate a table on this page")
    if dataset.tabular[dataset.label].dropna().astype(str).nunique() < 2:
        return f"the label column {dataset.label!r} has fewer than two classes"
    return None


def default_settings(dataset: RelationalDataset) -> PLKBSettings:
    """Tree KB on the dataset's label, identifier-like columns left out."""
    table, label = table_of(dataset)
    return PLKBSettings(label=label, drop=tuple(identifier_columns(table, label)))


SPEC = MethodSpec(
    key="plkb", title="Probabilistic-logic classifier", settings_type=PLKBSettings, explainers=(DECISIVE, SHAPLEY, MODEL_SHAP),
    run=run, applicable=applicable, default_settings=default_settings, sample="titanic_like",
    estimator_type=PLKBEstimator, explainer_map=EXPLAINERS, surrogate="the classifier's knowledge base", page="app_pages/plkb.py", icon=":material/table_chart:",
    paper="Fan, Liu & Henderson, Explainable AI for Classification using Probabilistic Logic Inference")
