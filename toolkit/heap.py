"""The garbage collector and the allocator in a process that runs many tasks (issue 29
item 3).

Python's cyclic collector traverses every tracked object of a generation when it collects
it; the oldest generation holds what a process loaded (numpy, numba, the solvers, the
method modules: a few hundred thousand objects) and what a batch keeps (its parsed files),
so the full collections during a batch of sub-second tasks cost about 5 ms a task, and
parsing 32 reconfiguration files one after the other cost 10 ms a file instead of 2.
``gc.freeze`` moves the objects alive at that moment to a permanent generation that no
collection traverses; a process that only runs tasks (a pool's forkserver and workers,
:mod:`toolkit.pools`) freezes what it loaded for good, a batch that runs its tasks in the
caller's process does so for the batch's length (:func:`heap_frozen`).

glibc's allocator returns freed memory at the top of its heap to the system once more than
128 KiB is free there, and serves blocks above 128 KiB by ``mmap``: a task that allocates
and frees arrays of a few hundred KiB in turn (DELTA's DAG reduction) gets fresh pages
every time, each zeroed by a page fault (Megatron-177B's 204 tasks: 2,000 faults, 4 of
the 15 ms its instance took to build in a new batch process). glibc raises both thresholds
by itself, but only once it frees a block that large, late in a batch or never;
:func:`keep_freed_memory` sets them where glibc's own adjustment ends (32 MiB, trim at 64
MiB) from the start: 4-5 ms per task less CPU in a first batch of the batch-scaling
benchmark's 64 tasks (issue 29 item 3).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

MMAP_THRESHOLD = 32 << 20       # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD     # as glibc sets it when it raises the mmap threshold
_KEPT = False


def keep_freed_memory() -> bool:
    """Let glibc's allocator keep freed memory for the next task (module docstring): blocks
    up to :data:`MMAP_THRESHOLD` from the heap, and up to :data:`TRIM_THRESHOLD` free at its
    top before any goes back to the system. Once per process; False where the C library is
    not glibc (nothing done). [DECISION] for the process's lifetime, so only in processes
    the toolkit owns (a pool's server and workers, a Dask worker, the CLI's own process in
    ``batch`` and ``gap``); ``toolkit.api.batch`` leaves the caller's allocator as it is
    (call this first to get the same): glibc has no call that gives the adjusting
    thresholds back, and what stays held is at most 64 MiB of memory freed by tasks that
    the next task reuses."""
    global _KEPT
    if _KEPT:
        return True
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version               # glibc only (musl has no mallopt to speak of)
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3     # malloc.h
    _KEPT = bool(mallopt(m_mmap_threshold, MMAP_THRESHOLD)) and \
        bool(mallopt(m_trim_threshold, TRIM_THRESHOLD))
    return _KEPT


@contextmanager
def heap_frozen():
    """Freeze what is alive now until the block ends; yields a function that freezes what
    is alive then too (a batch calls it after each file it parses, and after its first
    task in this process: the modules and kernels that task loaded).
    [DECISION] Frozen objects are still freed when their count drops to zero; only cycles
    among them wait for the block's end, when they return to the oldest generation. Nothing
    is done where something else froze objects already (a pool's worker)."""
    if gc.get_freeze_count():
        yield lambda: None
        return
    gc.freeze()
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()
