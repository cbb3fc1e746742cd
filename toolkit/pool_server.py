"""What the forkserver of :mod:`toolkit.pools` loads before it forks any worker: imported
there only (its preload), it acts only while ``OCS_POOL_SERVER`` names what to load.

In order: Ctrl-C ignored while loading (the owner stops its pools); OpenBLAS, OpenMP, MKL
and numexpr at one thread and numba at the pool's share (:mod:`toolkit.threads`), before
anything imports numpy; glibc's allocator told to keep freed memory
(:func:`toolkit.heap.keep_freed_memory`); then the batch's modules and the named ones
imported and the named kernel sets warmed, and all of it moved out of the garbage
collector's sight (``gc.freeze``: the workers' collections then skip the libraries'
objects, issue 29 item 3). A failure here costs only time: the workers import and warm what they need
themselves. ``THREADS`` is the server's thread count when it was done (1: nothing
started a thread, so forking it is safe); every worker inherits the value.
"""
from __future__ import annotations

import gc
import importlib
import json
import os
import signal

from toolkit.threads import LIB_VARS, thread_count

SPEC = json.loads(os.environ.pop("OCS_POOL_SERVER", "null") or "null")
ERROR = ""
if SPEC:
    _sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.environ.update({v: "1" for v in LIB_VARS})
        os.environ["NUMBA_NUM_THREADS"] = str(SPEC.get("share", 1))
        from toolkit.heap import keep_freed_memory

        keep_freed_memory()             # the workers inherit it (toolkit.heap)
        for _mod in ("numpy", "toolkit.batch"):
            importlib.import_module(_mod)
        from toolkit.registry import problems

        problems()                      # the problem modules (light: they bind lazily)
        for _mod in SPEC.get("modules", ()):
            importlib.import_module(_mod)
        if SPEC.get("kernels"):
            from toolkit.kernels import warm

            warm(SPEC["kernels"])
    except Exception as _exc:  # noqa: BLE001 - the workers load what they need themselves
        ERROR = f"{type(_exc).__name__}: {_exc}"
    finally:
        signal.signal(signal.SIGINT, _sigint)
    gc.freeze()         # what it loaded: never traversed by a worker's collections (issue 29)
THREADS = thread_count()
