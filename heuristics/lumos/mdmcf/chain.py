"""Compiled state and move search of one Cross-Wiring group for the ejection chains of
heuristics.lumos.mdmcf.eject (an addition to MDMCF): the assignment with its undo journal and
the bounded best-first ejection-chain search (the Konig fallbacks: heuristics.lumos.mdmcf.konig).

numba-compiled (issue 17 item 2: the Python search was most of MDMCF's time), on plain
arrays. A group ``G`` is the tuple of :func:`new_group`: out[m, s] = t, inn[m, t] = s
(-1 = port free), old[m, s] = old Rx of Tx s, cap[a, b] = C_ab, cnt[a, b] = circuits
placed between Pods a and b (both directions), meta = [circuits at their old place,
journal on, journal length], the journal rows (was a drop, m, s, t), and scratch (the
per-search visit counts, the pair-count changes of a partial chain). A move is a row of
13: m, s, t, the ejected circuit (m, s, t; m = -1: none), the number of dropped excess
copies and up to two of them. ``wk`` = [work used, limit, stopped] is the work budget of
heuristics.lumos.mdmcf.eject.Work: a search charges the states it expands.
"""
from __future__ import annotations

import numpy as np

from toolkit.kernel_cache import njit

LOG_ROWS = 4096             # journal bound: a re-keep attempt (lumos_eject's journaled step)
                            # writes <= 4 + 2 * 41 * 4 = 332 rows: two chains (no Konig
                            # fallback) of <= 41 moves, each a put and up to three drops; the
                            # LNS sizes its own journal (lumos_lns.with_journal)
MOVE_COLS = 13


@njit
def new_group(C, old):
    """An empty assignment of a group with capacities C (n, n) and old 0/1 matrices ``old``
    (M, n, n)."""
    M, n = old.shape[0], old.shape[1]
    old_out = np.full((M, n), -1, np.int64)
    for m in range(M):
        for s in range(n):
            for t in range(n):
                if old[m, s, t]:
                    old_out[m, s] = t
    return (np.full((M, n), -1, np.int64), np.full((M, n), -1, np.int64), old_out, C.copy(),
            np.zeros((n, n), np.int64), np.zeros(3, np.int64), np.empty((LOG_ROWS, 4), np.int64),
            np.zeros(M * n * n, np.int64), np.zeros((n, n), np.int64))


@njit
def matrices(G):
    """The assignment as (M, n, n) 0/1 matrices."""
    out = G[0]
    M, n = out.shape
    X = np.zeros((M, n, n), np.int64)
    for m in range(M):
        for s in range(n):
            if out[m, s] >= 0:
                X[m, s, out[m, s]] = 1
    return X


def move_buffer(n: int, max_depth: int = 40) -> np.ndarray:
    """Room for the moves of a chain (<= max_depth + 1) or of a Konig swap (<= 2 n + 1)."""
    return np.zeros((max_depth + 2 * n + 4, MOVE_COLS), np.int64)


@njit
def _journal(meta, log, was_drop, m, s, t):
    r = meta[2]
    if r >= log.shape[0]:
        raise IndexError("undo journal full")
    log[r, 0], log[r, 1], log[r, 2], log[r, 3] = was_drop, m, s, t
    meta[2] = r + 1


@njit
def put(G, m, s, t):
    out, inn, old, cap, cnt, meta, log = G[0], G[1], G[2], G[3], G[4], G[5], G[6]
    out[m, s] = t
    inn[m, t] = s
    cnt[s, t] += 1
    cnt[t, s] += 1
    if old[m, s] == t:
        meta[0] += 1
    if meta[1]:
        _journal(meta, log, 0, m, s, t)


@njit
def drop(G, m, s, t):
    out, inn, old, cap, cnt, meta, log = G[0], G[1], G[2], G[3], G[4], G[5], G[6]
    out[m, s] = -1
    inn[m, t] = -1
    cnt[s, t] -= 1
    cnt[t, s] -= 1
    if old[m, s] == t:
        meta[0] -= 1
    if meta[1]:
        _journal(meta, log, 1, m, s, t)


@njit
def mark(G):
    """Start recording changes, for ``undo``."""
    G[5][1], G[5][2] = 1, 0


@njit
def commit(G):
    """Keep the changes since ``mark``."""
    G[5][1], G[5][2] = 0, 0


@njit
def undo(G):
    meta, log = G[5], G[6]
    meta[1] = 0
    for r in range(meta[2] - 1, -1, -1):
        if log[r, 0]:
            put(G, log[r, 1], log[r, 2], log[r, 3])
        else:
            drop(G, log[r, 1], log[r, 2], log[r, 3])
    meta[2] = 0


