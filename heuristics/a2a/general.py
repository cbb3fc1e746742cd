"""General topologies: Generalized Kautz, the generic shortest-path round packer and the
"fill" contraction (paper Sec. 4.2-4.3, Fig. 9; spec 3.4, 3.5).

* GK(k, n): arcs x -> (-k x - a) mod n, a = 1..k (Imase-Itoh), with self-loops repaired (A7):
  two looped nodes u, v become u -> v, v -> u; a leftover loop u -> u is 2-swapped with an arc
  a -> b into u -> b, a -> u. The result stays k-regular in and out.
* generic-SP packer (the general-topology scheduler, also used by the baselines): every flow gets
  <= ``cap`` shortest paths (BFS DAG), flows go longest first (then larger first), each to the
  first round where one of its candidate paths uses no busy (link, hop index); else a new round.
* fill contraction [OURS, replaces the spec's whole-round fill]: a greedy b-matching - individual
  flows, longest first (ties: the most expensive round, then the earliest), become direct arcs
  of the new topology while its out/in-degree stays <= k (A9); they form one 1-hop round and
  every old topology re-packs its remaining flows with generic-SP. The cheaper of this and a
  global re-assignment (each flow to the topology with its shortest path, re-packed) is kept.
  The paper's own GK schedule (k^{h-1} rounds per h, prune, merge) is
  ``heuristics.a2a.gk_literal``; its chain starts from that schedule (``base_rounds``) and
  also tries keeping the old rounds less the moved flows (``simple``).
"""
from __future__ import annotations

from collections import deque

import numpy as np

from heuristics.a2a.strategy import Candidate
from instances.a2a.instance import arc_multiplicity, by_hops

PATH_CAP = 8


def genkautz(n: int, k: int, repair: bool = True) -> np.ndarray:
    """Arcs of GK(k, n) (self-loops repaired unless ``repair=False``)."""
    arcs = [(x, (-k * x - a) % n) for x in range(n) for a in range(1, k + 1)]
    if not repair:
        return np.asarray(arcs)
    aset = set(arcs)
    loops = [u for u, v in arcs if u == v]
    for u, v in zip(loops[0::2], loops[1::2]):
        if (u, v) not in aset and (v, u) not in aset:
            aset -= {(u, u), (v, v)}
            aset |= {(u, v), (v, u)}
            loops.remove(u), loops.remove(v)
    for u in [x for x in loops if (x, x) in aset]:
        for a, b in sorted(aset):
            if u not in (a, b) and a != b and (u, b) not in aset and (a, u) not in aset:
                aset -= {(u, u), (a, b)}
                aset |= {(u, b), (a, u)}
                break
    return np.asarray(sorted(aset))


def adjacency(n: int, arcs) -> list[list[int]]:
    out = [[] for _ in range(n)]
    for u, v in np.asarray(arcs).reshape(-1, 2):
        if u != v and v not in out[u]:
            out[u].append(int(v))
    return out


def bfs_dist(n: int, adj, s: int) -> np.ndarray:
    dist = np.full(n, -1, dtype=np.int64)
    dist[s] = 0
    q = deque([s])
    while q:
        x = q.popleft()
        for y in adj[x]:
            if dist[y] < 0:
                dist[y] = dist[x] + 1
                q.append(y)
    return dist


def shortest_paths(radj, dist_from_s: np.ndarray, s: int, t: int, cap: int) -> list[tuple]:
    """Up to ``cap`` shortest s->t paths, lexicographic by node ids (DFS back along the BFS DAG;
    ``radj[x]`` = sorted in-neighbours of x)."""
    out: list[tuple] = []

    def back(path):
        if len(out) >= cap:
            return
        x = path[-1]
        if x == s:
            out.append(tuple(reversed(path)))
            return
        dx = dist_from_s[x] - 1
        for p in radj[x]:
            if dist_from_s[p] == dx:
                back(path + [p])
    if dist_from_s[t] > 0:
        back([t])
    return out


def reverse_adjacency(n: int, adj) -> list[list[int]]:
    radj = [[] for _ in range(n)]
    for u in range(n):
        for v in adj[u]:
            radj[v].append(u)
    return [sorted(r) for r in radj]


def all_dists(n: int, adj) -> np.ndarray:
    return np.stack([bfs_dist(n, adj, s) for s in range(n)])


def pack_paths(flows, arcs) -> list[list[tuple]]:
    """First-fit packing of flows ``[(candidate paths, size)]`` into contention-free rounds.

    Flows are taken in the given order. Link capacity = the arc's multiplicity in ``arcs``.
    Returns rounds as lists of chosen paths.
    """
    mult = arc_multiplicity(arcs)
    outdeg: dict = {}
    for (u, _), m in mult.items():
        outdeg[u] = outdeg.get(u, 0) + m
    rounds: list[list] = []
    used: list[dict] = []
    starts: list[dict] = []          # per round: flows started per source (<= out-degree)
    for cands, _ in flows:
        steps_c = [[((p[i], p[i + 1]), i) for i in range(len(p) - 1)] for p in cands]
        s = cands[0][0]
        placed = False
        for r, u, st0 in zip(rounds, used, starts):
            if st0.get(s, 0) >= outdeg[s]:
                continue
            for p, steps in zip(cands, steps_c):
                if all(u.get(st, 0) < mult[st[0]] for st in steps):
                    for st in steps:
                        u[st] = u.get(st, 0) + 1
                    st0[s] = st0.get(s, 0) + 1
                    r.append(p)
                    placed = True
                    break
            if placed:
                break
        if not placed:
            rounds.append([cands[0]])
            used.append({st: 1 for st in steps_c[0]})
            starts.append({s: 1})
    return rounds


