"""The garbage collector in a process that runs many tasks (issue 29 item 3).

Python's cyclic collector traverses every tracked object of a generation when it collects
it; the oldest generation holds what a process loaded (numpy, numba, the solvers, the
method modules: a few hundred thousand objects) and what a batch keeps (its parsed files),
so the full collections during a batch of sub-second tasks cost about 5 ms a task, and
parsing 32 reconfiguration files one after the other cost 10 ms a file instead of 2.
``gc.freeze`` moves the objects alive at that moment to a permanent generation that no
collection traverses; a process that only runs tasks (a pool's forkserver and workers,
:mod:`toolkit.pools`) freezes what it loaded for good, a batch that runs its tasks in the
caller's process does so for the batch's length (:func:`heap_frozen`).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


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
