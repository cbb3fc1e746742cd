"""Process pools that start safely, share the cores and start warm (issue 29 item 2): the
batch's workers (:mod:`toolkit.batch_pool`) and the methods' own pools (MDMCF's groups,
DELTA-Fast's simulations).

[DECISION] Workers start from a forkserver, never by ``fork`` of the pool's owner: the
owner has threads (numpy's OpenBLAS starts one per core when it loads, tqdm a monitor, Dask
an offload thread) and a forked child inherits their locks but not the threads, so a lock
held at the fork stays held forever in the child (issue 29 counted 26 of 41 forks of a test
run with other threads alive). ``spawn`` is safe
too but starts every worker from nothing: each imports numpy, numba, the solvers and the
method's modules and loads its compiled kernels again (1-3 s a worker on 2 cores), which a
batch of sub-second tasks pays once per worker. The forkserver is one process per owner,
started on the first pool with this pool's caps (:mod:`toolkit.threads`) and only the
main thread: it sets OpenBLAS, OpenMP and MKL to one thread, then imports the heavy
modules and warms the kernel sets the pool names (:mod:`toolkit.pool_server`), once; each
worker is a fork of that single-threaded process, warm at no cost. Python 3.14 makes
forkserver the default on Linux for the same reasons.

Each worker, before its first task (:func:`_worker_start`): takes its share of the cores
(:func:`toolkit.threads.apply_share`), warms the kernel sets it still lacks (the server
warms those of the pool that started it; a later pool's other sets load once per worker),
moves what it loaded out of the garbage collector's sight (``gc.freeze``: a worker's
collections then traverse its tasks' objects, not the libraries'), ignores Ctrl-C (the
owner stops the pool: :func:`kill_pool`) and dies with the owner
(:func:`worker_init`): when the owner dies, even by ``kill -9``, its
forkserver sees the last end of its "alive" pipe close (each worker closes its copy,
:func:`_leave_server`) and exits, and the kernel kills the workers (``PR_SET_PDEATHSIG``).
"""
from __future__ import annotations

import gc
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

from toolkit.threads import cores, thread_cap

START_METHOD = "forkserver"
SERVER_ENV = "OCS_POOL_SERVER"     # what toolkit.pool_server loads (JSON), set while it starts
_START_LOCK = threading.Lock()
STARTS = 0      # _worker_start calls in this process (1 in a pool worker: tests read it)


def context(share: int = 1, modules=(), kernels=()):
    """The forkserver context of the pools, its server started now if it is not running
    (with ``share`` for numba, ``modules`` imported and ``kernels`` warmed)."""
    from multiprocessing import forkserver

    ctx = _context()
    spec = json.dumps({"share": share, "modules": list(modules), "kernels": list(kernels)})
    with _START_LOCK:       # the variable is only read by a server starting now
        ctx.set_forkserver_preload(["toolkit.pool_server"])
        before = os.environ.get(SERVER_ENV)
        os.environ[SERVER_ENV] = spec
        try:
            forkserver.ensure_running()
        finally:
            if before is None:
                os.environ.pop(SERVER_ENV, None)
            else:
                os.environ[SERVER_ENV] = before
    return ctx


def _context():
    """forkserver's context; on CPython 3.10-3.13 one whose workers do not import the
    owner's ``__main__`` (:class:`_Popen`)."""
    return _CTX or multiprocessing.get_context(START_METHOD)


try:
    from multiprocessing import context as _mpc
    from multiprocessing import popen_forkserver as _pfs
except ImportError:         # no forkserver on this platform
    _CTX = None
else:
    class _Popen(_pfs.Popen):
        """forkserver's Popen less the owner's ``__main__``: [DECISION] a pool here runs
        only functions of importable modules, so a script that calls a method with its own
        pool (MDMCF at P >= 32) need not guard its top level with ``if __name__ ==
        "__main__"``, as spawn and forkserver otherwise require (the worker would run it)."""

        def _launch(self, process_obj):     # CPython 3.10-3.13's, with the two pops
            import io

            from multiprocessing import forkserver, spawn, util

            prep_data = spawn.get_preparation_data(process_obj._name)
            prep_data.pop("init_main_from_path", None)
            prep_data.pop("init_main_from_name", None)
            buf = io.BytesIO()
            _mpc.set_spawning_popen(self)
            try:
                _mpc.reduction.dump(prep_data, buf)
                _mpc.reduction.dump(process_obj, buf)
            finally:
                _mpc.set_spawning_popen(None)
            self.sentinel, w = forkserver.connect_to_new_process(self._fds)
            _parent_w = os.dup(w)
            self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
            with open(w, "wb", closefd=True) as f:
                f.write(buf.getbuffer())
            self.pid = forkserver.read_signed(self.sentinel)

    class _Process(_mpc.ForkServerProcess):
        @staticmethod
        def _Popen(process_obj):
            return _Popen(process_obj)

    class _Context(_mpc.ForkServerContext):
        Process = _Process

    _CTX = _Context() if (3, 10) <= sys.version_info[:2] <= (3, 13) else None