def sp_schedule(n: int, arcs, pairs=None, sizes=None, cap: int = PATH_CAP, dist=None) -> list:
    """generic-SP on one topology for the given (s, t) pairs (default: all), longest first."""
    adj = adjacency(n, arcs)
    dist = all_dists(n, adj) if dist is None else dist
    if pairs is None:
        pairs = [(s, t) for s in range(n) for t in range(n) if s != t]
    if any(dist[s, t] < 0 for s, t in pairs):
        raise ValueError("topology does not connect every scheduled pair")
    sz = (lambda s, t: 1.0) if sizes is None else (lambda s, t: float(sizes[s, t]))
    order = sorted(pairs, key=lambda st: (-dist[st], -sz(*st), st))
    radj = reverse_adjacency(n, adj)
    flows = [(shortest_paths(radj, dist[s], s, t, cap), sz(s, t)) for s, t in order]
    return pack_paths(flows, arcs)


def _hop_sum(state) -> int:
    return sum(max(len(p) - 1 for p in r) for _, rounds in state for r in rounds)


def _fill(n: int, k: int, state, cap: int = PATH_CAP, simple: bool = False):
    """Greedy b-matching fill (G6 rule, greedy): the longest flows (ties: the most expensive
    round, then the earliest) become direct arcs while out/in degree <= k; they form one 1-hop
    round on the new topology and every old topology re-packs its remaining flows (``simple``:
    or keeps its rounds less the moved flows, whichever has the smaller hop sum; spec 3.5
    rule 4a)."""
    flows = sorted(((len(p) - 1, rmax, -ti, -ri, p)
                    for ti, (_, rounds) in enumerate(state) for ri, r in enumerate(rounds)
                    for rmax in (max(len(q) for q in r),) for p in r),
                   key=lambda x: x[:4], reverse=True)
    if not flows or flows[0][0] <= 1:
        return None
    outd, ind = np.zeros(n, int), np.zeros(n, int)
    moved = set()
    for h, _, _, _, p in flows:
        if h <= 1:
            break
        s, t = p[0], p[-1]
        if outd[s] < k and ind[t] < k:
            outd[s] += 1
            ind[t] += 1
            moved.add((s, t))
    new_state = []
    for arcs, rounds in state:
        pairs = [(p[0], p[-1]) for r in rounds for p in r if (p[0], p[-1]) not in moved]
        touched = len(pairs) < sum(len(r) for r in rounds)
        if touched and pairs:
            new = sp_schedule(n, arcs, pairs, cap=cap)
            kept = [q for q in ([p for p in r if (p[0], p[-1]) not in moved] for r in rounds) if q]
            rounds = kept if simple and _hop_sum([(arcs, kept)]) <= _hop_sum([(arcs, new)]) else new
        new_state.append((arcs, rounds if pairs else []))
    direct = sorted(moved)
    new_state.append((np.asarray(direct), [direct]))
    return new_state


def _global(n: int, k: int, arcs_list, cap: int) -> list:
    dists = [all_dists(n, adjacency(n, a)) for a in arcs_list]
    big = np.stack([np.where(D < 0, 10 * n, D) for D in dists])
    owner = big.argmin(axis=0)
    out = []
    for i, a in enumerate(arcs_list):
        pairs = [(s, t) for s in range(n) for t in range(n) if s != t and owner[s, t] == i]
        out.append((a, sp_schedule(n, a, pairs, cap=cap, dist=dists[i]) if pairs else []))
    return out


def fill_chain(n: int, k: int, arcs0, dmax: int | None = None, cap: int = PATH_CAP,
               global_reassign: bool = True, base_rounds=None, simple: bool = False) -> list[list]:
    """States for d = 1, 2, ... on a general base topology (spec 3.5, "fill" variant), from
    ``base_rounds`` (default: generic-SP on ``arcs0``); ``simple``: see :func:`_fill`."""
    dmax = dmax or -(-(n - 1) // k)
    state = [(np.asarray(arcs0), sp_schedule(n, arcs0, cap=cap) if base_rounds is None
              else base_rounds)]
    out = [state]
    while len(state) < dmax:
        nxt = _fill(n, k, state, cap, simple)
        if nxt is None:
            break
        if global_reassign:
            glob = _global(n, k, [a for a, _ in nxt], cap)
            if _hop_sum(glob) < _hop_sum(nxt):
                nxt = glob
        state = nxt
        out.append(state)
    return out


def to_candidate(state, family: str) -> Candidate:
    phases = []
    for arcs, rounds in state:
        if not rounds:
            continue
        out = [[P for P, _ in by_hops(r)] for r in rounds]
        phases.append((np.asarray(arcs, dtype=np.int64).reshape(-1, 2), out))
    return Candidate(family, phases)
