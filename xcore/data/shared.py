"""Where the project's shared benchmark data lives (tests and benchmarks only, never shipped).

`$XCORE_SHARED_DATA` if set, else ``shared/data`` beside the repository (as on CI and
developer machines). Code that needs it must skip or fail clearly when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path


def shared_data_dir() -> Path:
    """The shared benchmark data folder (may not exist on a user's machine)."""
    env = os.environ.get("XCORE_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
