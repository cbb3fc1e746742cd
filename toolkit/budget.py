"""The wall-clock budget of one method run (``--time-limit``), shared by all its stages.

``--time-limit S`` is the budget of the whole run, from the moment ``run_task`` takes the
instance: loading, importing and compiling (numba) kernels, heuristics, model building,
the solves and the final check all count. Each stage gets what is left, or a fair share of
it, so the stages never sum to more than the budget:

* model builders call :meth:`Budget.check` between constraint groups (and every few hundred
  rows of a Python loop); it raises :class:`TimeLimitReached` once the budget is spent;
* a solver gets only what is left when it starts (``RunConfig.solve_kw``; the backend
  subtracts its own matrix export, and HiGHS keeps a reserve for its unchecked set-up,
  ``models.backend.solve``, ``models.highs.RESERVE``);
* a method that already holds a solution (e.g. the heuristic MIP start) hands it to
  :meth:`Budget.keep`: when the limit stops the run, ``run_task`` reports that one
  (status ``feasible``, the record's message says so), else status
  ``time_limit_no_solution`` and no solution;
* a wait on worker processes (a pool starting, or computing a method's parts), which no
  check of the method's own can end, is marked :func:`waiting_on_workers`: the watchdog
  stops it at the limit itself, and the waiting code kills the pool;
* code that never checks (a heuristic without a clock guard) is stopped by
  :meth:`Budget.watchdog`, a SIGALRM at the limit plus :func:`grace` that raises
  :class:`TimeLimitReached` in the main thread, but never inside a solver call (the
  solver's own limit stops it), numba or an import (an exception there can crash the
  process or leave numba broken): a compiled kernel stops at its own deadline
  (Decompose's rounds) or when it returns, and a kernel set the numba cache lacks is
  compiled in a child process stopped at the deadline (``toolkit.kernels.warm``).

Model methods without ``--time-limit`` get :data:`DEFAULT_TIME_LIMIT`; heuristics get no
clock limit then (their output must not depend on the clock unless the user sets a limit).
"""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

DEFAULT_TIME_LIMIT = 600.0   # s, every model method's budget when --time-limit is not given


def method_limit(kind: str, time_limit: float | None) -> float | None:
    """The budget of a run of a method of ``kind`` ("model" | "heuristic")."""
    if time_limit is not None:
        return float(time_limit)
    return DEFAULT_TIME_LIMIT if kind == "model" else None


def grace(limit: float) -> float:
    """[DECISION] How long past the limit the watchdog waits for a method's own checks
    before it stops the run: max(1 s, 5% of the limit), half the overshoot the time-limit
    benchmark allows (max(2 s, 10%)), the other half for unwinding and the final check."""
    return max(1.0, 0.05 * limit)


class TimeLimitReached(TimeoutError):
    """The run's budget is spent (raised by :meth:`Budget.check` and the watchdog). A
    heuristic below the toolkit that reads a deadline itself raises the builtin
    TimeoutError; ``run_task`` takes either as the time limit once the budget is spent."""

    def __init__(self, limit: float, elapsed: float, where: str | None = None):
        self.limit, self.elapsed, self.where = limit, elapsed, where
        super().__init__(f"time limit of {limit:g} s reached after {elapsed:.3g} s"
                         + (f" during {where}" if where else ""))


@dataclass
class Kept:
    """The best result a method holds so far (see :meth:`Budget.keep`)."""

    solution: Any
    note: str                          # what it is, for the record's message
    metrics: dict = field(default_factory=dict)


