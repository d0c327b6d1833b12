"""Run-time plumbing shared by every package: the one progress-callback type, cancellation, thread limits.

`Progress` is the single progress signature (``progress(fraction in [0, 1], message)``); code that
counts steps adapts with `counted`, sub-tasks nest with `scaled`. A run is cancelled through its
progress: `cancellable` raises `xcore.errors.Cancelled` at the next report once a flag is set, and
`BackgroundJob` runs a computation in a thread with such a progress (the app's Cancel button).
Thread limits are context managers so no caller changes process-wide state for longer than its own block.
`new_highs` is the one way xcore makes a HiGHS solver (quiet, one thread); `new_duckdb` the one way
it makes a DuckDB database (bounded memory, spilling to a private temporary folder).
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Generic, Iterator, TypeVar

from xcore.errors import Cancelled, ConfigError
from xcore.optional_deps import import_optional

T = TypeVar("T")

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


def throttled(progress: Progress | None, interval: float = 0.1) -> Progress | None:
    """`progress` forwarded at most once per `interval` seconds (the first call always), for loops
    whose steps are too short to report each: cancellation rides on the forwarded calls, so a loop
    that ticks every step stops within `interval` plus one step of a cancel. None stays None."""
    if progress is None:
        return None
    last = [-math.inf]

    def report(fraction: float, message: str) -> None:
        now = time.perf_counter()
        if now - last[0] >= interval:
            last[0] = now
            progress(fraction, message)

    return report


def cancellable(progress: Progress | None, cancelled: Callable[[], bool] | threading.Event) -> Progress:
    """`progress` that raises `Cancelled` at the next report once `cancelled` is set (an Event or a callable).

    Every long computation in xcore reports progress, so the check costs nothing extra and needs no
    other hook; the computation unwinds through its own `finally` blocks and nothing partial is cached.
    """
    is_set = cancelled.is_set if isinstance(cancelled, threading.Event) else cancelled
    forward = progress or null_progress

    def report(fraction: float, message: str) -> None:
        if is_set():
            raise Cancelled(f"cancelled at {100 * min(max(fraction, 0.0), 1.0):.0f}% ({message})")
        forward(fraction, message)

    return report


class BackgroundJob(Generic[T]):
    """`compute(progress)` in a daemon thread, with its latest progress, outcome and a `cancel()`.

    The app keeps one per run button in the browser session: the page polls `fraction`/`message`,
    a Cancel click calls `cancel()`, and the thread ends at the computation's next progress report.
    `error` holds the exception (a `Cancelled` after a cancel); `result` the value on success.
    """

    def __init__(self, compute: Callable[[Progress], T], name: str = "xcore-job", tag: Any = None) -> None:
        self.tag = tag
        self.fraction, self.message = 0.0, "starting"
        self.result: T | None = None
        self.error: BaseException | None = None
        self.started = time.perf_counter()
        self.seconds: float | None = None
        self._cancel = threading.Event()
        self._done = threading.Event()
        progress = cancellable(self._report, self._cancel)

        def body() -> None:
            try:
                self.result = compute(progress)
            except BaseException as e:  # noqa: BLE001 - handed to the page, which shows it in words
                self.error = e
            finally:
                self.seconds = time.perf_counter() - self.started
                self._done.set()

        self._thread = threading.Thread(target=body, name=name, daemon=True)
        self._thread.start()

    def _report(self, fraction: float, message: str) -> None:
        self.fraction, self.message = min(max(float(fraction), 0.0), 1.0), message

    def cancel(self) -> None:
        """Ask the computation to stop at its next progress report."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def cancelled(self) -> bool:
        """Finished by a cancel (not by success or another error)."""
        return self.done and isinstance(self.error, Cancelled)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends or `timeout` seconds pass; True when it has ended."""
        return self._done.wait(timeout)


@contextmanager
def limited_threads(n: int = 1) -> Iterator[None]:
    """Limit BLAS/OpenMP pools to `n` threads inside the block and restore them after.

    Most solves here are small-vector work where idle BLAS threads only spin: on a busy 2-core
    machine L-BFGS-B ran about 60x slower with them (see bench/psl_esms_parallel.py).
    A no-op without threadpoolctl (which ships with scikit-learn).
    """
    threadpoolctl = import_optional("threadpoolctl")  # start-up: loaded when threads are first capped
    # threadpoolctl limits the libraries loaded when the block starts: load scipy's BLAS first
    # (solvers imported lazily inside the block would spin it)
    import_optional("scipy.linalg")
    with threadpoolctl.threadpool_limits(limits=n):
        yield


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Set torch's intra-op thread count to `n` inside the block and restore the previous value."""
    torch = import_optional("torch")  # heavy: only where a method runs torch
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


