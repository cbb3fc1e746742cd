"""Min-cost flow with arc lower bounds on OR-Tools' compiled solver, and convex costs.

Every LumosCore decomposition (SIMD, IMD, FindConnection) is a min-cost flow with
lower/upper arc bounds and a convex piecewise-linear cost per matrix entry. Entries are
small integers (at most K_spine), so a convex cost of an entry with range [0, n] is
represented exactly by n parallel unit arcs whose costs are the successive increments
f(t+1) - f(t), t = 0..n-1 (non-decreasing because f is convex).
"""
from __future__ import annotations

import numpy as np
from ortools.graph.python import min_cost_flow as _mcf


class FlowInfeasible(RuntimeError):
    """The flow network has no feasible flow (for the decompositions: a bug or bad input)."""


def min_cost_flow(n_nodes: int, tail, head, lo, hi, cost, supply=None) -> np.ndarray:
    """Integer flow f with lo <= f <= hi on arcs tail -> head, net outflow = ``supply``
    (zeros: a circulation), minimizing sum cost * f. Lower bounds are removed by the
    standard substitution f = lo + g (node supplies shift by lo at both ends).

    Runs OR-Tools ``SimpleMinCostFlow`` (cost scaling, compiled); raises FlowInfeasible.
    """
    tail = np.asarray(tail, dtype=np.int64)
    head = np.asarray(head, dtype=np.int64)
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    cost = np.asarray(cost, dtype=np.int64)
    if np.any(hi < lo):
        raise FlowInfeasible("an arc has upper bound < lower bound")
    sup = np.zeros(n_nodes, dtype=np.int64) if supply is None else np.array(supply, dtype=np.int64)
    sup -= np.bincount(tail, weights=lo, minlength=n_nodes).astype(np.int64)
    sup += np.bincount(head, weights=lo, minlength=n_nodes).astype(np.int64)
    if sup.sum() != 0:
        raise FlowInfeasible("supplies do not balance")
    if len(tail) == 0:
        if np.any(sup):
            raise FlowInfeasible("no arcs but non-zero supplies")
        return lo.copy()
    smcf = _mcf.SimpleMinCostFlow()
    smcf.add_arcs_with_capacity_and_unit_cost(tail, head, hi - lo, cost)
    smcf.set_nodes_supplies(np.arange(n_nodes), sup)
    status = smcf.solve()
    if status != smcf.OPTIMAL:
        raise FlowInfeasible(f"min-cost flow status {status}")
    return lo + smcf.flows(np.arange(len(tail)))


def unit_arcs(n: np.ndarray):
    """Expand entries with ranges [0, n_e] into unit arcs: (entry index, step t) per arc."""
    n = np.asarray(n, dtype=np.int64)
    idx = np.repeat(np.arange(len(n)), n)
    start = np.cumsum(n) - n
    t = np.arange(len(idx)) - np.repeat(start, n)
    return idx, t


def l1_two_sided_steps(total, t, old_a, old_b) -> np.ndarray:
    """Increment f(t+1) - f(t) of f(a) = |a - old_a| + |total - a - old_b| (values -2, 0, 2).

    This is the MinRewiring L1 cost of splitting ``total`` circuits into a (one side) and
    total - a (other side) against old counts old_a, old_b (spec 2.1(d), 2.5)."""
    def f(a):
        return np.abs(a - old_a) + np.abs(total - a - old_b)
    return f(t + 1) - f(t)
