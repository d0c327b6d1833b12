"""Cancel returns control within two seconds on every method (issue 29): each test starts a run sized
to take well over 20 s in a background job (as the pages do), cancels it from this thread about 3 s
into its long loop, and measures how long the job takes to stop. The goal is 2 s on an idle machine;
the bound below adds a margin for a loaded 2-core machine and each test records what it measured.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
import pytest
import scipy.sparse as sp

from xcore.data.samples import load_sample
from xcore.errors import Cancelled
from xcore.methods import REGISTRY, RunCache, run_method
from xcore.runtime import BackgroundJob, Progress

GOAL_SECONDS = 2.0
MARGIN_SECONDS = 2.0
"""Head-room over the goal for a machine shared by other work (the measured latency is recorded)."""
RUN_FOR = 3.0
"""Seconds the long loop runs before the cancel."""

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cancel-latency")]


def cancel_latency(compute: Callable[[Progress], object], marker: str, record_property) -> float:
    """Run `compute(progress)` as a `BackgroundJob`, cancel it `RUN_FOR` seconds after the first
    progress message containing `marker`, and return the seconds from the cancel to the job's end."""
    seen: list[tuple[float, float, str]] = []

    def body(progress: Progress) -> object:
        return compute(lambda f, m: (seen.append((time.perf_counter(), f, m)), progress(f, m)))

    job = BackgroundJob(body)
    deadline = time.perf_counter() + 600
    while not any(marker in m for _, _, m in seen):
        assert not job.done, f"the run ended before {marker!r}: {job.error!r}; last: {seen[-3:]}"
        assert time.perf_counter() < deadline, f"no {marker!r} within 600 s; last: {seen[-3:]}"
        time.sleep(0.02)
    start = next(t for t, _, m in seen if marker in m)
    time.sleep(max(0.0, start + RUN_FOR - time.perf_counter()))
    assert not job.done, f"the run ended within {RUN_FOR} s of {marker!r}: it is not sized to take over 20 s"
    at, fraction, message = seen[-1]
    t = time.perf_counter()
    job.cancel()
    assert job.wait(120), "the job did not stop within 120 s of the cancel"
    latency = time.perf_counter() - t
    record_property("cancel_latency_seconds", round(latency, 3))
    record_property("cancelled_at", f"{fraction:.3f} {message}")
    print(f"cancel latency {latency:.2f} s at {fraction:.1%} ({message})")
    assert job.cancelled and isinstance(job.error, Cancelled), job.error
    assert latency < GOAL_SECONDS + MARGIN_SECONDS, f"cancel took {latency:.2f} s at {message!r}"
    return latency


def method_run(method: str, sample: str, **changes: object) -> Callable[[Progress], object]:
    """`run_method` of `method` on a bundled sample with its default settings changed by `changes`."""
    ds = load_sample(sample)
    spec = REGISTRY[method]
    settings = spec.settings_type.parse(spec.default_settings(ds).to_dict(), **changes)
    cache = RunCache(max_entries=1)

    def compute(progress: Progress) -> object:
        run = run_method(method, ds, settings, progress=progress, cache=cache)
        assert len(cache) == 1
        return run

    return compute


def test_cancel_stops_iexplains_gibbs_sampling(record_property):
    """20,000 samples: the issue's case (the Gibbs phase took 35 s to notice a cancel)."""
    cancel_latency(method_run("mln", "reviews_demo", n_samples=20_000, inference="gibbs"),
                   "Gibbs sampling", record_property)


def test_cancel_stops_the_esms_search(record_property):
    cancel_latency(method_run("esms", "lastfm_demo", iterations=2_000, n_jobs=1), "evaluated", record_property)


def test_cancel_stops_the_classifiers_explanations(record_property):
    cancel_latency(method_run("plkb", "titanic_like", n_trees=50, explain_rows=5_000, k=3),
                   "decisive features", record_property)


def test_cancel_stops_a_classifier_experiment(record_property):
    """The page's pollution curve: every step predicts all test rows with a bigger KB."""
    from xcore.plkb.experiments import pollution_curve

    ds = load_sample("titanic_like")
    spec = REGISTRY["plkb"]
    est = spec.default_settings(ds).replace(n_trees=20).estimator().fit(ds)
    fractions = tuple(np.linspace(0, 40, 200))
    cancel_latency(lambda p: pollution_curve(est.classifier_, est.X_train_, est.y_train_, fractions=fractions, progress=p),
                   "query", record_property)


def test_cancel_stops_drms_cross_validation(record_property):
    cancel_latency(method_run("drm", "trains_michalski10", max_epochs=5_000, folds=10),
                   "epoch", record_property)


def test_cancel_stops_mnlil_epochs(record_property):
    cancel_latency(method_run("nlil", "trains_michalski10", epochs=5_000, rounds=20), "epoch", record_property)


def _random_program(squared: bool, seed: int = 0):
    """A random hinge-loss program large enough that its solver runs for minutes at a tight tolerance."""
    from xcore.psl.program import HingeProgram

    rng = np.random.default_rng(seed)
    n, m = 100_000, 300_000
    A = sp.random(m, n, density=4 / n, format="csr", random_state=rng, data_rvs=lambda k: rng.choice([-1.0, 1.0], k))
    return HingeProgram(A, rng.uniform(-1, 1, m), rng.uniform(0.1, 2.0, m), squared)


@pytest.mark.parametrize("method,squared,marker", [("admm", False, "ADMM iteration"),
                                                   ("lbfgs", True, "L-BFGS-B iteration")])
def test_cancel_stops_psl_map_solvers(method, squared, marker, record_property):
    from xcore.psl.inference import map_inference

    prog = _random_program(squared)
    cancel_latency(lambda p: map_inference(prog, method, tol=1e-14, max_iter=10**6, progress=p), marker,
                   record_property)
