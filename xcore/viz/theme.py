"""One place for the colours and sizes every xcore figure uses (Okabe-Ito, colour-blind safe)."""

from __future__ import annotations

EXPLAINABLE = "#0072B2"
"""Items (rules, clauses, feature sets) a user can read as an explanation: blue."""
NOT_EXPLAINABLE = "#D55E00"
"""Items built on non-explainable predicates or features: vermillion."""
TARGET = "#CC79A7"
"""The explained target atom or instance: reddish purple."""
OBSERVED = "#009E73"
"""Observed (evidence) atoms and closed predicates: bluish green."""
OPEN = "#E69F00"
"""Open (inferred) atoms and open predicates: orange."""
UNKNOWN = "#999999"
"""Atoms whose observed/open status the method did not report: grey."""
EDGE = "#B0B0B0"
"""Structural edges (predicate graph)."""
HISTOGRAM = "#56B4E9"
"""Bars of value histograms: sky blue."""
OUTLINE = "#333333"
"""Marker outlines (e.g. explainable predicates)."""

SERIES: tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
"""Colours for the series of a trade-off figure, in order of first appearance (cycled)."""

TEMPLATE = "plotly_white"
FONT_FAMILY = "Inter, Helvetica, Arial, sans-serif"

EDGE_WIDTH_MIN = 1.0
EDGE_WIDTH_MAX = 8.0
"""Explanation-graph edges scale linearly in |score| between these widths (pixels)."""


UP = "#009E73"
"""Items that push the prediction up: bluish green."""
DOWN = "#D55E00"
"""Items that push the prediction down: vermillion."""


def direction_colour(direction: int) -> str:
    """The colour of an item pushing up (+1), down (-1) or in no recorded direction (0)."""
    return UP if direction > 0 else DOWN if direction < 0 else UNKNOWN


def explainable_colour(explainable: bool) -> str:
    """The colour of an item given its explainable flag."""
    return EXPLAINABLE if explainable else NOT_EXPLAINABLE


def atom_colour(observed: bool | None) -> str:
    """The colour of an atom: observed, open, or unknown (None)."""
    if observed is None:
        return UNKNOWN
    return OBSERVED if observed else OPEN


def series_colour(i: int) -> str:
    """The colour of the i-th series (cycles through `SERIES`)."""
    return SERIES[i % len(SERIES)]
