"""a2a time-expanded programs for any k (spec 2.6 G3, G4; not in the paper).

* G3: exact time-expanded MILP for tiny instances (n <= 6): topologies, round assignment and
  hop-by-hop paths (no waiting: the paper's synchronous model) with contention-free capacity.
  Unit (uniform) flows; rho rounds per topology (default n - 1) and H = n - 1 hop steps.
* G4: round packing ILP for a fixed topology and fixed paths (the greedy packer's gap).
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from heuristics.a2a.strategy import Candidate
from instances.a2a.instance import arc_multiplicity, by_hops
from models.backend import Result, new_model


@dataclass
class TEHandles:
    n: int
    d: int
    rho: int
    H: int
    flows: list
    x: gp.tupledict
    a: gp.tupledict
    y: gp.tupledict
    c: gp.tupledict


def te_size(n: int, k: int, d: int, rho: int | None = None) -> int:
    """Number of y variables of G3 (the dominant block)."""
    rho = rho or n - 1
    return d * rho * n * (n - 1) * (n - 1) * n * (n - 1)


def build_te(n: int, k: int, d: int, rho: int | None = None,
             symmetry: bool = True) -> tuple[gp.Model, TEHandles]:
    """G3: min sum_{i,r} c[i,r] (units of T) over d degree-k topologies and rho rounds each."""
    rho, H = rho or n - 1, n - 1
    V, I, Rr, Tau = range(n), range(d), range(rho), range(1, H + 1)
    arcs = [(u, v) for u in V for v in V if u != v]
    flows = arcs
    model = new_model(f"a2a_g3_te_n{n}_k{k}_d{d}")
    x = model.addVars([(i, u, v) for i in I for u, v in arcs], vtype=GRB.BINARY, name="x")
    # topology degree <= k (out and in)
    model.addConstrs((x.sum(i, u, "*") <= k for i in I for u in V), name="deg_out")
    model.addConstrs((x.sum(i, "*", v) <= k for i in I for v in V), name="deg_in")
    a = model.addVars([(i, r, f) for i in I for r in Rr for f in range(len(flows))],
                      vtype=GRB.BINARY, name="a")
    # every flow in exactly one round of one topology
    model.addConstrs((a.sum("*", "*", f) == 1 for f in range(len(flows))), name="assign")
    y = model.addVars([(i, r, f, t, u, v) for i in I for r in Rr for f in range(len(flows))
                       for t in Tau for u, v in arcs], vtype=GRB.BINARY, name="y")
    for f, (s, tf) in enumerate(flows):
        for i in I:
            for r in Rr:
                for u, v in arcs:
                    # start at the source; never leave the destination
                    if (u != s) or (u == tf):
                        y[i, r, f, 1, u, v].UB = 0.0
                    for t in Tau:
                        if u == tf:
                            y[i, r, f, t, u, v].UB = 0.0
                # start: one first hop out of s_f iff assigned
                model.addConstr(gp.quicksum(y[i, r, f, 1, s, v] for v in V if v != s)
                                == a[i, r, f], name=f"start[{i},{r},{f}]")
                # conservation: a flow that reached v != t_f at step t-1 leaves it at step t
                for t in range(2, H + 1):
                    for v in V:
                        if v == tf:
                            continue
                        model.addConstr(gp.quicksum(y[i, r, f, t, v, w] for w in V if w != v)
                                        == gp.quicksum(y[i, r, f, t - 1, u, v] for u in V if u != v),
                                        name=f"conserve[{i},{r},{f},{t},{v}]")
                # arrival at t_f exactly once iff assigned
                model.addConstr(gp.quicksum(y[i, r, f, t, u, tf] for t in Tau for u in V if u != tf)
                                == a[i, r, f], name=f"arrive[{i},{r},{f}]")
    # contention-free: a link carries <= 1 flow per hop step of a round, and only if it exists
    model.addConstrs((y.sum(i, r, "*", t, u, v) <= x[i, u, v]
                      for i in I for r in Rr for t in Tau for u, v in arcs), name="capacity")
    c = model.addVars([(i, r) for i in I for r in Rr], lb=0.0, name="c")
    # round cost >= the hop index of any flow's step in it
    model.addConstrs((c[i, r] >= t * y.sum(i, r, f, t, "*", "*")
                      for i in I for r in Rr for f in range(len(flows)) for t in Tau),
                     name="round_cost")
    if symmetry:
        model.addConstrs((c[i, r] >= c[i, r + 1] for i in I for r in range(rho - 1)), name="sym_rounds")
    model.setObjective(c.sum(), GRB.MINIMIZE)
    model.update()
    return model, TEHandles(n, d, rho, H, flows, x, a, y, c)


def extract_te(h: TEHandles, res: Result) -> Candidate:
    xv, yv = res.value(h.x), res.value(h.y)
    phases = []
    for i in range(h.d):
        arcs = np.asarray([(u, v) for (ii, u, v), val in xv.items() if ii == i and val > 0.5],
                          dtype=np.int64).reshape(-1, 2)
        nxt: dict = {}
        for (ii, r, f, t, u, v), val in yv.items():
            if ii == i and val > 0.5:
                nxt[(r, f, t)] = (u, v)
        rounds = []
        for r in range(h.rho):
            paths = []
            for f, (s, tf) in enumerate(h.flows):
                if (r, f, 1) not in nxt:
                    continue
                path, t = [s], 1
                while path[-1] != tf:
                    path.append(nxt[(r, f, t)][1])
                    t += 1
                paths.append(path)
            if paths:
                rounds.append([P for P, _ in by_hops(paths)])
        if rounds:
            phases.append((arcs, rounds))
    return Candidate("exact-te", phases)


# ------------------------------------------------------------------------------------------
# G4: round packing ILP (fixed topology, fixed paths)
# ------------------------------------------------------------------------------------------
@dataclass
class PackHandles:
    paths: list
    arcs: np.ndarray
    a: gp.tupledict
    c: gp.tupledict


def build_packing(paths: list[tuple], arcs, max_rounds: int,
                  symmetry: bool = True) -> tuple[gp.Model, PackHandles]:
    """G4: assign fixed paths to <= max_rounds rounds, no (link, step) used beyond its
    multiplicity in a round, min sum of round costs (c_r >= len(p) a[p,r])."""
    P, Rr = range(len(paths)), range(max_rounds)
    mult = arc_multiplicity(arcs)
    model = new_model("a2a_g4_packing")
    a = model.addVars([(p, r) for p in P for r in Rr], vtype=GRB.BINARY, name="a")
    model.addConstrs((a.sum(p, "*") == 1 for p in P), name="assign")
    users: dict = {}
    for p, path in enumerate(paths):
        for t in range(len(path) - 1):
            users.setdefault(((path[t], path[t + 1]), t), []).append(p)
    # conflicts: a (link, step) carries at most its multiplicity per round
    for j, ((e, t), ps) in enumerate(users.items()):
        if len(ps) > mult[e]:
            for r in Rr:
                model.addConstr(gp.quicksum(a[p, r] for p in ps) <= mult[e],
                                name=f"conflict[{j},{r}]")
    c = model.addVars(Rr, lb=0.0, name="c")
    model.addConstrs((c[r] >= (len(paths[p]) - 1) * a[p, r] for p in P for r in Rr), name="round_cost")
    if symmetry:
        model.addConstrs((c[r] >= c[r + 1] for r in range(max_rounds - 1)), name="sym_rounds")
    model.setObjective(c.sum(), GRB.MINIMIZE)
    model.update()
    return model, PackHandles(paths, np.asarray(arcs), a, c)


def extract_packing(h: PackHandles, res: Result) -> Candidate:
    av = res.value(h.a)
    rounds: dict[int, list] = {}
    for (p, r), val in av.items():
        if val > 0.5:
            rounds.setdefault(r, []).append(h.paths[p])
    rs = [[P for P, _ in by_hops(rounds[r])] for r in sorted(rounds)]
    return Candidate("packing-ilp", [(h.arcs, rs)])
