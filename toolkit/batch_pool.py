"""The local process pool of a batch: workers from the forkserver of :mod:`toolkit.pools`
(one share of the cores each, the batch's modules and kernels loaded once), that ignore
Ctrl-C and die with their parent (even by ``kill -9``), and stopping the pool now."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
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


def worker_init(parent: int) -> None:
    """In each local worker: leave Ctrl-C to the parent, and die with it.

    Linux: the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``; the
    parent of a pool's worker is the pool's forkserver, which exits when the pool's owner
    ``parent`` does), whatever the worker is doing, and the same holds for processes the
    worker forks with respect to the worker. Elsewhere a thread checks once a second
    whether the worker was orphaned (its parent process changed or ``parent`` is gone).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ppid = os.getppid()
    linux = _kill_me_with_parent()
    if _orphaned(ppid, parent):     # the parent died before prctl took effect
        os._exit(1)
    if linux:
        os.register_at_fork(after_in_child=_kill_me_with_parent)
    else:
        threading.Thread(target=_watch_parent, args=(ppid, parent), daemon=True,
                         name="watch-parent").start()


def _kill_me_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0) == 0   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _orphaned(ppid: int, parent: int) -> bool:
    if os.getppid() != ppid:
        return True
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return False


def _watch_parent(ppid: int, parent: int) -> None:
    while not _orphaned(ppid, parent):
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGKILL)
