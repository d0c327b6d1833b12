"""Process-level plumbing shared by every method: the one progress type (the full module, with
thread limits, lands with the code-moves branch)."""

from __future__ import annotations

from typing import Callable

Progress = Callable[[float, str], None]
"""``progress(fraction_done, message)``: fraction in [0, 1]; pages pass a progress bar, the CLI a line."""


def null_progress(fraction: float, message: str) -> None:
    """A progress callback that reports nowhere."""


def scaled(progress: Progress | None, start: float, end: float) -> Progress:
    """A callback mapping a sub-task's 0..1 onto start..end of `progress` (None: reports nowhere)."""
    if progress is None:
        return null_progress
    return lambda f, m: progress(start + (end - start) * min(max(float(f), 0.0), 1.0), m)
