"""The runs a browser session keeps: a bounded store where a user can pin runs, and that says what it dropped.

Why: a session kept its last 8 runs and older ones vanished silently from Compare and Study. Here the
bound counts only unpinned runs (pinned runs are never dropped), and every dropped run is remembered
by its label so a page can name it. No Streamlit import: pages keep one `SessionRuns` in their state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from xcore.methods.cache import RunCache, RunKey

if TYPE_CHECKING:
    from xcore.methods.base import Run

MAX_UNPINNED_RUNS = 8
"""Unpinned runs a session keeps (least recently used dropped first); pinned runs come on top."""
MAX_DROPPED_NAMED = 20
"""Dropped runs remembered by name (the oldest forgotten first)."""


def run_label(key: RunKey, run: "Run") -> str:
    """A run's name for users: method, dataset and the first characters of its settings key."""
    method, fingerprint, settings = key
    return f"{method} on {getattr(run, 'dataset', None) or fingerprint[:8]} (settings {settings[:6]})"


class SessionRuns(RunCache):
    """At most `max_unpinned` unpinned runs plus every pinned run; dropped runs are named in `dropped`."""

    def __init__(self, max_unpinned: int = MAX_UNPINNED_RUNS) -> None:
        if max_unpinned < 1:
            raise ValueError(f"a session keeps at least one unpinned run, got {max_unpinned}")
        super().__init__(max_entries=max_unpinned)
        self.pinned: set[RunKey] = set()
        self.dropped: list[str] = []
        self._unseen = 0

    @classmethod
    def of(cls, runs: Mapping[RunKey, "Run"], max_unpinned: int = MAX_UNPINNED_RUNS) -> "SessionRuns":
        """A store holding `runs` (oldest first), e.g. a plain mapping a test or an older session left."""
        store = cls(max_unpinned)
        for k, r in runs.items():
            store.put(k, r)
        return store

    @property
    def max_unpinned(self) -> int:
        return self.max_entries

    def put(self, key: RunKey, run: "Run") -> None:
        """Keep `run` (now the most recent); drop the least recently used unpinned runs over the bound."""
        with self._lock:
            self._runs[key] = run
            self._runs.move_to_end(key)
            self._enforce()

    def pin(self, key: RunKey, pinned: bool = True) -> None:
        """Pin a kept run (never dropped, not counted in the bound) or unpin it (the bound applies again:
        the oldest unpinned runs over it are dropped now, named in `dropped`)."""
        with self._lock:
            if key not in self._runs:
                raise KeyError(f"no run {key!r} is kept in this session")
            if pinned:
                self.pinned.add(key)
            else:
                self.pinned.discard(key)
                self._enforce()

    def _enforce(self) -> None:
        """Drop the least recently used unpinned runs over the bound (caller holds the lock)."""
        unpinned = [k for k in self._runs if k not in self.pinned]
        for old in unpinned[: max(0, len(unpinned) - self.max_entries)]:
            self.dropped.append(run_label(old, self._runs.pop(old)))
            self._unseen += 1
        del self.dropped[:-MAX_DROPPED_NAMED]
        self._unseen = min(self._unseen, len(self.dropped))

    def is_pinned(self, key: RunKey) -> bool:
        return key in self.pinned

    def unpinned_count(self) -> int:
        return sum(1 for k in self._runs if k not in self.pinned)

    def limit_text(self) -> str:
        """The bound in words, with how full it is (shown beside the run lists)."""
        return (f"This session keeps the {self.max_unpinned} most recent unpinned runs "
                f"({self.unpinned_count()} now) and every pinned run ({len(self.pinned)} pinned); "
                "older unpinned runs are dropped. Pin a run on its page to keep it.")

    def dropped_notice(self, recent_only: bool = False) -> str | None:
        """The dropped runs by name (None when none was dropped); `recent_only`: those since the last call
        with `recent_only`, which marks them seen."""
        names = self.dropped[len(self.dropped) - self._unseen:] if recent_only else self.dropped
        if recent_only:
            self._unseen = 0
        if not names:
            return None
        return (f"Dropped to stay within {self.max_unpinned} unpinned runs: " + "; ".join(names)
                + ". Pin runs to keep them.")

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()
            self.pinned.clear()
