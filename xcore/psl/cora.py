"""Moved to `xcore.data.benchmarks.cora`; re-exported here so old imports keep working."""

from xcore.data.benchmarks.cora import (  # noqa: F401  (moved)
    CHECKED_FILES,
    DEFAULT_ROOT,
    cora_schema,
    load_cora_arrays,
    load_cora_dataset,
    load_planetoid,
)
