"""Degree k >= 2, family 1: circulant topologies and the reference-node schedule
(paper Sec. 4.2-4.3, Fig. 8; spec 3.3, 3.5).

C_n(G): arcs i -> i + g for g in G. Every node follows the reference node 0, so a schedule is a
list of rounds of (offset delta, generator sequence). Two reference paths contend iff they use
the same generator at the same hop index (at step tau path p uses link x -> x + p[tau] once over
all sources x), so a round holds <= k paths automatically. Rules [spec, OURS]:

1. BFS on Z_n gives dist(delta); the shortest paths to delta are the orderings of the generator
   multisets c with sum c = dist, sum c_j g_j = delta (mod n) (abelian group: every ordering).
2. Offsets in order (dist, delta); each goes to the first round (creation order) with < k paths
   and a non-contending candidate (candidates: distinct orderings, lexicographic, <= 64 per
   offset - the "smart tie-break" replacing the paper's random one); else a new round.
3. Base generators: exhaustive over k-subsets with gcd(G, n) = 1, up to unit multiplication
   (canonical form min_u sort(u G mod n)), the cheapest d = 1 schedule (ties: lexicographic).
4. Contraction: the max-hop round (ties: more flows, earlier) becomes a new circulant whose
   generators are its offsets; keep the cheaper of (a) simple (that round becomes one 1-hop
   round) and (b) global re-assignment (each offset to the topology with min dist, re-pack).
"""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import gcd

import numpy as np

from heuristics.a2a.strategy import Candidate
from instances.a2a.instance import by_hops

SEQ_CAP = 64


def circ_dist(n: int, G) -> np.ndarray:
    """dist(delta) from 0 on C_n(G) by BFS (-1 = unreachable)."""
    dist = np.full(n, -1, dtype=np.int64)
    dist[0] = 0
    frontier = [0]
    h = 0
    while frontier:
        h += 1
        nxt = []
        for x in frontier:
            for g in G:
                y = (x + g) % n
                if dist[y] < 0:
                    dist[y] = h
                    nxt.append(y)
        frontier = nxt
    return dist


def _compositions(total: int, parts: int):
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


def _orderings(items: list[int], cap: int):
    """Distinct permutations of a multiset in lexicographic order (next-permutation), <= cap."""
    a = sorted(items)
    out = [tuple(a)]
    while len(out) < cap:
        i = len(a) - 2
        while i >= 0 and a[i] >= a[i + 1]:
            i -= 1
        if i < 0:
            break
        j = len(a) - 1
        while a[j] <= a[i]:
            j -= 1
        a[i], a[j] = a[j], a[i]
        a[i + 1:] = reversed(a[i + 1:])
        out.append(tuple(a))
    return out


def shortest_sequences(n: int, G, delta: int, D: int, cap: int = SEQ_CAP) -> list[tuple]:
    """All shortest generator-index sequences to ``delta`` (length D), lexicographic, <= cap."""
    seqs = []
    for c in _compositions(D, len(G)):
        if sum(cj * g for cj, g in zip(c, G)) % n == delta % n:
            items = [j for j, cj in enumerate(c) for _ in range(cj)]
            seqs.extend(_orderings(items, cap))
    return sorted(set(seqs))[:cap]


def pack(n: int, G, deltas, k: int, seq_cap: int = SEQ_CAP) -> list[list[tuple[int, tuple]]]:
    """Reference-node round packing of the offsets ``deltas`` on C_n(G) (rules 1-2)."""
    dist = circ_dist(n, G)
    rounds: list[list] = []
    used: list[set] = []
    for dl in sorted(deltas, key=lambda x: (dist[x], x)):
        if dist[dl] < 0:
            raise ValueError(f"offset {dl} unreachable on C_{n}({list(G)})")
        cands = shortest_sequences(n, G, dl, int(dist[dl]), seq_cap)
        placed = False
        for r, u in zip(rounds, used):
            if len(r) >= k:
                continue
            for seq in cands:
                steps = {(t, g) for t, g in enumerate(seq)}
                if not steps & u:
                    r.append((dl, seq))
                    u |= steps
                    placed = True
                    break
            if placed:
                break
        if not placed:
            rounds.append([(dl, cands[0])])
            used.append({(t, g) for t, g in enumerate(cands[0])})
    return rounds


