"""Independent checker of a ``lumos-placement`` solution ([002] 4.2.1, spec 2.8).

A placement is valid when its GPU ids exist, are distinct and free, their count is the
job's, every server holds a multiple of ``tp`` of them (TP inside a server) and every Pod
a multiple of ``ep`` (EP domains whole inside a Pod). The one exception ([002] 4.2.1
Principle 2, "cross-Pod EP only under extreme fragmentation"): a placement whose meta
states ``ep_exception`` may split EP domains across Pods, but only when no placement with
whole EP domains exists (the checker decides that itself, below).

Metrics: ``idle_gpus`` (the objective: free GPUs the chosen Pods keep after the job
moves in, sum over used Pods of free_i - placed_i), ``pods_used``, ``leaves_used``,
``servers_used``, ``cross_pod_ep_domains``, ``ep_exception``, ``fragmentation`` (after
placement, the share of the cluster's free GPUs that sit in partly busy servers, i.e. are
unusable by a whole-server TP group; 0 when nothing is free) and ``free_gpus``.
"""
from __future__ import annotations

from math import gcd

import numpy as np

from instances.lumos.placement import PlacementInstance


def whole_ep_possible(inst: PlacementInstance) -> bool:
    """True when some placement keeps every EP domain inside a Pod: Pod i can take any
    multiple of m = lcm(tp, ep) GPUs up to tp * (its free TP slots), so one exists iff
    sum_i floor(tp * slots_i / m) * m >= gpus. O(n_gpus)."""
    cl, job = inst.cluster, inst.job
    T, tp = cl.gpus_per_server, job.tp
    slots = inst.free.reshape(cl.n_servers, T).sum(axis=1) // tp
    per_pod = slots.reshape(cl.fabric.pods, -1).sum(axis=1) * tp
    m = tp * job.ep // gcd(tp, job.ep)
    return int((per_pod // m).sum()) * m >= job.gpus


def check_placement(inst: PlacementInstance, sol) -> tuple[list[str], dict]:
    """(violations, metrics) of ``sol`` (a Placement, or anything with ``gpus``, ``job`` and
    ``meta``), recomputed from its raw GPU ids."""
    cl, job = inst.cluster, inst.job
    bad: list[str] = []
    meta = dict(getattr(sol, "meta", None) or {})
    if getattr(sol, "job", job) != job:
        bad.append(f"solution is for job {sol.job.to_dict()}, the instance's is {job.to_dict()}")
    g = np.asarray(sol.gpus)
    if g.ndim != 1 or not (g.size == 0 or np.issubdtype(g.dtype, np.integer)):
        return bad + ["gpus must be a 1-D list of integer GPU ids"], {}
    g = np.sort(g.astype(np.int64))
    out = g[(g < 0) | (g >= cl.n_gpus)]
    if len(out):
        return bad + [f"GPU {out[0]} does not exist (ids 0..{cl.n_gpus - 1})"], {}
    if np.any(g[1:] == g[:-1]):
        bad.append(f"GPU {g[1:][g[1:] == g[:-1]][0]} is placed twice")
        g = np.unique(g)
    if g.size != job.gpus:
        bad.append(f"{g.size} distinct GPUs placed, the job needs {job.gpus}")
    taken = g[inst.busy[g]]
    if len(taken):
        bad.append(f"{len(taken)} placed GPUs are busy (first: GPU {taken[0]})")
    srv, cnt = np.unique(cl.server_of(g), return_counts=True)
    odd = np.flatnonzero(cnt % job.tp)
    if len(odd):
        bad.append(f"server {srv[odd[0]]} holds {cnt[odd[0]]} of the job's GPUs, not a multiple "
                   f"of tp = {job.tp} (TP inside a server)")
    per_pod = np.bincount(cl.pod_of(g), minlength=cl.fabric.pods)
    split = np.flatnonzero(per_pod % job.ep)
    exception = bool(meta.get("ep_exception", False))
    if len(split):
        if not exception:
            bad.append(f"Pod {split[0]} holds {per_pod[split[0]]} of the job's GPUs, not a "
                       f"multiple of ep = {job.ep} (an EP domain crosses Pods)")
        elif whole_ep_possible(inst):
            bad.append("ep_exception claimed, but a placement with whole EP domains exists")
    # metrics
    free = inst.free.copy()
    free_pod = np.bincount(cl.pod_of(np.flatnonzero(free)), minlength=cl.fabric.pods)
    used = per_pod > 0
    free[g] = False
    per_server = free.reshape(cl.n_servers, cl.gpus_per_server)
    n_free = int(per_server.sum())
    partial = per_server.any(axis=1) & ~per_server.all(axis=1)
    ep_dom = cl.pod_of(g[: g.size - g.size % job.ep].reshape(-1, job.ep)) if g.size >= job.ep \
        else np.zeros((0, 1), np.int64)
    m = {"idle_gpus": int(free_pod[used].sum() - per_pod[used].sum()),
         "pods_used": int(used.sum()),
         "leaves_used": int(len(np.unique(cl.leaf_of(g)))),
         "servers_used": int(len(srv)),
         "cross_pod_ep_domains": int(np.count_nonzero(ep_dom.min(axis=1) != ep_dom.max(axis=1)))
         if len(ep_dom) else 0,
         "ep_exception": exception,
         "fragmentation": float(per_server[partial].sum() / n_free) if n_free else 0.0,
         "free_gpus": n_free}
    return bad, m
