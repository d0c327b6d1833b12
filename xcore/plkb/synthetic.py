"""Moved to `xcore.data.generators.strings`; re-exported here so old imports keep working."""

from xcore.data.generators.strings import PAPER_SETS, SyntheticStrings, alphabet, make_strings  # noqa: F401  (moved)
