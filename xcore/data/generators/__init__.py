"""Synthetic relational datasets from known (planted) processes, for demos, tests and benchmarks."""

from xcore.data.generators.lastfm import PRESETS as LASTFM_PRESETS
from xcore.data.generators.lastfm import lastfm_preset, lastfm_schema, make_lastfm, write_lastfm_demo

__all__ = ["make_lastfm", "lastfm_preset", "lastfm_schema", "write_lastfm_demo", "LASTFM_PRESETS"]
