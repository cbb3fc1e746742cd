"""Tasks that report what a worker process sees (tests/test_pools.py): importable by the
workers, which never import the test modules' ``__main__``."""
from __future__ import annotations

import os
import sys


def readings() -> dict:
    """This process's thread caps, read back, and how it was started."""
    import numba

    from toolkit import kernels, pools, threads

    server = sys.modules.get("toolkit.pool_server")
    return {"pid": os.getpid(), "ppid": os.getppid(), "share": os.environ.get(threads.SHARE_ENV),
            "env": {v: os.environ.get(v) for v in (*threads.LIB_VARS, "NUMBA_NUM_THREADS")},
            "numba_config": numba.config.NUMBA_NUM_THREADS,
            "numba_threads": numba.get_num_threads(),
            "solver_threads": threads.solver_threads(), "starts": pools.STARTS,
            "server_threads": None if server is None else server.THREADS,
            "server_error": None if server is None else server.ERROR,
            "warm": sorted(k for k in kernels.KERNELS if kernels.is_warm(k))}


def batch_task(data, src, variant, cfg, key, solutions=None, write=True):
    """toolkit.batch._task's stand-in: a record of what the task was given and saw."""
    return {"instance": src, "method": variant.method, "status": "feasible", "verified": True,
            "threads_given": cfg.threads, **readings()}


def pid_and_starts(_=None) -> tuple[int, int]:
    from toolkit import pools

    return os.getpid(), pools.STARTS


def sleeper(_=None) -> None:
    import time

    time.sleep(120)


def with_inner_pool(_=None) -> None:
    """A method with its own pool, run inside a pool's worker."""
    from toolkit.pools import pool

    with pool(1, share=1) as ex:
        list(ex.map(sleeper, [0]))
