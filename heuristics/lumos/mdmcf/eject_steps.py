"""Compiled steps 1-4 of heuristics.lumos.mdmcf.eject (keep, most-constrained insertion, drop
of the excess copies, re-keep) on a group of heuristics.lumos.mdmcf.chain (numba, issue 17
item 2). The random tie-breaking draws from the caller's numpy Generator in the order
of the former Python code (numba's Generator.integers(0, k) and .random() give the same
stream as numpy's choice of k items and random()), so a seed gives the same result.
``wk`` = [work used, limit, stopped] (heuristics.lumos.mdmcf.eject.Work); a step given
``chunk`` returns after that many units or attempts with status PAUSED, so that the
caller can read the clock between them (only under a user time limit).
"""
from __future__ import annotations

import numpy as np

from heuristics.lumos.mdmcf.chain import apply, commit, drop, excess, mark, njit, put, undo
from heuristics.lumos.mdmcf.konig import place

OK, FAILED, PAUSED = 0, 1, 2
NO_LIMIT = 1 << 62          # chunk: no pause
SELECT_WORK = (4, 256)      # a most-constrained selection of U units: 4 + M (U + n) / 256


@njit
def spent(wk):
    return wk[0] >= wk[1] or wk[2] != 0


@njit
def keep(G, C):
    """Step 1: every old circuit whose Pod pair C still needs (excess copies too); returns
    the units still missing, (ua, ub) with ua < ub, row by row, each as often as missing."""
    old, cnt = G[2], G[4]
    M, n = old.shape
    for m in range(M):
        for s in range(n):
            t = old[m, s]
            if t >= 0 and C[s, t] > 0:
                put(G, m, s, t)
    U = 0
    for i in range(n):
        for j in range(i + 1, n):
            U += max(C[i, j] - cnt[i, j], 0)
    ua, ub = np.empty(U, np.int64), np.empty(U, np.int64)
    U = 0
    for i in range(n):
        for j in range(i + 1, n):
            for _ in range(C[i, j] - cnt[i, j]):
                ua[U], ub[U] = i, j
                U += 1
    return ua, ub


@njit
def _most_constrained(G, ua, ub, U, direct_first, use_rng, rng, FO, FI, use_tx, use_rx,
                      spot):
    """The index k of the unit (ua[k], ub[k]) with the fewest places where both ports are
    free (excess copies count as free; ``direct_first``: the fewest among units that have
    one; ties: the first, or with ``use_rng`` a random one drawn from ``rng``), and whether it has a place.
    If it has, ``spot`` = the place that blocks the fewest places of the units (key: kept,
    drops, places blocked, then with ``use_rng`` a random draw) as a move; else
    use_tx/use_rx = the number of the units' places on each Tx and Rx port (to break
    ties of chains)."""
    out, inn, old, cap, cnt = G[0], G[1], G[2], G[3], G[4]
    M, n = out.shape
    for m in range(M):
        for x in range(n):
            FO[m, x], FI[m, x] = out[m, x] < 0, inn[m, x] < 0
    for x in range(n):                              # a port held by an excess copy
        for y in range(x + 1, n):                   # (pair above C) counts as free
            if excess(G, x, y):
                for m in range(M):
                    if out[m, x] == y:
                        FO[m, x], FI[m, y] = True, True
                    if out[m, y] == x:
                        FO[m, y], FI[m, x] = True, True
    pri = np.zeros(U, np.int64)
    for k in range(U):
        a, b = ua[k], ub[k]
        c = 0
        for m in range(M):
            c += int(FO[m, a] and FI[m, b]) + int(FO[m, b] and FI[m, a])
        pri[k] = c if (c > 0 or not direct_first) else 1 << 20
    k = np.argmin(pri)
    if use_rng:
        ties = np.flatnonzero(pri == pri[k])
        k = ties[rng.integers(0, len(ties))]
    a, b = ua[k], ub[k]
    has = False
    for m in range(M):
        if (FO[m, a] and FI[m, b]) or (FO[m, b] and FI[m, a]):
            has = True
    use_tx[:] = 0
    use_rx[:] = 0
    for j in range(U):
        for m in range(M):
            if FO[m, ua[j]] and FI[m, ub[j]]:
                use_tx[m, ua[j]] += 1
                use_rx[m, ub[j]] += 1
            if FO[m, ub[j]] and FI[m, ua[j]]:
                use_tx[m, ub[j]] += 1
                use_rx[m, ua[j]] += 1
    if not has:
        return k, False
    found = False
    b0 = b1 = b2 = 0
    b3 = 0.0
    for m in range(M):
        for orient in range(2):
            s, t = (a, b) if orient == 0 else (b, a)
            if not (FO[m, s] and FI[m, t]):
                continue
            o, i = out[m, s], inn[m, t]
            nd = 0
            d0s = d0t = d1s = d1t = -1
            if o >= 0:
                nd, d0s, d0t = 1, s, o
            if i >= 0 and not (nd == 1 and i == s and t == o):
                if nd == 0:
                    d0s, d0t = i, t
                else:
                    d1s, d1t = i, t
                nd += 1
            if nd == 2 and ((d0s == d1s and d0t == d1t) or (d0s == d1t and d0t == d1s)) \
                    and cnt[s, o] - 2 < cap[s, o]:
                continue                            # both copies of one pair: not both excess
            k0, k2 = -int(old[m, s] == t), use_tx[m, s] + use_rx[m, t]
            k3 = 0.0
            if use_rng:
                k3 = rng.random()
            if not found or k0 < b0 or (k0 == b0 and (nd < b1 or (nd == b1 and (
                    k2 < b2 or (k2 == b2 and k3 < b3))))):
                found, b0, b1, b2, b3 = True, k0, nd, k2, k3
                spot[0], spot[1], spot[2], spot[3], spot[4], spot[5] = m, s, t, -1, -1, -1
                spot[6], spot[7], spot[8], spot[9] = nd, m, d0s, d0t
                spot[10], spot[11], spot[12] = m, d1s, d1t
    return k, found


