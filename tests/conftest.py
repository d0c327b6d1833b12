"""Shared test setup: the repository root on sys.path so `ui.*`, `app_pages` and `xcore` import."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


import pytest  # noqa: E402

_ORIGINAL_MAIN = sys.modules.get("__main__")


@pytest.fixture(autouse=True)
def _restore_main_module():
    """AppTest runs a page as `__main__` (also inside module-scoped fixtures); put the original back
    after every test so process pools started later in the same worker do not re-run that page in
    their children (spawn/forkserver re-import `__main__`)."""
    yield
    if _ORIGINAL_MAIN is not None:
        sys.modules["__main__"] = _ORIGINAL_MAIN
