"""The compiled (numba) kernels: one list of kernel sets and their warm-ups, the clock of
compilation (issue 28 item 3: times are the algorithm's), and compilation out of the
user's way (issue 29 item 1).

numba compiles a kernel on its first call with each signature (argument types, array
layouts), or loads the machine code from its disk cache (toolkit.kernel_cache: a per-user
folder, ``~/.cache/ocs-opt/numba`` or under ``NUMBA_CACHE_DIR``, keyed by the kernels'
sources): 15-100 s per set with an empty cache on 2 cores, 0.35-0.55 s per process from
the cache. ``make install`` (and ``python -m toolkit.kernels`` after a ``pip install``)
fills the cache for every set, so no run compiles; a process that does (a new host, an
edited kernel) says so once on stderr (:func:`warm`). A method that runs compiled code
declares the sets it uses (``Method.kernels``); ``toolkit.registry.preload`` warms them
before ``run_task`` starts its clock, once per process (solve, batch and Dask workers, the
API), so ``runtime_s`` and the OCS algorithm time that ``lumos-sim`` charges hold no
compilation.

A warm-up calls its kernels through the Python entry points the methods call, on tiny
inputs of the same types, so it compiles exactly the signatures a real run uses
(tests/test_kernels.py: a run after its warm-up compiles nothing).

[DECISION] JIT with a cache filled at install, not ahead-of-time code. numba's AOT
compiler (``numba.pycc``) is deprecated, needs a C compiler at install and an explicit
signature per entry point; rewriting the kernels (42 functions, about 1,700 lines over six
files) in C or Cython would fork them from the Python reference and add a compiler to the
install; no library does ejection chains or the warm-started Jonker-Volgenant rounds. With
the cache filled, a new process pays numba's import and its first cache load (numba's
registries, with scipy.linalg's BLAS module loaded alone: toolkit.kernel_cache) and the
signatures it runs: 0.34-0.57 s more than a warm solve on an idle 2-core machine, within
the issue's 1.5 s (results/cold_start.md); the kernels stay one Python source.

:func:`compile_clock` measures what this thread still spends in numba's compiler (a
signature a warm-up missed): ``run_task`` leaves it out of ``runtime_s`` (reported as
``compile_s``), the ``lumos-sim`` controller out of the charged algorithm time.
"""
from __future__ import annotations

import functools
import importlib
import subprocess
import sys
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent      # the child's working folder

# set -> (module, warm-up function): the one list of compiled kernels
KERNELS: dict[str, tuple[str, str]] = {
    "spectra": ("heuristics.spectra.jit", "warm_up"),               # Decompose's rounds
    "lumos-chains": ("heuristics.lumos.mdmcf.eject", "warm_up_chains"),   # MDMCF's ejection chains
    "lumos-lns": ("heuristics.lumos.mdmcf.eject", "warm_up_lns"),         # MDMCF's LNS
    "lumos-triple": ("heuristics.lumos.mdmcf.triple", "warm_up"),         # lumos-resplit-study only
    "a2a-relabel": ("heuristics.a2a.relabel", "warm_up"),           # a2a relabeling search
    "lumos-probe": ("heuristics.lumos.sim.probe_kernel", "warm_up"),  # probing routing
}

_WARM: set[str] = set()         # sets warm in this process (forked children inherit both)
_LOCK = threading.Lock()


def warm(names, deadline: float | None = None) -> float:
    """Compile or load the kernel sets ``names`` not yet warm in this process; returns the
    seconds spent (0.0 when all were warm). A set the cache lacks is compiled into it, by
    one process per machine at a time (toolkit.kernel_cache.filling), after one note on
    stderr, the first time this process compiles anything. With ``deadline`` (a run's time
    limit, as a ``time.perf_counter()`` time), such a set is compiled by a child process
    stopped at the deadline (TimeoutError): a compilation interrupted in this process could
    leave numba broken (issue 28 item 4)."""
    todo = [n for n in dict.fromkeys(names) if n not in _WARM]
    for n in todo:
        if n not in KERNELS:
            raise KeyError(f"unknown kernel set {n!r} (known: {', '.join(KERNELS)})")
    if not todo:
        return 0.0
    from toolkit import kernel_cache

    t0 = time.perf_counter()
    with _LOCK:                 # Dask worker threads: one warm-up per set
        for n in todo:
            if n not in _WARM:
                module, fn = KERNELS[n]
                warm_up = getattr(importlib.import_module(module), fn)
                if deadline is not None:
                    _warm_by_deadline(n, warm_up, deadline)
                else:
                    with _cold_note(n), kernel_cache.filling(n, lambda: _note(n, waiting=True)):
                        warm_up()
                _WARM.add(n)
    return time.perf_counter() - t0


