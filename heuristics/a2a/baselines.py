"""Baselines of the paper (Sec. 5.1), as reconstructed in spec 4.2 (the paper gives one line each).

All pay R per configuration, the initial one included (A2). Every function returns a verified-
shape :class:`instances.a2a.instance.A2AStrategy`. FAST and DirectConnect may split a flow (BvN
permutations, MCF paths; A23) and mark their strategies ``info["splittable"]``; MixNet and TopoOpt
send every flow whole.

* MixNet (static): traffic-aware greedy degree-k topology, connectivity repair by arc swaps,
  one shortest path per flow, generic-SP packing (larger flows first among equal hops).
* FAST (always reconfigure): balance A with dummy traffic, BvN decomposition by bottleneck
  perfect matchings, real bytes consumed before dummy, permutations sorted by their largest real
  transfer and grouped k per configuration; all transfers 1-hop.
* DirectConnect (static): GenKautz (repaired) or circulant (our base generators; recorded) with
  the G5 MCF LP routing; paths rounded to whole chunks (largest remainder) and packed (A17).
* TopoOpt (static): circulant of shifts coprime to n nearest n^((j-1)/k), one shortest path
  ("k-shortest paths, k = 1", A24), our circulant reference-node scheduler.
For k = 1 DirectConnect (both) and TopoOpt are the ring (the paper: they "coincide").
"""
from __future__ import annotations

from math import gcd

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching

from heuristics.a2a import circulant as circ
from heuristics.a2a import general as gen
from heuristics.a2a.strategy import realize
from instances.a2a.instance import A2AStrategy, Group, Phase, by_hops


def _strategy(phases_sized, info) -> A2AStrategy:
    """[(arcs, [[(path, size), ...] per round])] -> A2AStrategy (groups by hop count)."""
    phases = []
    for arcs, rounds in phases_sized:
        rs = [[Group(P, S) for P, S in by_hops([p for p, _ in r], [sz for _, sz in r])]
              for r in rounds if r]
        if rs:
            phases.append(Phase(np.asarray(arcs, dtype=np.int64).reshape(-1, 2), rs))
    return A2AStrategy(phases, info)


def _pack_fixed(n: int, arcs, items) -> list:
    """Pack sub-flows [(path, size)] with fixed paths: longest first, then larger first."""
    items = sorted(items, key=lambda it: (-len(it[0]), -it[1], it[0]))
    rounds = gen.pack_paths([([p], sz) for p, sz in items], arcs)
    size_of: dict = {}
    for p, sz in items:
        size_of.setdefault(p, []).append(sz)
    return [[(p, size_of[p].pop()) for p in r] for r in rounds]


def _static_sp(inst, arcs, name: str, info: dict) -> A2AStrategy:
    n, A = inst.n, inst.A
    adj = gen.adjacency(n, arcs)
    radj = gen.reverse_adjacency(n, adj)
    dist = gen.all_dists(n, adj)
    items = []
    for s in range(n):
        for t in range(n):
            if s != t and A[s, t] > 0:
                if dist[s, t] < 0:
                    raise ValueError(f"{name}: topology does not connect {s} -> {t}")
                items.append((gen.shortest_paths(radj, dist[s], s, t, 1)[0], float(A[s, t])))
    return _strategy([(arcs, _pack_fixed(n, arcs, items))], dict(info, baseline=name))