def rounds_cost(rounds) -> int:
    return sum(max(len(seq) for _, seq in r) for r in rounds)


def canonical(n: int, G) -> tuple:
    units = [u for u in range(1, n) if gcd(u, n) == 1]
    return min(tuple(sorted((u * g) % n for g in G)) for u in units)


@lru_cache(maxsize=32)
def best_base(n: int, k: int, max_sets: int = 5000) -> tuple[tuple, int]:
    """Base generator set minimizing the d = 1 schedule cost (rule 3): (G, cost).

    Exhaustive up to unit multiplication; above ``max_sets`` canonical sets only those containing 1.
    """
    units = [u for u in range(1, n) if gcd(u, n) == 1]
    seen, best = set(), None
    count = 0
    for G in combinations(range(1, n), k):
        if gcd(gcd(*G) if k > 1 else G[0], n) != 1:
            continue
        if count > max_sets and 1 not in G:
            continue
        c = min(tuple(sorted((u * g) % n for g in G)) for u in units)
        if c in seen:
            continue
        seen.add(c)
        count += 1
        cost = rounds_cost(pack(n, c, range(1, n), k))
        if best is None or (cost, c) < (best[1], best[0]):
            best = (c, cost)
    return best


def _global_reassign(n: int, k: int, gens: list[tuple]) -> list:
    dists = np.stack([circ_dist(n, G) for G in gens])
    dists = np.where(dists < 0, n + 1, dists)
    owner = dists.argmin(axis=0)
    return [(G, pack(n, G, [dl for dl in range(1, n) if owner[dl] == i], k) if
             any(owner[dl] == i for dl in range(1, n)) else []) for i, G in enumerate(gens)]


def _state_cost(state) -> int:
    return sum(rounds_cost(r) for _, r in state)


def contraction_chain(n: int, k: int, G0, dmax: int | None = None) -> list[list]:
    """States for d = 1, 2, ...: each a list of (generators, rounds) (rule 4; spec 3.5)."""
    dmax = dmax or -(-(n - 1) // k)
    state = [(tuple(G0), pack(n, G0, range(1, n), k))]
    out = [state]
    while len(state) < dmax:
        cands = [(max(len(s) for _, s in r), len(r), -ti, -ri, ti, ri)
                 for ti, (_, rounds) in enumerate(state) for ri, r in enumerate(rounds)]
        top = max(cands)
        if top[0] <= 1:
            break
        ti, ri = top[4], top[5]
        r = state[ti][1][ri]
        new_G = tuple(sorted(dl for dl, _ in r))
        simple = [(G, [x for j, x in enumerate(rounds) if not (i == ti and j == ri)])
                  for i, (G, rounds) in enumerate(state)]
        simple.append((new_G, [[(dl, (new_G.index(dl),)) for dl in new_G]]))
        glob = _global_reassign(n, k, [G for G, _ in state] + [new_G])
        state = glob if _state_cost(glob) <= _state_cost(simple) else simple
        out.append(state)
    return out


def to_candidate(n: int, state, family: str = "circulant") -> Candidate:
    """Expand the reference-node schedule to all sources (node u follows offset delta's sequence)."""
    u = np.arange(n)
    phases = []
    for G, rounds in state:
        if not rounds:
            continue
        arcs = np.concatenate([np.stack([u, (u + g) % n], 1) for g in G])
        out = []
        for r in rounds:
            blocks = [(u[:, None] + np.r_[0, np.cumsum([G[j] for j in seq])][None, :]) % n
                      for _, seq in r]
            out.append([P for P, _ in by_hops(blocks)])
        phases.append((arcs, out))
    return Candidate(family, phases, {"generators": [list(map(int, G)) for G, r in state if r]})
