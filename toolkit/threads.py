"""One thread per worker share (issue 29 item 2): the cores a worker process may use, and the
caps that keep every thread pool in it within them.

W workers on C cores give each worker the share ``max(1, C // W)`` (:func:`thread_cap`).
In a worker process (the local pool of :mod:`toolkit.pools`, a Dask worker through
:class:`toolkit.batch_dask.ThreadShare`) :func:`apply_share` caps, before any task runs:

* numba's thread pool: ``NUMBA_NUM_THREADS`` and ``numba.config`` (its threads start at the
  first parallel kernel; the toolkit's kernels are serial, so they never start);
* OpenMP, OpenBLAS, MKL, Accelerate, numexpr (the variables of :data:`LIB_VARS`, which a
  library reads when it loads): at most the share. [DECISION] In practice one thread: a
  pool worker's numpy/scipy BLAS was loaded in the forkserver with one (a process that
  forks must have no other threads, :mod:`toolkit.pools`), a Dask nanny starts its
  workers with OpenMP, OpenBLAS and MKL at one (its ``pre-spawn-environ``), and the
  command line starts with one (:func:`one_blas_thread`): the toolkit's BLAS calls are
  small, its hot loops are numba kernels and solver calls;
* solver threads: Gurobi's ``Threads`` and HiGHS' ``threads`` are the share when a run sets
  none (:func:`solver_threads`, read by ``models.backend.solve``; a batch also caps
  ``--threads`` to it);
* a method's own process pool (MDMCF's groups, DELTA-Fast's simulations): at most the
  share processes (:func:`share`).

A process outside any pool has the share of the whole machine and no caps.
"""
from __future__ import annotations

import os
import sys

SHARE_ENV = "OCS_CORE_SHARE"        # set in worker processes: their share of the cores
LIB_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
            "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def cores() -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup v2 CPU quota (a
    container limited to 16 CPUs on a larger host sees the host's CPUs in its mask)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = cgroup_quota()
    return max(1, min(n, quota)) if quota else n


def cgroup_quota(path: str = "/sys/fs/cgroup/cpu.max") -> int | None:
    """CPUs allowed by the cgroup v2 quota (``cpu.max``: ``QUOTA PERIOD``, rounded up), or
    None where there is none (``max``) or no such file."""
    try:
        with open(path) as fh:
            quota, period = fh.read().split()[:2]
        if quota == "max":
            return None
        return -(-int(quota) // int(period))
    except (OSError, ValueError):
        return None


def thread_cap(cores_: int, concurrent: int) -> int:
    """Threads per task so that ``concurrent`` tasks use at most ``cores_`` cores."""
    return max(1, cores_ // max(1, concurrent))


def share() -> int:
    """The cores this process may use: its worker share, else all of :func:`cores`."""
    try:
        return max(1, int(os.environ[SHARE_ENV]))
    except (KeyError, ValueError):
        return cores()


def solver_threads() -> int | None:
    """Solver threads for a solve that sets none: the share in a worker process, else None
    (the solver's own default)."""
    return share() if SHARE_ENV in os.environ else None


def one_blas_thread() -> None:
    """OpenMP, OpenBLAS, MKL and friends at one thread in this process unless the user's
    environment says otherwise; call it before anything imports numpy (the command line
    does). [DECISION] The toolkit's BLAS calls are small (vectors, 10^4-10^5-entry dot
    products in the checkers), where a second BLAS thread only adds its wake-up: on 2 busy
    cores a 32,768-entry dot product took 21 ms with OpenBLAS's default threads and 5 us
    with one (issue 29); the solvers and the numba kernels have their own threads. A batch
    of one worker then runs its tasks as fast as each worker of a pool does."""
    for v in LIB_VARS:
        os.environ.setdefault(v, "1")


def thread_env(n: int) -> dict[str, str]:
    """The environment variables that cap a process's thread pools at ``n``."""
    return {SHARE_ENV: str(n), "NUMBA_NUM_THREADS": str(n), **{v: str(n) for v in LIB_VARS}}


def apply_share(n: int) -> None:
    """Cap this process at ``n`` cores (see the module docstring): its environment (what a
    library loaded later and a child process read; a variable of :data:`LIB_VARS` already
    at 1..n stays) and numba, if loaded, whose thread pool takes ``n`` threads when it
    starts (or, started already, uses ``n`` of them)."""
    n = max(1, int(n))
    env = thread_env(n)
    for v in LIB_VARS:          # a cap: a lower value set already stays (a pool's server: 1)
        if os.environ.get(v, "").isdigit() and 0 < int(os.environ[v]) <= n:
            env.pop(v)
    os.environ.update(env)
    if "numba" not in sys.modules:
        return
    import numba
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", False):        # its threads run already
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    else:       # the pool size numba read from the environment when it was imported
        numba.config.NUMBA_NUM_THREADS = parallel.NUM_THREADS = n
        parallel.snt_check = parallel.gen_snt_check()       # set_num_threads' 1..n check


def thread_count() -> int:
    """Threads of this process now (Linux: /proc; elsewhere the Python threads)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()
