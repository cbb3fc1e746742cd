"""Compiled large-neighbourhood search after an ejection-chain run of heuristics.lumos_eject
(an addition to MDMCF, issue 17 item 2).

The chains insert the missing units one at a time, so their result depends on the
insertion order; the ITV-ILP optimum typically relocates a few circuits together. Each
iteration here ruins a small neighbourhood and recreates it by the same compiled chains:

1. pick (seeded RNG) an old circuit m: s -> t that is not kept while its Pod pair is
   still needed (C_st > 0);
2. put it back at its old place: the circuits on Tx s and Rx t of OCS m are removed and
   become units to re-insert, and a copy of {s, t} that is not kept elsewhere is dropped
   (none: the iteration is skipped, it could not keep more);
3. ruin ``ruin`` more circuits that are not kept, drawn at random among those touching
   the Pods involved (s, t and the two removed circuits' other ends; decision: related
   circuits, a Shaw-style removal, since a relocation frees ports of these Pods), or
   among all such circuits if there are too few;
4. re-insert all removed units, most constrained first, by chains of ``max_states``
   states and the Konig fallback (heuristics.lumos_eject_steps.insert, seeded tie-breaks);
5. keep the result if it keeps at least as many old circuits (sideways moves diversify),
   else undo it (the journal of heuristics.lumos_chain).

So the result never keeps fewer old circuits than the run it starts from, and every
accepted state realizes C (insert places every unit or the iteration is undone).
Work budget (``wk``, the units of heuristics.lumos_eject.Work, never the clock): one per
iteration plus the chain states and selections of the re-insertion; the search stops once
the budget is spent (a re-insertion under way then finishes by the Konig fallback and is
judged as the others). Deterministic for a given seed and budget.
"""
from __future__ import annotations

import numpy as np

from heuristics.lumos_chain import LOG_ROWS, commit, drop, mark, njit, put, undo
from heuristics.lumos_eject_steps import FAILED, NO_LIMIT, OK, drop_excess, insert, spent
from heuristics.lumos_konig import place


@njit
def _add(ua, ub, U, x, y):
    ua[U], ub[U] = min(x, y), max(x, y)
    return U + 1


