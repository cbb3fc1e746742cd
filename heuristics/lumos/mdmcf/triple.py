"""Exact re-split of three OCSes of one group: a compiled exact-cover search (issue 17
item 2; the engine of the lumos-resplit-study benchmark, not a step of any method).

The circuits of even OCSes {a, b, c} of a Cross-Wiring group are a multiset of Pod pairs
(units); re-place them over the three OCSes, each unit in one OCS and one direction, at
most one circuit per Tx and per Rx of each OCS, keeping as many old circuits as possible
(with the old configuration mirrored, eq. (7) = const - 4 kept). As exact cover: option
(pair p, OCS j, direction) covers Tx(j, s) and Rx(j, t); pair p needs cnt[p] options;
every port at most one, and each port of a Pod with six units in the triple (all its
ports needed) exactly one. :func:`search`: depth first, branching on the item (a pair or
a needed port) with the fewest live options, options killed and revived on a trail
(Knuth's dancing-links idea on arrays); bound kept + sum_p min(copies left, live kept
options of p) (old circuits of one OCS never share a port); it stops at the first
placement that reaches the goal or after ``nodes`` placements; it takes any number k of
OCSes (k = 4 in the study's quadruple stage), the same way. :func:`polish` visits the
triples with the largest gap between that bound and the kept circuits first, re-splits
the first that improves and starts over (first improvement), within a work budget.

Checked against the reduced ITV-ILP on HiGHS (tests/heuristics/lumos/test_triple.py).
"""
from __future__ import annotations

import numpy as np

from heuristics.lumos.mdmcf.chain import njit
from heuristics.lumos.mdmcf.eject_steps import spent


@njit
def _kill(o, dead, opt_p, opt_tx, opt_rx, opt_kept, live, klive, plive, trail, tl):
    dead[o] += 1
    if dead[o] == 1:
        p = opt_p[o]
        live[p] -= 1
        klive[p] -= opt_kept[o]
        plive[opt_tx[o]] -= 1
        plive[opt_rx[o]] -= 1
    trail[tl] = o
    return tl + 1


@njit
def _revive(mark, tl, dead, opt_p, opt_tx, opt_rx, opt_kept, live, klive, plive, trail):
    while tl > mark:
        tl -= 1
        o = trail[tl]
        dead[o] -= 1
        if dead[o] == 0:
            p = opt_p[o]
            live[p] += 1
            klive[p] += opt_kept[o]
            plive[opt_tx[o]] += 1
            plive[opt_rx[o]] += 1
    return tl