@njit
def insert(G, ua, ub, U, max_states, guard_states, direct_first, use_rng, rng, wk, chunk,
           moves):
    """Step 2 for the U units (ua[k], ub[k]) not placed yet, most constrained first; once
    the budget is spent, the rest in list order by chains of ``guard_states`` states and
    the Konig fallback. Returns (status, units left); the units left stay at the front of
    ua, ub in their order (for a PAUSED call to resume)."""
    out = G[0]
    M, n = out.shape
    FO, FI = np.empty((M, n), np.bool_), np.empty((M, n), np.bool_)
    use_tx, use_rx = np.zeros((M, n), np.int64), np.zeros((M, n), np.int64)
    zero = np.zeros((M, n), np.int64)
    done = 0
    while U > 0:
        if spent(wk):                               # the budget: Konig in list order
            for j in range(U):
                if not place(G, ua[j], ub[j], guard_states, -1, -1, -1, zero, zero, True,
                             wk, moves):
                    return FAILED, U - j
            return OK, 0
        if done == chunk:
            return PAUSED, U
        done += 1
        wk[0] += SELECT_WORK[0] + M * (U + n) // SELECT_WORK[1]
        k, has = _most_constrained(G, ua, ub, U, direct_first, use_rng, rng, FO, FI,
                                   use_tx, use_rx, moves[0])
        a, b = ua[k], ub[k]
        ua[k:U - 1] = ua[k + 1:U].copy()
        ub[k:U - 1] = ub[k + 1:U].copy()
        U -= 1
        if has:
            apply(G, moves, 1)
        elif not place(G, a, b, max_states, -1, -1, -1, use_tx, use_rx, True, wk, moves):
            return FAILED, U
    return OK, 0


@njit
def drop_excess(G):
    """Step 3: pairs still above C_ab lose copies, those not at their old place first."""
    out, old, cap, cnt = G[0], G[2], G[3], G[4]
    M, n = out.shape
    for kept_first in range(2):
        for m in range(M):
            for s in range(n):
                t = out[m, s]
                if t >= 0 and cnt[s, t] > cap[s, t] and int(old[m, s] == t) == kept_first:
                    drop(G, m, s, t)


@njit
def rekeep(G, rekeep_states, rounds, pos, wk, chunk, moves):
    """Step 4: return lost old circuits to their old place when that keeps more (what they
    eject is re-inserted by chains of ``rekeep_states`` states, no fallback; undone
    otherwise), for ``rounds`` passes or until one improves nothing. ``pos`` = [pass,
    next old circuit m * n + s, improved in this pass] (resumed by a PAUSED call)."""
    out, inn, old, meta = G[0], G[1], G[2], G[5]
    M, n = out.shape
    zero = np.zeros((M, n), np.int64)
    done = 0
    while pos[0] < rounds:
        while pos[1] < M * n:
            m, s = pos[1] // n, pos[1] % n
            t = old[m, s]
            if t < 0 or out[m, s] == t:
                pos[1] += 1
                continue
            sm = ss = st = -1                       # a placed copy of {s, t} not kept
            for m2 in range(M):
                if out[m2, s] == t and old[m2, s] != t:
                    sm, ss, st = m2, s, t
                    break
                if out[m2, t] == s and old[m2, t] != s:
                    sm, ss, st = m2, t, s
                    break
            if sm < 0:
                pos[1] += 1
                continue
            if spent(wk):
                pos[0] = rounds
                return OK
            if done == chunk:
                return PAUSED
            done += 1
            wk[0] += 1
            before = meta[0]
            mark(G)
            drop(G, sm, ss, st)
            e0, e1 = out[m, s], inn[m, t]           # ejected: (m, s, e0), (m, e1, t)
            if e0 >= 0:
                drop(G, m, s, e0)
            if e1 >= 0 and not (e0 >= 0 and e1 == s and t == e0):
                drop(G, m, e1, t)
            else:
                e1 = -1
            put(G, m, s, t)
            ok = True
            if e0 >= 0:
                ok = place(G, s, e0, rekeep_states, m, s, e0, zero, zero, False, wk, moves)
            if ok and e1 >= 0:
                ok = place(G, e1, t, rekeep_states, m, e1, t, zero, zero, False, wk, moves)
            if ok and meta[0] > before:
                pos[2] = 1
                commit(G)
            else:
                undo(G)
            pos[1] += 1
        if not pos[2]:
            pos[0] = rounds
            break
        pos[0], pos[1], pos[2] = pos[0] + 1, 0, 0
    return OK


@njit
def run(G, ua, ub, pos, max_states, guard_states, direct_first, use_rng, rng, rekeep_states,
        rounds, wk, chunk, moves):
    """Steps 2-4 in one compiled entry (one copy of the chain search to compile); ``pos``
    = [step: 0 insert, 1 re-keep, 2 done; units left; the ``rekeep`` position]; rounds = 0:
    no step 4. With a finite ``chunk`` it also pauses between steps 2 and 4."""
    if pos[0] == 0:
        status, U = insert(G, ua, ub, pos[1], max_states, guard_states, direct_first,
                           use_rng, rng, wk, chunk, moves)
        pos[1] = U
        if status != OK:
            return status
        drop_excess(G)
        pos[0] = 1
        if chunk < NO_LIMIT:
            return PAUSED
    if pos[0] == 1:
        if rekeep(G, rekeep_states, rounds, pos[2:], wk, chunk, moves) == PAUSED:
            return PAUSED
        pos[0] = 2
    return OK
