"""Moved to `xcore.data.benchmarks.tabular` (UCI / Kaggle readers) and `xcore.data.generators.titanic`
(`make_titanic_like`); re-exported here so old imports keep working."""

from xcore.data.benchmarks.tabular import (  # noqa: F401  (moved)
    MUSHROOM_LABEL,
    NURSERY_LABEL,
    TITANIC_FEATURES,
    read_hiv1,
    read_mushroom,
    read_nursery,
    read_titanic,
)
from xcore.data.generators.titanic import TITANIC_COLUMNS, make_titanic_like  # noqa: F401  (moved)
