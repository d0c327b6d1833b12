"""ESMS on a Dask cluster: same chosen model and score as the local run; a killed worker does not change it."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from xcore.errors import ConfigError
from xcore.esms.rule_preparation import SearchCache
from xcore.esms.search import ESMSSearch
from xcore.esms.templates import DEFAULT_TEMPLATES
from xcore.esms.validation_split import split_targets

distributed = pytest.importorskip("distributed")

TEMPLATES = tuple(t for t in DEFAULT_TEMPLATES if t.name != "path3")
pytestmark = pytest.mark.xdist_group("dask")


@pytest.fixture(scope="module")
def data():
    from xcore.data.generators import lastfm_preset

    return split_targets(lastfm_preset("small", seed=0), "rating", 0.3, seed=0)


@pytest.fixture(scope="module")
def client():
    env = {"PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH", "")) if p)}
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                       env=env)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


CACHE = SearchCache()
"""Grounding and PPLL run where the search object lives; sharing them keeps these tests to the Dask part."""


def search(executor, **kw) -> ESMSSearch:
    return ESMSSearch("rating", rules_per_model=6, iterations=30, block="rated", templates=TEMPLATES, seed=3,
                      n_jobs=2, executor=executor, cache=CACHE, **kw)


@pytest.fixture(scope="module")
def local(data):
    return search("thread").fit(*data)


@pytest.mark.slow
def test_dask_cluster_gives_the_local_model_and_score(data, local, client):
    remote = search(client).fit(*data)
    assert remote.best_score_ == local.best_score_
    assert remote.best_model_.to_text() == local.best_model_.to_text()
    np.testing.assert_array_equal(remote.history_["score"], local.history_["score"])
    assert list(remote.history_["rules"]) == list(local.history_["rules"])


@pytest.mark.slow
def test_a_worker_killed_mid_search_is_retried_with_the_same_result(data, local, client):
    pids = list(client.run(os.getpid).values())
    assert len(pids) == 2
    killed = []

    def kill_after_first(fraction: float, message: str) -> None:
        if "evaluated" in message and not killed:  # the first candidates are back, others are queued
            os.kill(pids[0], signal.SIGKILL)
            killed.append(message)

    remote = search(client).fit(*data, progress=kill_after_first)
    assert killed and killed[0].startswith("ESMS candidate 1/")
    assert remote.best_score_ == local.best_score_
    assert remote.best_model_.to_text() == local.best_model_.to_text()
    np.testing.assert_array_equal(remote.history_["score"], local.history_["score"])
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed worker
    assert pids[0] not in client.run(os.getpid).values()


def test_connect_errors_are_config_errors_naming_the_address():
    from xcore.cluster import connect

    with pytest.raises(ConfigError, match="tcp://127.0.0.1:1"):
        connect("tcp://127.0.0.1:1", timeout=1)
    with pytest.raises(ConfigError, match="no Dask scheduler address"):
        connect("  ")
    with pytest.raises(Exception, match="executor must be"):
        ESMSSearch("rating", executor="cluster")


@pytest.mark.slow
def test_a_cluster_restart_mid_search_resubmits_the_lost_tasks(data, local, client):
    restarted = []

    def restart_after_first(fraction: float, message: str) -> None:
        if "evaluated" in message and not restarted:
            # every worker restarts: queued tasks and the scattered blocks are lost. Not waiting for the
            # workers here: on a loaded machine one took over 120 s to come back, and the search itself
            # must wait for them (its resubmitted tasks run when they are back). A worker that does not shut
            # down within the restart's timeout is removed for good, not restarted (Dask's
            # `Scheduler.restart_workers`): its default 30 s is too short on a loaded machine
            client.restart(timeout=240, wait_for_workers=False)
            restarted.append(message)

    remote = search(client).fit(*data, progress=restart_after_first)
    assert restarted
    assert remote.best_score_ == local.best_score_
    np.testing.assert_array_equal(remote.history_["score"], local.history_["score"])
    client.wait_for_workers(2, timeout=300)  # the cluster is whole again afterwards
