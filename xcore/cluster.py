"""Run many small tasks that share one large read-only input: in threads, processes or on a Dask cluster.

`map_shared(runner, fn, shared, tasks)` returns ``[fn(shared, t) for t in tasks]`` in task order,
whatever runs them, and ships `shared` to each worker ONCE:

- ``None``: in this thread, one task after another;
- ``"thread"`` / ``"process"`` with ``n_workers``: a local pool (threads read `shared` in place;
  each process receives it once, through the pool's initializer);
- a `concurrent.futures.Executor` made by the caller: `shared` goes with every task (the executor
  cannot be told to ship it once);
- a Dask ``distributed.Client``: `shared` is scattered to every worker (``broadcast=True``), tasks
  are submitted with the client's futures API and only their results come back. A task whose worker
  dies is rescheduled by Dask; when futures are lost outright (``client.restart()``) the lost tasks
  are submitted again, re-scattering `shared` when it was lost too, up to `attempts` rounds.

`connect(address)` opens a Client on a scheduler address and turns every failure into a
`ConfigError` naming the address (the app shows it with ``st.error``). Dask is an optional extra:
``pip install -e ".[dask]"``.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import uuid
from concurrent.futures import CancelledError, Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, Callable, Sequence

from xcore.errors import ConfigError, XcoreError
from xcore.optional_deps import import_optional
from xcore.runtime import limited_threads

Tick = Callable[[int], None]
"""``tick(done)``: called as results arrive, with the number of tasks done so far."""


# ---------------------------------------------------------------------- Dask
def is_dask_client(obj: Any) -> bool:
    """True for a ``distributed.Client`` (checked without importing Dask when it is not loaded)."""
    mod = sys.modules.get("distributed")
    return mod is not None and isinstance(obj, mod.Client)


def connect(address: str, timeout: float = 10.0):
    """A Dask ``Client`` on the scheduler at `address` (``tcp://host:8786``); `ConfigError` when it fails."""
    address = (address or "").strip()
    if not address:
        raise ConfigError("no Dask scheduler address given (leave it empty to run locally)")
    distributed = import_optional("distributed", "a Dask cluster")  # optional extra: only when asked for
    try:
        return distributed.Client(address, timeout=timeout, set_as_default=False)
    except Exception as e:  # noqa: BLE001 - OSError, TimeoutError, ValueError, CommClosedError...
        raise ConfigError(f"cannot connect to the Dask scheduler at {address!r}: {type(e).__name__}: {e}") from None


def _dask_errors():
    """Exceptions meaning "the cluster lost this task or its input" (retry), not "the task failed"."""
    distributed = import_optional("distributed", "a Dask cluster")  # optional extra, in use once a client is
    errors: list[type] = [CancelledError, distributed.KilledWorker]
    future_cancelled = getattr(import_optional("distributed.client"), "FutureCancelledError", None)  # newer distributed
    if future_cancelled is not None:
        errors.append(future_cancelled)
    return tuple(errors)


def _map_dask(client, fn: Callable, shared: Any, tasks: Sequence, tick: Tick, attempts: int) -> list:
    """Map `fn` over `tasks` on a Dask client, retrying tasks the cluster lost, up to `attempts` rounds."""
    as_completed = import_optional("distributed", "a Dask cluster").as_completed  # optional extra, client in use

    lost_errors = _dask_errors()
    out: list = [None] * len(tasks)
    pending = list(range(len(tasks)))
    shared_future = None
    done = 0
    for _round in range(attempts):
        if shared_future is None or shared_future.status != "finished":
            shared_future = client.scatter(shared, broadcast=True, hash=False)
        token = uuid.uuid4().hex[:12]
        futures = {client.submit(fn, shared_future, tasks[i], key=f"xcore-task-{token}-{i}", pure=False): i
                   for i in pending}
        lost: list[int] = []
        for fut in as_completed(list(futures)):
            i = futures[fut]
            try:
                out[i] = fut.result()
            except lost_errors:
                lost.append(i)
                continue
            done += 1
            tick(done)
        for fut in futures:
            fut.release()
        if not lost:
            return out
        pending = sorted(lost)
    raise XcoreError(f"the Dask cluster lost {len(pending)} of {len(tasks)} tasks {attempts} times in a row; "
                     "are its workers running out of memory?")


# ---------------------------------------------------------------------- local pools
_SHARED: dict[str, Any] = {}
"""In a process-pool worker: the shared input it received once (by token)."""
_WORKER_LIMIT: list = []
"""The entered BLAS thread limit of a process worker, kept referenced (a dropped one would be undone)."""


def _process_init(token: str, shared: Any) -> None:
    """Process workers: keep the shared input; one BLAS thread each for the worker's life."""
    _SHARED[token] = shared
    limit = limited_threads(1)
    limit.__enter__()
    _WORKER_LIMIT.append(limit)


def _process_call(job: tuple) -> Any:
    token, fn, task = job
    return fn(_SHARED[token], task)


def _shared_call(job: tuple) -> Any:
    fn, shared, task = job
    return fn(shared, task)


def mp_context():
    """forkserver where available (no fork of a threaded parent), else spawn."""
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


def map_shared(runner: str | Executor | Any | None, fn: Callable[[Any, Any], Any], shared: Any,
               tasks: Sequence, tick: Tick | None = None, n_workers: int = 1, attempts: int = 3) -> list:
    """``[fn(shared, t) for t in tasks]`` on `runner` (see the module docstring); results in task order.

    `fn` must be a module-level function for processes and Dask (it is pickled by reference).
    """
    tick = tick or (lambda done: None)
    tasks = list(tasks)
    if not tasks:
        return []
    if is_dask_client(runner):
        return _map_dask(runner, fn, shared, tasks, tick, attempts)
    if runner is None or (isinstance(runner, str) and n_workers <= 1):
        out = []
        for t in tasks:
            out.append(fn(shared, t))
            tick(len(out))
        return out
    if isinstance(runner, Executor):
        return _in_order(runner, _shared_call, [(fn, shared, t) for t in tasks], tick)
    if runner == "thread":
        with ThreadPoolExecutor(n_workers) as pool:
            return _in_order(pool, _shared_call, [(fn, shared, t) for t in tasks], tick)
    if runner == "process":
        token = uuid.uuid4().hex
        with ProcessPoolExecutor(n_workers, mp_context=mp_context(), initializer=_process_init,
                                 initargs=(token, shared)) as pool:
            return _in_order(pool, _process_call, [(token, fn, t) for t in tasks], tick)
    raise ConfigError(f"executor must be 'thread', 'process', a concurrent.futures Executor or a Dask Client, "
                      f"got {runner!r}")


def _in_order(pool: Executor, call: Callable[[Any], Any], jobs: list, tick: Tick) -> list:
    """Results of `call(job)` on `pool` in job order, ticking as each arrives.

    If a task fails or `tick` raises (a cancelled progress), the tasks not yet started are cancelled
    before the error propagates: leaving the pool's block then waits only for the running ones.
    """
    futures = [pool.submit(call, job) for job in jobs]
    try:
        out = []
        for f in futures:
            out.append(f.result())
            tick(len(out))
        return out
    except BaseException:
        for f in futures:
            f.cancel()
        raise
