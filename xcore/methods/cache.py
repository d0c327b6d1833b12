"""A bounded, thread-safe cache of runs (or fitted estimators) keyed by (method, data fingerprint, settings key).

Pages and the command line ask it before running: a repeated click with the same data and settings
is instant and replays no progress calls (progress is reported only while computing).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Callable, Generic, TypeVar

RunKey = tuple[str, str, str]
V = TypeVar("V")
"""What is cached: `Run` for the run cache, a fitted `Estimator` for the explain driver's fits."""


class RunCache(Mapping[RunKey, V], Generic[V]):
    """At most `max_entries` runs, least recently used evicted first.

    Read as a mapping (run key -> run, oldest first) it does not count or reorder: pages list a
    browser session's runs through it.
    """

    def __init__(self, max_entries: int = 16) -> None:
        self.max_entries = max_entries
        self._runs: OrderedDict[RunKey, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: RunKey, default: V | None = None) -> V | None:  # type: ignore[override]  # one default form
        """The run stored under `key` (now the most recently used), else `default`."""
        with self._lock:
            run = self._runs.get(key)
            if run is None:
                return default
            self._runs.move_to_end(key)
            self.hits += 1
            return run

    def put(self, key: RunKey, run: V) -> None:
        with self._lock:
            self._runs[key] = run
            self._runs.move_to_end(key)
            while len(self._runs) > self.max_entries:
                self._runs.popitem(last=False)

    def get_or_run(self, key: RunKey, compute: Callable[[], V]) -> V:
        """The cached run for `key`, else `compute()` stored under it (errors are not cached)."""
        run = self.get(key)
        if run is not None:
            return run
        with self._lock:
            self.misses += 1
        run = compute()
        self.put(key, run)
        return run

    def __len__(self) -> int:
        return len(self._runs)

    def __getitem__(self, key: RunKey) -> V:
        return self._runs[key]

    def __iter__(self) -> Iterator[RunKey]:
        return iter(list(self._runs))

    def __reversed__(self) -> Iterator[RunKey]:
        return reversed(list(self._runs))

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()
