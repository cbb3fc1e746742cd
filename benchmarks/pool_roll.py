"""A pool's roll call for :mod:`benchmarks.batch_scaling_size`: every worker answers once.

Each of ``w`` roll-call tasks waits at a barrier of ``w`` parties shared by the pool's
workers (handed over as they start), so no worker answers twice and the pool's start is
timed until all ``w`` have started, not until the fastest has answered ``w`` times. Kept
apart from the benchmark's module: a worker unpickling these functions imports only this.
"""
from __future__ import annotations

import os

_BARRIER = None


def join(barrier) -> None:
    """Pool initializer: keep the roll call's barrier."""
    global _BARRIER
    _BARRIER = barrier


def answer(timeout: float = 600.0) -> int:
    """This worker's pid, once every worker of the pool holds a roll-call task."""
    _BARRIER.wait(timeout)
    return os.getpid()