_NOTED = False                  # the cold-cache note is printed once per process


def _note(name: str, waiting: bool = False) -> None:
    """The one cold-cache note of this process, on stderr (toolkit.progress.note)."""
    global _NOTED
    if _NOTED:
        return
    _NOTED = True
    from toolkit.kernel_cache import folder
    from toolkit.progress import note

    what = "waiting for another process that compiles" if waiting else "compiling"
    note(f"note: {what} the numba kernels of {name} (toolkit.kernels) into {folder()}: "
         f"once per machine and version, 10-90 s per set; `make install` or `python -m "
         f"toolkit.kernels` does it ahead of any run")


@contextmanager
def _listening(kind: str, handler):
    """Forward numba's ``kind`` events to ``handler`` (its ``on_start(event)`` and
    ``on_end(event)``) during the block."""
    from numba.core import event

    listener = _forward()(handler)
    event.register(kind, listener)
    try:
        yield
    finally:
        event.unregister(kind, listener)


class _OnCompile:
    """The cold-cache note, on the start of a real compilation (not a cache load)."""

    def __init__(self, name: str):
        self.name = name

    def on_start(self, event) -> None:
        _note(self.name)

    def on_end(self, event) -> None:
        pass


def _cold_note(name: str):
    """Note (once per process) when the block compiles (numba's ``numba:compile`` event)."""
    return nullcontext() if _NOTED else _listening("numba:compile", _OnCompile(name))


class _Cold(Exception):
    """numba is about to compile (the machine code is not in the cache)."""


class _NoCompile:
    """Stops a warm-up (``_Cold``) at the start of a real compilation in this thread, before
    the compiler runs (numba's state is intact then)."""

    def __init__(self, name: str):
        self.name, self.tid = name, threading.get_ident()

    def on_start(self, event) -> None:
        if threading.get_ident() == self.tid:
            raise _Cold(self.name)

    def on_end(self, event) -> None:
        pass


def _warm_by_deadline(name: str, warm_up, deadline: float) -> None:
    """``warm_up()`` here if it only loads from the cache; else the set is compiled into the
    cache by ``python -m toolkit.kernels NAME`` in a child process killed at ``deadline``
    (TimeoutError), then loaded here."""
    try:
        with _listening("numba:compile", _NoCompile(name)):
            warm_up()
        return
    except _Cold:
        _note(name)
    try:
        subprocess.run([sys.executable, "-m", "toolkit.kernels", name], cwd=ROOT,
                       timeout=max(deadline - time.perf_counter(), 0.0), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"compiling the {name} kernels (empty numba cache) took longer "
                           "than the time limit") from None
    warm_up()                   # from the cache the child filled


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
    with _listening("numba:compiler_lock", clock):
        yield clock


@functools.lru_cache(maxsize=None)
def _forward():
    """A numba event listener class that forwards to a handler (:class:`CompileTime`,
    :class:`_OnCompile`)."""
    from numba.core import event

    class Forward(event.Listener):
        def __init__(self, handler):
            self.handler = handler

        def on_start(self, e):
            self.handler.on_start(e)

        def on_end(self, e):
            self.handler.on_end(e)
    return Forward


def main(argv=None) -> None:
    """Warm every kernel set, or those named (compile them into the cache, or load them);
    one line per set on stderr, nothing on stdout."""
    import argparse

    from toolkit.kernel_cache import folder

    ap = argparse.ArgumentParser(prog="python -m toolkit.kernels", description=main.__doc__)
    ap.add_argument("sets", nargs="*", metavar="SET",
                    help=f"kernel sets (default: all of {', '.join(KERNELS)})")
    args = ap.parse_args(argv)
    for name in args.sets:
        if name not in KERNELS:
            ap.error(f"unknown kernel set {name!r} (known: {', '.join(KERNELS)})")
    for name in args.sets or KERNELS:
        t = warm([name])
        print(f"kernels {name}: {t:.1f} s ({folder()})", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
