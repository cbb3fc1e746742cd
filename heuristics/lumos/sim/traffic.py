"""The flows of a placed training job, for the flow-level simulator (spec 4.2 [DECISION]).

One row of ``Flows`` is a unit of concurrent GPU-to-GPU traffic in one phase of a training
step; the simulator rates rows by max-min fairness. Classes (spec 4.2 traffic model):

* class 0 (``COLLECTIVE``): DP RingAllreduce and PP. The job's TP groups are arranged in
  the PP x DP matrix exactly as the leaf-level requirement arranges them (A.6 fill,
  ``heuristics.lumos.requirement.domain_groups``); then
  - DP (dp > 1): for every stage and TP lane, a ring over the stage's replicas in the
    generalised eq. (42) order (``ring_next``); each GPU sends to its successor;
  - PP (pp > 1): for every replica, stage r <-> r + 1 and TP lane, one flow each way
    (activations forward, gradients backward).
  ``fanout`` = the class-0 rows the source GPU sends (its NIC share).
* class 1 (``ALLTOALL``): EP (ep > 1). Each GPU sends to the other ep - 1 GPUs of its EP
  domain (``Placement.ep_domains``) off its own server, aggregated per (source GPU,
  destination leaf): one row of ``weight`` = the domain's GPUs in that leaf off the
  source's server, ``dst`` = the lowest of them; ``fanout`` = the source's off-server
  destinations (its NIC share; NVLink carries the rest).
* Traffic inside a server (TP, and DP/PP/EP peers on the same server, as for small jobs
  with tp < 8) rides NVLink: no rows ([002] §6.3: "8 GPUs interconnected via NVLink").

Layouts (``instances.lumos.placement``): the rows are the same in the server and the rail
layout; only the leaves they leave from and arrive at differ. [DECISION] In the rail layout a
DP or PP row joins TP lane i of one group with lane i of another, so with tp = 8 (every
Helios job) it joins GPUs of the same rank: inside one rail group it never leaves their
leaf. EP rows between GPUs of different ranks cross the spines (or a Clos's upper tiers):
no PXN-style relaying over NVLink to the destination's rail is modelled, nor any rail-aware
reordering of rings for tp < 8.

Rows are ordered DP, PP, EP; ``key`` (ECMP hash input) is splitmix64(job_id * 2^32 + row),
so the routing of a job is a function of (job_id, placement) only.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from heuristics.lumos.domains import ring_next
from heuristics.lumos.requirement import domain_groups
from instances.lumos.placement import Placement

COLLECTIVE, ALLTOALL = 0, 1


@dataclass(frozen=True)
class Flows:
    """Equal-length arrays, one entry per row: ``src``/``dst`` GPU ids (int64), ``weight``
    (GPU-level flows the row stands for), ``fanout`` (concurrent flows of the source GPU
    in this class), ``cls`` (0 collective, 1 all-to-all), ``key`` (int64 ECMP hash key)."""

    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    fanout: np.ndarray
    cls: np.ndarray
    key: np.ndarray

    def __len__(self) -> int:
        return len(self.src)

    @classmethod
    def concat(cls, parts) -> "Flows":
        """The rows of ``parts`` (a list of Flows) one after the other; empty for []."""
        parts = list(parts)
        if not parts:
            return _make([np.zeros(0, np.int64)] * 6)
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)))


def _make(cols) -> Flows:
    src, dst, weight, fanout, cls, key = cols
    return Flows(np.asarray(src, np.int64), np.asarray(dst, np.int64),
                 np.asarray(weight, np.int64), np.asarray(fanout, np.int64),
                 np.asarray(cls, np.int8), np.asarray(key, np.int64))


def splitmix64(x) -> np.ndarray:
    """SplitMix64 finaliser of ``x + golden gamma`` (Steele et al. 2014), uint64 -> int64
    bits, elementwise: splitmix64(0) = 0xE220A8397B1DCDAF (the generator's first output
    from state 0)."""
    with np.errstate(over="ignore"):                      # arithmetic mod 2^64 intended
        z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return np.asarray(z ^ (z >> np.uint64(31))).view(np.int64)


def collective_pairs(placement: Placement) -> tuple[np.ndarray, np.ndarray]:
    """(src, dst) GPU ids of the DP ring rows then the PP rows (module docstring).
    Counts: pp * tp * dp DP rows when dp > 1, 2 * dp * tp * (pp - 1) PP rows. O(gpus)."""
    job = placement.job
    grp = domain_groups(placement)                         # (pp, dp) TP-group index
    G = placement.tp_groups()[grp]                         # (pp, dp, tp) GPU ids
    src, dst = [], []
    if job.dp > 1:
        pod = placement.cluster.pod_of(G[:, :, 0])
        nxt = ring_next(pod)
        src.append(G.ravel())
        dst.append(G[np.arange(job.pp)[:, None], nxt].ravel())
    if job.pp > 1:
        src += [G[:-1].ravel(), G[1:].ravel()]
        dst += [G[1:].ravel(), G[:-1].ravel()]
    if not src:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(src), np.concatenate(dst)


def alltoall_rows(placement: Placement) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src, dst, weight) of the EP rows, aggregated per (source GPU, destination leaf) of
    its EP domain (module docstring): weight = the domain's GPUs in that leaf off the
    source's server (NVLink serves its server-mates), dst = the lowest of them; rows in
    domain order of the source, then by leaf. Any layout (``Cluster.leaf_of``: in the rail
    layout a server's GPUs sit on T leaves). Vectorised: O(gpus x ep log)."""
    ep = placement.job.ep
    if ep == 1:
        z = np.zeros(0, np.int64)
        return z, z, z
    gpu = placement.ep_domains()                           # (domains, ep), ascending rows
    cl = placement.cluster
    leaf, srv = cl.leaf_of(gpu), cl.server_of(gpu)
    d, a, b = np.nonzero(srv[:, :, None] != srv[:, None, :])   # off-server (src a, dst b)
    e, lb = d * ep + a, leaf[d, b]
    order = np.lexsort((b, lb, e))                         # by source, leaf, then GPU
    e, lb, d, b = e[order], lb[order], d[order], b[order]
    first = np.ones(len(e), dtype=bool)
    first[1:] = (e[1:] != e[:-1]) | (lb[1:] != lb[:-1])
    start = np.flatnonzero(first)
    w = np.diff(np.append(start, len(e)))
    return gpu.ravel()[e[start]], gpu[d[start], b[start]], w


