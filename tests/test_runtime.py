"""xcore.runtime: progress adapters map ranges; thread limits are restored after their block."""

from __future__ import annotations

import pytest

from xcore.runtime import counted, limited_threads, null_progress, scaled, torch_threads


def test_null_progress_ignores_reports():
    assert null_progress(0.5, "half") is None


def test_scaled_maps_sub_task_range():
    seen: list[tuple[float, str]] = []
    report = scaled(lambda f, m: seen.append((f, m)), 0.2, 0.6)
    for f in (0.0, 0.5, 1.0):
        report(f, f"at {f}")
    assert [round(f, 9) for f, _ in seen] == [0.2, 0.4, 0.6]
    assert seen[1][1] == "at 0.5"


def test_scaled_nests_and_none_is_null():
    seen: list[float] = []
    inner = scaled(scaled(lambda f, m: seen.append(f), 0.5, 1.0), 0.0, 0.5)
    inner(1.0, "")
    assert seen == [0.75]
    assert scaled(None, 0.1, 0.2) is null_progress


def test_counted_adapts_done_total():
    seen: list[float] = []
    report = counted(lambda f, m: seen.append(f), 0.0, 0.5)
    report(0, 4, "start")
    report(2, 4, "half")
    report(4, 4, "done")
    report(0, 0, "empty")  # no division by zero
    assert seen == [0.0, 0.25, 0.5, 0.0]
    counted(None)(1, 2, "ignored")


def test_limited_threads_restores_limits():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import numpy  # noqa: F401  (loads the BLAS library threadpoolctl inspects)

    before = [(p["internal_api"], p["num_threads"]) for p in threadpoolctl.threadpool_info()]
    with limited_threads(1):
        inside = threadpoolctl.threadpool_info()
        assert all(p["num_threads"] == 1 for p in inside)
    after = [(p["internal_api"], p["num_threads"]) for p in threadpoolctl.threadpool_info()]
    assert after == before


def test_limited_threads_restores_after_error():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = [p["num_threads"] for p in threadpoolctl.threadpool_info()]
    with pytest.raises(RuntimeError), limited_threads(1):
        raise RuntimeError("boom")
    assert [p["num_threads"] for p in threadpoolctl.threadpool_info()] == before


def test_torch_threads_restores_previous_value():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    target = 1 if before != 1 else 2
    with torch_threads(target):
        assert torch.get_num_threads() == target
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError), torch_threads(target):
        raise ValueError("boom")
    assert torch.get_num_threads() == before