@njit
def search(pa, pb, cnt, old3, n, goal, nodes, res):
    """A placement of the pairs (pa[p] < pb[p], cnt[p] copies) over k OCSes (old3 (k, n):
    old Rx of each Tx, -1 none; k = 3 in :func:`polish`) keeping >= ``goal`` old circuits,
    into res (k, n) (Rx of each Tx, -1 free). Returns the placements done (> 0) if found,
    else minus them (<= 0)."""
    k = old3.shape[0]
    Q = 2 * k                                     # options per pair: OCS j = q // 2, direction q % 2
    P = len(pa)
    O = Q * P
    NP = Q * n                                    # Tx(j, v) = j n + v, Rx(j, v) = k n + j n + v
    opt_p = np.empty(O, np.int64)
    opt_tx = np.empty(O, np.int64)
    opt_rx = np.empty(O, np.int64)
    opt_kept = np.zeros(O, np.int64)
    deg = np.zeros(n, np.int64)
    total = 0
    for p in range(P):
        deg[pa[p]] += cnt[p]
        deg[pb[p]] += cnt[p]
        total += cnt[p]
        for q in range(Q):
            o = Q * p + q
            j = q >> 1
            s, t = (pa[p], pb[p]) if q & 1 == 0 else (pb[p], pa[p])
            opt_p[o], opt_tx[o], opt_rx[o] = p, j * n + s, k * n + j * n + t
            if old3[j, s] == t:
                opt_kept[o] = 1
    ptr = np.zeros(NP + 1, np.int64)              # options of each port (CSR)
    for o in range(O):
        ptr[opt_tx[o] + 1] += 1
        ptr[opt_rx[o] + 1] += 1
    for i in range(NP):
        ptr[i + 1] += ptr[i]
    fill = ptr[:-1].copy()
    popt = np.empty(2 * O, np.int64)
    for o in range(O):
        popt[fill[opt_tx[o]]] = o
        fill[opt_tx[o]] += 1
        popt[fill[opt_rx[o]]] = o
        fill[opt_rx[o]] += 1
    need = np.empty(NP, np.int64)                # the ports that must be covered
    NN = 0
    for v in range(n):
        if deg[v] == Q:
            for j in range(k):
                need[NN], need[NN + 1] = j * n + v, k * n + j * n + v
                NN += 2
    dead = np.zeros(O, np.int64)
    live = np.full(P, Q, np.int64)
    klive = np.zeros(P, np.int64)
    for o in range(O):
        klive[opt_p[o]] += opt_kept[o]
    plive = ptr[1:] - ptr[:-1]
    covered = np.zeros(NP, np.bool_)
    rem = cnt.copy()
    trail = np.empty(64 * O + 16, np.int64)
    tl = 0
    kind = np.empty(total + 1, np.int64)
    item = np.empty(total + 1, np.int64)
    pos = np.empty(total + 1, np.int64)
    mark = np.empty(total + 1, np.int64)
    chosen = np.full(total + 1, -1, np.int64)
    kept, placed, done, d = 0, 0, 0, 0
    descend = True
    while True:
        if descend:
            if placed == total:
                if kept >= goal:
                    res[:] = -1
                    for r in range(d):
                        o = chosen[r]
                        j = (o % Q) >> 1
                        res[j, opt_tx[o] - j * n] = opt_rx[o] - k * n - j * n
                    return done
                descend = False
            else:
                bk, bi, bc, ub, bad = -1, -1, 1 << 30, 0, False
                for p in range(P):
                    if rem[p] > 0:
                        if live[p] < rem[p]:
                            bad = True
                            break
                        ub += min(rem[p], klive[p])
                        if live[p] < bc:
                            bk, bi, bc = 0, p, live[p]
                if not bad and kept + ub >= goal:
                    for r in range(NN):
                        i = need[r]
                        if not covered[i]:
                            if plive[i] == 0:
                                bad = True
                                break
                            if plive[i] < bc:
                                bk, bi, bc = 1, i, plive[i]
                if bad or kept + ub < goal:
                    descend = False
                else:
                    kind[d], item[d], pos[d], chosen[d] = bk, bi, -1, -1
                    d += 1
        if d == 0:
            return -done
        top = d - 1
        o = chosen[top]
        if o >= 0:                                # undo the option placed at this depth
            tl = _revive(mark[top], tl, dead, opt_p, opt_tx, opt_rx, opt_kept, live, klive,
                         plive, trail)
            covered[opt_tx[o]], covered[opt_rx[o]] = False, False
            rem[opt_p[o]] += 1
            kept -= opt_kept[o]
            placed -= 1
            chosen[top] = -1
        nxt = -1
        if done < nodes:
            lo, hi = (Q * item[top], Q * item[top] + Q) if kind[top] == 0 else \
                (ptr[item[top]], ptr[item[top] + 1])
            r = lo + pos[top] + 1 if pos[top] >= 0 else lo
            while r < hi:
                c = r if kind[top] == 0 else popt[r]
                if dead[c] == 0:
                    nxt = c
                    break
                r += 1
            pos[top] = r - lo
        if nxt < 0:
            if done >= nodes:
                return -done
            d -= 1
            descend = False
            continue
        mark[top] = tl
        chosen[top] = nxt
        done += 1
        p = opt_p[nxt]
        covered[opt_tx[nxt]], covered[opt_rx[nxt]] = True, True
        rem[p] -= 1
        kept += opt_kept[nxt]
        placed += 1
        for port in (opt_tx[nxt], opt_rx[nxt]):
            for r in range(ptr[port], ptr[port + 1]):
                tl = _kill(popt[r], dead, opt_p, opt_tx, opt_rx, opt_kept, live, klive, plive,
                           trail, tl)
        if rem[p] == 0:
            for c in range(Q * p, Q * p + Q):
                tl = _kill(c, dead, opt_p, opt_tx, opt_rx, opt_kept, live, klive, plive, trail,
                           tl)
        descend = True


@njit
def _triple(out, old, a, b, c, pid, pa, pb, cnt, nold, old3):
    """Pairs of the circuits of even OCSes a, b, c: their number P, kept circuits, bound."""
    n = out.shape[1]
    P, kept = 0, 0
    for j in range(3):
        m = a if j == 0 else b if j == 1 else c
        for s in range(n):
            old3[j, s] = old[m, s]
            t = out[m, s]
            if t < 0:
                continue
            if old3[j, s] == t:
                kept += 1
            x, y = min(s, t), max(s, t)
            if pid[x, y] < 0:
                pid[x, y] = P
                pa[P], pb[P], cnt[P], nold[P] = x, y, 0, 0
                P += 1
            cnt[pid[x, y]] += 1
    for j in range(3):
        for s in range(n):
            t = old3[j, s]
            if t >= 0 and pid[min(s, t), max(s, t)] >= 0:
                nold[pid[min(s, t), max(s, t)]] += 1
    bound = 0
    for p in range(P):
        bound += min(cnt[p], nold[p])
        pid[pa[p], pb[p]] = -1
    return P, kept, bound


