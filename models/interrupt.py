"""Ctrl-C during a solve: stop the solver, keep its incumbent, report the run as interrupted.

Left alone, the solvers get SIGINT wrong for a command line: Gurobi installs its own
handler for the length of ``optimize`` (it prints "Interrupt request received" on stdout
and returns status INTERRUPTED, and Python never sees the signal), and HiGHS runs on to
its limits while Python's handler waits for the solve to return.

:func:`catch_sigint` replaces Python's handler for the length of one solve by one that
only records the request and restores the default action, so a second Ctrl-C kills the
process at once. The solver callbacks call :func:`rearm` (Gurobi put its handler back)
and poll :func:`requested`, and stop the solve (``model.terminate()``, HiGHS
``interrupt()``). The request stays set until :func:`clear`: the method's later solves do
not start (``models.backend.solve`` raises KeyboardInterrupt) and ``toolkit.run.run_task``
reports the run as ``interrupted``.

Only the main thread can handle signals: elsewhere (Dask worker threads) and when SIGINT
is ignored (batch worker processes) the handlers are left as they are.
"""
from __future__ import annotations

import contextlib
import signal
import threading

_requested = False
_handler = None     # our handler while a solve runs in the main thread
_solving = 0        # solver calls running now (toolkit.budget's watchdog waits for them)


def requested() -> bool:
    """Whether a Ctrl-C (or a solver's own interrupt) arrived since the last :func:`clear`."""
    return _requested


def request() -> None:
    global _requested
    _requested = True


def clear() -> None:
    global _requested
    _requested = False


@contextlib.contextmanager
def solver_running():
    """Mark a solver call: the run's time-limit watchdog (``toolkit.budget``) raises no
    exception inside it (it would cross the solver's C++ callbacks); the solver's own time
    limit stops it."""
    global _solving
    _solving += 1
    try:
        yield
    finally:
        _solving -= 1


def solver_active() -> bool:
    return _solving > 0


def _on_sigint(signum, frame):
    request()
    signal.signal(signal.SIGINT, signal.SIG_DFL)    # a second Ctrl-C kills at once


@contextlib.contextmanager
def catch_sigint():
    """For one solve: the first SIGINT sets :func:`requested` instead of raising."""
    global _handler
    main = threading.current_thread() is threading.main_thread()
    prev = signal.getsignal(signal.SIGINT) if main else None
    if not main or prev is not signal.default_int_handler:
        yield
        return
    _handler = _on_sigint
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        _handler = None
        signal.signal(signal.SIGINT, prev)


def rearm() -> None:
    """Put Python's SIGINT disposition back at the C level (from a solver callback, in the
    main thread): Gurobi replaces it with its own for the length of ``optimize``."""
    if threading.current_thread() is not threading.main_thread():
        return
    if _handler is not None and not _requested:
        signal.signal(signal.SIGINT, _handler)
    elif signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
