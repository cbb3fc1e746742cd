"""GPU placement by best fit ([002] 4.2.1 Principles 1-2, spec 2.8), and the shared steps
that turn per-Pod or per-leaf counts into GPU ids.

Units. TP stays inside a server, so a job's GPUs come in *slots* of ``tp`` GPUs on one
server (a server with f free GPUs offers floor(f / tp) slots). EP domains stay inside a
Pod, so a Pod takes a multiple of m = lcm(tp, ep) GPUs. Any number of slots up to a
Pod's (or leaf's) total can be taken inside it, so the Pod-level and leaf-level choices
decide the placement; ``assemble`` then picks servers and GPUs.

``greedy_placement`` (polynomial, O(n_gpus + P log P + leaves log leaves)):

1. one leaf: if some leaf holds the whole job, the one in the Pod with the fewest free
   GPUs (ties: the leaf with the fewest, then the lowest id);
2. else Pods by ``best_fit`` over whole EP units: if one Pod holds the rest, the one with
   the fewest free GPUs (best fit, Principle 1), else the Pod with the most units
   (fewest Pods), repeated; then the leaves of each chosen Pod the same way (slots);
3. servers inside a leaf the same way (best fit), GPUs in id order inside a server.

With ``ep_split`` and no whole-EP placement, step 2 runs on slots instead of EP units and
the placement states ``ep_exception`` (cross-Pod EP under extreme fragmentation,
Principle 2). Without it, or without enough free slots, ``NoPlacement`` says why.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd

import numpy as np

from instances.lumos.placement import Placement, PlacementInstance


class NoPlacement(ValueError):
    """No valid placement exists (or the method may not use one); ``str`` is the reason."""


@dataclass
class Capacity:
    """Free GPUs and TP slots per server, leaf and Pod for one job."""

    server_free: np.ndarray      # (n_servers,)
    server_slots: np.ndarray
    leaf_free: np.ndarray        # (n_leaves,)
    leaf_slots: np.ndarray
    pod_free: np.ndarray         # (P,)
    pod_slots: np.ndarray
    unit: int                    # m / tp: slots per whole-EP unit
    need: int                    # slots the job needs

    @property
    def pod_units(self) -> np.ndarray:
        return self.pod_slots // self.unit


def capacity(inst: PlacementInstance) -> Capacity:
    cl, job = inst.cluster, inst.job
    sf = inst.free.reshape(cl.n_servers, cl.gpus_per_server).sum(axis=1)
    ss = sf // job.tp
    spl, lpp = cl.servers_per_leaf, cl.fabric.leaves_per_pod
    lf, ls = sf.reshape(-1, spl).sum(axis=1), ss.reshape(-1, spl).sum(axis=1)
    m = job.tp * job.ep // gcd(job.tp, job.ep)
    return Capacity(sf, ss, lf, ls, lf.reshape(-1, lpp).sum(axis=1), ls.reshape(-1, lpp).sum(axis=1),
                    m // job.tp, job.gpus // job.tp)


def best_fit(cap: np.ndarray, free: np.ndarray, need: int) -> np.ndarray | None:
    """Take ``need`` units from candidates with capacities ``cap``: while no single
    candidate holds the rest, take all of the largest (ties: fewer ``free``, lower index);
    then the one holding the rest with the fewest ``free`` (ties: lower index). Returns the
    units per candidate, or None when the capacities sum to less. O(n log n)."""
    take = np.zeros(len(cap), dtype=np.int64)
    if need <= 0:
        return take
    if int(cap.sum()) < need:
        return None
    order = np.lexsort((np.arange(len(cap)), free, -cap))
    c = cap[order]
    rem = need
    for j in range(len(order)):
        if c[j] >= rem:
            fits = order[j:][c[j:] >= rem]                 # a prefix (c descending)
            pick = fits[np.lexsort((fits, free[fits]))[0]]
            take[pick] = rem
            return take
        take[order[j]] = c[j]
        rem -= int(c[j])
    return None                                            # unreachable: the sum covers need


def pod_counts(inst: PlacementInstance, cap: Capacity, ep_split: bool = False) -> tuple[np.ndarray, bool]:
    """Slots per Pod by ``best_fit`` over whole EP units (step 2); with ``ep_split``,
    over slots when no whole-EP choice exists. Returns (slots per Pod, ep_exception)."""
    units = best_fit(cap.pod_units, cap.pod_free, cap.need // cap.unit)
    if units is not None:
        return units * cap.unit, False
    free_slots = int(cap.pod_slots.sum())
    if ep_split and free_slots >= cap.need:
        return best_fit(cap.pod_slots, cap.pod_free, cap.need), True
    job = inst.job
    if free_slots < cap.need:
        raise NoPlacement(f"{free_slots} free TP slots of tp = {job.tp} GPUs, the job needs {cap.need}")
    raise NoPlacement(f"no placement keeps EP domains (ep = {job.ep}) inside Pods: the Pods hold "
                      f"{int(cap.pod_units.sum()) * cap.unit * job.tp} GPUs in whole EP units, the "
                      f"job needs {job.gpus} (ep_split=1 allows cross-Pod EP)")


def leaf_counts(inst: PlacementInstance, cap: Capacity, per_pod: np.ndarray) -> np.ndarray:
    """Slots per leaf: ``best_fit`` over the leaves of each Pod with slots (step 2)."""
    lpp = inst.cluster.fabric.leaves_per_pod
    out = np.zeros(len(cap.leaf_slots), dtype=np.int64)
    for i in np.flatnonzero(per_pod):
        sl = slice(i * lpp, (i + 1) * lpp)
        out[sl] = best_fit(cap.leaf_slots[sl], cap.leaf_free[sl], int(per_pod[i]))
    return out


def assemble(inst: PlacementInstance, cap: Capacity, per_leaf: np.ndarray, order: str = "best_fit",
             meta: dict | None = None) -> Placement:
    """The Placement taking ``per_leaf[l]`` slots in leaf l: servers by ``best_fit``
    (``order="best_fit"``) or in id order (``"index"``, the [REPO] rule), then the
    lowest free GPU ids of each server."""
    cl, tp = inst.cluster, inst.job.tp
    spl, T = cl.servers_per_leaf, cl.gpus_per_server
    free = inst.free.reshape(cl.n_servers, T)
    chosen = []
    for leaf in np.flatnonzero(per_leaf):
        srv = np.arange(leaf * spl, (leaf + 1) * spl)
        k = int(per_leaf[leaf])
        if order == "index":
            c = cap.server_slots[srv]
            take = np.minimum(c, np.maximum(0, k - (np.cumsum(c) - c)))
        else:
            take = best_fit(cap.server_slots[srv], cap.server_free[srv], k)
        for s, t in zip(srv[take > 0], take[take > 0]):
            chosen.append(s * T + np.flatnonzero(free[s])[: t * tp])
    gpus = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
    return Placement(cl, inst.job, gpus, dict(meta or {}))


def greedy_placement(inst: PlacementInstance, ep_split: bool = False) -> Placement:
    """Best fit by locality (module docstring); NoPlacement when none is allowed."""
    cap = capacity(inst)
    fits = np.flatnonzero(cap.leaf_slots >= cap.need)
    if len(fits):                                            # step 1: one leaf
        pod = inst.cluster.fabric.pod_of_leaf(fits)
        leaf = fits[np.lexsort((fits, cap.leaf_free[fits], cap.pod_free[pod]))[0]]
        per_leaf = np.zeros(len(cap.leaf_slots), dtype=np.int64)
        per_leaf[leaf] = cap.need
        return assemble(inst, cap, per_leaf)
    per_pod, exception = pod_counts(inst, cap, ep_split)      # step 2
    meta = {"ep_exception": True} if exception else {}
    return assemble(inst, cap, leaf_counts(inst, cap, per_pod), meta=meta)
