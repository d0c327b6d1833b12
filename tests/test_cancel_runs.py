"""Cancelling a run: `cancellable` progress raises `Cancelled`; a real ESMS search stops early and caches nothing."""

from __future__ import annotations

import time

import pytest

from xcore.data.samples import load_sample
from xcore.errors import Cancelled, XcoreError
from xcore.esms.settings import ESMSSettings
from xcore.methods import RunCache, run_key, run_method
from xcore.runtime import BackgroundJob, cancellable


def test_cancellable_forwards_until_the_flag_then_raises():
    seen: list[float] = []
    flag = {"stop": False}
    report = cancellable(lambda f, m: seen.append(f), lambda: flag["stop"])
    report(0.1, "a")
    flag["stop"] = True
    with pytest.raises(Cancelled, match="cancelled at 20%"):
        report(0.2, "b")
    assert seen == [0.1] and issubclass(Cancelled, XcoreError)


def test_background_job_returns_its_result_or_its_error():
    ok = BackgroundJob(lambda p: (p(0.5, "half"), 42)[1])
    assert ok.wait(10) and ok.result == 42 and ok.error is None and ok.fraction == 0.5
    bad = BackgroundJob(lambda p: 1 / 0)
    assert bad.wait(10) and isinstance(bad.error, ZeroDivisionError) and not bad.cancelled


@pytest.mark.slow
def test_cancel_stops_a_real_esms_search_early_and_keeps_no_run():
    ds = load_sample("friends_smokers")
    settings = ESMSSettings(target="smokes", iterations=2_000, rules_per_model=4, n_jobs=1)
    cache = RunCache(max_entries=4)
    messages: list[str] = []
    job = BackgroundJob(lambda p: run_method("esms", ds, settings, cache=cache,
                                             progress=lambda f, m: (messages.append(m), p(f, m))))
    deadline = time.perf_counter() + 120
    while not any("evaluated" in m for m in messages):  # deep inside the search: candidates being scored
        assert time.perf_counter() < deadline and not job.done, messages[-3:]
        time.sleep(0.05)
    evaluated = sum("evaluated" in m for m in messages)
    t = time.perf_counter()
    job.cancel()
    assert job.wait(30), "the search did not stop within 30 s of the cancel"
    assert time.perf_counter() - t < 10
    assert job.cancelled and job.result is None
    assert sum("evaluated" in m for m in messages) < evaluated + 200 < 2_000  # far from the full search
    assert len(cache) == 0 and cache.get(run_key("esms", ds, settings)) is None
    # the same settings run again to the end afterwards (nothing half-done was left behind)
    small = settings.replace(iterations=3)
    again = BackgroundJob(lambda p: run_method("esms", ds, small, cache=cache, progress=p))
    assert again.wait(120) and again.error is None and len(cache) == 1


def _slow_square(shared: float, x: int) -> float:
    time.sleep(shared)
    return x * x


@pytest.mark.parametrize("runner", ["thread", "executor"])
def test_a_cancel_during_map_shared_does_not_wait_for_the_queued_tasks(runner):
    """A cancel raised by the progress tick used to wait for every queued task (the pool's block
    waited for all submitted work); now the queued tasks are dropped and only running ones finish."""
    from concurrent.futures import ThreadPoolExecutor

    from xcore.cluster import map_shared

    def tick(done: int) -> None:
        if done == 2:
            raise Cancelled("cancelled at 1%")

    pool = ThreadPoolExecutor(2) if runner == "executor" else "thread"
    t = time.perf_counter()
    with pytest.raises(Cancelled):
        map_shared(pool, _slow_square, 0.2, list(range(40)), tick, n_workers=2)
    if runner == "executor":
        pool.shutdown(wait=True)
    assert time.perf_counter() - t < 2.0  # 40 tasks x 0.2 s on 2 threads would take 4 s
    assert map_shared("thread", _slow_square, 0.0, [1, 2, 3], n_workers=2) == [1, 4, 9]