@njit
def apply(G, moves, k):
    """Play the first k moves: drops, then the ejection, then the placement of each."""
    for r in range(k):
        for d in range(moves[r, 6]):
            drop(G, moves[r, 7 + 3 * d], moves[r, 8 + 3 * d], moves[r, 9 + 3 * d])
        if moves[r, 3] >= 0:
            drop(G, moves[r, 3], moves[r, 4], moves[r, 5])
        put(G, moves[r, 0], moves[r, 1], moves[r, 2])


@njit
def _less(h, i, j):
    if h[i, 0] != h[j, 0]:
        return h[i, 0] < h[j, 0]
    if h[i, 1] != h[j, 1]:
        return h[i, 1] < h[j, 1]
    return h[i, 2] < h[j, 2]


@njit
def _swap(h, i, j):
    for c in range(4):
        h[i, c], h[j, c] = h[j, c], h[i, c]


@njit
def _push(h, size, c, d, tick, node):
    """Binary heap of rows (cost, depth, tie, node) ordered on the first three (the tie is
    unique, so the pop order is that of heapq on the same keys)."""
    if size == h.shape[0]:
        h2 = np.empty((2 * size, 4), np.int64)
        h2[:size] = h
        h = h2
    h[size, 0], h[size, 1], h[size, 2], h[size, 3] = c, d, tick, node
    i = size
    while i > 0:
        par = (i - 1) // 2
        if not _less(h, i, par):
            break
        _swap(h, i, par)
        i = par
    return h


@njit
def _pop(h, size):
    """Move the smallest row to index size - 1 (the caller shrinks the heap)."""
    last = size - 1
    _swap(h, 0, last)
    i = 0
    while True:
        lo, l, r = i, 2 * i + 1, 2 * i + 2
        if l < last and _less(h, l, lo):
            lo = l
        if r < last and _less(h, r, lo):
            lo = r
        if lo == i:
            break
        _swap(h, i, lo)
        i = lo


@njit
def _set(a, m, x, v, saved, ns):
    """a[m, x] = v, remembering the old value in ``saved`` (for the undo of overrides)."""
    saved[ns, 0], saved[ns, 1], saved[ns, 2] = m, x, a[m, x]
    a[m, x] = v
    return ns + 1


