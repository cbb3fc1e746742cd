"""Baseline split MILP: LESS's sparsity objective, solved exactly (spec 2.6.3; not in the paper).

LESS (Liu, Xu, Singh, UCC 2019), as the Spectra paper describes it (Section V), splits D
into s sub-workloads D_1..D_s "by minimizing the sum of nonzero elements across
D_1, ..., D_s" under "a balancing criterion". LESS's text is not available; this is the
spec's [OURS] exact reading, with the balancing criterion as a per-line cap T:

    min  sum_{h, e in supp D} z_he
    s.t. sum_h q_he = D_e                     for every nonzero e        (split_sum)
         0 <= q_he <= D_e z_he,  z binary                                (split_link)
         sum_{e in row i} q_he <= T,  sum_{e in col j} q_he <= T         (balance_row/col)
    T = (1 + eps) rho / s, rho = max line sum of D. Always feasible (q = D / s).
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
import scipy.sparse as sp
from gurobipy import GRB

from heuristics.spectra.baseline import BALANCE_TOL, line_cap
from models.backend import Result, new_model
from instances.spectra.instance import SpectraInstance, effective


@dataclass
class SplitHandles:
    n: int
    edges: np.ndarray      # (|E|, 2) rows/cols of supp(D)
    demand: np.ndarray     # (|E|,) D_e on those entries
    q: gp.MVar             # (s, |E|) share of entry e on switch h
    z: gp.MVar             # (s, |E|) entry e is a nonzero of D_h
    cap: float             # T


def split_size(inst: SpectraInstance) -> tuple[int, int]:
    """(variables, constraints) of :func:`build_split_milp` without building it."""
    D, s = effective(inst.demand), inst.switches
    E = int((D > 0).sum())
    lines = int((D.sum(axis=1) > 0).sum() + (D.sum(axis=0) > 0).sum())
    return 2 * s * E, E + s * E + s * lines


def build_split_milp(inst: SpectraInstance, eps: float = 0.0) -> tuple[gp.Model, SplitHandles]:
    """The split MILP above for D = inst.demand over s = inst.switches, T = (1 + eps) rho / s."""
    D, s = effective(inst.demand), inst.switches
    n = D.shape[0]
    rows, cols = np.nonzero(D)
    E = len(rows)
    dem = D[rows, cols]
    T = (1 + eps) * line_cap(D, s) * (1 + BALANCE_TOL)
    model = new_model("spectra_baseline_split")
    q = model.addMVar((s, E), lb=0.0, name="q")
    z = model.addMVar((s, E), vtype=GRB.BINARY, name="z")
    # split_sum: the sub-matrices add up to D on every nonzero
    model.addConstr(q.sum(axis=0) == dem, name="split_sum")
    # split_link: a share is positive only on a nonzero of D_h (which the objective counts)
    model.addConstr(q <= dem[None, :] * z, name="split_link")
    # balance: every line of every sub-matrix carries at most T
    Rm = sp.csr_matrix((np.ones(E), (rows, np.arange(E))), shape=(n, E))
    Cm = sp.csr_matrix((np.ones(E), (cols, np.arange(E))), shape=(n, E))
    Rm, Cm = Rm[np.flatnonzero(Rm.getnnz(axis=1))], Cm[np.flatnonzero(Cm.getnnz(axis=1))]
    for h in range(s if E else 0):
        model.addConstr(Rm @ q[h] <= T, name=f"balance_row[{h}]")
        model.addConstr(Cm @ q[h] <= T, name=f"balance_col[{h}]")
    # objective: LESS's sparsity, the total number of nonzeros across D_1..D_s
    model.setObjective(z.sum(), GRB.MINIMIZE)
    model.update()
    return model, SplitHandles(n, np.stack([rows, cols], axis=1), dem, q, z, T)


def split_start(h: SplitHandles, parts: np.ndarray) -> dict | None:
    """A MIP start from any split (e.g. the greedy one) when it respects the cap T."""
    rows, cols = h.edges[:, 0], h.edges[:, 1]
    qv = parts[:, rows, cols]
    if parts.sum(axis=2).max(initial=0) > h.cap or parts.sum(axis=1).max(initial=0) > h.cap:
        return None
    start = dict(zip(np.ravel(h.q.tolist()), np.ravel(qv)))
    start.update(zip(np.ravel(h.z.tolist()), np.ravel((qv > 0).astype(float))))
    return start


def extract_split(h: SplitHandles, res: Result) -> np.ndarray:
    """The sub-matrices (s, n, n). Shares under the solver's tolerance are dropped and
    each entry is rescaled so that sum_h D_h = D exactly."""
    rows, cols = h.edges[:, 0], h.edges[:, 1]
    qv = np.maximum(np.asarray(res.value(h.q), dtype=float), 0.0)
    dem = h.demand
    qv[qv <= 1e-9 * np.maximum(dem, 1e-300)] = 0.0
    tot = qv.sum(axis=0)
    empty = tot <= 0
    qv[0, empty], tot[empty] = dem[empty], dem[empty]        # cannot happen at a feasible point
    qv *= (dem / tot)[None, :]
    parts = np.zeros((qv.shape[0], h.n, h.n))
    parts[:, rows, cols] = qv
    return parts