@njit
def polish(out, old, ntriples, nodes, wk, stats):
    """Passes over the ``ntriples`` triples of even OCSes with the largest gap between
    their bound and their kept circuits (``out``/``old`` (M, n): Rx of each Tx now / in
    the old configuration, -1 none; ``out`` is changed in place), each searched for one
    more kept circuit within ``nodes`` placements, until a pass improves nothing or the
    budget ``wk`` = [used, limit, stopped] is spent. ``stats`` += [re-splits kept,
    searches, searches stopped by ``nodes``]."""
    M, n = out.shape
    pid = np.full((n, n), -1, np.int64)
    pa = np.empty(3 * n, np.int64)
    pb = np.empty(3 * n, np.int64)
    cnt = np.zeros(3 * n, np.int64)
    nold = np.zeros(3 * n, np.int64)
    old3 = np.empty((3, n), np.int64)
    res = np.empty((3, n), np.int64)
    T = M * (M - 1) * (M - 2) // 6
    gap = np.empty(T, np.int64)
    tri = np.empty((T, 3), np.int64)
    improved = True
    while improved and not spent(wk):
        improved = False
        k = 0
        for a in range(M):
            for b in range(a + 1, M):
                for c in range(b + 1, M):
                    P, kept, bound = _triple(out, old, a, b, c, pid, pa, pb, cnt, nold, old3)
                    gap[k] = bound - kept
                    tri[k, 0], tri[k, 1], tri[k, 2] = a, b, c
                    k += 1
        wk[0] += 1 + T * n // 64
        order = np.argsort(-gap, kind="mergesort")
        for r in range(min(ntriples, T)):
            i = order[r]
            if gap[i] <= 0 or spent(wk):
                break
            a, b, c = tri[i, 0], tri[i, 1], tri[i, 2]
            P, kept, bound = _triple(out, old, a, b, c, pid, pa, pb, cnt, nold, old3)
            d = search(pa[:P], pb[:P], cnt[:P], old3, n, kept + 1, nodes, res)
            wk[0] += abs(d)
            stats[1] += 1
            if d > 0:
                out[a], out[b], out[c] = res[0], res[1], res[2]
                stats[0] += 1
                improved = True
                break
            if -d >= nodes:
                stats[2] += 1


def rows(X: np.ndarray) -> np.ndarray:
    """(M, n) Rx of each Tx (-1 none) of the directed 0/1 matrices X (M, n, n): the compiled
    searches' form (lumos_chain's ``out``)."""
    out = np.full(X.shape[:2], -1, np.int64)
    m, s, t = np.nonzero(X)
    out[m, s] = t
    return out


def matrices_of(out: np.ndarray) -> np.ndarray:
    """The (M, n, n) 0/1 matrices of :func:`rows`' form."""
    X = np.zeros(out.shape + out.shape[1:], np.int64)
    m, s = np.nonzero(out >= 0)
    X[m, s, out[m, s]] = 1
    return X


def resplit_triples(parts, old: np.ndarray, triples: int, nodes: int,
                    work: int = 1 << 62) -> tuple[list[np.ndarray], np.ndarray]:
    """:func:`polish` on the split ``parts`` (M directed 0/1 matrices) of one group against
    the old even OCSes ``old`` (M, P, P): ``triples`` per pass, ``nodes`` per search,
    ``work`` units in all. Returns (the new split, [re-splits, searches, searches stopped
    by ``nodes``])."""
    out = rows(np.asarray(parts))
    stats = np.zeros(3, np.int64)
    polish(out, rows(old), triples, nodes, np.array([0, work, 0], np.int64), stats)
    return list(matrices_of(out)), stats


def warm_up() -> None:
    """Compile or load :func:`polish` and :func:`search` (toolkit.kernels "lumos-triple"):
    a re-split of three 3-Pod OCSes, and one search of them as the study calls it."""
    X = np.zeros((3, 3, 3), np.int64)
    X[0, 0, 1] = X[1, 1, 2] = X[2, 2, 0] = 1
    resplit_triples(list(X), X[::-1].copy(), 1, 10)
    a, b, c = np.array([0, 1, 0], np.int64), np.array([1, 2, 2], np.int64), np.ones(3, np.int64)
    search(a, b, c, rows(X), 3, 0, 10, np.empty((3, 3), np.int64))
