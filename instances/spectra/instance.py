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

from instances.errors import InstanceError, as_matrix, number, obj, require, seq, text
from instances.limits import guard

COVER_TOL = 1e-9  # spec section 6.6: coverage checks
SUPPORT_EPS = 1e-12  # entries <= SUPPORT_EPS * max(D) are zero (spec 2.2.3), for every method
# s is the number of uplinks of every ToR (spec 1.1); the paper evaluates a handful. Every
# switch gets at least one configuration (Equalize spreads the load over all s) and Equalize
# costs O(s) per split, so a schedule's size and work grow with s and s^2: 10^4 switches take
# about a second, 10^6 hours. More switches than that is not a fabric: refused, not clamped.
MAX_SWITCHES = 10_000
# Memory of a solve per demand entry: the parsed rows, D, its effective/support copies and
# the methods' n x n work arrays (measured about 90 bytes per entry at n = 300..600).
DEMAND_BYTES_PER_ENTRY = 96


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
        if isinstance(self.demand, list):
            _check_rows(self.demand)
        else:
            n = len(self.demand)
            guard("demand", DEMAND_BYTES_PER_ENTRY * n * n, f"a {n} x {n} demand matrix")
        self.demand = as_matrix("demand", self.demand)
        if self.demand.shape[0] == 0:
            raise InstanceError("demand", "must have at least one row")
        self.switches = number("switches", self.switches, integer=True, lo=1)
        if self.switches > MAX_SWITCHES:
            raise InstanceError("switches", f"must be <= {MAX_SWITCHES}, got {self.switches}: every "
                                            f"switch gets a configuration and Equalize's work grows "
                                            f"as s^2 (about {float(self.switches) ** 2:.0e} steps)")
        self.delay = number("delay", self.delay, lo=0)

    @property
    def n(self) -> int:
        return self.demand.shape[0]

    @classmethod
    def from_dict(cls, d: dict) -> "SpectraInstance":
        return cls(demand=seq("demand", require(d, "demand")), switches=require(d, "switches"),
                   delay=require(d, "delay"), name=text("name", d.get("name", "spectra")),
                   meta=dict(obj("meta", d.get("meta", {}))))

    def to_dict(self) -> dict:
        d = {"problem": "spectra", "format": 1, "name": self.name,
             "demand": self.demand.tolist(), "switches": self.switches, "delay": self.delay}
        if self.meta:
            d["meta"] = self.meta
        return d


def _check_rows(rows: list) -> None:
    """The rows of a demand file: n lists of n entries (n from the row count, guarded before
    any array is built); the entries themselves are checked by ``as_matrix``."""
    n = len(rows)
    guard("demand", DEMAND_BYTES_PER_ENTRY * n * n, f"a {n} x {n} demand matrix")
    for i, row in enumerate(rows):
        seq(f"demand[{i}]", row)
    widths = {len(row) for row in rows}
    if len(widths) == 1 and n not in widths:            # rectangular: the matrix is at fault
        raise InstanceError("demand", f"must be square, got {n}x{widths.pop()}")
    for i, row in enumerate(rows):
        if len(row) != n:                               # ragged: name the first short/long row
            raise InstanceError(f"demand[{i}]", f"has {len(row)} entries, expected {n} "
                                                f"(the matrix must be square, {n} rows)")


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