@njit
def search(G, ruin, max_states, rng, wk, moves, temp=0.0, vary=False, anykept=False,
           patience=0, greedy=False):
    """Steps 1-5 of the module docstring on the complete assignment ``G`` (excess copies
    dropped) until the budget ``wk`` = [used, limit, stopped] is spent or no old circuit
    is lost; returns the number of accepted iterations that kept more."""
    out, inn, old, cap, cnt, meta = G[0], G[1], G[2], G[3], G[4], G[5]
    M, n = out.shape
    lost = np.empty(M * n, np.int64)
    cand = np.empty(M * n, np.int64)
    ua, ub = np.empty(ruin + 3, np.int64), np.empty(ruin + 3, np.int64)
    pods = np.zeros(n, np.bool_)
    loose = np.zeros((n, n), np.bool_)
    zero = np.zeros((M, n), np.int64)
    stats = np.zeros(4, np.int64)                       # iterations, accepted, better
    best, best_out = meta[0], out.copy()
    since = 0
    while not spent(wk) and (patience == 0 or since < patience):
        since += 1
        loose[:] = False                                # pairs with a copy not kept
        for m in range(M):
            for s in range(n):
                t = out[m, s]
                if t >= 0 and old[m, s] != t:
                    loose[s, t], loose[t, s] = True, True
        L = 0
        for m in range(M):
            for s in range(n):
                t = old[m, s]
                if t >= 0 and out[m, s] != t and loose[s, t]:
                    lost[L] = m * n + s
                    L += 1
        if L == 0:
            break
        wk[0] += 1
        stats[0] += 1
        pick = lost[rng.integers(0, L)]
        m, s = pick // n, pick % n
        t = old[m, s]
        before = meta[0]
        size = ruin + 2 if not vary else 2 + rng.integers(0, ruin + 1)
        mark(G)
        pods[:] = False
        pods[s], pods[t] = True, True
        U = 0
        o, i = out[m, s], inn[m, t]
        if o >= 0:                                      # 2. free Tx s and Rx t of m
            drop(G, m, s, o)
            U = _add(ua, ub, U, s, o)
            pods[o] = True
        if i >= 0:
            drop(G, m, i, t)
            U = _add(ua, ub, U, i, t)
            pods[i] = True
        put(G, m, s, t)
        if cnt[s, t] > cap[s, t]:                       # a copy of {s, t} not kept
            done = False
            for m2 in range(M):
                for e in range(2):
                    x, y = (s, t) if e == 0 else (t, s)
                    if not done and (m2 != m or x != s) and out[m2, x] == y \
                            and old[m2, x] != y:
                        drop(G, m2, x, y)
                        done = True
            if not done:
                stats[3] += 1
                undo(G)
                continue
        for related in range(2):                        # 3. ruin more (related first)
            if U >= size:
                break
            K = 0
            for m2 in range(M):
                for x in range(n):
                    y = out[m2, x]
                    if y >= 0 and (anykept or old[m2, x] != y) and (related == 0 or not (
                            pods[x] or pods[y])) and (related == 1 or pods[x] or pods[y]):
                        cand[K] = m2 * n + x
                        K += 1
            while K > 0 and U < size:
                r = rng.integers(0, K)
                c = cand[r]
                cand[r] = cand[K - 1]
                K -= 1
                m2, x = c // n, c % n
                y = out[m2, x]
                drop(G, m2, x, y)
                U = _add(ua, ub, U, x, y)
        if greedy:                                      # 4. recreate
            status = OK
            for k in range(U):
                r = k + rng.integers(0, U - k)
                ua[k], ua[r], ub[k], ub[r] = ua[r], ua[k], ub[r], ub[k]
                wk[0] += 1
                if _direct(G, ua[k], ub[k]):
                    continue
                if not place(G, ua[k], ub[k], max_states, -1, -1, -1, zero, zero, True, wk,
                             moves):
                    status = FAILED
                    break
        else:
            status, _ = insert(G, ua, ub, U, max_states, 0, False, True, rng, wk, NO_LIMIT,
                               moves)
        if status == OK:
            drop_excess(G)
        if status == OK and (meta[0] >= before or (temp > 0 and rng.random() < np.exp(
                (meta[0] - before) / temp))):          # 5. accept or undo
            stats[1] += 1
            stats[2] += int(meta[0] > before)
            commit(G)
            if meta[0] > best:
                best, since = meta[0], 0
                best_out[:] = out
        else:
            undo(G)
    if meta[0] < best:                                  # back to the best state found
        for m in range(M):
            for s in range(n):
                if out[m, s] >= 0:
                    drop(G, m, s, out[m, s])
        for m in range(M):
            for s in range(n):
                if best_out[m, s] >= 0:
                    put(G, m, s, best_out[m, s])
    return stats


@njit
def _direct(G, a, b):
    """Place unit {a, b} where both ports are free, at an old place if there is one, else
    the first such place (what the root of a chain search picks); False if none."""
    out, inn, old = G[0], G[1], G[2]
    M = out.shape[0]
    bm = bs = bt = -1
    for m in range(M):
        for e in range(2):
            s, t = (a, b) if e == 0 else (b, a)
            if out[m, s] < 0 and inn[m, t] < 0:
                if old[m, s] == t:
                    put(G, m, s, t)
                    return True
                if bm < 0:
                    bm, bs, bt = m, s, t
    if bm < 0:
        return False
    put(G, bm, bs, bt)
    return True


def with_journal(G, ruin: int):
    """``G`` with an undo journal long enough for one iteration: ruin + 2 units, each
    re-inserted by a chain (<= 41 moves) or a Konig swap after a shed and a path
    reversal (O(n) moves), each move a put and up to three drops."""
    n = G[0].shape[1]
    rows = max(LOG_ROWS, (ruin + 4) * (4 * (41 + 2 * n + 2) + 4 * n) + 64)
    return G[:6] + (np.empty((rows, 4), np.int64),) + G[7:]
