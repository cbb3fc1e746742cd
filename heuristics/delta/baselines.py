"""Traffic-matrix baselines for the DELTA logical topology (Ye et al. 2026, Section V-A2).

They see only the iteration's aggregated traffic matrix and the port budgets, not the
flow counts, the timing or the DAG (delta spec 4.1-4.2):

* Prop-Alloc (from SiP-ML): circuits proportional to volume (min max D_e/x_e);
* Sqrt-Alloc (the paper's): proportional to sqrt(volume) (min sum D_e/x_e);
* Iter-Halve (from TopoOpt): repeatedly give one circuit to the heaviest pair, halve its weight.

All return integer circuits per link with sum_e a_{p,e} x_e <= U_p and x_e >= 1 on every
link with traffic. Ties break by larger D_e, then lower link index. O(ports x links).
"""
from __future__ import annotations

import numpy as np

from instances.delta.instance import DeltaInstance
from instances.errors import InstanceError


def traffic_matrix(inst: DeltaInstance, combine: str = "max") -> np.ndarray:
    """D_e per link: max over the two directions of the iteration's volume (or the sum)."""
    T = np.zeros((len(inst.links), 2))
    np.add.at(T, (inst.link_of, inst.dir_of), inst.volume)
    return T.max(axis=1) if combine == "max" else T.sum(axis=1)


class _Ports:
    """Port bookkeeping with orbit multiplicities a_{p,e}."""

    def __init__(self, inst: DeltaInstance):
        self.A = inst.incidence
        self.U = inst.ports

    def spare(self, x):
        return self.U - self.A @ x

    def can_add(self, x) -> np.ndarray:
        sp = self.spare(x)
        return np.all((self.A == 0) | (sp[:, None] >= self.A - 1e-9), axis=0)


def _argmax(prio: np.ndarray, D: np.ndarray, mask: np.ndarray) -> int:
    """Highest priority among mask, ties to larger D then lower index."""
    idx = np.flatnonzero(mask)
    keys = np.lexsort((idx, -D[idx], -prio[idx]))
    return int(idx[keys[0]])


def _proportional(inst: DeltaInstance, f, priority) -> np.ndarray:
    D = traffic_matrix(inst)
    fd = f(D)
    ports = _Ports(inst)
    A, U = ports.A, ports.U
    active = D > 0
    # 1. fractional target: x_e = min over endpoints of U_p f(D_e) / sum_e' a_pe' f(D_e')
    denom = A @ fd
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(A > 0, U[:, None] * fd[None, :] / denom[:, None], np.inf)
    xhat = share.min(axis=0)
    x = np.where(active, np.maximum(1.0, np.floor(xhat)), 0.0)
    # 2. repair over-subscribed pods: decrement the edge with the largest x/f(D) (keep >= 1)
    while True:
        over = np.flatnonzero(ports.spare(x) < -1e-9)
        if not over.size:
            break
        p = over[0]
        cand = np.flatnonzero((A[p] > 0) & (x > 1))
        if not cand.size:
            raise InstanceError("pods", f"port budget of {inst.pods[p]} cannot give every link one circuit")
        e = cand[np.argmax(x[cand] / fd[cand])]
        x[e] -= 1
    # 3. greedy fill by priority
    while True:
        ok = ports.can_add(x) & active
        if not ok.any():
            return x
        e = _argmax(priority(D, x), D, ok)
        x[e] += 1


def prop_alloc(inst: DeltaInstance) -> np.ndarray:
    """Prop-Alloc: x_e proportional to D_e; fill by D_e / x_e (reduce the max transmission time)."""
    return _proportional(inst, lambda D: D, lambda D, x: D / x)


def sqrt_alloc(inst: DeltaInstance) -> np.ndarray:
    """Sqrt-Alloc: x_e proportional to sqrt(D_e); fill by D_e / (x_e (x_e+1)) (marginal gain of sum D/x)."""
    return _proportional(inst, np.sqrt, lambda D, x: D / (x * (x + 1)))


def iter_halve(inst: DeltaInstance) -> np.ndarray:
    """Iter-Halve: one circuit at a time to the heaviest pair, whose weight then halves."""
    D = traffic_matrix(inst)
    ports = _Ports(inst)
    W = D.astype(float).copy()
    x = np.zeros(len(D))
    while True:
        ok = ports.can_add(x) & (W > 0)
        if not ok.any():
            break
        e = _argmax(W, D, ok)
        x[e] += 1
        W[e] /= 2
    # connectivity repair: every link with traffic needs a circuit
    for e in np.flatnonzero((D > 0) & (x == 0)):
        while not ports.can_add(x)[e]:
            sp = ports.spare(x)
            blocked = np.flatnonzero((ports.A[:, e] > 0) & (sp < ports.A[:, e]))
            p = blocked[0]
            cand = np.flatnonzero((ports.A[p] > 0) & (x > 1))
            if not cand.size:
                raise InstanceError("pods", f"port budget of {inst.pods[p]} cannot connect every pair")
            x[cand[np.argmin(W[cand])]] -= 1
        x[e] = 1
    return x


BASELINES = {"prop-alloc": prop_alloc, "sqrt-alloc": sqrt_alloc, "iter-halve": iter_halve}
