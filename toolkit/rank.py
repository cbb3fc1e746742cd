"""Rank the records of one instance by the problem's objective (the ``gap`` study).

Every problem type declares one objective (``Problem.objective``, ``Problem.sense``) that
orders solutions as a user would (lumos-reconfig: unmet demand, then rewiring, encoded in
one number). Only solutions of the problem are ranked: verified records of methods that
are not relaxations (an a2a baseline that splits flows is a comparison, spec A23). The
others keep their objective but get no rank, ``vs_best`` or ``vs_best_bound``.

Ties (issue 28): two objectives that tie (:func:`models.gap.tied`, TIE_RTOL = 1e-6
relative, argued there) share a rank; a tie with the best has ``vs_best`` 0 and wins.

Bounds (issue 28): a record's ``bound_scope`` says what its ``bound`` bounds: "instance"
(the instance's optimum: the problem's analytic bound, or the solver bound of a method that
is ``exact``: milp-matchings, exact-k1, exact-te, the lumos ILPs) or "model" (only the
method's restricted model: spectra ``milp`` with T slots, DELTA's K intervals); None
without a bound. ``best_bound`` is the tightest ``problem_bound`` of the instance's records
(instance scope, whatever the method), or the best objective itself when a proven optimum
(:func:`proven_optimal`) ties with it.
"""
from __future__ import annotations

import math
import numbers

from models.gap import MIP_RTOL, relative_gap, tied

RANK_FIELDS = ("rank", "best_objective", "best_bound", "vs_best", "vs_best_bound")
TIE_SLACK = 1e-6    # the checker's objective may sit a hair past the solver's own gap


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


def scope(bound, problem_bound) -> str | None:
    """The ``bound_scope`` of a record's ``bound``, given its ``problem_bound`` (the tightest
    bound that run found valid for the instance): "instance" when they are the same number."""
    if not finite(bound):
        return None
    return "instance" if finite(problem_bound) and bound == problem_bound else "model"


def bound_scope(rec: dict) -> str | None:
    """The record's ``bound_scope``; for a row written before the field, from its numbers."""
    if "bound_scope" in rec:
        return rec["bound_scope"] or None           # "" of a CSV cell: no bound
    return scope(rec.get("bound"), rec.get("problem_bound"))


def proven_optimal(rec: dict) -> bool:
    """A verified solution proved optimal for the instance, not only for its model: status
    optimal, its bound at instance scope and the objective within the solvers' default
    optimality gap (MIP_RTOL) of that bound. [DECISION] A run with a looser ``--mip-gap``
    that stopped farther away proves nothing (its bound still counts as a bound)."""
    if not rankable(rec) or rec.get("status") != "optimal" or bound_scope(rec) != "instance":
        return False
    if not finite(rec.get("bound")):
        return False
    return relative_gap(rec["objective"], rec["bound"]) <= MIP_RTOL * (1 + TIE_SLACK)


def rank_records(recs: list[dict]) -> list[dict]:
    """Add RANK_FIELDS to the records of one instance (in place; returns ``recs``).

    best_objective: the best objective of the ranked records; best_bound: the tightest
    bound valid for the instance (``problem_bound``, whatever the method; the best
    objective when a proven optimum ties with it); rank: 1 for the best, records that tie
    share a rank (dense: the next distinct value is rank 2); vs_best = (objective - best) /
    |best| for a minimization (>= 0, 0 for a tie with the best; inf when best = 0 <
    objective); vs_best_bound = the relative gap of the objective to best_bound.
    """
    from toolkit.registry import problem

    if not recs:
        return recs
    sense = problem(recs[0]["problem"]).sense
    sign = 1.0 if sense == "min" else -1.0
    better = max if sense == "min" else min          # the tighter of two bounds
    ranked = sorted((r for r in recs if rankable(r)), key=lambda r: sign * r["objective"])
    best = ranked[0]["objective"] if ranked else None
    bounds = [r["problem_bound"] for r in recs if finite(r.get("problem_bound"))]
    if any(proven_optimal(r) and tied(r["objective"], best) for r in ranked):
        bounds.append(best)       # the instance optimum, within the solver's gap
    best_bound = better(bounds) if bounds else None
    for r in recs:
        r.update(rank=None, best_objective=best, best_bound=best_bound, vs_best=None,
                 vs_best_bound=None)
    lead, classes = None, 0             # each tie class is led by its best member
    for r in ranked:
        o = r["objective"]
        if lead is None or not tied(o, lead):
            lead, classes = o, classes + 1
        r["rank"] = classes
        diff = sign * (o - best)
        r["vs_best"] = 0.0 if tied(o, best) else (diff / abs(best) if best else math.inf)
        r["vs_best_bound"] = relative_gap(o, best_bound)
    return recs
