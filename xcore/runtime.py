"""Run-time plumbing shared by every package: the one progress-callback type and thread limits.

`Progress` is the single progress signature (``progress(fraction in [0, 1], message)``); code that
counts steps adapts with `counted`, sub-tasks nest with `scaled`. Thread limits are context managers
so no caller changes process-wide state for longer than its own block.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

Progress = Callable[[float, str], None]
"""``progress(fraction done in [0, 1], message)``: the one progress-callback type of xcore."""


def null_progress(fraction: float, message: str) -> None:
    """A progress callback that ignores every report (the default when the caller passes none)."""


def scaled(progress: Progress | None, start: float, end: float) -> Progress:
    """Map a sub-task's fraction 0..1 onto ``start..end`` of `progress` (None gives `null_progress`)."""
    if progress is None:
        return null_progress
    span = end - start

    def report(fraction: float, message: str) -> None:
        progress(start + span * fraction, message)

    return report


def counted(progress: Progress | None, start: float = 0.0,
            end: float = 1.0) -> Callable[[int, int, str], None]:
    """Adapt `progress` for code that counts ``(done, total, message)``, mapped onto ``start..end``."""
    inner = scaled(progress, start, end)

    def report(done: int, total: int, message: str) -> None:
        inner(done / max(total, 1), message)

    return report


@contextmanager
def limited_threads(n: int = 1) -> Iterator[None]:
    """Limit BLAS/OpenMP pools to `n` threads inside the block and restore them after.

    Most solves here are small-vector work where idle BLAS threads only spin: on a busy 2-core
    machine L-BFGS-B ran about 60x slower with them (see bench/psl_esms_parallel.py).
    A no-op without threadpoolctl (which ships with scikit-learn).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        yield
        return
    try:  # threadpoolctl limits the libraries loaded when the block starts: load scipy's BLAS first,
        import scipy.linalg  # noqa: F401  (solvers imported lazily inside the block would spin it)
    except ImportError:  # pragma: no cover - scipy is a dependency
        pass
    with threadpool_limits(limits=n):
        yield


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Set torch's intra-op thread count to `n` inside the block and restore the previous value."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
