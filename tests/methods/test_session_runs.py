"""The session run store: a bound on unpinned runs, pinned runs never dropped, dropped runs named."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from xcore.methods.session_runs import MAX_UNPINNED_RUNS, SessionRuns, run_label


def key(i: int) -> tuple[str, str, str]:
    return ("esms", f"{i:016d}", f"s{i:05d}xyz")


def run(i: int) -> SimpleNamespace:
    return SimpleNamespace(dataset=f"data{i}")


def test_the_default_bound_is_eight_and_the_oldest_is_dropped_and_named():
    store = SessionRuns()
    assert store.max_unpinned == MAX_UNPINNED_RUNS == 8
    for i in range(9):
        store.put(key(i), run(i))
    assert key(0) not in store and len(store) == 8
    assert store.dropped == [run_label(key(0), run(0))] == ["esms on data0 (settings s00000)"]
    notice = store.dropped_notice()
    assert "esms on data0 (settings s00000)" in notice and "8 unpinned" in notice


def test_pinned_runs_are_never_dropped_and_do_not_count():
    store = SessionRuns(max_unpinned=3)
    store.put(key(0), run(0))
    store.pin(key(0))
    for i in range(1, 10):
        store.put(key(i), run(i))
    assert key(0) in store  # pinned, though the oldest
    assert [k for k in store] == [key(0), key(7), key(8), key(9)]
    assert store.unpinned_count() == 3 and store.is_pinned(key(0))
    assert [d.split(" on ")[1][:5] for d in store.dropped] == [f"data{i}" for i in range(1, 7)]


def test_unpinning_applies_the_bound_again_and_names_what_goes():
    store = SessionRuns(max_unpinned=2)
    for i in range(3):
        store.put(key(i), run(i))
        store.pin(key(i))
    assert len(store) == 3 and store.dropped == []
    store.pin(key(0), False)
    store.pin(key(1), False)
    store.pin(key(2), False)  # three unpinned over a bound of two: the least recently used goes
    assert key(0) not in store and len(store) == 2
    assert store.dropped == [run_label(key(0), run(0))]


def test_reading_a_run_makes_it_recent_so_it_is_kept():
    store = SessionRuns(max_unpinned=2)
    store.put(key(0), run(0))
    store.put(key(1), run(1))
    assert store.get(key(0)) is not None
    store.put(key(2), run(2))
    assert key(0) in store and key(1) not in store


def test_recent_notice_marks_drops_seen():
    store = SessionRuns(max_unpinned=1)
    store.put(key(0), run(0))
    assert store.dropped_notice(recent_only=True) is None
    store.put(key(1), run(1))
    assert "data0" in store.dropped_notice(recent_only=True)
    assert store.dropped_notice(recent_only=True) is None  # seen
    assert "data0" in store.dropped_notice()  # the full list stays
    assert "1 most recent unpinned runs (1 now)" in store.limit_text()


def test_pinning_an_unknown_run_and_a_zero_bound_are_refused():
    store = SessionRuns()
    with pytest.raises(KeyError):
        store.pin(key(5))
    with pytest.raises(ValueError):
        SessionRuns(max_unpinned=0)
