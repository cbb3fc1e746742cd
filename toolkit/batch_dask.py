"""The Dask path of a batch (``--scheduler ADDR``): connecting to the scheduler, the solver
thread cap per host, and running the tasks on the cluster (``distributed`` imported lazily)."""
from __future__ import annotations

import threading

from toolkit.batch_pool import thread_cap


class SchedulerError(ValueError):
    """The Dask scheduler cannot be used (bad address, nothing listening, no extra)."""


DASK_CONNECT_S = 5


def dask_client(address: str):
    """A client of the scheduler at ``address``, or SchedulerError within ~DASK_CONNECT_S."""
    if not isinstance(address, str) or not address.strip():
        raise SchedulerError(f"--scheduler must be an address (HOST:PORT), got {address!r}")
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerError("--scheduler needs the 'distributed' extra: "
                             "pip install -e '.[distributed]'") from None
    import logging

    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)    # its connect retries are our one-line error below
    try:
        return Client(address, timeout=f"{DASK_CONNECT_S}s")
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError, ...
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchedulerError(f"--scheduler {address}: no Dask scheduler there ({why})") from None
    finally:
        quiet.setLevel(level)


def dask_thread_cap(client, cores) -> int:
    """Solver threads per task on a Dask cluster: on each host, the Dask worker threads
    (tasks run at once) times the solver threads stay within the host's cores (``cores()``
    run on each worker); the smallest such cap over the hosts (one configuration serves
    every task)."""
    info = client.scheduler_info()["workers"]
    host_cores = client.run(cores)              # worker address -> its CPUs
    per_host: dict[str, list] = {}
    for addr, w in info.items():
        host = w.get("host") or addr
        per_host.setdefault(host, []).append((w.get("nthreads", 1), host_cores.get(addr, 1)))
    caps = [thread_cap(max(c for _, c in ws), sum(n for n, _ in ws)) for ws in per_host.values()]
    return min(caps) if caps else 1


def run_dask(task, tasks, cfg, client, collect, solutions=None, share: int = 1,
             kernels=()) -> None:
    """``task(data, src, name, cfg, key, solutions, write=False)`` of each of ``tasks`` on
    the cluster (each worker process first takes ``share`` cores and warms ``kernels``,
    once: :func:`on_worker`), each record to ``collect`` as it finishes (with its solution,
    which the caller writes); Ctrl-C cancels the tasks not yet done."""
    from distributed import as_completed as dask_completed

    import os

    here = os.getpid()
    futs = [client.submit(on_worker, task, (here, share, tuple(kernels)), *t[:3], cfg, t[3],
                          solutions, pure=False) for t in tasks]
    try:
        for f in dask_completed(futs):
            collect(f.result())
    except KeyboardInterrupt:       # Ctrl-C: queued tasks are not started
        client.cancel(futs)
        raise


_READY: set = set()        # (share, kernels) applied in this worker process
_READY_LOCK = threading.Lock()


def on_worker(task, setup, *args):
    """Run ``task(*args, write=False)`` in a Dask worker. ``setup`` is (the batch's process,
    share, kernels): first, once per worker process and batch (whichever of its threads
    gets there first), cap this process's threads at ``share`` cores
    (:func:`toolkit.threads.apply_share`; the nanny started it with OpenMP, OpenBLAS and
    MKL at one thread already), unless it is the batch's own process (a cluster of threads:
    its caps are the user's), keep freed memory (:func:`toolkit.heap.keep_freed_memory`)
    and warm ``kernels``."""
    import os

    owner, share, kernels = setup
    with _READY_LOCK:
        if setup not in _READY:
            if os.getpid() != owner:
                from toolkit.threads import apply_share

                apply_share(share)
            from toolkit.heap import keep_freed_memory

            keep_freed_memory()
            if kernels:
                from toolkit.kernels import warm

                warm(kernels)
            _READY.add(setup)
    return task(*args, write=False)
