"""The compiled (numba) kernels: one list of kernel sets and their warm-ups, and the clock
of compilation (issue 28 item 3: times are the algorithm's).

numba compiles a kernel on its first call with each signature (argument types, array
layouts), or loads the machine code from its disk cache (``NUMBA_CACHE_DIR``; by default
``__pycache__`` beside the module): 0.3-0.5 s per process from the cache, 6-30 s per set
with an empty cache on 2 cores. A method that runs compiled code declares the sets it uses
(``Method.kernels``); ``toolkit.registry.preload`` warms them before ``run_task`` starts
its clock, once per process (solve, batch and Dask workers, the API), so ``runtime_s`` and
the OCS algorithm time that ``lumos-sim`` charges hold no compilation.

A warm-up calls its kernels through the Python entry points the methods call, on tiny
inputs of the same types, so it compiles exactly the signatures a real run uses
(tests/test_kernels.py: a run after its warm-up compiles nothing). ``python -m
toolkit.kernels`` warms every set, e.g. to fill the cache ahead of any run.

:func:`compile_clock` measures what this thread still spends in numba's compiler (a
signature a warm-up missed): ``run_task`` leaves it out of ``runtime_s`` (reported as
``compile_s``), the ``lumos-sim`` controller out of the charged algorithm time.
"""
from __future__ import annotations

import functools
import importlib
import sys
import threading
import time
from contextlib import contextmanager

# set -> (module, warm-up function): the one list of compiled kernels
KERNELS: dict[str, tuple[str, str]] = {
    "spectra": ("heuristics.spectra_jit", "warm_up"),               # Decompose's rounds
    "lumos-chains": ("heuristics.lumos_eject", "warm_up_chains"),   # MDMCF's ejection chains
    "lumos-lns": ("heuristics.lumos_eject", "warm_up_lns"),         # MDMCF's LNS
    "lumos-triple": ("heuristics.lumos_triple", "warm_up"),         # lumos-resplit-study only
}

_WARM: set[str] = set()         # sets warm in this process (forked children inherit both)
_LOCK = threading.Lock()


def warm(names) -> float:
    """Compile or load the kernel sets ``names`` not yet warm in this process; returns the
    seconds spent (0.0 when all were warm)."""
    todo = [n for n in dict.fromkeys(names) if n not in _WARM]
    for n in todo:
        if n not in KERNELS:
            raise KeyError(f"unknown kernel set {n!r} (known: {', '.join(KERNELS)})")
    if not todo:
        return 0.0
    t0 = time.perf_counter()
    with _LOCK:                 # Dask worker threads: one warm-up per set
        for n in todo:
            if n not in _WARM:
                module, fn = KERNELS[n]
                getattr(importlib.import_module(module), fn)()
                _WARM.add(n)
    return time.perf_counter() - t0


def is_warm(name: str) -> bool:
    return name in _WARM


class CompileTime:
    """Seconds spent in numba's compiler lock (compiling, or loading cached machine code)
    by the thread that created it, while installed (:func:`compile_clock`)."""

    def __init__(self):
        self.seconds = 0.0
        self.events = 0             # outermost compiler-lock sections
        self._tid = threading.get_ident()
        self._depth = 0
        self._t0 = 0.0

    def on_start(self, event) -> None:
        if threading.get_ident() == self._tid:
            if self._depth == 0:
                self._t0 = time.perf_counter()
            self._depth += 1

    def on_end(self, event) -> None:
        if threading.get_ident() == self._tid and self._depth > 0:
            self._depth -= 1
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._t0
                self.events += 1


@contextmanager
def compile_clock():
    """Yield a :class:`CompileTime` of the block. Measures only once numba is loaded (a
    method that declares its kernels has loaded it in its warm-up); never imports it."""
    clock = CompileTime()
    if "numba" not in sys.modules:
        yield clock
        return
    from numba.core import event

    listener = _forward()(clock)
    event.register("numba:compiler_lock", listener)
    try:
        yield clock
    finally:
        event.unregister("numba:compiler_lock", listener)


@functools.lru_cache(maxsize=None)
def _forward():
    """A numba event listener class that forwards to a :class:`CompileTime`."""
    from numba.core import event

    class Forward(event.Listener):
        def __init__(self, clock: CompileTime):
            self.clock = clock

        def on_start(self, e):
            self.clock.on_start(e)

        def on_end(self, e):
            self.clock.on_end(e)
    return Forward


def main() -> None:
    """Warm every kernel set (compile into the numba cache); one line per set on stderr."""
    for name in KERNELS:
        t = warm([name])
        print(f"kernels {name}: {t:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
