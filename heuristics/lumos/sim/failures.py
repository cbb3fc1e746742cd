"""GPU failures for the LumosCore cluster simulator ([002] §6.5, Fig. 8(d); issue 31 item 1).

[002]: "We simulate scenarios involving GPU failures, categorizing them into soft failures
caused by software and hard failures caused by hardware. The occurrence ratios and
recovery times are set based on our operational experience" (not published). Our model:

* ``rate`` is Fig. 8(d)'s measure as we read it: the share of the cluster's GPUs that are
  down at any time, in steady state. By Little's law failures arrive as a Poisson process
  of rate ``rate * n_gpus / E[recovery]``; each hits one GPU drawn uniformly among those
  up, which is down for its recovery time.
* [DECISION] Soft failures (a process or driver restart) are ``soft_share`` = 80 % of them
  and recover after ``soft_s`` = 600 s; hard failures (a board replaced) after ``hard_s``
  = 86,400 s (one day). E[recovery] = 17,760 s with these values.
* [DECISION] A failed GPU leaves the placement pool (the brief of issue 31: "failed GPUs
  removed from placement"): a free one at once, a busy one when its job ends; the job
  holding it runs on (the paper does not say whether a job restarts, nor from which
  checkpoint), so failures cost capacity and queueing, not lost work.
* At high rates a large job can wait very long: FIFO holds the queue until its whole
  servers are free of failed GPUs (with 10 % of 256 GPUs down, a 128-GPU job waited for
  years of simulated time in one of our runs); [002]'s figure spans small rates.
* Deterministic in ``seed`` and independent of the jobs: every architecture of one run sees
  the same failures at the same times on the same GPU ids.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FailureModel:
    """GPU failures at steady-state down share ``rate`` (module docstring)."""

    rate: float
    seed: int = 0
    soft_share: float = 0.8
    soft_s: float = 600.0
    hard_s: float = 86_400.0

    def __post_init__(self):
        if not 0 <= self.rate < 1:
            raise ValueError(f"failure rate must be in [0, 1), got {self.rate!r}")
        if not 0 <= self.soft_share <= 1 or self.soft_s <= 0 or self.hard_s <= 0:
            raise ValueError("soft_share must be in [0, 1], soft_s and hard_s > 0")

    @property
    def mean_recovery_s(self) -> float:
        return self.soft_share * self.soft_s + (1 - self.soft_share) * self.hard_s


class FailureProcess:
    """The failure events of one simulation, drawn lazily: ``next_t`` is the time of the
    next failure (inf when ``rate`` is 0); ``fail(down)`` draws it (the GPU among those
    not ``down``) and returns (gpu, recovery time)."""

    def __init__(self, model: FailureModel, n_gpus: int):
        self.model, self.n = model, n_gpus
        self.rng = np.random.default_rng(model.seed)
        self.lam = model.rate * n_gpus / model.mean_recovery_s
        self.next_t = self._gap(0.0)
        self.count = 0

    def _gap(self, t: float) -> float:
        return t + self.rng.exponential(1.0 / self.lam) if self.lam > 0 else np.inf

    def fail(self, down: np.ndarray) -> tuple[int, float]:
        up = np.flatnonzero(~down)
        g = int(up[self.rng.integers(len(up))]) if len(up) else -1
        m = self.model
        rec = m.soft_s if self.rng.random() < m.soft_share else m.hard_s
        t = self.next_t
        self.next_t = self._gap(t)
        self.count += g >= 0
        return g, t + rec
