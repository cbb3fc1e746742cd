"""A piece of a test in a fresh interpreter, for the pieces that start threads that outlive
them (a Dask cluster's offload thread) or load compiled code whose crash would end pytest.

Pytest's own process then stays single-threaded, so the process pools that tests start
from it never fork while other threads are alive (issue 29: 16 of its forks did, after a
Dask test). ``spawn`` starts the interpreter (fork + exec: nothing of pytest's state); the
function is pickled by reference, so it is a module-level function of a test module.
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

HANG_S = 600.0      # a piece still running after this is hung (a guard, not a target)


def run_isolated(fn, *args, timeout: float = HANG_S):
    """``fn(*args)`` in a fresh spawned interpreter: its result, or its exception raised
    here (a crash there: BrokenProcessPool; a hang: TimeoutError, the interpreter killed)."""
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        return pool.submit(fn, *args).result(timeout=timeout)
    except BaseException:
        for proc in list(pool._processes.values()):    # a hung or broken piece: gone now
            proc.kill()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
