"""[002] A.4 GPU-placement models (gurobipy), spec 2.8: Pod level, then leaf level.

Units (``heuristics.lumos.placement``): a *slot* is ``tp`` free GPUs of one server (TP
inside a server); with T = tp = 8 a slot is the paper's server. ``cap.pod_slots[i]`` is
the paper's r_i in slots, ``cap.pod_free[i]`` the free GPUs of Pod i.

Corrected model (spec 2.8 [DECISION]; the printed (37)-(41) lack the s_i - x_i link and
(37)'s right side is off), ``build_pod``: over the Pods with a free whole EP unit,

* (37) tp * sum_i s_i = TP * PP * DP (the job's GPUs)
* (38) s_i <= slots_i * x_i (capacity, and s_i = 0 unless Pod i is selected)
* (40) s_i >= x_i (a selected Pod holds a TP group: the selection link)
* (39) tp * s_i >= ep * x_i (a selected Pod holds an EP domain)
* ep_whole: tp * s_i = ep * e_i (each Pod holds whole EP domains)
* (41) min sum_i free_i * x_i (free GPUs; idle GPUs left = this - the job's GPUs), with
  ``pods_first`` + W * sum_i x_i, W = sum_i free_i + 1 (fewest Pods first, lexicographic).

``build_leaf``: the same without EP over the leaves of the chosen Pods: sum of a Pod's
leaf slots = its Pod-level slots, capacity and link per leaf, min sum_l free_l * y_l (best
fit), with ``pods_first`` fewest leaves first.

[REPO] variant (spec 2.8), ``build_authors_pod`` / ``build_authors_leaf``, in slots: x_i in
[0, S] (S = slots of a whole Pod), used_i, e_i in [0, GPUs per Pod // ep], mini_x;
x_i <= free_i, x_i >= mini_x, sum x_i = required, used_i <= x_i, 10 S used_i >= x_i,
e_i ep = x_i tp; min 100 sum used_i + sum used_i free_i - mini_x, free_i in slots. The
leaf level drops e_i and mini_x.
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from heuristics.lumos.placement import Capacity
from instances.lumos.placement import PlacementInstance
from models.backend import Result, new_model


@dataclass
class LevelHandles:
    """The slot variables of one level: ``idx`` are the Pods or leaves they stand for."""

    idx: np.ndarray
    slots: list           # gp.Var per entry of idx
    size: int             # P (Pod level) or n_leaves (leaf level)


# The models have a few variables per Pod or leaf: scalar rows (addLConstr) build them in
# well under a millisecond, where matrix expressions cost ~10 ms of scipy.sparse overhead.
def _int_vars(model: gp.Model, ub, name: str) -> list:
    return [model.addVar(lb=0.0, ub=float(u), vtype=GRB.INTEGER, name=f"{name}[{k}]")
            for k, u in enumerate(ub)]


def _bin_vars(model: gp.Model, n: int, name: str) -> list:
    return [model.addVar(vtype=GRB.BINARY, name=f"{name}[{k}]") for k in range(n)]


def _row(model: gp.Model, coeffs, vars_, sense: str, rhs: float, name: str) -> None:
    model.addLConstr(gp.LinExpr([float(c) for c in coeffs], list(vars_)), sense, float(rhs), name)


def build_pod(inst: PlacementInstance, cap: Capacity, pods_first: bool = False
              ) -> tuple[gp.Model, LevelHandles]:
    """The corrected Pod-level model (module docstring)."""
    job = inst.job
    tp, ep = job.tp, job.ep
    pods = np.flatnonzero(cap.pod_units > 0)
    slots, free = cap.pod_slots[pods], cap.pod_free[pods]
    model = new_model("placement_pod")
    s = _int_vars(model, slots, "s")
    x = _bin_vars(model, len(pods), "x")
    e = _int_vars(model, slots * tp // ep, "e")
    # (37) the job's GPUs are all placed
    _row(model, [tp] * len(s), s, GRB.EQUAL, job.gpus, "eq37_job_gpus")
    for k in range(len(pods)):
        # (38) at most the Pod's free slots, none unless the Pod is selected
        _row(model, (1, -slots[k]), (s[k], x[k]), GRB.LESS_EQUAL, 0, f"eq38_capacity[{k}]")
        # (40) a selected Pod holds at least one TP group (links s to x)
        _row(model, (1, -1), (s[k], x[k]), GRB.GREATER_EQUAL, 0, f"eq40_selected[{k}]")
        # (39) a selected Pod holds at least one EP domain
        _row(model, (tp, -ep), (s[k], x[k]), GRB.GREATER_EQUAL, 0, f"eq39_ep_min[{k}]")
        # EP domains whole inside a Pod
        _row(model, (tp, -ep), (s[k], e[k]), GRB.EQUAL, 0, f"ep_whole[{k}]")
    # (41) fewest free GPUs in the selected Pods (best fit), optionally fewest Pods first
    w = float(free.sum() + 1) if pods_first else 0.0
    model.setObjective(gp.LinExpr([float(f) + w for f in free], x), GRB.MINIMIZE)
    model.update()
    return model, LevelHandles(pods, s, len(cap.pod_slots))


def _leaves_of(inst: PlacementInstance, per_pod: np.ndarray) -> np.ndarray:
    lpp = inst.cluster.fabric.leaves_per_pod
    return (np.flatnonzero(per_pod)[:, None] * lpp + np.arange(lpp)).ravel()


def build_leaf(inst: PlacementInstance, cap: Capacity, per_pod: np.ndarray,
               pods_first: bool = False) -> tuple[gp.Model, LevelHandles]:
    """The corrected leaf-level model: ``per_pod[i]`` slots over the leaves of Pod i."""
    leaves = _leaves_of(inst, per_pod)
    leaves = leaves[cap.leaf_slots[leaves] > 0]
    slots, free = cap.leaf_slots[leaves], cap.leaf_free[leaves]
    pod = inst.cluster.fabric.pod_of_leaf(leaves)
    model = new_model("placement_leaf")
    t = _int_vars(model, slots, "t")
    y = _bin_vars(model, len(leaves), "y")
    # each chosen Pod's slots are spread over its leaves
    for i in np.unique(pod):
        ks = np.flatnonzero(pod == i)
        _row(model, [1] * len(ks), [t[k] for k in ks], GRB.EQUAL, per_pod[i], f"leaf_demand[{i}]")
    for k in range(len(leaves)):
        # at most the leaf's free slots, none unless the leaf is selected; selected: >= 1
        _row(model, (1, -slots[k]), (t[k], y[k]), GRB.LESS_EQUAL, 0, f"leaf_capacity[{k}]")
        _row(model, (1, -1), (t[k], y[k]), GRB.GREATER_EQUAL, 0, f"leaf_selected[{k}]")
    # fewest free GPUs in the selected leaves, optionally fewest leaves first
    w = float(free.sum() + 1) if pods_first else 0.0
    model.setObjective(gp.LinExpr([float(f) + w for f in free], y), GRB.MINIMIZE)
    model.update()
    return model, LevelHandles(leaves, t, len(cap.leaf_slots))


def build_authors_pod(inst: PlacementInstance, cap: Capacity) -> tuple[gp.Model, LevelHandles]:
    """The [REPO] Pod-level model (module docstring), over every Pod."""
    job, cl = inst.job, inst.cluster
    P = cl.fabric.pods
    S = cl.gpus_per_pod // job.tp
    free = cap.pod_slots
    model = new_model("placement_authors_pod")
    x = _int_vars(model, [S] * P, "x")
    used = _bin_vars(model, P, "used")
    e = _int_vars(model, [cl.gpus_per_pod // job.ep] * P, "e")
    mini = model.addVar(lb=0.0, ub=float(S), vtype=GRB.INTEGER, name="mini_x")
    _row(model, [1] * P, x, GRB.EQUAL, cap.need, "required")
    for i in range(P):
        _row(model, (1,), (x[i],), GRB.LESS_EQUAL, free[i], f"free[{i}]")
        _row(model, (1, -1), (x[i], mini), GRB.GREATER_EQUAL, 0, f"mini_x[{i}]")
        _row(model, (1, -1), (used[i], x[i]), GRB.LESS_EQUAL, 0, f"used_le_x[{i}]")
        _row(model, (10 * S, -1), (used[i], x[i]), GRB.GREATER_EQUAL, 0, f"used_big_m[{i}]")
        _row(model, (job.ep, -job.tp), (e[i], x[i]), GRB.EQUAL, 0, f"ep_whole[{i}]")
    model.setObjective(gp.LinExpr([100.0 + float(f) for f in free] + [-1.0], used + [mini]),
                       GRB.MINIMIZE)
    model.update()
    return model, LevelHandles(np.arange(P), x, P)


def build_authors_leaf(inst: PlacementInstance, cap: Capacity, per_pod: np.ndarray
                       ) -> tuple[gp.Model, LevelHandles]:
    """The [REPO] leaf-level model over the leaves of the chosen Pods."""
    leaves = _leaves_of(inst, per_pod)
    S = inst.cluster.servers_per_leaf * (inst.cluster.gpus_per_server // inst.job.tp)
    free = cap.leaf_slots[leaves]
    pod = inst.cluster.fabric.pod_of_leaf(leaves)
    n = len(leaves)
    model = new_model("placement_authors_leaf")
    x = _int_vars(model, [S] * n, "x")
    used = _bin_vars(model, n, "used")
    for i in np.unique(pod):
        ks = np.flatnonzero(pod == i)
        _row(model, [1] * len(ks), [x[k] for k in ks], GRB.EQUAL, per_pod[i], f"required[{i}]")
    for k in range(n):
        _row(model, (1,), (x[k],), GRB.LESS_EQUAL, free[k], f"free[{k}]")
        _row(model, (1, -1), (used[k], x[k]), GRB.LESS_EQUAL, 0, f"used_le_x[{k}]")
        _row(model, (10 * S, -1), (used[k], x[k]), GRB.GREATER_EQUAL, 0, f"used_big_m[{k}]")
    model.setObjective(gp.LinExpr([100.0 + float(f) for f in free], used), GRB.MINIMIZE)
    model.update()
    return model, LevelHandles(leaves, x, inst.cluster.fabric.n_leaves)


def extract_level(h: LevelHandles, res: Result) -> np.ndarray:
    """Slots per Pod (or per leaf), length ``h.size``."""
    out = np.zeros(h.size, dtype=np.int64)
    out[h.idx] = np.round(res.value(h.slots)).astype(np.int64)
    return out


# ----------------------------------------------------------------------------------------
# the two-level solve
# ----------------------------------------------------------------------------------------
def exact_kw(solve_kw: dict) -> dict:
    """Solve keywords that prove optimality of an integral objective: relative gap 0 and
    absolute gap 0.999 unless the caller set a gap."""
    kw = dict(solve_kw)
    params = dict(kw.get("params") or {})
    if kw.get("mip_gap") is None and "MIPGap" not in params:
        kw["mip_gap"] = 0.0
    params.setdefault("MIPGapAbs", 0.999)
    kw["params"] = params
    return kw


def solve_placement(inst: PlacementInstance, variant: str = "corrected", pods_first: bool = False,
                    solve_kw=None, stage=None):
    """Pod level, then leaf level, then servers: (Placement or None, Result). ``variant``
    "corrected" (servers by best fit) or "authors" (the [REPO] models, GPUs in index order).
    The Result's objective is the idle GPUs left in the chosen Pods; its bound is that of
    the corrected Pod-level model without ``pods_first`` (else None: the model minimizes
    another objective). ``solve_kw``: the solve keywords, or a function giving them before each
    level (a run's budget: the leaf level gets what the Pod level left). ``stage(name)`` is a
    context manager timing each solve (optional)."""
    from contextlib import nullcontext

    from heuristics.lumos.placement import NoPlacement, assemble, capacity, pod_counts
    from models.backend import solve

    if variant not in ("corrected", "authors"):
        raise ValueError(f"variant must be corrected or authors, got {variant!r}")
    stage = stage or (lambda name: nullcontext())
    kw = solve_kw if callable(solve_kw) else (lambda: solve_kw or {})
    cap = capacity(inst)
    try:
        pod_counts(inst, cap)                     # a quick exact feasibility test
    except NoPlacement as exc:
        return None, Result("infeasible", message=f"no placement: {exc}")
    authors = variant == "authors"
    model, h = build_authors_pod(inst, cap) if authors else build_pod(inst, cap, pods_first)
    with stage("pod"):
        r1 = solve(model, **exact_kw(kw()))
    if not r1.has_solution:
        return None, r1
    per_pod = extract_level(h, r1)
    model, h = (build_authors_leaf(inst, cap, per_pod) if authors
                else build_leaf(inst, cap, per_pod, pods_first))
    with stage("leaf"):
        r2 = solve(model, **exact_kw(kw()))
    res = Result(r1.status if r2.status == "optimal" else r2.status, runtime_s=r1.runtime_s + r2.runtime_s,
                 backend=r1.backend, backend_reason=r1.backend_reason, n_vars=r1.n_vars + r2.n_vars,
                 n_int_vars=r1.n_int_vars + r2.n_int_vars, n_constrs=r1.n_constrs + r2.n_constrs,
                 message="; ".join(filter(None, [r1.message, r2.message])))
    if not r2.has_solution:
        return None, res
    sol = assemble(inst, cap, extract_level(h, r2), "index" if authors else "best_fit",
                   {"variant": variant, "pods_first": pods_first})
    free = cap.pod_free[sol.gpus_per_pod() > 0]
    res.objective = float(free.sum() - inst.job.gpus)
    if not authors and not pods_first and r1.bound is not None:
        res.bound = float(np.ceil(r1.bound - 1e-6) - inst.job.gpus)
    elif not authors and not pods_first and r1.status == "optimal":
        res.bound = res.objective
    res.x = np.zeros(0)          # has_solution (the placement is the solution)
    return sol, res