def process_pool(workers: int, modules=(), kernels=(), share: int | None = None,
                 initializer=None, initargs=()) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes from the forkserver, each capped at ``share`` cores
    (default: this process's cores // workers), with ``modules`` imported and the kernel
    sets ``kernels`` warm before its first task; then ``initializer(*initargs)``."""
    share = thread_cap(cores(), workers) if share is None else max(1, int(share))
    ctx = context(share, modules, kernels)
    return ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_start,
                               initargs=(share, tuple(kernels), os.getpid(), initializer,
                                         initargs))


@contextmanager
def pool(workers: int, **kw):
    """:func:`process_pool` as a context: shut down when the block ends (tasks not yet
    started are cancelled), killed at once when it raises (Ctrl-C included)."""
    ex = process_pool(workers, **kw)
    try:
        yield ex
    except BaseException:
        kill_pool(ex)
        raise
    ex.shutdown(cancel_futures=True)


_SHARED: dict = {}          # (workers, settings) -> a pool kept for the process's life


def shared_pool(workers: int, **kw) -> ProcessPoolExecutor:
    """A :func:`process_pool` kept for the life of this process, for a method that calls
    one on every run (MDMCF's groups): its workers start and warm once, not per call. A
    broken or killed one is replaced on the next call (:func:`drop_shared`)."""
    key = (workers, json.dumps(kw, sort_keys=True, default=str))
    ex = _SHARED.get(key)
    if ex is None or getattr(ex, "_broken", False) or getattr(ex, "_shutdown_thread", False):
        server = _server_pid()
        ex = _SHARED[key] = process_pool(workers, **kw)
        try:
            for f in [ex.submit(os.getpid) for _ in range(workers)]:   # start them all now
                f.result()
        except BaseException:       # a Ctrl-C or a time limit while they start
            drop_shared(ex)
            if _server_pid() != server:     # a server this pool started: none other uses it
                _stop_server()
            raise
    return ex


def _server_pid() -> int | None:
    from multiprocessing import forkserver

    return getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)


def _stop_server() -> None:
    """Kill the forkserver (the next pool starts another): one stopped while it starts
    (importing, warming kernels) would still fork the worker whose start was interrupted,
    which fails on its pool's queues, gone by then, with a traceback on stderr."""
    from multiprocessing import forkserver

    pid = _server_pid()
    try:
        if pid:
            os.kill(pid, signal.SIGKILL)
        forkserver._forkserver._stop()      # closes its pipe, reaps it, forgets it
    except (OSError, AttributeError):
        pass


def drop_shared(ex: ProcessPoolExecutor) -> None:
    """Kill a :func:`shared_pool` (after a Ctrl-C or a failure) and forget it."""
    for key, v in list(_SHARED.items()):
        if v is ex:
            del _SHARED[key]
    kill_pool(ex)


def _worker_start(share, kernels, owner, initializer, initargs) -> None:
    global STARTS
    from toolkit.threads import apply_share

    STARTS += 1
    _leave_server()
    worker_init(owner)
    apply_share(share)
    if kernels:
        from toolkit.kernels import warm

        warm(kernels)
    if initializer is not None:
        initializer(*initargs)
    gc.freeze()         # the modules and kernels: out of the collector's sight (issue 29)


def _leave_server() -> None:
    """Close this worker's copy of the forkserver's "alive" pipe: the server exits when
    every holder has closed it, so the owner's death (even by ``kill -9``) ends the server,
    whose death kills the workers (``PR_SET_PDEATHSIG``). A worker does not use its
    owner's server (a pool it starts gets a server of its own)."""
    from multiprocessing import forkserver

    server = forkserver._forkserver
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is not None and getattr(server, "_forkserver_pid", None) is None:
        try:
            os.close(fd)
        except OSError:
            pass
        server._forkserver_alive_fd = None


def kill_pool(ex: ProcessPoolExecutor) -> None:
    """Stop a process pool now: cancel queued tasks, kill the workers, reap them, and free
    the threads that would wait on the dead workers forever (the interpreter joins both at
    exit): the tasks' feeder thread, blocked on a full pipe that no worker reads (no longer
    joined), and the pool's manager thread, when a worker died while it sent a result
    larger than the pipe holds (this process's end of the results pipe closed, it reads
    EOF, takes the pool as broken and ends)."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    calls = getattr(ex, "_call_queue", None)            # shutdown forgets both
    results = getattr(ex, "_result_queue", None)
    if calls is not None:
        calls.cancel_join_thread()
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            p.kill()
        except (OSError, ValueError):
            pass
    for p in procs:
        p.join(5)
    if results is not None:
        results._writer.close()


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
