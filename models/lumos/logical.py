"""[002] Section 4.1 logical-topology model (5)(6)(8) (gurobipy), spec 2.7.

Variables L_abh in Z>=0 (requirement from leaf a to leaf b routed via spine h), only for
leaf pairs with L_ab > 0. Constraints:

* (5) sum_h L_abh = L_ab
* (6) sum_b L_abh <= tau and sum_a L_abh <= tau (leaf-spine links of leaf a / b to spine h)
* (8) sum_{a in i, b in j} L_abh = sum_{a in i, b in j} L_bah (pod-level symmetry, L2)

``mode="feasibility"`` is the paper's model (no objective, spec 7.8); ``mode="min_contention"``
replaces tau in (6) by an integer z and minimizes z (contention level = z / tau); it adds
the spine port budget (12), sum_{a in Pod i} sum_b L_abh <= K_spine, which (6) implies
only when z <= tau.
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
import scipy.sparse as sp
from gurobipy import GRB

from instances.lumos.logical import LogicalInstance, LogicalSolution
from models.backend import Result, new_model
from models.lumos.ilp import incidence


@dataclass
class LogicalHandles:
    x: gp.MVar           # (n_pairs * H,), pair-major
    a: np.ndarray        # ordered leaf pairs (a, b) with L_ab > 0
    b: np.ndarray
    H: int
    z: gp.Var | None


def logical_size(inst: LogicalInstance) -> int:
    """Variables of :func:`build_logical`."""
    return int(np.count_nonzero(inst.L)) * inst.fabric.H + 1


def build_logical(inst: LogicalInstance, mode: str = "feasibility") -> tuple[gp.Model, LogicalHandles]:
    """The logical-topology model of [002] 4.1 (the module's Eqs. 5, 6, 8; ``eq5_demand``,
    ``eq6_out``/``eq6_in``, ``eq8_symmetry``): ``mode="feasibility"`` as printed, or
    ``"min_contention"`` (z for tau in (6), minimized, with the port budget ``eq12_ports``).
    Returns the model and the handles :func:`extract_logical` reads."""
    if mode not in ("feasibility", "min_contention"):
        raise ValueError(f"mode must be feasibility or min_contention, got {mode!r}")
    fab, L = inst.fabric, inst.L
    H, n, tau = fab.H, fab.n_leaves, fab.tau
    a, b = np.nonzero(L)
    no = len(a)
    model = new_model(f"logical_{mode}")
    x = model.addMVar(no * H, lb=0.0, ub=np.repeat(L[a, b], H).astype(float), vtype=GRB.INTEGER,
                      name="L")
    vp, vh = np.repeat(np.arange(no), H), np.tile(np.arange(H), no)
    # (5) the requirement of every leaf pair is met exactly
    model.addMConstr(incidence(vp, no, no * H), x, GRB.EQUAL, L[a, b].astype(float), name="eq5_demand")
    out_rows = incidence(a[vp] * H + vh, n * H, no * H)
    in_rows = incidence(b[vp] * H + vh, n * H, no * H)
    z = None
    if mode == "feasibility":
        # (6) at most tau units per leaf-spine link bundle, each direction
        model.addMConstr(out_rows, x, GRB.LESS_EQUAL, np.full(n * H, float(tau)), name="eq6_out")
        model.addMConstr(in_rows, x, GRB.LESS_EQUAL, np.full(n * H, float(tau)), name="eq6_in")
        model.setObjective(gp.LinExpr(), GRB.MINIMIZE)
    else:
        zv = model.addMVar(1, lb=0.0, ub=float(fab.k_leaf), vtype=GRB.INTEGER, name="z")
        z = zv.tolist()[0]
        # (6) with z for tau: the load of every used leaf-spine bundle, each direction, <= z
        # (one sparse block per direction: a constraint at a time took 45 s at P = 8)
        for name, rows in (("eq6_out", out_rows), ("eq6_in", in_rows)):
            R = rows[np.flatnonzero(rows.getnnz(axis=1))]
            minus_z = sp.csr_matrix(-np.ones((R.shape[0], 1)))
            model.addMConstr(sp.hstack([R, minus_z], format="csr"), gp.MVar.fromlist(x.tolist() + [z]),
                             GRB.LESS_EQUAL, np.zeros(R.shape[0]), name=name)
        # (12) port budget of spine (i, h): implied by (6) when z <= tau, not when z > tau
        pod_rows = incidence(fab.pod_of_leaf(a[vp]) * H + vh, fab.pods * H, no * H)
        model.addMConstr(pod_rows, x, GRB.LESS_EQUAL, np.full(fab.pods * H, float(fab.k_spine)),
                         name="eq12_ports")
        model.setObjective(z, GRB.MINIMIZE)
    # (8) pod-level symmetry per spine: sum over i -> j equals sum over j -> i
    pod = fab.pod_of_leaf
    pa, pb = pod(a[vp]), pod(b[vp])
    lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
    key = (lo * fab.pods + hi) * H + vh
    uk, row = np.unique(key, return_inverse=True)
    sign = np.where(pa < pb, 1.0, -1.0)
    model.addMConstr(incidence(row, len(uk), no * H, vals=sign), x, GRB.EQUAL, np.zeros(len(uk)),
                     name="eq8_symmetry")
    model.update()
    return model, LogicalHandles(x, a, b, H, z)


def logical_start(h: LogicalHandles, sol: LogicalSolution) -> dict:
    """MIP start (complete) from a solution's entries."""
    val = {(int(a), int(b), int(hh)): int(c) for a, b, hh, c in sol.entries}
    xs = h.x.tolist()
    start = {xs[o * h.H + hh]: float(val.get((int(h.a[o]), int(h.b[o]), hh), 0))
             for o in range(len(h.a)) for hh in range(h.H)}
    if h.z is not None:                         # min-contention: z = the largest load
        load: dict = {}
        for a, b, hh, c in sol.entries:
            for key in (("o", int(a), int(hh)), ("i", int(b), int(hh))):
                load[key] = load.get(key, 0) + int(c)
        start[h.z] = float(max(load.values(), default=0))
    return start


def extract_logical(h: LogicalHandles, res: Result) -> LogicalSolution:
    v = np.round(res.value(h.x)).astype(np.int64).reshape(len(h.a), h.H)
    o, hh = np.nonzero(v)
    return LogicalSolution(np.stack([h.a[o], h.b[o], hh, v[o, hh]], axis=1).astype(np.int64))
