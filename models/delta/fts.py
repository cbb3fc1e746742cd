"""DELTA fixed-time-step MILP (the formulation the interval model replaces).

Ye et al. 2026, Appendix A, Eqs. (19)-(30); delta spec 2.3. Time is cut into T slices of
constant length dt; per slice each task has a rate r_{m,t}, an activity bit and start /
completion flags. Slice t covers [(t-1) dt, t dt]. C_{m,t} = 1 marks the first inactive
slice after the block (Eq. 25), so Eq. (30) in slice units overshoots by one slice: the
makespan in ms is reported as (C - 1) dt (spec decision 31). Release times and tails
are rounded up to whole slices, so the model's optimum approaches the interval model's
from above as dt shrinks.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from instances.dag import longest_depth
from instances.delta.instance import DeltaInstance, nic_groups, x_max
from models.backend import Result, every, new_model


BLOCK = 32      # tasks per block of (task x slice) rows between two budget checks


@dataclass
class FixedStepHandles:
    inst: DeltaInstance
    dt: float
    T: int
    x: gp.MVar
    r: gp.MVar          # (M, T) rate, MB/ms
    y: gp.MVar
    Sf: gp.MVar
    Cf: gp.MVar
    C: gp.Var           # slices

    def makespan_ms(self, res: Result) -> float:
        return (res.value(self.C) - 1.0) * self.dt


def _task_slice_vars(model: gp.Model, M: int, T: int, tick, name: str, **kw) -> gp.MVar:
    """An (M, T) MVar named ``name[m,t]``, added BLOCK tasks at a time (``tick`` between)."""
    blocks = []
    for a in range(0, M, BLOCK):
        b = min(a + BLOCK, M)
        names = np.array([[f"{name}[{m},{t}]" for t in range(T)] for m in range(a, b)])
        blocks.append(model.addMVar((b - a, T), name=names, **kw))
        tick()
    return gp.vstack(blocks) if blocks else model.addMVar((0, T), name=name, **kw)


def build_fixed_step(inst: DeltaInstance, dt: float, T_up: float, fair: bool = False,
                     check: Callable[[], None] | None = None
                     ) -> tuple[gp.Model, FixedStepHandles]:
    """Eqs. (19), (21)-(30) with slice length ``dt`` (ms) over a horizon covering ``T_up``.
    ``check`` (e.g. ``Budget.check``) is called between constraint groups, blocks of
    ``BLOCK`` tasks and rows of its loops; it may raise to stop the build (the run's time
    limit). The (task x slice) groups are added a block of tasks at a time, so that a check
    is never far off (a Table I model has over a million of these rows)."""
    tick = every(check, 1)
    if dt <= 0:
        raise ValueError(f"step must be > 0, got {dt}")
    B, M, nE = inst.bandwidth, inst.n_tasks, len(inst.links)
    # Rounding delays, releases, tails and durations up to whole slices can add up to one
    # slice per task and per dependency along a chain: extend the horizon by that much.
    T = int(math.ceil(T_up / dt)) + 2 * (longest_depth(inst.n_tasks, inst.deps[:, 0].astype(int), inst.deps[:, 1].astype(int)) + 1) + 2
    slots = np.arange(1, T + 1, dtype=float)
    used = np.zeros(nE, bool)
    used[inst.link_of] = True
    model = new_model("delta_fixed_step")
    x = model.addMVar(nE, vtype=GRB.INTEGER, lb=used.astype(float), ub=x_max(inst), name="x")
    r = _task_slice_vars(model, M, T, tick, "r", lb=0.0)
    y = _task_slice_vars(model, M, T, tick, "y", vtype=GRB.BINARY)
    Sf = _task_slice_vars(model, M, T, tick, "Sflag", vtype=GRB.BINARY)
    Cf = _task_slice_vars(model, M, T, tick, "Cflag", vtype=GRB.BINARY)
    C = model.addVar(lb=0.0, name="C")

    # (21) port budgets (x symmetric by construction, one value per link/orbit)
    model.addConstr(inst.incidence @ x <= inst.ports, name="eq21_ports")
    # (22) directed link capacity per slice
    res = inst.res_of
    for rr in np.unique(res):
        tick()
        tasks = np.flatnonzero(res == rr)
        model.addConstr(r[tasks].sum(axis=0) <= B * x[rr // 2] * np.ones(T), name=f"eq22_link[{rr}]")
    # (23) NIC capacity per slice, one row per distinct Phi(g)
    for side in ("src_gpus", "dst_gpus"):
        for j, key in enumerate(sorted(nic_groups(inst.tasks, side))):
            tick()
            tasks = list(key)               # only the group's rows: r has M x T entries
            model.addConstr((1.0 / inst.flows[tasks]) @ r[tasks] <= B,
                            name=f"eq23_{side[:3]}[{j}]")
    tick.now()
    # (24) one start and one completion; (25) activity changes only at them (y_0 = 0)
    model.addConstr(Sf.sum(axis=1) == 1, name="eq24_start")
    model.addConstr(Cf.sum(axis=1) == 1, name="eq24_end")
    model.addConstr(y[:, :1] == Sf[:, :1] - Cf[:, :1], name="eq25_first")
    for a in range(0, M, BLOCK):
        b = min(a + BLOCK, M)
        model.addConstr(y[a:b, 1:] - y[a:b, :-1] == Sf[a:b, 1:] - Cf[a:b, 1:],
                        name=f"eq25_change[{a}:{b}]")
        tick()
    # (26) volume delivered; (27) rate only while active, at most F_m B
    model.addConstr(r.sum(axis=1) * dt >= inst.volume, name="eq26_volume")
    for a in range(0, M, BLOCK):
        b = min(a + BLOCK, M)
        model.addConstr(r[a:b] <= y[a:b] * (inst.flows[a:b] * B)[:, None],
                        name=f"eq27_active[{a}:{b}]")
        tick()
    # release times: the first active slice starts at (t-1) dt >= r_m
    first = np.ceil(inst.release / dt - 1e-9).astype(int) + 1
    for m in np.flatnonzero(first > 1):
        model.addConstr(Sf[m, : first[m] - 1].sum() == 0, name=f"release[{m}]")
    # (28) dependencies in slice units with the delay rounded up
    for a, b, d in inst.deps:
        tick()
        model.addConstr(slots @ Sf[int(b)] >= slots @ Cf[int(a)] + math.ceil(d / dt - 1e-9),
                        name=f"eq28_dep[{int(a)},{int(b)}]")
    # (29) optional fair sharing per directed link
    if fair:
        for rr in np.unique(res):
            tasks = np.flatnonzero(res == rr)
            if len(tasks) < 2:
                continue
            u = model.addMVar(T, lb=0.0, ub=B, name=f"u[{rr}]")
            for m in tasks:
                tick()
                model.addConstr(r[m] / inst.flows[m] - u <= B * (1 - y[m]), name=f"eq29a[{m}]")
                model.addConstr(u - r[m] / inst.flows[m] <= B * (1 - y[m]), name=f"eq29b[{m}]")
    # (30) makespan in slices, plus tails (rounded up) and the all-intra path Q_0
    q = np.ceil(inst.tail / dt - 1e-9)
    for m in range(M):
        tick()
        model.addConstr(C >= slots * Cf[m] + q[m] * Cf[m], name=f"eq30_makespan[{m}]")
    if inst.q0 > 0:
        model.addConstr(C >= inst.q0 / dt + 1, name="eq30_q0")
    model.setObjective(C, GRB.MINIMIZE)                                  # (19)
    tick.now()
    model.update()
    return model, FixedStepHandles(inst, dt, T, x, r, y, Sf, Cf, C)

