"""G5: multi-commodity-flow LP of the DirectConnect baseline (spec 2.6 G5, 4.2; not in the paper).

Source-aggregated commodities on a fixed topology: min U s.t. flow conservation delivers A[s, v]
to every v, and every arc carries <= U. The fluid completion time is beta U + alpha (longest
path) + R. A second lexicographic stage minimizes total hop-traffic (removes cycles) before the
flow is decomposed into paths per (s, t).
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from models.backend import Result, new_model


@dataclass
class MCFHandles:
    n: int
    arcs: np.ndarray
    A: np.ndarray
    f: gp.MVar            # (n sources, m arcs), in the units of A / scale
    U: gp.Var
    scale: float


def build_mcf(n: int, arcs, A: np.ndarray, scale: float = 1.0) -> tuple[gp.Model, MCFHandles]:
    """G5 on topology ``arcs`` for traffic ``A`` (divided by ``scale`` for numerics)."""
    arcs = np.asarray(arcs, dtype=np.int64).reshape(-1, 2)
    m = len(arcs)
    B = np.zeros((n, m))
    B[arcs[:, 1], np.arange(m)] += 1.0        # into the head
    B[arcs[:, 0], np.arange(m)] -= 1.0        # out of the tail
    D = np.asarray(A, dtype=float) / scale
    model = new_model("a2a_g5_mcf")
    f = model.addMVar((n, m), lb=0.0, name="f")
    U = model.addVar(lb=0.0, name="U")
    for s in range(n):
        if not D[s].any():
            f[s].UB = np.zeros(m)
            continue
        keep = np.arange(n) != s
        # conservation: net inflow at every v != s is the demand A[s, v]
        model.addMConstr(B[keep], f[s], GRB.EQUAL, D[s, keep], name=f"g5_conserve[{s}]")
    # arc load <= U
    model.addConstr(f.sum(axis=0) <= U, name="g5_capacity")
    model.setObjective(U + 0.0, GRB.MINIMIZE)
    model.update()
    return model, MCFHandles(n, arcs, D, f, U, scale)


def hop_traffic(h: MCFHandles) -> gp.LinExpr:
    """Secondary objective: total hop-traffic sum_{s,e} f[s,e]."""
    return h.f.sum()


def extract_mcf_paths(h: MCFHandles, res: Result, eps: float = 1e-7) -> dict:
    """Decompose each source's flow into paths: {(s, t): [(path tuple, amount in A units)]}."""
    F = np.maximum(res.value(h.f), 0.0)
    n, arcs = h.n, h.arcs
    out: dict = {}
    for s in range(n):
        dem = h.A[s].copy()
        if not dem.any():
            continue
        res_f = F[s].copy()
        tol = eps * max(1.0, dem.max())
        for _ in range(4 * n * n):
            if dem.max() <= tol:
                break
            path, x, seen = [s], s, {s}
            bott = np.inf
            while not (x != s and dem[x] > tol):
                outs = np.flatnonzero((arcs[:, 0] == x) & (res_f > tol))
                if len(outs) == 0:
                    break
                e = outs[np.argmax(res_f[outs])]
                bott = min(bott, res_f[e])
                x = int(arcs[e, 1])
                path.append(x)
                if x in seen and dem[x] <= tol:
                    break                   # a cycle left by tolerances: stop this walk
                seen.add(x)
            if x == s or dem[x] <= tol:
                break
            amt = min(bott, dem[x])
            for a_, b_ in zip(path[:-1], path[1:]):
                e = np.flatnonzero((arcs[:, 0] == a_) & (arcs[:, 1] == b_) & (res_f > tol))[0]
                res_f[e] -= amt
            dem[x] -= amt
            out.setdefault((s, x), []).append((tuple(path), amt * h.scale))
        # tolerance leftovers: normalize each (s, t) to its demand
    for (s, t), ps in out.items():
        tot = sum(a for _, a in ps)
        out[(s, t)] = [(p, a * h.A[s, t] * h.scale / tot) for p, a in ps]
    return out
