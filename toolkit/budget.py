"""The wall-clock budget of one method run (``--time-limit``), shared by all its stages.

``--time-limit S`` is the budget of the whole run, however a method splits it (stages,
groups, per-d models, a GA then a MILP): each stage gets what is left, or a fair share of
it, so the stages never sum to more than the budget. Model methods without
``--time-limit`` get :data:`DEFAULT_TIME_LIMIT`; heuristics get no clock limit then (their
output must not depend on the clock unless the user sets a limit).
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field

DEFAULT_TIME_LIMIT = 600.0   # s, every model method's budget when --time-limit is not given


def method_limit(kind: str, time_limit: float | None) -> float | None:
    """The budget of a run of a method of ``kind`` ("model" | "heuristic")."""
    if time_limit is not None:
        return float(time_limit)
    return DEFAULT_TIME_LIMIT if kind == "model" else None


@dataclass
class Budget:
    """A deadline ``limit`` seconds after creation (None: no limit) and the seconds each
    named stage used."""

    limit: float | None
    t0: float = field(default_factory=time.perf_counter)
    stages: dict = field(default_factory=dict)     # stage name -> seconds (summed)

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def remaining(self) -> float | None:
        """Seconds left (>= 0), or None without a limit."""
        return None if self.limit is None else max(0.0, self.limit - self.elapsed())

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
        t = time.perf_counter()
        try:
            yield self
        finally:
            self.stages[name] = self.stages.get(name, 0.0) + time.perf_counter() - t

    def split(self) -> str | None:
        """How the run used the budget, e.g. ``"ga 1.2 s, milp 0.8 s"`` (None: one stage)."""
        if not self.stages:
            return None
        return ", ".join(f"{k} {v:.3g} s" for k, v in self.stages.items())
