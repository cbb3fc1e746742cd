"""[002] A.8 staged-reconfiguration model, the spec's corrected form (2.11, 7.10), gurobipy.

Variables y_hw in {0,1}: group h is reconfigured in stage w. Only the packable changed
groups (instances.lumos.staging: the ones that fit a stage alone) take part; a group that
alone exceeds a leaf's budget gets a stage of its own outside the model. Constraints:

* (45, corrected) partition: sum_w y_hw = 1 for every group h;
* (46, corrected) per-leaf budget: sum_h w_ah y_hw <= budget_a = floor(iota * T_a) for
  every leaf a and stage w, written only for leaves whose load in these groups exceeds
  their budget (the others can never violate it);
* symmetry breaking (exact): stages are numbered by their first group, so the g-th group
  (in index order) sits in a stage <= g; y exists only there.

``theta=T`` builds the feasibility model of Algorithm 1 for T stages ("FindOCSGroupSet").
``theta=None`` builds the direct model over ``upper`` stages with z_w = 1 if stage w is
used: y_hw <= z_w, z_w >= z_{w+1}, the budget times z_w, z_w = 1 below ``lower``, and
minimise sum_w z_w.
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from instances.lumos.staging import Staging, StagingInstance
from models.backend import Result, new_model
from models.lumos.ilp import incidence


@dataclass
class StagingHandles:
    y: gp.MVar            # one binary per allowed (group position g, stage s)
    g: np.ndarray         # position of each variable's group in ``groups``
    s: np.ndarray         # its stage
    groups: np.ndarray    # the packable groups, sorted
    z: gp.MVar | None     # stage used (direct model)


def staging_size(inst: StagingInstance, stages: int) -> int:
    """Variables of a model over ``stages`` stages (y only; z adds ``stages``)."""
    G = len(inst.packable)
    S = min(stages, G)
    return S * G - S * (S - 1) // 2


def build_staging(inst: StagingInstance, theta: int | None = None, upper: int | None = None,
                  lower: int = 1) -> tuple[gp.Model, StagingHandles]:
    """The staging model of [002] A.8 in the spec's corrected form (``eq45_partition``,
    ``eq46_leaf_budget``, the module's symmetry breaking): with ``theta`` the feasibility
    model of Algorithm 1 for that many stages, without it the direct model minimizing the
    stages used over ``upper`` (at least ``lower``). Returns the model and its handles."""
    groups = inst.packable
    G = len(groups)
    S = theta if theta is not None else (upper if upper is not None else G)
    if S < 1 or (theta is None and upper is None and G == 0):
        raise ValueError(f"need at least one stage, got {S}")
    S = min(S, max(G, 1))
    counts = np.minimum(np.arange(G) + 1, S)               # the k-th group: stages 0..k
    g = np.repeat(np.arange(G), counts).astype(np.int64)
    s = np.concatenate([np.arange(c) for c in counts] + [np.zeros(0, int)]).astype(np.int64)
    nv = len(g)
    direct = theta is None
    model = new_model("staging_direct" if direct else f"staging_theta{theta}")
    nz = S if direct else 0
    names = [f"y[{groups[k]},{w}]" for k, w in zip(g, s)] + [f"z[{w}]" for w in range(nz)]
    x = model.addMVar(nv + nz, vtype=GRB.BINARY, name=names)
    y, z = x[:nv], (x[nv:] if direct else None)
    # (45, corrected) every changed group is reconfigured in exactly one stage
    model.addMConstr(incidence(g, G, nv + nz), x, GRB.EQUAL, np.ones(G), name="eq45_partition")
    W = inst.load[:, groups]
    cap = inst.leaf_budget
    tight = np.flatnonzero(W.sum(axis=1) > cap)           # leaves a stage could overload
    # (46, corrected) a stage takes at most budget_a of leaf a's flows (times z_w: direct)
    rows, cols, vals = [], [], []
    for r, a in enumerate(tight):
        on = np.flatnonzero(W[a, g] > 0)
        rows += [r * S + s[on]]
        cols += [on]
        vals += [W[a, g[on]].astype(float)]
        if direct:
            rows += [r * S + np.arange(S)]
            cols += [nv + np.arange(S)]
            vals += [np.full(S, -float(cap[a]))]
    if len(tight):
        A = incidence(np.concatenate(rows), len(tight) * S, nv + nz, np.concatenate(cols),
                      np.concatenate(vals))
        rhs = np.zeros(len(tight) * S) if direct else np.repeat(cap[tight].astype(float), S)
        model.addMConstr(A, x, GRB.LESS_EQUAL, rhs, name="eq46_leaf_budget")
    if direct:
        # a group only goes to a used stage (y_hw <= z_w); used stages first (z_w >= z_w+1)
        used = incidence(np.arange(nv), nv, nv + nz) - incidence(np.arange(nv), nv, nv + nz,
                                                                    nv + s)
        model.addMConstr(used, x, GRB.LESS_EQUAL, np.zeros(nv), name="stage_used")
        if S > 1:
            w = np.arange(S - 1)
            order = incidence(w, S - 1, nv + nz, nv + w + 1) - incidence(w, S - 1, nv + nz, nv + w)
            model.addMConstr(order, x, GRB.LESS_EQUAL, np.zeros(S - 1), name="stage_order")
        z.lb = (np.arange(S) < lower).astype(float)      # at least ``lower`` stages
        model.setObjective(z.sum(), GRB.MINIMIZE)
    else:
        model.setObjective(gp.LinExpr(), GRB.MINIMIZE)
    model.update()
    return model, StagingHandles(y, g, s, groups, z)


def staging_start(h: StagingHandles, sol: Staging) -> dict:
    """A complete MIP start from a staging of (at least) the packable groups: its stages
    renumbered by their first group, as the symmetry breaking requires."""
    pos = {int(grp): k for k, grp in enumerate(h.groups)}
    parts = [p for p in ([pos[x] for x in st if x in pos] for st in sol.stages) if p]
    parts.sort(key=min)
    stage_of = {k: w for w, p in enumerate(parts) for k in p}
    ys = h.y.tolist()
    start = {ys[v]: float(stage_of.get(int(h.g[v])) == int(h.s[v])) for v in range(len(ys))}
    if h.z is not None:
        for w, zv in enumerate(h.z.tolist()):
            start[zv] = float(w < len(parts))
    return start


def extract_staging(h: StagingHandles, res: Result, alone=()) -> Staging:
    """Stages from the y values (unused stages dropped), then one per group staged alone."""
    val = np.round(res.value(h.y)).astype(bool)
    stages = [sorted(int(h.groups[k]) for k in h.g[val & (h.s == w)])
              for w in range(int(h.s.max(initial=-1)) + 1)]
    return Staging([st for st in stages if st] + [[int(x)] for x in alone])
