"""Routing modes of the LumosCore cluster simulator: ECMP, probing ([002] §6.2 default) and
the contention-free optimum ([002] A.10, Fig. 25; issue 31 item 1).

Every network routes a flow as a function of (src, dst, key) alone (``networks`` module
docstring), so a routing mode here only *chooses each flow's key*; the rates are then max-min
fair as before (``engine``).

* ``ecmp``: the flow's own key (``traffic.job_flows``: a hash of job and row): one
  hashed path, fixed while the job runs. The mode every result before issue 31 used.
* ``probing``: probing-based routing as in ACCL ([002] §6.2: "By default, we use
  probing-based routing in ACCL (Dong et al., 2021a)"), modelled after the authors'
  simulator (github LumosCore/LumosCore, ``rapidnetsim/core/infrastructure/flow.py``,
  ``_get_up_down_routing*``: "rehashing"): a flow tries up to ``PROBES`` = 5 keys, each a
  path of the network's own hashing, and keeps the one whose bottleneck share is largest;
  flows are routed one after the other, each seeing the flows routed before it.
* ``optimal``: the hypothetical routing "which eliminates all network contention" ([002]
  §6.5, Fig. 25): every flow at its NIC share, no link constrains it (the engine skips the
  max-min problem).

Decisions where the paper and the authors' code are silent or differ from our model:

* [DECISION] Candidate keys: key_0 = the ECMP key, key_c = ``mix64(key, PROBE_SALT + c)``
  for c = 1..4; each is routed by the network's own hash (a polarized Clos stays polarized
  per candidate: rehashing changes the packet header, not the switches). Identical
  candidate paths count once, so "up to" 5 distinct paths.
* [DECISION] The share of a link is ``capacity / (n + w)``: n the unit flows of the same
  class already routed over it (``traffic`` weights: an aggregated all-to-all row of
  weight w stands for w unit flows), counting the flow itself; the authors divide by the
  flows already there (``capacity / n``, ``capacity`` when n = 0), which ranks candidates
  the same except that it cannot tell an empty link from one with a single flow. A flow
  on no link (same leaf, Best) has share inf.
* [DECISION] Ties go to the fewer hops, then to the lower candidate index (the authors:
  larger share first, then the shorter path), so with no other traffic probing keeps the
  ECMP path wherever that path is among the widest and shortest.
* [DECISION] Occupancy is counted per class (collective / all-to-all): the engine rates
  the two classes as separate phases, so a flow of one class never meets the other's.
* [DECISION] When a job starts its flows are routed in row order (DP, PP, EP) against the
  flows of the jobs already running; its paths then stay until it ends. When the OCS
  network changes (a reconfiguration) every running job is routed again, in start order,
  as the authors' ``network_refresh`` re-routes every flow in flight.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from heuristics.lumos.sim.networks import mix64
from heuristics.lumos.sim.traffic import Flows

ROUTINGS = ("ecmp", "probing", "optimal")
PROBES = 5                  # the authors' max_rehashing_time default
PROBE_SALT = 0x5EED_0000


def candidate_keys(key: np.ndarray, probes: int = PROBES) -> np.ndarray:
    """(probes, n) int64 keys: the ECMP key first, then ``probes - 1`` rehashes of it."""
    key = np.asarray(key, dtype=np.int64)
    out = np.empty((probes, len(key)), dtype=np.int64)
    out[0] = key
    for c in range(1, probes):
        out[c] = mix64(key, PROBE_SALT + c).view(np.int64)
    return out


def padded_links(A) -> np.ndarray:
    """(n_flows, max hops) link ids of the CSC route matrix ``A``, -1 padded."""
    cnt = np.diff(A.indptr)
    width = int(cnt.max()) if len(cnt) else 0
    out = np.full((A.shape[1], max(width, 1)), -1, dtype=np.int64)
    col = np.repeat(np.arange(A.shape[1]), cnt)
    pos = np.arange(len(A.indices)) - np.repeat(A.indptr[:-1], cnt)
    out[col, pos] = A.indices
    return out


def probe(net, flows: Flows, load: np.ndarray, probes: int = PROBES) -> np.ndarray:
    """The keys probing gives ``flows`` (in row order) on ``net``, and adds their unit
    flows to ``load`` ((2, n_links): per class, updated in place): ``probes`` vectorized
    ``route_mask`` calls, then the compiled sequential scan ``probe_kernel.choose_paths``
    (O(rows x probes x hops))."""
    n = len(flows)
    if n == 0 or len(net.capacity) == 0:
        return flows.key.copy()
    keys = candidate_keys(flows.key, probes)
    paths = [padded_links(net.route_mask(flows.src, flows.dst, k)[0]) for k in keys]
    width = max(p.shape[1] for p in paths)
    cand = np.full((probes, n, width), -1, dtype=np.int64)
    for c, p in enumerate(paths):
        cand[c, :, :p.shape[1]] = p
    same = (cand == cand[0][None]).all(axis=(0, 2))     # one distinct path: no choice
    if same.all():
        _add_np(load, cand[0], flows.cls.astype(np.int64), flows.weight.astype(float))
        return keys[0].copy()
    from heuristics.lumos.sim.probe_kernel import choose_paths

    choice = choose_paths(cand, same, net.capacity.astype(float), load,
                          flows.cls.astype(np.int64), flows.weight.astype(float))
    return keys[choice, np.arange(n)]


def _add_np(load: np.ndarray, links: np.ndarray, cls: np.ndarray, w: np.ndarray) -> None:
    """Add weight ``w`` of each row's class to the load of its links (-1: none)."""
    ok = links >= 0
    rows = np.broadcast_to(cls[:, None], links.shape)[ok]
    ww = np.broadcast_to(w[:, None], links.shape)[ok]
    np.add.at(load, (rows, links[ok]), ww)