# ---------------------------------------------------------------------------------- MixNet
def mixnet_topology(A: np.ndarray, k: int) -> np.ndarray:
    n = len(A)
    pairs = sorted(((-A[s, t], s, t) for s in range(n) for t in range(n) if s != t))
    outd, ind, arcs = np.zeros(n, int), np.zeros(n, int), set()
    for _, s, t in pairs:
        if outd[s] < k and ind[t] < k and (s, t) not in arcs:
            arcs.add((s, t)); outd[s] += 1; ind[t] += 1
    # free ports: match free out-ports to free in-ports (no loops or duplicates)
    for u in range(n):
        while outd[u] < k:
            v = next((v for v in np.argsort(-A[u], kind="stable") if v != u and ind[v] < k
                      and (u, int(v)) not in arcs), None)
            if v is None:
                break
            arcs.add((u, int(v))); outd[u] += 1; ind[v] += 1
    # connectivity repair: swap the cheapest arcs of two weak components
    while True:
        arr = np.asarray(sorted(arcs))
        M = csr_matrix((np.ones(len(arr)), (arr[:, 0], arr[:, 1])), shape=(n, n))
        nc, lab = connected_components(M, directed=True, connection="weak")
        if nc == 1:
            break
        other = lab[np.flatnonzero(lab != lab[0])[0]]
        X = [e for e in arr.tolist() if lab[e[0]] == lab[0]]
        Y = [e for e in arr.tolist() if lab[e[0]] == other]
        if not Y:        # an arc-less node u: splice it into the cheapest arc a -> b
            u = int(np.flatnonzero(lab == other)[0])
            a, b = min((e for e in arr.tolist() if u not in e), key=lambda e: (A[e[0], e[1]], e))
            arcs -= {(a, b)}
            arcs |= {(a, u), (u, b)}
            continue
        a, b = min(X, key=lambda e: (A[e[0], e[1]], e))
        c, d = min(Y, key=lambda e: (A[e[0], e[1]], e))
        arcs -= {(a, b), (c, d)}
        arcs |= {(a, d), (c, b)}
    return np.asarray(sorted(arcs))


def mixnet(inst) -> A2AStrategy:
    arcs = mixnet_topology(inst.A, inst.k)
    return _static_sp(inst, arcs, "mixnet", {})


# ------------------------------------------------------------------------------------ FAST
def _bottleneck_matching(M: np.ndarray, tol: float) -> np.ndarray:
    """Perfect matching on supp(M) maximizing its minimum entry (binary search)."""
    vals = np.unique(M[M > tol])
    lo, hi, best = 0, len(vals) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        match = maximum_bipartite_matching(csr_matrix(M >= vals[mid]), perm_type="column")
        if np.all(match >= 0):
            best, lo = match, mid + 1
        else:
            hi = mid - 1
    if best is None:
        raise RuntimeError("BvN: no perfect matching on the balanced matrix")
    return best


