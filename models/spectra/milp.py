"""Spectra math programs: the Refine LP (paper Eq. 5) and an exact makespan MILP.

The paper's only program is the Refine LP (Liang et al. 2026, Section III-A, Eq. 5).
The makespan MILP is **not in the paper**: it is the spec's section 3.7 model, an
exact formulation of Eqs. 1-4 with T configuration slots per switch. Its optimum
OPT_T is the true optimum restricted to T slots per switch (an upper bound on OPT;
with T >= the slots a given schedule uses, OPT_T is at most that schedule's makespan).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import gurobipy as gp
import numpy as np
import scipy.sparse as sp
from gurobipy import GRB

from models.backend import Result, new_model
from instances.spectra.instance import SpectraInstance, SpectraSchedule, support


# ----------------------------------------------------------------------------------------
# Refine LP (Eq. 5)
# ----------------------------------------------------------------------------------------
@dataclass
class RefineLPHandles:
    alpha: gp.MVar
    D: np.ndarray
    perms: list


def build_refine_lp(D: np.ndarray, perms: list[np.ndarray]) -> tuple[gp.Model, RefineLPHandles]:
    """Eq. 5: min sum_i alpha_i  s.t.  sum_i alpha_i P_i >= D (every nonzero of D), alpha >= 0."""
    D = np.asarray(D, dtype=float)
    model = new_model("spectra_refine_lp")
    k = len(perms)
    alpha = model.addMVar(k, lb=0.0, name="alpha")
    rows, cols = np.nonzero(support(D))
    # P[e, i] = 1 when permutation i connects the e-th nonzero (row, col) of D
    P = np.stack([p[rows] == cols for p in perms], axis=1).astype(float) if k else \
        np.zeros((len(rows), 0))
    # Eq. 5 coverage: every nonzero of D is served by the permutations through it
    model.addMConstr(P, alpha, GRB.GREATER_EQUAL, D[rows, cols], name="eq5_cover")
    model.setObjective(alpha.sum(), GRB.MINIMIZE)
    model.update()
    return model, RefineLPHandles(alpha, D, perms)


def extract_refine_lp(h: RefineLPHandles, res: Result) -> np.ndarray:
    """Durations from the LP, lifted by any residual left by solver tolerances (greedy Refine)."""
    from heuristics.spectra.refine import Decomposition, refine_greedy

    alphas = np.maximum(np.asarray(res.value(h.alpha), dtype=float), 0.0)
    return refine_greedy(h.D, Decomposition(list(h.perms), alphas))


# ----------------------------------------------------------------------------------------
# Exact makespan MILP (spec 3.7; not in the paper)
# ----------------------------------------------------------------------------------------
@dataclass
class MilpHandles:
    inst: SpectraInstance
    edges: np.ndarray          # (|E|, 2) rows/cols of supp(D)
    u: gp.MVar                 # (s, T) slot used
    alpha: gp.MVar             # (s, T) duration
    x: gp.MVar                 # (s, T, |E|) circuit on
    y: gp.MVar                 # (s, T, |E|) service
    C: gp.Var                  # makespan


def milp_size(inst: SpectraInstance, slots: int) -> tuple[int, int]:
    """(variables, constraints) of :func:`build_milp` without building it."""
    E = int(support(inst.demand).sum())
    s, n = inst.switches, inst.n
    return s * slots * (2 + 2 * E) + 1, s * slots * (2 * n + 2 * E + 2) + E + s


def build_milp(inst: SpectraInstance, slots: int, lb_cut: float | None = None,
               symmetry: bool = True, check: Callable[[], None] | None = None
               ) -> tuple[gp.Model, MilpHandles]:
    """Minimum-makespan MILP with ``slots`` = T configurations per switch (spec 3.7).

    ``lb_cut`` adds C >= LB (Section IV); ``symmetry`` orders slots and switches.
    ``check`` (e.g. ``Budget.check``) is called after each switch's rows; it may raise to
    stop the build (the run's time limit).
    """
    check = check or (lambda: None)
    D, s, delta = inst.demand, inst.switches, inst.delay
    n = inst.n
    rows, cols = np.nonzero(support(D))
    E, T = len(rows), int(slots)
    dem = D[rows, cols]
    rho = float(max(D.sum(axis=0).max(), D.sum(axis=1).max())) if E else 0.0
    model = new_model("spectra_makespan_milp")
    u = model.addMVar((s, T), vtype=GRB.BINARY, name="u")
    alpha = model.addMVar((s, T), lb=0.0, name="alpha")
    x = model.addMVar((s, T, E), vtype=GRB.BINARY, name="x")
    y = model.addMVar((s, T, E), lb=0.0, name="y")
    C = model.addVar(lb=0.0, name="C")
    check()

    # Eq. 1 (a configuration is a partial permutation): per input row and output column
    # at most one circuit, and only in a used slot. R, K: rows/columns of D x edges (sparse).
    R = sp.csr_matrix((np.ones(E), (rows, np.arange(E))), shape=(n, E))
    K = sp.csr_matrix((np.ones(E), (cols, np.arange(E))), shape=(n, E))
    R, K = R[np.unique(rows)], K[np.unique(cols)]
    # per switch, the (T x E) service block against the T durations and the E circuits
    I = sp.identity(T * E, format="csr")
    per_slot = sp.kron(sp.identity(T), np.ones((E, 1)), format="csr")     # y[t, e] -> alpha[t]
    dem_tile = sp.diags(np.tile(dem, T), format="csr")
    for h in range(s if E else 0):
        for t in range(T):
            model.addConstr(R @ x[h, t] <= u[h, t], name=f"eq1_row[{h},{t}]")
            model.addConstr(K @ x[h, t] <= u[h, t], name=f"eq1_col[{h},{t}]")
        yh, xh = y[h].reshape(-1), x[h].reshape(-1)
        # Service on an edge is bounded by the slot duration and only flows on a circuit.
        model.addConstr(I @ yh - per_slot @ alpha[h] <= 0, name=f"serve_le_duration[{h}]")
        model.addConstr(I @ yh - dem_tile @ xh <= 0, name=f"serve_on_circuit[{h}]")
        check()
    # Eq. 3 coverage: sum over switches and slots of service >= D_e.
    model.addConstr(y.sum(axis=(0, 1)) >= dem, name="eq3_cover")
    # An unused slot has zero duration (rho = max line sum bounds any useful duration).
    model.addConstr(alpha <= rho * u, name="duration_if_used")
    # Eq. 2/4 makespan: C >= sum_t (delta u_ht + alpha_ht) for every switch h.
    model.addConstr(C >= delta * u.sum(axis=1) + alpha.sum(axis=1), name="eq4_makespan")
    if symmetry and T > 1:
        model.addConstr(u[:, :-1] >= u[:, 1:], name="sym_slots")
    if symmetry and s > 1:
        model.addConstr(u[:-1].sum(axis=1) >= u[1:].sum(axis=1), name="sym_switches")
    if lb_cut is not None:
        model.addConstr(C >= lb_cut, name="lower_bound_cut")
    model.setObjective(C, GRB.MINIMIZE)
    check()
    model.update()
    return model, MilpHandles(inst, np.stack([rows, cols], axis=1), u, alpha, x, y, C)


def milp_start(h: MilpHandles, sched: SpectraSchedule) -> dict:
    """A complete MIP start from any verified schedule that fits in the slots."""
    s, T = h.u.shape
    if len(sched.switches) > s or any(len(sw) > T for sw in sched.switches):
        raise ValueError("schedule does not fit the MILP's switches/slots")
    rows, cols = h.edges[:, 0], h.edges[:, 1]
    dem = h.inst.demand[rows, cols]
    # Switch symmetry wants non-increasing slot counts: order switches by count.
    order = sorted(range(len(sched.switches)), key=lambda k: -len(sched.switches[k]))
    u = np.zeros((s, T)); al = np.zeros((s, T))
    x = np.zeros((s, T, len(rows))); y = np.zeros_like(x)
    for hh, k in enumerate(order):
        for t, (perm, a) in enumerate(sched.switches[k]):
            u[hh, t], al[hh, t] = 1.0, a
            on = perm[rows] == cols
            x[hh, t] = on
            y[hh, t] = np.where(on, np.minimum(a, dem), 0.0)
    loads = h.inst.delay * u.sum(axis=1) + al.sum(axis=1)
    start = {}
    for var, val in ((h.u, u), (h.alpha, al), (h.x, x), (h.y, y)):
        start.update(zip(np.ravel(var.tolist()), np.ravel(val)))
    start[h.C] = float(loads.max(initial=0.0))
    return start


def extract_milp(h: MilpHandles, res: Result) -> SpectraSchedule:
    """The schedule in the solution: used slots, their circuits and durations.

    Durations are lifted by any coverage shortfall left within solver tolerances
    (at most the feasibility tolerance), so the schedule passes the exact checker.
    """
    u, al, x = res.value(h.u), res.value(h.alpha), res.value(h.x)
    n = h.inst.n
    rows, cols = h.edges[:, 0], h.edges[:, 1]
    configs = []  # (h, perm, duration, mask over edges)
    per_switch: list[list] = [[] for _ in range(u.shape[0])]
    for hh in range(u.shape[0]):
        for t in range(u.shape[1]):
            if u[hh, t] < 0.5:
                continue
            on = x[hh, t] > 0.5
            perm = np.full(n, -1, dtype=np.int64)
            perm[rows[on]] = cols[on]
            configs.append([hh, perm, max(float(al[hh, t]), 0.0), on])
    dem = h.inst.demand[rows, cols]
    served = np.zeros(len(rows))
    for _, _, a, on in configs:
        served[on] += a
    for e in range(len(rows)):
        gap = dem[e] - served[e]
        owners = [c for c in configs if c[3][e]]
        if gap > 0 and owners:
            best = max(owners, key=lambda c: c[2])
            best[2] += gap
            served[best[3]] += gap
    for hh, perm, a, _ in configs:
        per_switch[hh].append((perm, a))
    return SpectraSchedule(per_switch)
