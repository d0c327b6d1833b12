"""Moved to `xcore.data.benchmarks.citation`; re-exported here so old imports keep working."""

from xcore.data.benchmarks.citation import (  # noqa: F401  (moved)
    CITESEER_CHECKED,
    NAMES,
    CitationData,
    citation_dataset,
    default_root,
    load_planetoid_arrays,
)
