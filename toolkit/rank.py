"""Rank the records of one instance by the problem's objective (the ``gap`` study).

Every problem type declares one objective (``Problem.objective``, ``Problem.sense``) that
orders solutions as a user would (lumos-reconfig: unmet demand, then rewiring, encoded in
one number). Only solutions of the problem are ranked: verified records of methods that
are not relaxations (an a2a baseline that splits flows is a comparison, spec A23). The
others keep their objective but get no rank, ``vs_best`` or ``vs_best_bound``.
"""
from __future__ import annotations

import math
import numbers

from models.gap import relative_gap

RANK_FIELDS = ("rank", "best_objective", "best_bound", "vs_best", "vs_best_bound")


def relaxation(rec: dict) -> bool | None:
    """Whether the record's method is a relaxation of its problem (None: no such method)."""
    from toolkit.registry import problem

    method = problem(rec["problem"]).methods.get(rec.get("method"))
    return None if method is None else method.relaxation


def finite(v) -> bool:
    """A finite real number (not a bool, text or NaN: a cell of an edited records.csv)."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def rankable(rec: dict) -> bool:
    """A verified solution of the problem itself (not of a relaxation of it), with a finite
    objective; ``verified`` must be True itself, not any truthy cell."""
    if rec.get("verified") not in (True,) or not finite(rec.get("objective")):
        return False
    return relaxation(rec) is False


def rank_records(recs: list[dict]) -> list[dict]:
    """Add RANK_FIELDS to the records of one instance (in place; returns ``recs``).

    best_objective: the best objective of the ranked records; best_bound: the tightest
    bound valid for the instance (``problem_bound``, whatever the method); rank: 1 for the
    best, ties share a rank; vs_best = (objective - best) / |best| for a minimization
    (>= 0, 0 for the best; inf when best = 0 < objective); vs_best_bound = the relative gap
    of the objective to best_bound.
    """
    from toolkit.registry import problem

    if not recs:
        return recs
    sense = problem(recs[0]["problem"]).sense
    sign = 1.0 if sense == "min" else -1.0
    ranked = [r for r in recs if rankable(r)]
    keys = sorted({sign * r["objective"] for r in ranked})
    best = sign * keys[0] if keys else None
    bounds = [r["problem_bound"] for r in recs if finite(r.get("problem_bound"))]
    best_bound = (max if sense == "min" else min)(bounds) if bounds else None
    for r in recs:
        r.update(rank=None, best_objective=best, best_bound=best_bound, vs_best=None,
                 vs_best_bound=None)
    for r in ranked:
        o = r["objective"]
        diff = sign * (o - best)
        r["rank"] = 1 + keys.index(sign * o)
        r["vs_best"] = 0.0 if diff == 0 else (diff / abs(best) if best else math.inf)
        r["vs_best_bound"] = relative_gap(o, best_bound)
    return recs
