"""LumosCore OCS-reconfiguration models (gurobipy), one OCS group at a time.

No constraint or objective term couples two groups (spec 2.4, "separability"), so each
builder takes one group's target C_h (P x P) and old matrices u (K, P, P) with
``u[k][i][j] = u_ijkh``. Variables exist only for Pod pairs with C_ij > 0 (eq. 1 fixes the
others at 0), which is exact.

* ``build_itv``: [001] ILP (1)-(7) under Cross Wiring; ``reduced=True`` substitutes the L2
  constraint (6) x_{i,j,2m+1} = x_{j,i,2m} and keeps the even OCSes only (spec 2.4).
  |x - u| = (1 - 2u) x + u for binaries: the objective is linear with a constant.
* ``build_uniform``: Uniform wiring with L2 x_ijk = x_jik, one variable per unordered
  pair and OCS; demand relaxed to sum_k x <= C (unmet demand) or exact (``exact=True``,
  the realizability model of spec 1.4). Objectives ``unmet`` and ``rewiring``.
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
import scipy.sparse as sp
from gurobipy import GRB

from models.backend import Result, new_model


def incidence(rows: np.ndarray, n_rows: int, n_cols: int, cols=None, vals=None) -> sp.csr_matrix:
    """Sparse matrix with a 1 (or ``vals``) at (rows[c], c) for each column c."""
    cols = np.arange(len(rows)) if cols is None else cols
    vals = np.ones(len(rows)) if vals is None else vals
    return sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, n_cols))


@dataclass
class ItvHandles:
    x: gp.MVar            # (n_pairs * n_ocs,) binaries, pair-major
    oi: np.ndarray        # ordered pairs (oi[o], oj[o]) with C > 0
    oj: np.ndarray
    n_ocs: int            # K/2 (reduced) or K
    reduced: bool
    P: int
    K: int


def build_itv(C_h: np.ndarray, u: np.ndarray, reduced: bool = True) -> tuple[gp.Model, ItvHandles]:
    """ILP (1)-(7) of [001] for one group under Cross Wiring (spec 2.4)."""
    C_h = np.asarray(C_h, dtype=np.int64)
    u = np.asarray(u, dtype=np.int64)
    K, P = u.shape[0], C_h.shape[0]
    oi, oj = np.nonzero(C_h)
    no = len(oi)
    M = K // 2 if reduced else K
    model = new_model("itv_reduced" if reduced else "itv_ilp")
    x = model.addMVar(no * M, vtype=GRB.BINARY, name="y" if reduced else "x")
    var_pair = np.repeat(np.arange(no), M)
    var_ocs = np.tile(np.arange(M), no)
    pid = {(int(i), int(j)): o for o, (i, j) in enumerate(zip(oi, oj))}
    if reduced:
        # (1) with (6) substituted: sum_m y_ijm + y_jim = C_ij for each unordered pair i < j
        first = oi < oj
        e_of = np.full(no, -1)
        e_of[first] = np.arange(first.sum())
        e_of[~first] = [e_of[pid[(int(j), int(i))]] for i, j in zip(oi[~first], oj[~first])]
        n_e = int(first.sum())
        model.addMConstr(incidence(e_of[var_pair], n_e, no * M), x, GRB.EQUAL,
                         C_h[oi[first], oj[first]].astype(float), name="eq1_demand")
        # objective: y_ijm stands for x_{i,j,2m} and x_{j,i,2m+1}
        coef = (1 - 2 * u[2 * var_ocs, oi[var_pair], oj[var_pair]]) + \
               (1 - 2 * u[2 * var_ocs + 1, oj[var_pair], oi[var_pair]])
    else:
        # (1) sum_k x_ijk = C_ij for each ordered pair
        model.addMConstr(incidence(var_pair, no, no * M), x, GRB.EQUAL,
                         C_h[oi, oj].astype(float), name="eq1_demand")
        # (2), (3) spine budgets (implied by (4), (5); kept to follow the paper)
        model.addMConstr(incidence(oi[var_pair], P, no * M), x, GRB.LESS_EQUAL,
                         np.full(P, float(K)), name="eq2_egress")
        model.addMConstr(incidence(oj[var_pair], P, no * M), x, GRB.LESS_EQUAL,
                         np.full(P, float(K)), name="eq3_ingress")
        # (6) L2 under Cross Wiring: x_{i,j,2m+1} = x_{j,i,2m}
        rows, cols, vals = [], [], []
        r = 0
        for o in range(no):
            rev = pid[(int(oj[o]), int(oi[o]))]
            for m in range(K // 2):
                rows += [r, r]
                cols += [o * M + 2 * m + 1, rev * M + 2 * m]
                vals += [1.0, -1.0]
                r += 1
        model.addMConstr(sp.csr_matrix((vals, (rows, cols)), shape=(r, no * M)), x, GRB.EQUAL,
                         np.zeros(r), name="eq6_l2_cross")
        coef = 1 - 2 * u[var_ocs, oi[var_pair], oj[var_pair]]
    # (4) one circuit per OCS input port, (5) per OCS output port
    model.addMConstr(incidence(oi[var_pair] * M + var_ocs, P * M, no * M), x, GRB.LESS_EQUAL,
                     np.ones(P * M), name="eq4_out_port")
    model.addMConstr(incidence(oj[var_pair] * M + var_ocs, P * M, no * M), x, GRB.LESS_EQUAL,
                     np.ones(P * M), name="eq5_in_port")
    # (7) min sum |x - u| = sum (1 - 2u) x + sum u
    const = float(u.sum())
    model.setObjective(coef.astype(float) @ x + const, GRB.MINIMIZE)
    model.update()
    return model, ItvHandles(x, oi, oj, M, reduced, P, K)


def itv_start(h: ItvHandles, mats: list[np.ndarray]) -> dict:
    """MIP start from K matrices of a Cross configuration of this group."""
    xs = h.x.tolist()
    vals = []
    for o in range(len(h.oi)):
        for m in range(h.n_ocs):
            k = 2 * m if h.reduced else m
            vals.append(float(mats[k][h.oi[o], h.oj[o]]))
    return dict(zip(xs, vals))


def extract_itv(h: ItvHandles, res: Result) -> list[np.ndarray]:
    """The group's K OCS matrices (odd = transpose of even for the reduced model)."""
    v = np.round(res.value(h.x)).astype(np.int64).reshape(len(h.oi), h.n_ocs)
    mats = [np.zeros((h.P, h.P), dtype=np.int64) for _ in range(h.K)]
    for o, m in zip(*np.nonzero(v)):
        i, j = h.oi[o], h.oj[o]
        if h.reduced:
            mats[2 * m][i, j] = 1
            mats[2 * m + 1][j, i] = 1
        else:
            mats[m][i, j] = 1
    return mats


