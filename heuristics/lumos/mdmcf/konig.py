"""Compiled Konig fallbacks of the ejection chains of heuristics.lumos.mdmcf.eject (an addition
to MDMCF) on a group of heuristics.lumos.mdmcf.chain: the alpha/beta alternating-path swap of
Konig's edge-colouring theorem, the path reversal that precedes it when both endpoints
have free ports of one kind only, and ``place``: a chain, else these (numba, issue 17
item 2; the same choices and tie-breaking as the former Python code).
"""
from __future__ import annotations

import numpy as np

from heuristics.lumos.mdmcf.chain import apply, chain, drop, excess, njit, put


@njit
def _kempe_walk(G, s, t, al, be, moves, write):
    """Cost and length of the alpha/beta swap placing s -> t in alpha (written to
    ``moves`` if ``write``)."""
    out, inn, old = G[0], G[1], G[2]
    cost = -1 if old[al, s] == t else 0
    if be == al:
        if write:
            _mv(moves, 0, al, s, t, -1, -1, -1)
        return cost, 1
    k, cm, cs, ct, col = 0, al, s, t, t
    while True:
        r = inn[al, col]
        if r < 0:
            if write:
                _mv(moves, k, cm, cs, ct, -1, -1, -1)
            return cost, k + 1
        if write:
            _mv(moves, k, cm, cs, ct, al, r, col)
        k += 1
        cost += int(old[al, r] == col) - int(old[be, r] == col)
        nxt = out[be, r]
        if nxt < 0:
            if write:
                _mv(moves, k, be, r, col, -1, -1, -1)
            return cost, k + 1
        if write:
            _mv(moves, k, be, r, col, be, r, nxt)
        k += 1
        cost += int(old[be, r] == nxt) - int(old[al, r] == nxt)
        cm, cs, ct, col = al, r, nxt, nxt


@njit
def _mv(moves, k, m, s, t, em, es, et):
    moves[k, 0], moves[k, 1], moves[k, 2] = m, s, t
    moves[k, 3], moves[k, 4], moves[k, 5], moves[k, 6] = em, es, et, 0


@njit
def kempe(G, p, q, moves):
    """The cheapest alpha/beta alternating-path swap (Konig's step) that places unit
    {p, q} with a fixed orientation s -> t, alpha free at Tx of s and beta at Rx of t
    (ties: fewer moves, then the first found), written to ``moves`` as an ejection chain;
    returns the number of moves, or -1 if no orientation has both."""
    out, inn = G[0], G[1]
    M = out.shape[0]
    found = False
    bc = bl = bs = bt = bal = bbe = 0
    for orient in range(2):
        s, t = (p, q) if orient == 0 else (q, p)
        for al in range(M):
            if out[al, s] >= 0:
                continue
            for be in range(M):
                if inn[be, t] >= 0:
                    continue
                c, ln = _kempe_walk(G, s, t, al, be, moves, False)
                if not found or c < bc or (c == bc and ln < bl):
                    found, bc, bl, bs, bt, bal, bbe = True, c, ln, s, t, al, be
    if not found:
        return -1
    return _kempe_walk(G, bs, bt, bal, bbe, moves, True)[1]


@njit
def rebalance(G, p, q):
    """When Pods p and q have free ports of one kind only (both Tx or both Rx), no
    orientation of {p, q} has a free Tx and a free Rx: reverse the cheapest directed
    path of one OCS that ends (starts) at p or q (ties: the shorter, then the first);
    its far end has the other kind of free port, so afterwards the endpoints have one of
    each (then ``kempe`` applies)."""
    out, inn, old = G[0], G[1], G[2]
    M, n = out.shape
    found = False
    bc = bl = bm = by = 0
    btx = False
    for yy in range(2):
        y = p if yy == 0 else q
        for m in range(M):
            tx_free = out[m, y] < 0
            if not tx_free and inn[m, y] >= 0:
                continue
            x, ln, c = y, 0, 0
            while True:
                z = inn[m, x] if tx_free else out[m, x]
                if z < 0 or z == y:
                    break
                a, b = (z, x) if tx_free else (x, z)
                c += int(old[m, a] == b) - int(old[m, b] == a)
                ln += 1
                x = z
            if ln > 0 and (not found or c < bc or (c == bc and ln < bl)):
                found, bc, bl, bm, by, btx = True, c, ln, m, y, tx_free
    if not found:
        return
    path = np.empty((bl, 2), np.int64)
    x = by
    for k in range(bl):
        z = inn[bm, x] if btx else out[bm, x]
        path[k, 0], path[k, 1] = (z, x) if btx else (x, z)
        x = z
    for k in range(bl):
        drop(G, bm, path[k, 0], path[k, 1])
    for k in range(bl):
        put(G, bm, path[k, 1], path[k, 0])


@njit
def shed(G, a, b):
    """Drop the excess copies at Pods a and b (before the fallbacks, which only use free
    ports); the pairs are independent, so their order does not matter."""
    out = G[0]
    M, n = out.shape
    for e in range(2):
        x = a if e == 0 else b
        for y in range(n):
            if not excess(G, x, y):
                continue
            lo, hi = min(x, y), max(x, y)
            for m in range(M):
                for orient in range(2):
                    s, t = (lo, hi) if orient == 0 else (hi, lo)
                    if out[m, s] == t and excess(G, lo, hi):
                        drop(G, m, s, t)


@njit
def place(G, a, b, max_states, bm, bs, bt, dtx, drx, fallback, wk, moves):
    """Place unit {a, b} by an ejection chain (depth 40, 2 visits per state) or, if none
    is found and ``fallback``, by ``shed`` + ``kempe`` (after ``rebalance`` if needed);
    False if nothing placed it."""
    k = chain(G, a, b, bm, bs, bt, 40, max_states, 2, dtx, drx, wk, moves)
    if k < 0 and fallback:
        shed(G, a, b)
        k = kempe(G, a, b, moves)
    if k < 0 and fallback:
        rebalance(G, a, b)
        k = kempe(G, a, b, moves)
    if k < 0:
        return False
    apply(G, moves, k)
    return True
