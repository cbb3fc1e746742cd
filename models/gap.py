"""Relative gaps and ties between objectives and bounds (no solver import: records use it).

TIE_RTOL is the one tolerance of every comparison of two objectives (``gap`` ranks,
``vs_best``, wins, the performance profile's ratio 1) and of an objective with a bound (a
gap of 0). [DECISION] 1e-6 relative (issue 28): a model method's solution carries the
solver's feasibility tolerance (Gurobi FeasibilityTol 1e-6, HiGHS mip_feasibility_tolerance
1e-6: durations, rates and times are only that exact), so two methods that reach the same
optimum report objectives up to ~1e-7 apart after the checker recomputes them (spectra
``milp`` and ``milp-matchings`` on tiny_random_n4_s2: 4e-8; issue 28 saw 4e-16), and
ranking one first for it is noise. 1e-9 would keep those apart; the solvers' optimality gap
(1e-4, MIP_RTOL) would merge solutions a user can tell apart (0.01% of a makespan). No
objective here has a meaningful difference below 1e-6 relative (a microsecond of a
one-second schedule, 0.04 s of a 37,000 s Avg.JCT). Whole numbers below 2**53 (counts:
stages, idle GPUs, the lumos-reconfig encoding ``shortfall * lex_base + rewiring``, which
may pass 1e6) are exact in a float: they tie only when equal. No absolute floor: an
objective near 0 (an a2a cost of 1e-3 s) is compared relative to itself.
"""
from __future__ import annotations

import math

TIE_RTOL = 1e-6
# the solvers' default relative MIP gap (Gurobi MIPGap, HiGHS mip_rel_gap): a status
# "optimal" at instance scope proves the objective within this of the instance optimum
MIP_RTOL = 1e-4
_EXACT_INT = 2.0 ** 53


def _whole(v: float) -> bool:
    return float(v).is_integer() and abs(v) < _EXACT_INT


def tied(a: float, b: float) -> bool:
    """``a`` and ``b`` are the same objective value: |a - b| <= TIE_RTOL * max(|a|, |b|),
    and equal when both are whole numbers (see the module docstring)."""
    if a == b:
        return True
    if _whole(a) and _whole(b):
        return False
    return abs(a - b) <= TIE_RTOL * max(abs(a), abs(b))


def relative_gap(obj: float | None, bound: float | None) -> float | None:
    """|objective - bound| / |objective|: 0 when they tie (:func:`tied`), inf when the
    objective is 0 and the bound is not; None if either is missing."""
    if obj is None or bound is None:
        return None
    if tied(obj, bound):
        return 0.0
    return abs(obj - bound) / abs(obj) if obj != 0 else math.inf
