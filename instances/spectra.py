"""Spectra instances, schedules and the independent schedule checker.

Problem (Liang, Qiao, Keslassy, Lin, "Scheduling Parallel Optical Circuit Switches for
AI Training", 2026, Section II): cover an n x n demand matrix D with weighted
(partial) permutations spread over s parallel OCSes, each configuration preceded by a
reconfiguration delay delta, minimizing the makespan max_h sum_i (delta + alpha_i^h)
(Eqs. 1-4).

File format::

    {"problem": "spectra", "format": 1, "name": ..., "demand": [[...]], "switches": s, "delay": delta}
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from instances.errors import InstanceError, as_matrix, require, short

COVER_TOL = 1e-9  # spec section 6.6: coverage checks
SUPPORT_EPS = 1e-12  # entries <= SUPPORT_EPS * max(D) are zero (spec 2.2.3), for every method
MAX_SWITCHES = 1_000_000


def support(D: np.ndarray) -> np.ndarray:
    """Entries that count as demand: D > SUPPORT_EPS * max(D). Smaller ones are round-off
    (spec 2.2.3); every method, bound and the MILP use this one definition."""
    D = np.asarray(D, dtype=float)
    return D > SUPPORT_EPS * float(D.max(initial=0.0))


def effective(D: np.ndarray) -> np.ndarray:
    """D with the sub-support round-off entries set to 0."""
    D = np.asarray(D, dtype=float)
    return np.where(support(D), D, 0.0)


def max_line_sum(D: np.ndarray) -> float:
    """rho: the largest row or column sum of D (round-off entries dropped)."""
    D = effective(D)
    return float(max(D.sum(axis=0).max(initial=0.0), D.sum(axis=1).max(initial=0.0)))


@dataclass
class SpectraInstance:
    """Demand matrix D (n x n, >= 0), s parallel OCSes, reconfiguration delay delta."""

    demand: np.ndarray
    switches: int
    delay: float
    name: str = "spectra"
    meta: dict = field(default_factory=dict)

    FIELDS = ('demand', 'switches', 'delay')   # besides problem, format, name, meta

    problem = "spectra"

    def __post_init__(self):
        self.demand = as_matrix("demand", self.demand)
        if self.demand.shape[0] == 0:
            raise InstanceError("demand", "must have at least one row")
        if isinstance(self.switches, bool) or not isinstance(self.switches, (int, float)) or \
                not np.isfinite(self.switches) or int(self.switches) != self.switches:
            raise InstanceError("switches", f"must be an integer, got {short(self.switches)}")
        self.switches = int(self.switches)
        if self.switches < 1:
            raise InstanceError("switches", f"must be >= 1, got {self.switches}")
        try:
            self.delay = float(self.delay)
        except (TypeError, ValueError, OverflowError):
            raise InstanceError("delay", f"must be a finite number >= 0, got {short(self.delay)}")
        if not np.isfinite(self.delay) or self.delay < 0:
            raise InstanceError("delay", f"must be a finite number >= 0, got {short(self.delay)}")
        if self.switches > MAX_SWITCHES:
            raise InstanceError("switches", f"must be <= {MAX_SWITCHES}, got {short(self.switches)}")

    @property
    def n(self) -> int:
        return self.demand.shape[0]

    @classmethod
    def from_dict(cls, d: dict) -> "SpectraInstance":
        return cls(demand=require(d, "demand", list), switches=require(d, "switches", (int, float)),
                   delay=require(d, "delay", (int, float)), name=str(d.get("name", "spectra")),
                   meta=dict(d.get("meta", {})))

    def to_dict(self) -> dict:
        d = {"problem": "spectra", "format": 1, "name": self.name,
             "demand": self.demand.tolist(), "switches": self.switches, "delay": self.delay}
        if self.meta:
            d["meta"] = self.meta
        return d


@dataclass
class SpectraSchedule:
    """Per switch, an ordered list of configurations ``(perm, duration)``.

    ``perm`` is an int array of length n: ``perm[i] = j`` connects input i to output j,
    ``-1`` leaves input i idle (a partial permutation, spec section 2.2.4).
    """

    switches: list[list[tuple[np.ndarray, float]]]

    def to_dict(self) -> dict:
        return {"switches": [[{"perm": p.tolist(), "duration": float(a)} for p, a in sw]
                             for sw in self.switches]}

    @classmethod
    def from_dict(cls, d: dict) -> "SpectraSchedule":
        return cls([[(np.asarray(c["perm"], dtype=np.int64), float(c["duration"])) for c in sw]
                    for sw in d["switches"]])

    @property
    def n_configs(self) -> int:
        return sum(len(sw) for sw in self.switches)


def makespan(schedule: SpectraSchedule, delay: float) -> float:
    """Eq. 4: max over switches of sum (delta + alpha); an unused switch has load 0."""
    return max((sum(delay + a for _, a in sw) for sw in schedule.switches), default=0.0)


def check_schedule(inst: SpectraInstance, sched: SpectraSchedule) -> tuple[list[str], dict]:
    """Independent verifier: returns (violations, metrics recomputed from the schedule).

    Checks: at most s switches; every configuration is a partial permutation of [0, n)
    with a finite duration >= 0; the schedules cover D (Eq. 3) within 1e-9 x max(1, max D).
    """
    n, s, delta = inst.n, inst.switches, inst.delay
    bad: list[str] = []
    if len(sched.switches) > s:
        bad.append(f"uses {len(sched.switches)} switches, instance has {s}")
    served = np.zeros((n, n))
    for h, sw in enumerate(sched.switches):
        for t, (perm, a) in enumerate(sw):
            perm = np.asarray(perm)
            where = f"switch {h} config {t}"
            if perm.shape != (n,) or not np.issubdtype(perm.dtype, np.integer):
                bad.append(f"{where}: perm must be {n} integers, got shape {perm.shape}")
                continue
            if not np.isfinite(a) or a < 0:
                bad.append(f"{where}: duration {a!r} is not a finite number >= 0")
                continue
            if np.any((perm < -1) | (perm >= n)):
                bad.append(f"{where}: output port out of range [-1, {n})")
                continue
            on = perm >= 0
            outs = perm[on]
            if len(np.unique(outs)) != len(outs):
                bad.append(f"{where}: not a partial permutation (an output port used twice)")
                continue
            served[np.flatnonzero(on), outs] += a
    if not bad:
        short = inst.demand - served
        tol = COVER_TOL * max(1.0, float(inst.demand.max(initial=0.0)))
        if np.any(short > tol):
            i, j = map(int, np.unravel_index(np.argmax(short), short.shape))
            bad.append(f"demand not covered: entry [{i}][{j}] short by {short[i, j]:.3g}")
    loads = [sum(delta + a for _, a in sw) for sw in sched.switches]
    metrics = {"makespan": max(loads, default=0.0), "n_configs": sched.n_configs,
               "max_configs_per_switch": max((len(sw) for sw in sched.switches), default=0)}
    return bad, metrics