@dataclass
class Budget:
    """A deadline ``limit`` seconds after creation (None: no limit), the seconds each named
    stage used, and the best result kept so far. ``clock`` is injectable (tests)."""

    limit: float | None
    clock: Callable[[], float] = time.perf_counter
    t0: float | None = None
    stages: dict = field(default_factory=dict)     # stage name -> seconds (summed)
    current: str | None = None                     # the stage running now
    kept: Kept | None = None

    def __post_init__(self):
        if self.t0 is None:
            self.t0 = self.clock()

    def elapsed(self) -> float:
        return self.clock() - self.t0

    def remaining(self) -> float | None:
        """Seconds left (>= 0), or None without a limit."""
        return None if self.limit is None else max(0.0, self.limit - self.elapsed())

    def deadline(self) -> float | None:
        """The limit as a time of ``clock`` (``time.perf_counter()`` by default), for
        compiled kernels that read the clock themselves; None without a limit."""
        return None if self.limit is None else self.t0 + self.limit

    def spent(self) -> bool:
        return self.limit is not None and self.elapsed() >= self.limit

    def check(self, where: str | None = None) -> None:
        """Raise :class:`TimeLimitReached` when the budget is spent (one clock read)."""
        if self.limit is not None:
            el = self.clock() - self.t0
            if el >= self.limit:
                raise TimeLimitReached(self.limit, el, where or self.current)

    def checker(self, where: str | None = None) -> Callable[[], None]:
        """:meth:`check` as a no-argument callable for builders and simulators."""
        return lambda: self.check(where)

    def sub(self) -> "Budget":
        """The same deadline and stage clock for a method run inside this one (e.g. the
        reconfigurations of a simulation), with a kept result of its own."""
        return Budget(self.limit, self.clock, self.t0, self.stages)

    def keep(self, solution, note: str, metrics: dict | None = None) -> None:
        """Hold ``solution`` (``note``: what it is) as the run's result should the limit
        stop the method before it has a better one."""
        self.kept = Kept(solution, note, dict(metrics or {}))

    def share(self, parts: int = 1, fraction: float = 1.0) -> float | None:
        """A fair share of what is left for the next of ``parts`` equal stages, at most
        ``fraction`` of it; time a stage leaves unused passes on to the next ones."""
        left = self.remaining()
        return None if left is None else fraction * left / max(parts, 1)

    def cap(self, seconds: float | None) -> float | None:
        """``seconds`` (None: none of its own), never beyond what is left."""
        left = self.remaining()
        if left is None or seconds is None:
            return left if seconds is None else seconds
        return min(seconds, left)

    @contextmanager
    def stage(self, name: str):
        """Count the time inside the block as stage ``name`` (repeated names add up)."""
        t, outer = self.clock(), self.current
        self.current = name
        try:
            yield self
        finally:
            self.current = outer
            self.stages[name] = self.stages.get(name, 0.0) + self.clock() - t

    def split(self) -> str | None:
        """How the run used the budget, e.g. ``"ga 1.2 s, milp 0.8 s"`` (None: one stage)."""
        if not self.stages:
            return None
        return ", ".join(f"{k} {v:.3g} s" for k, v in self.stages.items())

    @contextmanager
    def watchdog(self):
        """Within the block, stop code that never calls :meth:`check`: a SIGALRM at the
        limit + :func:`grace` raises :class:`TimeLimitReached` where the main thread is.
        Inside a solver call (``models.interrupt.solver_running``) it only looks again (a
        Python exception must not cross a solver's C++ callback; the solver's own limit
        stops it), and a solver that ends past the limit leaves the method one grace more to
        extract and check its solution. Armed only with a limit, in the main thread, where
        SIGALRM has no handler of the program's own (Dask worker threads, a host program
        using SIGALRM: the budget's checks alone). A first alarm at the limit itself stops
        a wait on worker processes (:meth:`at_limit`)."""
        if self.limit is None or not _can_arm():
            yield self
            return
        from models import interrupt

        late, after_solver, at_limit = grace(self.limit), [], [True]

        def on_alarm(signum, frame):
            if at_limit:                        # the limit: a wait on workers stops now
                left = self.limit - self.elapsed()
                if left > 0:                    # the timer's clock ran ahead of ours
                    signal.setitimer(signal.ITIMER_REAL, left + 1e-3)
                    return
                at_limit.clear()
                signal.setitimer(signal.ITIMER_REAL, late)  # the rest: one grace later
                self.at_limit(frame)
                return
            if interrupt.solver_active():       # its own limit stops it; look again soon
                after_solver.append(True)
                signal.setitimer(signal.ITIMER_REAL, 0.1)
                return
            if after_solver:                    # a solver ran past the limit: one grace more
                after_solver.clear()            # for the method to extract and check
                signal.setitimer(signal.ITIMER_REAL, late)
                return
            # look again soon where an exception is not safe, one grace later elsewhere
            # (should the exception be caught)
            signal.setitimer(signal.ITIMER_REAL, 0.05 if _unsafe(frame) else late)
            self.stop_in(frame)

        global _armed
        prev, outer = signal.signal(signal.SIGALRM, on_alarm), _armed
        _armed = self
        try:
            signal.setitimer(signal.ITIMER_REAL, max(self.limit - self.elapsed(), 1e-3))
            yield self
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, prev)
            _armed = outer

    def at_limit(self, frame) -> None:
        """The watchdog's decision at the limit, where the main thread is (``frame``): a
        wait on worker processes (:func:`waiting_on_workers`) stops now (:meth:`stop_in`);
        other code has :func:`grace` more for its own checks."""
        if _waiting:
            self.stop_in(frame)

    def stop_in(self, frame) -> None:
        """The watchdog's decision where the main thread is (``frame``): raise
        :class:`TimeLimitReached`, except inside a solver call or where an exception is not
        safe (:func:`_unsafe`; there it waits)."""
        from models import interrupt

        if interrupt.solver_active() or _unsafe(frame):
            return
        raise TimeLimitReached(self.limit, self.elapsed(), self.current)


_waiting = 0        # waits on worker processes running now (main thread)
_armed: Budget | None = None    # the budget whose watchdog is armed now


@contextmanager
def waiting_on_workers():
    """Mark the main thread as waiting on worker processes (a pool's start, its tasks): the
    run's watchdog raises :class:`TimeLimitReached` here at the limit itself, as no check of
    the method's own can end the wait; the code waiting kills its workers on the exception.
    A wait begun past the limit raises at once. [DECISION] No grace: the workers' results
    come back only at the end of the wait."""
    global _waiting
    main = threading.current_thread() is threading.main_thread()
    if main and _armed is not None:
        _armed.check()
    _waiting += main
    try:
        yield
    finally:
        _waiting -= main


def _unsafe(frame) -> bool:
    """Whether an exception raised in ``frame`` (where the main thread is) could leave the
    process broken: inside numba or llvmlite (compiled code calling back into Python, e.g.
    ``_numba_unpickle``, crashes on it; an interrupted compilation leaves numba's typing
    registries half filled) or inside an import (a half-run module body, e.g. numba's
    registrations, fails when imported again). The watchdog waits there."""
    f = frame
    while f is not None:
        name = f.f_code.co_filename
        if "importlib._bootstrap" in name or "numba" in name or "llvmlite" in name:
            return True
        f = f.f_back
    return False


def _can_arm() -> bool:
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None))
