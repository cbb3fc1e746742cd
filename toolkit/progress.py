"""What the user sees on stderr while work runs: the verbosity level and progress display.

Levels (``solve.py -q`` / default / ``-v``, see docs/guide/command-line.md):

* ``QUIET`` - records only: no notes, no progress, no warnings (errors that end the
  command with a nonzero exit still print their line);
* ``NORMAL`` - notes and progress; the solvers stay silent;
* ``VERBOSE`` - also the solvers' own logs, streamed to stderr while they run
  (``models.solver_log``).

Progress of a run of many tasks: on a terminal a tqdm bar; on anything else (a file, a
pipe) plain lines, one each time another tenth of the tasks has finished, never the
carriage-return frames a bar is drawn with.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import time
import warnings

QUIET, NORMAL, VERBOSE = 0, 1, 2
_LEVEL = NORMAL


def level() -> int:
    return _LEVEL


@contextlib.contextmanager
def verbosity(lvl: int):
    """Run the enclosed code at level ``lvl`` (QUIET also ignores Python warnings and log
    records below ERROR); the previous level is restored afterwards."""
    global _LEVEL
    from models.solver_log import set_solver_output, solver_output

    if lvl not in (QUIET, NORMAL, VERBOSE):
        raise ValueError(f"verbosity level must be QUIET, NORMAL or VERBOSE, got {lvl!r}")
    prev, prev_solver, prev_log = _LEVEL, solver_output(), logging.root.manager.disable
    _LEVEL = lvl
    set_solver_output(lvl == VERBOSE)
    try:
        with warnings.catch_warnings():
            if lvl == QUIET:
                warnings.simplefilter("ignore")
                logging.disable(logging.WARNING)
            yield
    finally:
        _LEVEL = prev
        set_solver_output(prev_solver)
        logging.disable(prev_log)


def note(msg: str) -> None:
    """An informational line on stderr (silent when QUIET)."""
    if _LEVEL > QUIET:
        print(msg, file=sys.stderr, flush=True)


def bar(total: int, enabled: bool = True, unit: str = "task"):
    """A progress display for ``total`` tasks with ``update(n)`` and ``close()``: a tqdm bar
    when stderr is a terminal, plain lines otherwise, nothing when disabled, QUIET or
    ``total == 0``."""
    if not enabled or total <= 0 or _LEVEL == QUIET:
        return _Silent()
    if _isatty(sys.stderr):
        from tqdm import tqdm

        return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True)
    return Lines(total, unit, sys.stderr)


def track(items, unit: str = "run"):
    """Yield ``items`` (a sized iterable), advancing a :func:`bar` after each: the progress of
    a reproduce target that loops over its runs itself rather than through ``run_batch``."""
    items = list(items)
    shown = bar(len(items), unit=unit)
    try:
        for it in items:
            yield it
            shown.update(1)
    finally:
        shown.close()


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):        # no isatty, or closed
        return False


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class Lines:
    """Progress as plain lines: ``progress: 3/30 tasks (10%), 12 s`` each time the finished
    share passes another tenth, and at the end."""

    def __init__(self, total: int, unit: str, stream):
        self.total, self.unit, self.stream = total, unit, stream
        self.done, self._tenths = 0, 0
        self._t0 = time.perf_counter()

    def update(self, n: int = 1) -> None:
        self.done = min(self.total, self.done + n)
        tenths = 10 * self.done // self.total
        if tenths > self._tenths:
            self._tenths = tenths
            print(f"progress: {self.done}/{self.total} {self.unit}s "
                  f"({100 * self.done // self.total}%), {time.perf_counter() - self._t0:.0f} s",
                  file=self.stream, flush=True)

    def close(self) -> None:
        pass
