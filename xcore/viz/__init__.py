"""Plotly figure builders for explanations and datasets (no Streamlit; pages just display them)."""

from xcore.viz.charts import item_labels, ranked_bar_figure, tradeoff_figure, value_histogram_figure
from xcore.viz.common import FigureInputError, truncate
from xcore.viz.embedding import embedding_scatter_figure
from xcore.viz.graphs import (
    edge_width,
    explanation_graph,
    explanation_graph_figure,
    graph_layout,
    radial_layout,
    target_node,
)
from xcore.viz.predicate_graph import predicate_graph_figure, predicate_size
from xcore.viz.views import (
    base_value,
    calibration_figure,
    confusion_figure,
    global_importance_figure,
    is_additive,
    prediction_kind,
    quality_figures,
    residual_figure,
    roc_pr_figure,
    waterfall_figure,
)

__all__ = [
    "FigureInputError", "edge_width", "embedding_scatter_figure", "explanation_graph", "explanation_graph_figure", "graph_layout",
    "item_labels", "predicate_graph_figure", "predicate_size", "radial_layout", "ranked_bar_figure", "target_node",
    "tradeoff_figure", "truncate", "value_histogram_figure", "base_value", "calibration_figure", "confusion_figure",
    "global_importance_figure", "is_additive", "prediction_kind", "quality_figures", "residual_figure",
    "roc_pr_figure", "waterfall_figure",
]
