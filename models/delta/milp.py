"""DELTA variable-length time-interval MILP: DELTA-Joint and DELTA-Topo.

Ye et al. 2026, Section III-B, Eqs. (3)-(18); delta spec 2.1. The timeline is split into
K intervals whose boundaries t_k are decisions; circuit counts are expanded in binary
(Eq. 7) so that x_ij * Delta_k is linearized with Big-M (Eq. 8). DELTA-Topo adds the
fair-sharing constraint (17); DELTA-Joint leaves per-interval volumes free (rate control).
Big-M values come from the instance (T_up = a simulated makespan; the per-link maximum
per-flow volume for Eq. 17), not a fixed 1e6. Pruning (Algorithm 1, spec 3.3) creates
the task-time variables only inside each task's interval window.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from instances.dag import topological_order
from instances.delta.instance import DeltaInstance, DeltaSolution, nic_groups, x_max
from models.backend import Result, every, new_model


# ------------------------------------------------------------------------------------------
# Intervals, anchors and Algorithm 1 pruning
# ------------------------------------------------------------------------------------------
@dataclass
class Profile:
    """Event times of a simulated schedule and each task's [first, last] interval (1-based)."""

    times: np.ndarray
    k_start: np.ndarray
    k_end: np.ndarray
    makespan: float

    @property
    def K(self) -> int:
        return len(self.times) - 1

    def intervals(self, pad: int = 2) -> int:
        """The model's K (spec 3.3): the simulation's intervals + max(pad, 5%)."""
        return self.K + max(pad, int(np.ceil(0.05 * self.K)))


def profile(inst: DeltaInstance, sim) -> Profile:
    """Spec 3.3 anchor profiling: E = the simulator's event times; anchors from S_m, C_m."""
    t = np.asarray(sim.times, dtype=float)
    ks = np.searchsorted(t, sim.start - 1e-9 * max(1.0, t[-1])) + 1
    ke = np.searchsorted(t, sim.finish - 1e-9 * max(1.0, t[-1]))    # t_{k+1} = C_m
    return Profile(t, ks.astype(int), ke.astype(int), float(sim.makespan))


