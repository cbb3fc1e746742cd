"""The decomposition theorems as gurobipy models (spec 2.1(b), 2.2), for fidelity and tests.

* ``build_simd``: [001] eqs. (8)-(10): 0 <= A_ij <= C_ij, A_ij + A_ji = C_ij, row and column
  sums of A within floor/ceil of half of C's. Feasibility (no objective); with ``A_old``
  the rewiring-aware variant (spec 2.1(d)) minimizes sum |A_ij - A_old_ij| (auxiliary
  t_ij >= +-(A_ij - A_old_ij)); with ``cap`` the row/column sums are only capped.
* ``build_imd``: Theorem 3.2: M = sum_h X_h with every entry, row and column sum of X_h
  within floor/ceil of 1/H of M's. Feasibility.

The constraint matrices are network matrices, so LP vertices are integral; the variables
are still declared integer (spec 2.1(b)).
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from models.backend import Result, new_model


@dataclass
class SimdHandles:
    A: dict            # (i, j) -> Var for i != j with C_ij > 0
    C: np.ndarray


def build_simd(C, A_old=None, cap: int | None = None) -> tuple[gp.Model, SimdHandles]:
    C = np.asarray(C, dtype=np.int64)
    n = len(C)
    model = new_model("simd")
    oi, oj = np.nonzero(C - np.diag(np.diag(C)))
    # (8) 0 <= A_ij <= C_ij, integer
    A = {(int(i), int(j)): model.addVar(ub=float(C[i, j]), vtype=GRB.INTEGER, name=f"A[{i},{j}]")
         for i, j in zip(oi, oj)}
    # (9) A_ij + A_ji = C_ij
    for (i, j), v in A.items():
        if i < j:
            model.addConstr(v + A[j, i] == C[i, j], name=f"eq9[{i},{j}]")
    # (10) row and column sums (the diagonal is split evenly: A_ii = C_ii / 2)
    d = C.sum(axis=1)
    half = np.diag(C) // 2
    for i in range(n):
        row = gp.quicksum(A[i, j] for j in range(n) if (i, j) in A) + float(half[i])
        col = gp.quicksum(A[j, i] for j in range(n) if (j, i) in A) + float(half[i])
        lo, hi = (d[i] // 2, (d[i] + 1) // 2) if cap is None else (max(0, d[i] - cap), min(cap, d[i]))
        for name, expr in (("row", row), ("col", col)):
            model.addConstr(expr >= float(lo), name=f"eq10_{name}_lo[{i}]")
            model.addConstr(expr <= float(hi), name=f"eq10_{name}_hi[{i}]")
    if A_old is not None:
        A_old = np.asarray(A_old)
        t = {k: model.addVar(name=f"t[{k[0]},{k[1]}]") for k in A}
        for (i, j), v in A.items():
            model.addConstr(t[i, j] >= v - float(A_old[i, j]), name=f"abs_pos[{i},{j}]")
            model.addConstr(t[i, j] >= float(A_old[i, j]) - v, name=f"abs_neg[{i},{j}]")
        model.setObjective(gp.quicksum(t.values()), GRB.MINIMIZE)
    model.update()
    return model, SimdHandles(A, C)


def extract_simd(h: SimdHandles, res: Result) -> np.ndarray:
    A = np.diag(np.diag(h.C) // 2).astype(np.int64)
    for (i, j), v in h.A.items():
        A[i, j] = int(round(res.value(v)))
    return A


@dataclass
class ImdHandles:
    X: list            # H dicts (i, j) -> Var
    shape: tuple


def build_imd(M, H: int) -> tuple[gp.Model, ImdHandles]:
    M = np.asarray(M, dtype=np.int64)
    I, J = M.shape
    model = new_model("imd")
    ii, jj = np.nonzero(M)
    X = []
    for h in range(H):
        # entry bounds floor/ceil(M_ij / H)
        X.append({(int(i), int(j)): model.addVar(lb=float(M[i, j] // H), ub=float(-(-M[i, j] // H)),
                                                  vtype=GRB.INTEGER, name=f"X[{h},{i},{j}]")
                  for i, j in zip(ii, jj)})
    # M = sum_h X_h
    for i, j in zip(ii, jj):
        model.addConstr(gp.quicksum(X[h][i, j] for h in range(H)) == float(M[i, j]),
                        name=f"sum[{i},{j}]")
    # row and column sums of each part
    R, S = M.sum(axis=1), M.sum(axis=0)
    for h in range(H):
        for i in range(I):
            e = gp.quicksum(X[h][i, j] for j in jj[ii == i])
            model.addConstr(e >= float(R[i] // H), name=f"row_lo[{h},{i}]")
            model.addConstr(e <= float(-(-R[i] // H)), name=f"row_hi[{h},{i}]")
        for j in range(J):
            e = gp.quicksum(X[h][i, j] for i in ii[jj == j])
            model.addConstr(e >= float(S[j] // H), name=f"col_lo[{h},{j}]")
            model.addConstr(e <= float(-(-S[j] // H)), name=f"col_hi[{h},{j}]")
    model.update()
    return model, ImdHandles(X, (I, J))


def extract_imd(h: ImdHandles, res: Result) -> list[np.ndarray]:
    parts = []
    for Xh in h.X:
        P = np.zeros(h.shape, dtype=np.int64)
        for (i, j), v in Xh.items():
            P[i, j] = int(round(res.value(v)))
        parts.append(P)
    return parts
