"""The local process pool of a batch: workers from the forkserver of :mod:`toolkit.pools`
(one share of the cores each, the batch's modules and kernels loaded once), that ignore
Ctrl-C and die with their parent (even by ``kill -9``: :func:`toolkit.pools.worker_init`), and
stopping the pool now."""
from __future__ import annotations

from concurrent.futures import as_completed

from toolkit.threads import cores, thread_cap  # noqa: F401 - the batch's names for them


def run_pool(task, tasks, cfg, workers: int, collect, solutions=None, modules=(),
             kernels=(), share: int | None = None) -> None:
    """``task(data, src, name, cfg, key, solutions)`` of each of ``tasks`` in ``workers``
    processes, each capped at ``share`` cores (default cores // workers), ``modules``
    imported and the kernel sets ``kernels`` warm in each before its first task; each
    record to ``collect`` as it finishes; Ctrl-C (or a failure here) kills the pool at once."""
    from toolkit.pools import kill_pool, process_pool

    pool = process_pool(workers, modules=modules, kernels=kernels,
                        share=thread_cap(cores(), workers) if share is None else share)
    try:
        futs = [pool.submit(task, *t[:3], cfg, t[3], solutions) for t in tasks]
        for f in as_completed(futs):
            collect(f.result())
    except BaseException:       # Ctrl-C (or a failure here): stop, do not wait
        kill_pool(pool)
        raise
    pool.shutdown()