def job_flows(placement: Placement, job_id: int) -> Flows:
    """All rows of one placed job: DP and PP (class 0), then EP (class 1); see the module
    docstring. ``key`` = splitmix64(job_id * 2^32 + row), 0 <= job_id < 2^32."""
    if not 0 <= int(job_id) < 2 ** 32:
        raise ValueError(f"job_id must be in [0, 2^32), got {job_id}")
    gpus = placement.gpus
    c_src, c_dst = collective_pairs(placement)
    server = placement.cluster.server_of
    off = server(c_src) != server(c_dst)                   # NVLink inside a server
    c_src, c_dst = c_src[off], c_dst[off]
    sent = np.bincount(np.searchsorted(gpus, c_src), minlength=len(gpus))
    c_fan = sent[np.searchsorted(gpus, c_src)]
    a_src, a_dst, a_w = alltoall_rows(placement)
    a_fan = np.bincount(np.searchsorted(gpus, a_src), a_w, len(gpus)).astype(np.int64)[
        np.searchsorted(gpus, a_src)]
    nc, na = len(c_src), len(a_src)
    rows = np.arange(nc + na, dtype=np.uint64)
    key = splitmix64((np.uint64(job_id) << np.uint64(32)) + rows)
    return _make([np.concatenate([c_src, a_src]), np.concatenate([c_dst, a_dst]),
                  np.concatenate([np.ones(nc, np.int64), a_w]),
                  np.concatenate([c_fan, a_fan]),
                  np.repeat(np.array([COLLECTIVE, ALLTOALL], np.int8), [nc, na]), key])