class Router:
    """The routing state of one simulation: per running job its routed flows, and for
    probing the per-class unit-flow load of every link (module docstring)."""

    def __init__(self, mode: str = "probing", probes: int = PROBES):
        if mode not in ROUTINGS:
            raise ValueError(f"routing must be one of {', '.join(ROUTINGS)}, got {mode!r}")
        if probes < 1:
            raise ValueError(f"probes must be >= 1, got {probes}")
        self.mode, self.probes = mode, probes
        self.load: np.ndarray | None = None
        self.order: dict[int, Flows] = {}       # running jobs' ECMP-keyed flows, start order

    def start(self, net, job_id: int, flows: Flows) -> Flows:
        """``flows`` of a starting job with their routed keys."""
        self.order[job_id] = flows
        if self.mode != "probing":
            return flows
        if self.load is None or self.load.shape[1] != len(net.capacity):
            self.load = np.zeros((2, len(net.capacity)))
        return replace(flows, key=probe(net, flows, self.load, self.probes))

    def end(self, net, job_id: int, routed: Flows) -> None:
        """A job ended: its flows leave the links."""
        self.order.pop(job_id, None)
        if self.mode == "probing" and self.load is not None and len(routed):
            A = net.route_mask(routed.src, routed.dst, routed.key)[0]
            _add_np(self.load, padded_links(A), routed.cls.astype(np.int64),
                    -routed.weight.astype(float))

    def reroute(self, net) -> dict[int, Flows]:
        """Every running job routed again on a changed network, in start order (one
        ``probe`` over all their rows: the scan is sequential anyway)."""
        if self.mode != "probing":
            return dict(self.order)
        self.load = np.zeros((2, len(net.capacity)))
        if not self.order:
            return {}
        keys = probe(net, Flows.concat(self.order.values()), self.load, self.probes)
        ends = np.cumsum([len(f) for f in self.order.values()])
        return {j: replace(f, key=k) for (j, f), k in
                zip(self.order.items(), np.split(keys, ends[:-1]))}
