"""Whether the solvers' logs also stream to stderr while they run (``solve.py -v``).

The switch is an environment variable so that batch worker processes, however they are
started, inherit it. The backends keep the solvers' own console output off and pass each
log line through :func:`echo`, so the lines reach ``sys.stderr`` whatever file descriptor 1
is (the records' stdout stays clean).
"""
from __future__ import annotations

import os
import sys

ENV = "OCS_SOLVER_OUTPUT"


def solver_output() -> bool:
    """Whether solver log lines go to stderr."""
    return os.environ.get(ENV) == "1"


def set_solver_output(on: bool) -> None:
    if on:
        os.environ[ENV] = "1"
    else:
        os.environ.pop(ENV, None)


def echo(text: str) -> None:
    """Solver log text (its lines end in newlines) to stderr, at once."""
    sys.stderr.write(text)
    sys.stderr.flush()