def fast_bvn(A: np.ndarray, k: int, quanta: float = 1e4) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(perm, real sizes per row)] of the BvN decomposition, largest real transfer first.

    The matrix is rounded up to integer quanta (max entry ~ ``quanta``... finer for small
    entries) so balancing and subtraction are exact; real bytes are tracked unrounded.
    """
    n = len(A)
    q = quanta / max(A.max(), 1e-300)
    B = np.ceil(A * q).astype(np.int64)
    L = max(B.sum(axis=0).max(), B.sum(axis=1).max())
    for i in range(n):                      # greedy dummy fill to a doubly balanced matrix
        for j in range(n):
            add = min(L - B[i].sum(), L - B[:, j].sum())
            if add > 0:
                B[i, j] += add
    real = A.astype(float).copy()
    perms = []
    rows = np.arange(n)
    while B.max() > 0:
        perm = _bottleneck_matching(B, 0)
        w = B[rows, perm].min()
        B[rows, perm] -= w
        sent = np.minimum(real[rows, perm], w / q)
        real[rows, perm] -= sent
        if sent.max() > 0:
            perms.append((perm, sent))
    perms.sort(key=lambda ps: -ps[1].max())
    return perms


def fast(inst) -> A2AStrategy:
    k = inst.k
    perms = fast_bvn(inst.A, k)
    phases = []
    for a in range(0, len(perms), k):
        arcs, flows = [], []
        for perm, sent in perms[a:a + k]:
            for i in np.flatnonzero(sent > 0):
                arcs.append((int(i), int(perm[i])))
                flows.append(((int(i), int(perm[i])), float(sent[i])))
        phases.append((arcs, [flows]))
    # an entry's real bytes may be spread over several permutations: split flows (A23)
    return _strategy(phases, {"baseline": "fast", "permutations": len(perms), "splittable": True})


# --------------------------------------------------------------------------- DirectConnect
def directconnect(inst, topology: str = "genkautz", backend: str = "auto") -> A2AStrategy:
    from models.a2a.mcf import build_mcf, extract_mcf_paths, hop_traffic
    from models.backend import solve_lexicographic

    n, k, A = inst.n, inst.k, inst.A
    if k == 1:
        arcs, info = np.stack([np.arange(n), (np.arange(n) + 1) % n], 1), {"topology": "ring"}
    elif topology == "genkautz":
        arcs, info = gen.genkautz(n, k), {"topology": f"GK({k},{n}) repaired"}
    else:
        G, _ = circ.best_base(n, k)
        u = np.arange(n)
        arcs = np.concatenate([np.stack([u, (u + g) % n], 1) for g in G])
        info = {"topology": f"circulant {list(G)} (our base set)"}
    chunk = inst.link.chunk
    model, h = build_mcf(n, arcs, A, scale=chunk)
    res = solve_lexicographic(model, [h.U + 0.0, hop_traffic(h)], rel_tol=1e-6, backend=backend)
    if not res[-1].has_solution:
        raise RuntimeError(f"DirectConnect MCF LP: {res[-1].status}")
    splits = extract_mcf_paths(h, res[-1])
    items = []
    for s in range(n):
        for t in range(n):
            if s == t or A[s, t] <= 0:
                continue
            ps = splits.get((s, t))
            if not ps:
                adj = gen.adjacency(n, arcs)
                dist = gen.bfs_dist(n, adj, s)
                ps = [(gen.shortest_paths(gen.reverse_adjacency(n, adj), dist, s, t, 1)[0], A[s, t])]
            items += _round_chunks(ps, float(A[s, t]), chunk)
    info.update(lp_U_units=float(res[0].objective) * chunk)
    # the MCF routing may split a flow over several paths (spec A23)
    return _strategy([(arcs, _pack_fixed(n, arcs, items))],
                     dict(info, baseline="directconnect", splittable=True))


def _round_chunks(ps, total: float, chunk: float) -> list:
    """Split a flow over its LP paths in whole chunks (largest remainder), sizes summing to total."""
    if total < 1e-6 * chunk:
        # far under one chunk: chunk - (chunk - total) would round the flow away, so it goes
        # whole on its main LP path (flows this small only come from odd files, e.g. 1e-320)
        return [(tuple(ps[int(np.argmax([a for _, a in ps]))][0]), float(total))]
    nch = max(1, int(np.ceil(total / chunk - 1e-9)))
    share = np.asarray([a for _, a in ps]) / sum(a for _, a in ps) * nch
    base = np.floor(share).astype(int)
    for j in np.argsort(-(share - base), kind="stable")[:nch - base.sum()]:
        base[j] += 1
    out, big = [], int(np.argmax(base))
    for j, (p, _) in enumerate(ps):
        if base[j] > 0:
            out.append([p, base[j] * chunk])
    # the partial last chunk comes off the path with the most chunks
    excess = nch * chunk - total
    for o in out:
        if o[0] == ps[big][0]:
            o[1] -= excess
    return [(tuple(p), float(sz)) for p, sz in out if sz > 0]


# --------------------------------------------------------------------------------- TopoOpt
def topoopt_declines(n: int, k: int) -> str | None:
    """Why TopoOpt cannot be built, or None: it needs k distinct shifts coprime to n (TotientPerms:
    1 and k - 1 more in 2..n-1); e.g. n = 6 has only 1 and 5, so k >= 3 is impossible."""
    coprime = sum(1 for c in range(2, n) if gcd(c, n) == 1)
    if coprime < k - 1:
        return (f"TopoOpt needs k = {k} distinct shifts coprime to n = {n} (TotientPerms); "
                f"Z_{n} has only {coprime + 1}")
    return None


def topoopt_shifts(n: int, k: int) -> list[int]:
    """p_1 = 1, p_j = the unused shift coprime to n nearest n^((j-1)/k) (ties: smaller; spec 4.2)."""
    reason = topoopt_declines(n, k)
    if reason:
        raise ValueError(reason)
    shifts = [1]
    for j in range(2, k + 1):
        target = n ** ((j - 1) / k)
        cands = sorted((abs(c - target), c) for c in range(2, n) if gcd(c, n) == 1 and c not in shifts)
        shifts.append(cands[0][1])
    return shifts


def topoopt(inst) -> A2AStrategy:
    n, k = inst.n, inst.k
    G = tuple(topoopt_shifts(n, k))
    rounds = circ.pack(n, G, range(1, n), k, seq_cap=1)
    cand = circ.to_candidate(n, [(G, rounds)], "topoopt")
    st = realize(cand, inst)
    st.info.update(baseline="topoopt", shifts=list(G))
    return st


BASELINES = {"mixnet": mixnet, "fast": fast,
             "directconnect-gk": lambda inst: directconnect(inst, "genkautz"),
             "directconnect-circulant": lambda inst: directconnect(inst, "circulant"),
             "topoopt": topoopt}
