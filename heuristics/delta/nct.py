"""NCT of a schedule: the critical path's inter-pod communication time over the ideal network's.

Ye et al. 2026, Section V-A3: "the ratio of the inter-pod communication time on the critical
path under the OCS architecture to that under an ideal non-blocking electrical network with
zero packet-processing delay"; delta spec 4.4.

[DECISION] issue 18. Spec 4.4 traces the critical chain backwards on each schedule and
divides its communication time by the ideal schedule's. That chain moves with the topology:
a topology that shortens the iteration can move it onto a path with less compute and so get
a larger NCT (converted GPT-175B: 11,575.9 ms scored 2.37 against 11,589.9 ms scored 1.24).
Here the critical path is the ideal network's: its non-communication time NC* (releases,
delays, tail on the ideal schedule's chain) is fixed, and everything an OCS schedule adds to
the iteration is charged to that path's communication:

    NCT = (C - NC*) / (C* - NC*),    C* = the ideal iteration time.

It reads as the paper's words (the ideal critical path's inter-pod communication time under
OCS, over the same under the ideal network), equals 1 at the ideal iteration time, and is an
increasing affine function of C: on one instance a strictly shorter iteration never gets a
larger NCT, whatever produced the schedule (simulator or MILP). It can fall below 1 when a
fair-share schedule beats the greedy ideal one (list-scheduling anomaly). The spec's
backward chain stays as the diagnostic ``nct_chain``; ``nct_exposed`` is the spec's robustness
variant (C - C_0)/(C* - C_0), C_0 = the iteration time with free communication.
"""
from __future__ import annotations

import numpy as np

from heuristics.delta.sim import SimGraph, SimResult, compile_graph, simulate
from instances.dag import topological_order
from instances.delta.instance import DeltaInstance

CHAIN_TOL = 1e-6        # tightness of a predecessor, relative to max(C, the time scale)
RATIO_TOL = 1e-9        # a critical-path comm time below this x C* counts as zero


def critical_chain(g: SimGraph, start, finish) -> tuple[list[int], float, float]:
    """(chain of tasks, non-communication time NC, makespan) traced back from the end.

    Spec 4.4: from the end node attaining C, step to the predecessor maximizing C_p + delta
    while that is >= the release time, else stop at the source. The spec is silent on ties;
    here every step (and the choice of end node) takes, among the predecessors that are
    tight (C_p + delta = S_m up to 1e-6 max(C, t_scale)), the one with the most non-communication time
    behind it. In an ASAP (simulated) schedule the tight predecessors are exactly the
    maximizers; in a MILP schedule with slack (spec 2.1 notes) this finds a chain without
    idle time whenever one exists, so where the solver parked slack does not move the NCT.
    A task preceded only by idle time follows the spec's rule (the gap counts as comm).
    """
    start, finish = np.asarray(start, float), np.asarray(finish, float)
    C = float(max(g.q0, np.max(finish + g.tail, initial=0.0)))
    tol = CHAIN_TOL * max(C, g.t_scale)
    ends = finish + g.tail
    if g.n == 0 or g.q0 >= ends.max() - tol:
        return [], g.q0, C
    nc = np.full(g.n, -np.inf)            # most NC on a chain from the source to S_m
    back = np.full(g.n, -1, dtype=np.int64)
    pre = np.array([p for m in range(g.n) for p, _ in g.preds[m]], dtype=np.int64)
    suc = np.array([m for m in range(g.n) for _ in g.preds[m]], dtype=np.int64)
    for m in topological_order(g.n, pre, suc):
        r = float(g.release[m])
        best_val, best_p, best_nc = -np.inf, -1, -np.inf
        tight_nc, tight_p = (r, -1) if start[m] <= r + tol else (-np.inf, -1)
        for p, d in g.preds[m]:
            v = finish[p] + d
            if v > best_val:
                best_val, best_p, best_nc = v, p, nc[p] + d
            if v >= start[m] - tol and nc[p] + d > tight_nc:
                tight_nc, tight_p = nc[p] + d, p
        if tight_nc > -np.inf:
            nc[m], back[m] = tight_nc, tight_p
        elif best_p >= 0 and best_val >= r - tol:      # idle gap before m: spec's argmax step
            nc[m], back[m] = best_nc, best_p
        else:
            nc[m] = r
    cand = np.flatnonzero(ends >= C - tol)
    m = int(cand[np.argmax(nc[cand] + g.tail[cand])])
    total = float(nc[m] + g.tail[m])
    chain = [m]
    while back[m] >= 0:
        m = int(back[m])
        chain.append(m)
    return chain[::-1], total, C


def comm_time(g: SimGraph, res: SimResult) -> float:
    """Inter-pod communication time on the schedule's own backward chain: C - NC."""
    _, nc, C = critical_chain(g, res.start, res.finish)
    return C - nc


def ideal_reference(inst: DeltaInstance) -> dict:
    """The ideal non-blocking network (cached): iteration time C*, the communication time
    C* - NC* and non-communication time NC* of its critical chain, and C_0."""
    cached = getattr(inst, "_ideal_ref", None)
    if cached is not None:
        return cached
    g = compile_graph(inst)
    sim = simulate(g, ideal=True, trace=False)
    zero = simulate(g, ideal=True, zero_comm=True, trace=False)
    comm = comm_time(g, sim)
    ref = {"ideal_iteration_time": sim.makespan, "ideal_comm_time": comm,
           "ideal_nc_time": sim.makespan - comm, "zero_comm_time": zero.makespan}
    inst._ideal_ref = ref
    return ref


def nct_metrics(inst: DeltaInstance, C: float, start=None, finish=None) -> dict:
    """NCT (module docstring), ``nct_exposed`` and, given the schedule's start/finish, the
    backward-chain diagnostic ``nct_chain`` of a schedule with iteration time ``C``."""
    ref = ideal_reference(inst)
    scale = RATIO_TOL * ref["ideal_iteration_time"]
    out = {"comm_time": C - ref["ideal_nc_time"],
           "nct": _ratio(C - ref["ideal_nc_time"], ref["ideal_comm_time"], scale),
           "nct_exposed": _ratio(C - ref["zero_comm_time"],
                                 ref["ideal_iteration_time"] - ref["zero_comm_time"], scale)}
    if start is not None and np.isfinite(C):
        _, nc, c_chain = critical_chain(compile_graph(inst), start, finish)
        out["comm_time_chain"] = c_chain - nc
        out["nct_chain"] = _ratio(c_chain - nc, ref["ideal_comm_time"], scale)
    return out


def _ratio(a: float, b: float, tol: float) -> float:
    """a / b; when b is zero up to ``tol``: 1 if a is too, else inf (a, b >= 0 up to tol)."""
    if not np.isfinite(a):
        return np.inf
    return a / b if b > tol else (1.0 if a <= tol else np.inf)


def evaluate(inst: DeltaInstance, x, policy: str = "maxmin") -> dict:
    """Simulate topology ``x``: iteration time, NCT, NCT', the chain NCT, the ideal reference
    and the simulation itself (``sim``)."""
    sim = simulate(compile_graph(inst), x, policy=policy)
    C = sim.makespan
    found = np.isfinite(C)
    return {"iteration_time": C, **nct_metrics(inst, C, *((sim.start, sim.finish) if found else ())),
            **({} if found else {"nct_chain": np.inf}), "sim": sim, **ideal_reference(inst)}