_HIGHS_LOCK = threading.Lock()
_HIGHS_BANNER_DONE: list[bool] = []


def new_highs(threads: int = 1) -> Any:
    """A `highspy.Highs` solver with its output off and `threads` threads (1 for every xcore solve:
    HiGHS keeps one scheduler per process, and a solve asking for another count ends "Not Set").

    HiGHS prints its banner on the process's stdout (fd 1) when the first solver of a process is
    made, before any option can be set; that first one is made with fd 1 on /dev/null, so the
    banner never mixes into a command's output (``xcore run``, ``python -m xcore.psl``).
    """
    highspy = import_optional("highspy")  # heavy: only where a method solves a linear program
    with _HIGHS_LOCK:
        if _HIGHS_BANNER_DONE:
            h = highspy.Highs()
        else:
            h = _made_silently(highspy.Highs)
            _HIGHS_BANNER_DONE.append(True)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(threads))
    return h


def _made_silently(make: Callable[[], T]) -> T:
    """`make()` with the process's fd 1 pointed at /dev/null (C code writes there, not to sys.stdout)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no usable stdout: nothing to keep clean
        return make()
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        return make()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


# ---------------------------------------------------------------------- DuckDB memory
DUCKDB_MEMORY_ENV = "XCORE_DUCKDB_MEMORY"
"""Environment variable: memory for DuckDB's work and for the results xcore fetches from it
(e.g. ``8GB``, ``512MB``); default 40% of the memory this process may use."""
DUCKDB_SPILL_ENV = "XCORE_DUCKDB_SPILL"
"""Environment variable: the most DuckDB may write to its temporary folder when it spills; default
twice the memory limit."""
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_bytes(text: str, name: str) -> int:
    """``"8GB"``, ``"512 MiB"`` or a plain byte count as bytes; anything else is a `ConfigError` naming `name`."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).upper() if m else ""
    if m is None or unit not in _UNITS or float(m.group(1)) * _UNITS[unit] < 2**20:
        raise ConfigError(f"expected a size of at least 1MB such as 8GB or 512MB, got {text!r}", field=name)
    return int(float(m.group(1)) * _UNITS[unit])


def format_bytes(n: float) -> str:
    """A byte count in words: ``2.3 GB``, ``512 MB``."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def available_memory() -> int:
    """Bytes this process may use: the machine's memory, or its cgroup's limit when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = open(path, encoding="ascii").read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def duckdb_memory_limit() -> int:
    """The memory (bytes) for DuckDB's work and fetched results: `DUCKDB_MEMORY_ENV`, else 40% of
    `available_memory()` (DuckDB's own default, 80%, left nothing for the arrays built from its results)."""
    text = os.environ.get(DUCKDB_MEMORY_ENV, "").strip()
    return parse_bytes(text, DUCKDB_MEMORY_ENV) if text else int(0.4 * available_memory())


_DUCKDB_COUNT = iter(range(1 << 62))


def new_duckdb(threads: int | None = None) -> Any:
    """An in-memory DuckDB whose memory is bounded (`duckdb_memory_limit`) and which spills to its own
    temporary folder (bounded by `DUCKDB_SPILL_ENV`, default twice the memory) instead of the
    working directory's ``.tmp``; DuckDB removes the folder when the database closes."""
    duckdb = import_optional("duckdb")  # heavy: only where a method grounds in DuckDB
    memory = duckdb_memory_limit()
    spill_text = os.environ.get(DUCKDB_SPILL_ENV, "").strip()
    spill = parse_bytes(spill_text, DUCKDB_SPILL_ENV) if spill_text else 2 * memory
    folder = os.path.join(tempfile.gettempdir(), f"xcore-duckdb-{os.getpid()}-{next(_DUCKDB_COUNT)}")
    config: dict[str, str | bool | int | float | list[str]] = {"memory_limit": f"{memory // 2**20}MiB", "temp_directory": folder,
              "max_temp_directory_size": f"{spill // 2**20}MiB"}
    if threads:
        config["threads"] = int(threads)
    return duckdb.connect(":memory:", config=config)