def prune_windows(inst: DeltaInstance, K: int, prof: Profile | None = None, margin: int = 2,
                  anchors: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 TaskTimeIndexPruning: (k_min, k_max) per task, 1-based inclusive.

    Anchors (from ``prof``, widened by ``margin``) apply to tasks with successors (M_succ);
    DAG propagation then tightens every window (+2 after a positive delay, else +1).
    """
    M = inst.n_tasks
    kmin = np.ones(M, dtype=np.int64)
    kmax = np.full(M, K, dtype=np.int64)
    kmin[inst.release > 0] = 2                      # t_1 = 0 < r_m <= S_m
    pre = inst.deps[:, 0].astype(int)
    suc = inst.deps[:, 1].astype(int)
    gap = np.where(inst.deps[:, 2] > 0, 2, 1)
    if anchors and prof is not None:
        has_succ = np.zeros(M, bool)
        has_succ[pre] = True
        kmin[has_succ] = np.maximum(kmin[has_succ], prof.k_start[has_succ] - margin)
        kmax[has_succ] = np.minimum(kmax[has_succ], prof.k_end[has_succ] + margin)
    order = topological_order(M, pre, suc).tolist()
    out_edges = [[] for _ in range(M)]
    in_edges = [[] for _ in range(M)]
    for i, (a, b) in enumerate(zip(pre, suc)):
        out_edges[a].append(i)
        in_edges[b].append(i)
    for u in order:                                 # Step 2: forward (earliest start)
        for i in out_edges[u]:
            kmin[suc[i]] = max(kmin[suc[i]], kmin[u] + gap[i])
    for v in order[::-1]:                           # Step 3: backward (latest end)
        for i in in_edges[v]:
            kmax[pre[i]] = min(kmax[pre[i]], kmax[v] - gap[i])
    if np.any(kmin > kmax):
        m = int(np.argmax(kmin > kmax))
        raise ValueError(f"empty interval window for task {m} (k_min {kmin[m]} > k_max {kmax[m]}): "
                         "increase K or the anchor margin")
    return kmin, kmax


# ------------------------------------------------------------------------------------------
# The model
# ------------------------------------------------------------------------------------------
@dataclass
class IntervalHandles:
    inst: DeltaInstance
    variant: str
    K: int
    T_up: float
    kmin: np.ndarray
    kmax: np.ndarray
    x: gp.MVar
    beta: dict                 # (e, b) -> Var
    rho: dict                  # (e, b, k) -> Var
    t: gp.MVar                 # t_1..t_{K+1}  (index 0..K)
    delta: gp.MVar             # Delta_1..Delta_K (index 0..K-1)
    w: dict                    # (m, k) -> Var
    y: dict
    s: dict
    S: gp.MVar
    C_m: gp.MVar
    C: gp.Var
    u: dict = field(default_factory=dict)   # (r, k) -> Var (Topo only)
    ports: gp.LinExpr | None = None         # sum_{i != j} x_ij (objective 4)


def build_interval(inst: DeltaInstance, K: int, T_up: float, variant: str = "joint",
                   windows: tuple[np.ndarray, np.ndarray] | None = None,
                   paper_exact_makespan: bool = False, x_ub: np.ndarray | None = None,
                   x_fixed: np.ndarray | None = None, min_duration: bool = False,
                   time_windows: tuple[np.ndarray, np.ndarray] | None = None,
                   check: Callable[[], None] | None = None) -> tuple[gp.Model, IntervalHandles]:
    """DELTA-Joint (``variant="joint"``) or DELTA-Topo (``"topo"``, adds Eq. 17).

    ``K`` intervals, ``T_up`` an upper bound on the makespan (Big-M of Eqs. 8 and 15),
    ``windows`` = (k_min, k_max) per task from :func:`prune_windows` (default: all of 1..K).
    ``paper_exact_makespan`` drops the tails q_m from Eq. 18 (C >= C_m, as printed).

    Optional valid tightenings of spec 2.1 (all off = the paper's model): ``x_ub`` (e.g.
    Alg. 2's X-bar; also shortens the binary expansion L_ij), ``min_duration`` (C_m >= S_m +
    V_m/(F_m B): a task never beats its F_m NICs), ``time_windows`` = (EST, LCT) from Alg. 4
    with T-hat = T_up (EST_m <= S_m, C_m <= LCT_m). None removes a schedule with C <= T_up.

    ``check`` (e.g. ``Budget.check``) is called every few hundred rows; it may raise to stop
    the build (the run's time limit).
    """
    tick = every(check)
    if variant not in ("joint", "topo"):
        raise ValueError(f"variant must be joint or topo, got {variant!r}")
    B, M, nE = inst.bandwidth, inst.n_tasks, len(inst.links)
    kmin, kmax = windows if windows is not None else (np.ones(M, int), np.full(M, K, int))
    xm = x_max(inst) if x_ub is None else np.minimum(x_max(inst), x_ub)
    used = np.zeros(nE, bool)
    used[inst.link_of] = True
    if np.any(used & (xm < 1)):
        raise ValueError("a link with traffic cannot get a circuit within the port budgets")
    L = [int(math.floor(math.log2(v))) + 1 if v >= 1 else 0 for v in xm]
    bigM = T_up
    model = new_model(f"delta_{variant}")

    # --- variables (spec 2.1 table) -------------------------------------------------------
    x = model.addMVar(nE, vtype=GRB.INTEGER, lb=used.astype(float), ub=xm, name="x")
    beta = {(e, b): model.addVar(vtype=GRB.BINARY, name=f"beta[{e},{b}]")
            for e in range(nE) for b in range(L[e])}
    t = model.addMVar(K + 1, lb=0.0, ub=T_up, name="t")
    dlt = model.addMVar(K, lb=0.0, ub=T_up, name="Delta")
    rho = {(e, b, k): model.addVar(lb=0.0, ub=T_up, name=f"rho[{e},{b},{k}]")
           for e in range(nE) if used[e] for b in range(L[e]) for k in range(K)}
    w, y, s = {}, {}, {}
    for m in range(M):
        tick()
        for k in range(kmin[m] - 1, kmax[m]):       # 0-based interval index
            w[m, k] = model.addVar(lb=0.0, ub=inst.volume[m], name=f"w[{m},{k}]")
            y[m, k] = model.addVar(vtype=GRB.BINARY, name=f"y[{m},{k}]")
            s[m, k] = model.addVar(vtype=GRB.BINARY, name=f"sflag[{m},{k}]")
    S = model.addMVar(M, lb=inst.release, ub=T_up, name="S")      # (16) release r_m <= S_m
    Cm = model.addMVar(M, lb=0.0, ub=T_up, name="Cm")
    C = model.addVar(lb=0.0, ub=T_up, name="C")
    model.addConstr(t[0] == 0, name="t1_zero")
    # scalar views for the per-index rows below (MVar indexing builds sparse matrices: slow)
    xv, tv, dv, Sv, Cv = x.tolist(), t.tolist(), dlt.tolist(), S.tolist(), Cm.tolist()

    # --- 1) topology: (5) ports per pod, (6) symmetric by construction, (7) binary expansion
    model.addConstr(inst.incidence @ x <= inst.ports, name="eq5_ports")
    for e in range(nE):
        model.addConstr(xv[e] == gp.quicksum((1 << b) * beta[e, b] for b in range(L[e])),
                        name=f"eq7_binary[{e}]")
    if x_fixed is not None:
        model.addConstr(x == np.asarray(x_fixed, float), name="x_fixed")

    tick.now()
    # --- 2) capacity: (8) rho = beta * Delta; (9) directed link; (10) NICs -----------------
    for (e, b, k), r in rho.items():
        tick()
        model.addConstr(r <= bigM * beta[e, b], name=f"eq8a[{e},{b},{k}]")
        model.addConstr(r <= dv[k], name=f"eq8b[{e},{b},{k}]")
        model.addConstr(r >= dv[k] - bigM * (1 - beta[e, b]), name=f"eq8c[{e},{b},{k}]")
    res = inst.res_of
    for r in np.unique(res):
        e = r // 2
        tasks = np.flatnonzero(res == r)
        for k in range(K):
            tick()
            lhs = [w[m, k] for m in tasks if (m, k) in w]
            if lhs:
                model.addConstr(gp.quicksum(lhs) <= B * gp.quicksum((1 << b) * rho[e, b, k]
                                                                    for b in range(L[e])),
                                name=f"eq9_link[{r},{k}]")
    for side in ("src_gpus", "dst_gpus"):
        groups = nic_groups(inst.tasks, side)
        for key in groups:                           # one row per distinct Phi(g) (spec 2.1)
            for k in range(K):
                tick()
                lhs = [w[m, k] * (1.0 / inst.flows[m]) for m in key if (m, k) in w]
                if lhs:
                    model.addConstr(gp.quicksum(lhs) <= B * dv[k],
                                    name=f"eq10_{side[:3]}[{groups[key]},{k}]")

    tick.now()
    # --- 3) conservation (11), activation (12), one contiguous block (13) -----------------
    for m in range(M):
        tick()
        ks = range(kmin[m] - 1, kmax[m])
        model.addConstr(gp.quicksum(w[m, k] for k in ks) == inst.volume[m], name=f"eq11_volume[{m}]")
        for k in ks:
            model.addConstr(w[m, k] <= inst.volume[m] * y[m, k], name=f"eq12_active[{m},{k}]")
            prev = y.get((m, k - 1), 0)
            model.addConstr(s[m, k] >= y[m, k] - prev, name=f"eq13_rise[{m},{k}]")
        model.addConstr(gp.quicksum(s[m, k] for k in ks) == 1, name=f"eq13_once[{m}]")

    tick.now()
    # --- 4) interval boundaries (14) and mapping to S_m, C_m (15) -------------------------
    model.addConstr(dlt == t[1:] - t[:-1], name="eq14_length")
    for (m, k), yv in y.items():
        tick()
        model.addConstr(Sv[m] <= tv[k] + bigM * (1 - yv), name=f"eq15_start[{m},{k}]")
        model.addConstr(Cv[m] >= tv[k + 1] - bigM * (1 - yv), name=f"eq15_end[{m},{k}]")

    # --- 5) DAG (16) ------------------------------------------------------------------------
    for a, b, d in inst.deps:
        model.addConstr(Sv[int(b)] >= Cv[int(a)] + d, name=f"eq16_dep[{int(a)},{int(b)}]")

    tick.now()
    # --- 6) fair sharing (17), DELTA-Topo only -----------------------------------------------
    u = {}
    if variant == "topo":
        for r in np.unique(res):
            tasks = np.flatnonzero(res == r)
            ubar = float(max(inst.volume[m] / inst.flows[m] for m in tasks))
            for k in range(K):
                tick()
                act = [m for m in tasks if (m, k) in w]
                if len(act) < 2:
                    continue                         # a lone task has nothing to share with
                u[r, k] = model.addVar(lb=0.0, ub=ubar, name=f"u[{r},{k}]")
                for m in act:
                    model.addConstr(w[m, k] * (1.0 / inst.flows[m]) - u[r, k] <= ubar * (1 - y[m, k]),
                                    name=f"eq17a[{m},{k}]")
                    model.addConstr(u[r, k] - w[m, k] * (1.0 / inst.flows[m]) <= ubar * (1 - y[m, k]),
                                    name=f"eq17b[{m},{k}]")

    # --- 7) makespan (18), with tails q_m and the all-intra path Q_0 (spec 1.2.3) -------------
    q = np.zeros(M) if paper_exact_makespan else inst.tail
    model.addConstr(C >= Cm + q, name="eq18_makespan")
    if inst.q0 > 0 and not paper_exact_makespan:
        model.addConstr(C >= inst.q0, name="eq18_q0")

    # --- optional valid tightenings (spec 2.1, "fast" mode) ----------------------------------
    if min_duration:
        tau = inst.volume / (inst.flows * B)
        model.addConstr(Cm >= S + tau, name="cut_min_duration")
    if time_windows is not None:
        est, lct = (np.asarray(v, float) for v in time_windows)
        S.lb = np.maximum(inst.release, np.minimum(est, T_up))
        Cm.ub = np.clip(lct, 0.0, T_up)
    tick.now()
    model.setObjective(C, GRB.MINIMIZE)                         # (3)
    mult = inst.incidence.sum(axis=0)                             # (4): sum_{i != j} x_ij
    ports = gp.quicksum(float(mult[e]) * xv[e] for e in range(nE))
    model.update()
    return model, IntervalHandles(inst, variant, K, T_up, kmin, kmax, x, beta, rho, t, dlt, w, y,
                                  s, S, Cm, C, u, ports)


# ------------------------------------------------------------------------------------------
# Hot start from a simulated trace (spec 3.6) and extraction
# ------------------------------------------------------------------------------------------
def mip_start(h: IntervalHandles, x, sim) -> dict:
    """A complete MIP start from a simulator trace on topology ``x``."""
    inst, K = h.inst, h.K
    times = np.asarray(sim.times, float)
    n = len(times) - 1
    if n > K:
        raise ValueError(f"the trace has {n} intervals, the model only {K}")
    tk = np.concatenate([times, np.full(K - n, times[-1])])
    dl = np.diff(tk)
    start = {}
    start.update(zip(h.t.tolist(), tk))
    start.update(zip(h.delta.tolist(), dl))
    x = np.asarray(x, float)
    start.update(zip(h.x.tolist(), x))
    for (e, b), v in h.beta.items():
        start[v] = float((int(x[e]) >> b) & 1)
    for (e, b, k), v in h.rho.items():
        start[v] = ((int(x[e]) >> b) & 1) * dl[k]
    W = np.zeros((inst.n_tasks, K))
    vol = np.asarray(sim.vol).reshape(-1, 3)
    np.add.at(W, (vol[:, 0].astype(int), vol[:, 1].astype(int)), vol[:, 2])
    for m in range(inst.n_tasks):
        active = [k for k in range(K) if dl[k] > 0 and tk[k] >= sim.start[m] - 1e-9 * max(1, tk[-1])
                  and tk[k + 1] <= sim.finish[m] + 1e-9 * max(1, tk[-1])]
        first = min(active)
        for k in range(h.kmin[m] - 1, h.kmax[m]):
            on = k in active
            start[h.y[m, k]] = float(on)
            start[h.s[m, k]] = float(k == first)
            start[h.w[m, k]] = W[m, k] if on else 0.0
        if not all(h.kmin[m] - 1 <= k < h.kmax[m] for k in active):
            raise ValueError(f"task {m}'s simulated intervals fall outside its pruning window")
        # rescale so that (11) holds exactly (spec 3.6 tolerance advice)
        ws = [h.w[m, k] for k in active]
        tot = sum(start[v] for v in ws)
        for v in ws:
            start[v] *= inst.volume[m] / tot
    start.update(zip(h.S.tolist(), sim.start))
    start.update(zip(h.C_m.tolist(), sim.finish))
    start[h.C] = float(sim.makespan)
    res = inst.res_of
    for (r, k), v in h.u.items():
        vals = [start[h.w[m, k]] / inst.flows[m] for m in np.flatnonzero(res == r)
                if (m, k) in h.w and start[h.y[m, k]] > 0.5]
        start[v] = float(np.mean(vals)) if vals else 0.0
    return start


def extract_interval(h: IntervalHandles, res: Result) -> DeltaSolution:
    """Topology and schedule of a solution; S_m/C_m tightened to the active block.

    [DECISION] solver tolerance: a solver meets the Big-M rows (15) only up to its tolerance
    on scaled rows (Gurobi: ~1e-6 x T_up), so a block's end t_{k+1} can exceed the model's
    C_m and the block-tightened times can miss a release or Eq. (16) by that much. The
    boundaries are pushed later (never earlier, interval lengths kept) just enough that
    every release and Eq. (16) holds with the blocks; an exact solution is unchanged.
    """
    inst = h.inst
    x = np.round(res.value(h.x))
    t = np.maximum.accumulate(np.maximum(res.value(h.t), 0.0))
    t[0] = 0.0
    M = inst.n_tasks
    blocks = []
    for m in range(M):
        window = range(h.kmin[m] - 1, h.kmax[m])
        ks = [k for k in window if res.value(h.y[m, k]) > 0.5]
        if not ks:   # integrality tolerance: fall back to the intervals that carry volume
            ks = [k for k in window if res.value(h.w[m, k]) > 1e-9 * inst.volume[m]]
        blocks.append(ks)
    first = np.array([min(ks) for ks in blocks])
    end = np.array([max(ks) + 1 for ks in blocks])      # index of t_{k+1} after the block
    t = _push_boundaries(inst, t, first, end)
    S, C = t[first], t[end]
    rows = []
    for m, ks in enumerate(blocks):
        ws = np.array([max(res.value(h.w[m, k]), 0.0) for k in ks])
        ws *= inst.volume[m] / ws.sum()
        rows += [(m, k, v) for k, v in zip(ks, ws) if v > 0]
    return DeltaSolution(x, t, np.array(rows, float).reshape(-1, 3), S, C)


def _push_boundaries(inst: DeltaInstance, t: np.ndarray, first: np.ndarray,
                     end: np.ndarray) -> np.ndarray:
    """Boundaries t' >= t with t'_{k+1} - t'_k >= t_{k+1} - t_k, the least such that every
    task's first boundary is >= its release and >= t'_{end of each predecessor} + delay
    (one pass in boundary order; a predecessor ending at or after the successor's first boundary
    is left as it is)."""
    need = np.full(len(t), -np.inf)
    np.maximum.at(need, first, inst.release)
    by_first: dict[int, list] = {}
    for a, b, d in inst.deps:
        by_first.setdefault(int(first[int(b)]), []).append((int(end[int(a)]), d))
    out = t.copy()
    shift = 0.0
    for k in range(len(t)):
        req = max([need[k]] + [out[j] + d for j, d in by_first.get(k, ()) if j < k])
        shift = max(shift, req - t[k])
        out[k] = t[k] + shift
    return out