@dataclass
class UniformHandles:
    x: gp.MVar            # (n_pairs * K,) binaries, pair-major
    pi: np.ndarray        # unordered pairs pi < pj with C > 0
    pj: np.ndarray
    K: int
    P: int
    unmet: gp.LinExpr
    rewiring: gp.LinExpr


def build_uniform(C_h: np.ndarray, u: np.ndarray, exact: bool = False) -> tuple[gp.Model, UniformHandles]:
    """One group under Uniform wiring with L2 x_ijk = x_jik (spec 2.6): (4)/(5) become one
    port constraint per (Pod, OCS); demand sum_k x_e <= C_e ("eq1_relaxed") or = C_e."""
    C_h = np.asarray(C_h, dtype=np.int64)
    u = np.asarray(u, dtype=np.int64)
    K, P = u.shape[0], C_h.shape[0]
    pi, pj = np.nonzero(np.triu(C_h, 1))
    ne = len(pi)
    model = new_model("uniform_realize" if exact else "uniform_ilp")
    x = model.addMVar(ne * K, vtype=GRB.BINARY, name="x")
    vp, vk = np.repeat(np.arange(ne), K), np.tile(np.arange(K), ne)
    model.addMConstr(incidence(vp, ne, ne * K), x, GRB.EQUAL if exact else GRB.LESS_EQUAL,
                     C_h[pi, pj].astype(float), name="eq1_demand" if exact else "eq1_relaxed")
    # ports: Pod i's port k is used by at most one pair through OCS k (both directions)
    port_rows = incidence(pi[vp] * K + vk, P * K, ne * K) + incidence(pj[vp] * K + vk, P * K, ne * K)
    model.addMConstr(port_rows, x, GRB.LESS_EQUAL, np.ones(P * K), name="eq45_port_l2")
    coef = (1 - 2 * u[vk, pi[vp], pj[vp]]) + (1 - 2 * u[vk, pj[vp], pi[vp]])
    rew = gp.LinExpr(coef.astype(float).tolist(), x.tolist()) + float(u.sum())
    unmet = gp.LinExpr([-1.0] * (ne * K), x.tolist()) + float(C_h[pi, pj].sum())
    if exact:
        model.setObjective(gp.LinExpr(), GRB.MINIMIZE)
    model.update()
    return model, UniformHandles(x, pi, pj, K, P, unmet, rew)


def uniform_start(h: UniformHandles, mats: list[np.ndarray]) -> dict:
    vals = [float(mats[k][h.pi[e], h.pj[e]] and mats[k][h.pj[e], h.pi[e]])
            for e in range(len(h.pi)) for k in range(h.K)]
    return dict(zip(h.x.tolist(), vals))


def extract_uniform(h: UniformHandles, res: Result) -> list[np.ndarray]:
    v = np.round(res.value(h.x)).astype(np.int64).reshape(len(h.pi), h.K)
    mats = [np.zeros((h.P, h.P), dtype=np.int64) for _ in range(h.K)]
    for e, k in zip(*np.nonzero(v)):
        mats[k][h.pi[e], h.pj[e]] = mats[k][h.pj[e], h.pi[e]] = 1
    return mats
