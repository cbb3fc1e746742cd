"""Chunk-level discrete-event simulator (spec 5.4; our substitute for the paper's htsim).

Each phase waits R, then runs its rounds in order with a barrier after every round (paper:
"reconfiguration happens only after all flows in the current round complete"; ``barrier=False``
runs all rounds of a phase together). A flow of S units is ceil(S / chunk) chunks (a partial last
chunk allowed, A14). Every directed link is a FIFO-by-priority server (parallel circuits = several
servers): a chunk of b units takes beta b to serialize, then alpha to propagate; store-and-
forward (a chunk is forwarded only after it fully arrived). Queue priority: smallest chunk index
first, ties by flow id (paper Sec. 5.1). Packet-level effects of htsim (MTU packets, transport)
are not modelled. ``delivered`` counts, per (source, destination), the chunks that reached the
destination at the end of their path (a check that every chunk of every flow arrives).
"""
from __future__ import annotations

import heapq

import numpy as np

from instances.a2a.instance import arc_multiplicity


def _run_flows(paths: list, sizes: list, link, mult: dict) -> tuple[float, list]:
    """(makespan, chunks delivered per flow) of a set of flows starting together at time 0."""
    alpha, beta, chunk = link.alpha, link.beta, link.chunk
    free = dict(mult)
    queues: dict = {}
    events: list = []
    seq = 0
    end = 0.0
    arrived = [0] * len(paths)
    csize = []
    for f, S in enumerate(sizes):
        nc = max(1, int(np.ceil(S / chunk - 1e-9)))
        csize.append((nc, S - (nc - 1) * chunk))

    def start(L, t):
        nonlocal seq
        q = queues.get(L)
        while q and free[L] > 0:
            c, f = heapq.heappop(q)[:2]
            free[L] -= 1
            nc, last = csize[f]
            ser = beta * (last if c == nc - 1 else chunk)
            seq += 1
            heapq.heappush(events, (t + ser, seq, 0, L, f, c))           # link free
            seq += 1
            heapq.heappush(events, (t + ser + alpha, seq, 1, L, f, c))   # chunk arrives

    hop_of: dict = {}
    for f, p in enumerate(paths):
        L = (p[0], p[1])
        for c in range(csize[f][0]):
            heapq.heappush(queues.setdefault(L, []), (c, f))
            hop_of[(f, c)] = 0
    for L in list(queues):
        start(L, 0.0)
    while events:
        t, _, kind, L, f, c = heapq.heappop(events)
        if kind == 0:
            free[L] += 1
            start(L, t)
            continue
        j = hop_of[(f, c)] + 1
        p = paths[f]
        if j == len(p) - 1:
            end = max(end, t)
            arrived[f] += 1
            continue
        hop_of[(f, c)] = j
        L2 = (p[j], p[j + 1])
        heapq.heappush(queues.setdefault(L2, []), (c, f))
        start(L2, t)
    return end, arrived


def simulate(inst, strategy, barrier: bool = True) -> dict:
    """Realized completion time of a strategy: {total, reconfig, transmission, per_round,
    delivered}."""
    total_tx, per_round, d = 0.0, [], 0
    delivered: dict = {}
    for ph in strategy.phases:
        if not ph.rounds:
            continue
        d += 1
        mult = arc_multiplicity(ph.arcs)
        batches = ph.rounds if barrier else [[g for r in ph.rounds for g in r]]
        for r in batches:
            paths = [tuple(int(x) for x in p) for g in r for p in g.paths]
            sizes = [float(s) for g in r for s in g.size]
            t, got = _run_flows(paths, sizes, inst.link, mult)
            for p, c in zip(paths, got):
                delivered[(p[0], p[-1])] = delivered.get((p[0], p[-1]), 0) + c
            per_round.append(t)
            total_tx += t
    reconf = inst.R * d
    return {"total": reconf + total_tx, "reconfig": reconf, "transmission": total_tx,
            "per_round": per_round, "delivered": delivered}