@njit
def chain(G, p, q, bm0, bs0, bt0, max_depth, max_states, visits, dtx, drx, wk, moves):
    """Cheapest ejection chain found that places unit {p, q} (never re-placing the banned
    circuit (bm0, bs0, bt0); bm0 = -1: none): writes its moves into ``moves`` and returns
    their number, or -1. Best-first on (cost, depth, tie) with cost = +1 per old circuit
    ejected, -1 per circuit placed at its old place; states are keyed by the circuit in
    hand, each expanded ``visits`` times; expanding a state applies its partial chain to
    out/inn (and the pair-count changes to scratch) and undoes it after. The first state
    with a complete move returns its best completion on (cost, damage dtx[m, s] +
    drx[m, t]) (best-first on cost so far, not the optimum)."""
    out, inn, old, cap, cnt, seen, dc = G[0], G[1], G[2], G[3], G[4], G[7], G[8]
    M, n = out.shape
    nodes = np.empty((256, 14), np.int64)   # parent node, move
    heap = np.empty((256, 4), np.int64)
    touched = np.empty(256, np.int64)
    pstack = np.empty(max_depth + 2, np.int64)
    saved = np.empty((8 * (max_depth + 2), 3), np.int64)
    best = np.empty(MOVE_COLS, np.int64)
    nn = hn = nt = 0
    tick = states = 0
    root_seen = 0
    heap = _push(heap, hn, 0, 0, 0, -1)
    hn += 1
    result = -1
    while hn > 0:
        _pop(heap, hn)
        hn -= 1
        cost, depth, node = heap[hn, 0], heap[hn, 1], heap[hn, 3]
        if node < 0:
            a, b, bm, bs, bt = p, q, bm0, bs0, bt0
        else:
            a, b = nodes[node, 5], nodes[node, 6]
            bm, bs, bt = nodes[node, 4], nodes[node, 5], nodes[node, 6]
        if bm < 0:                                  # the root of an unbanned search
            if root_seen >= visits:
                continue
            root_seen += 1
        else:
            key = (bm * n + bs) * n + bt
            if seen[key] >= visits:
                continue
            if seen[key] == 0:
                if nt == touched.shape[0]:
                    t2 = np.empty(2 * nt, np.int64)
                    t2[:nt] = touched
                    touched = t2
                touched[nt] = key
                nt += 1
            seen[key] += 1
        states += 1
        if states > max_states or depth >= max_depth:
            continue
        plen, x = 0, node                           # the partial chain, root first
        while x >= 0:
            pstack[plen] = x
            plen += 1
            x = nodes[x, 0]
        ns_out = ns_in = 0
        so, si = saved[: 4 * (max_depth + 2)], saved[4 * (max_depth + 2):]
        for j in range(plen - 1, -1, -1):
            mv = nodes[pstack[j], 1:]
            for f in range(mv[6] + int(mv[3] >= 0)):
                fm, fs, ft = (mv[7 + 3 * f], mv[8 + 3 * f], mv[9 + 3 * f]) if f < mv[6] \
                    else (mv[3], mv[4], mv[5])
                ns_out = _set(out, fm, fs, -1, so, ns_out)
                ns_in = _set(inn, fm, ft, -1, si, ns_in)
                dc[min(fs, ft), max(fs, ft)] -= 1
            ns_out = _set(out, mv[0], mv[1], mv[2], so, ns_out)
            ns_in = _set(inn, mv[0], mv[2], mv[1], si, ns_in)
            dc[min(mv[1], mv[2]), max(mv[1], mv[2])] += 1
        done = False
        done_c = done_d = 0
        for m in range(M):
            for orient in range(2):
                s, t = (a, b) if orient == 0 else (b, a)
                if m == bm and s == bs and t == bt:
                    continue
                o, i = out[m, s], inn[m, t]
                if o == t:                          # s -> t already there in m
                    continue
                ejm = ejs = ejt = -1
                nd = 0
                d0s = d0t = d1s = d1t = -1
                if o >= 0:
                    if cnt[s, o] > cap[s, o] and \
                            cnt[s, o] - cap[s, o] + dc[min(s, o), max(s, o)] > 0:
                        nd, d0s, d0t = 1, s, o      # an excess copy: dropped
                    else:
                        ejm, ejs, ejt = m, s, o
                if i >= 0:
                    sub = 1 if nd > 0 and ((s == i and o == t) or (s == t and o == i)) else 0
                    if cnt[i, t] > cap[i, t] and \
                            cnt[i, t] - cap[i, t] + dc[min(i, t), max(i, t)] - sub > 0:
                        if nd == 0:
                            d0s, d0t = i, t
                        else:
                            d1s, d1t = i, t
                        nd += 1
                    elif ejm >= 0:
                        continue                    # two circuits to move: not a chain
                    else:
                        ejm, ejs, ejt = m, i, t
                c = cost - int(old[m, s] == t)
                tick += 1
                if ejm < 0:                         # complete: the best from this state
                    dmg = dtx[m, s] + drx[m, t]
                    if not done or c < done_c or (c == done_c and dmg < done_d):
                        done, done_c, done_d = True, c, dmg
                        best[0], best[1], best[2], best[3], best[4], best[5] = m, s, t, -1, -1, -1
                        best[6], best[7], best[8], best[9] = nd, m, d0s, d0t
                        best[10], best[11], best[12] = m, d1s, d1t
                    continue
                c += int(old[m, ejs] == ejt)
                if nn == nodes.shape[0]:
                    n2 = np.empty((2 * nn, 14), np.int64)
                    n2[:nn] = nodes
                    nodes = n2
                r = nodes[nn]
                r[0], r[1], r[2], r[3], r[4], r[5], r[6] = node, m, s, t, ejm, ejs, ejt
                r[7], r[8], r[9], r[10], r[11], r[12], r[13] = nd, m, d0s, d0t, m, d1s, d1t
                heap = _push(heap, hn, c, depth + 1, tick, nn)
                hn += 1
                nn += 1
        for j in range(ns_in - 1, -1, -1):          # undo the overrides
            inn[si[j, 0], si[j, 1]] = si[j, 2]
        for j in range(ns_out - 1, -1, -1):
            out[so[j, 0], so[j, 1]] = so[j, 2]
        for j in range(plen):
            mv = nodes[pstack[j], 1:]
            dc[min(mv[1], mv[2]), max(mv[1], mv[2])] = 0
            for f in range(mv[6] + int(mv[3] >= 0)):
                fs, ft = (mv[8 + 3 * f], mv[9 + 3 * f]) if f < mv[6] else (mv[4], mv[5])
                dc[min(fs, ft), max(fs, ft)] = 0
        if done:
            for j in range(plen):
                moves[j] = nodes[pstack[plen - 1 - j], 1:]
            moves[plen] = best
            result = plen + 1
            break
    wk[0] += states
    for j in range(nt):
        seen[touched[j]] = 0
    return result


@njit
def excess(G, x, y):
    return G[4][x, y] > G[3][x, y]
