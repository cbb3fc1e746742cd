"""Compiled large-neighbourhood search after an ejection-chain run of heuristics.lumos.mdmcf.eject
(an addition to MDMCF, issue 17 item 2; option ``lns`` of itv-mdmcf, default 30 work
units per OCS port: heuristics.lumos.mdmcf.reconfig step 4).

The chains insert the missing units one at a time, so their result depends on the
insertion order, while the ITV-ILP optimum relocates a few circuits together (also
giving up kept ones). Each iteration ruins a small neighbourhood and recreates it by the
same compiled chains (ruin-and-recreate with simulated-annealing acceptance):

1. pick (seeded RNG) an old circuit m: s -> t that is not kept while the pair {s, t}
   has a placed copy that is not kept either (else putting it back cannot keep more);
   steps 1-4 are done ``npick`` times per iteration (NPICK 3; picks that no longer
   qualify are skipped; the Pods involved accumulate);
2. put it back at its old place: the circuits on Tx s and Rx t of OCS m are removed
   (units to re-insert) and that copy of {s, t} is dropped;
3. remove more circuits, kept or not, up to 2 + a random 0..``ruin`` units in all, drawn
   at random among those touching the Pods involved (s, t and the other ends of the two
   removed circuits), then among all (decision: related circuits first, a Shaw-style
   removal: a relocation frees ports of these Pods; kept circuits too, since the
   optimum often gives one up for two; without them the search stalled at 1.08x on
   the worst proven step);
4. *extension*: a random 0..``ext`` more put-backs, each of an old circuit not kept
   that has a port of its old place free after steps 2-3 and whose pair has a unit to
   re-insert (used there) or a placed copy not kept (dropped); the circuit on its other
   port becomes a unit to re-insert (decision, issue 17: the optimum differs from a
   chain run by coordinated relocations over many OCSes, which one put-back per
   iteration rarely finds; with this step, RUIN 10, EXTEND 12 and NPICK 3 the search
   loses about 2.7x fewer old circuits to the proven optima at the same work than before
   (RUIN 6, no extension, one pick; 23 vs 62 at lns 30, mean of 12 seeds, about what
   lns 100 lost before); measured alternatives that did not help: a bigger or
   smaller ruin, removal by OCS instead of by Pod, a snowball removal, the units of a
   pending pair first, most-constrained or least-blocking re-insertion, a cooling
   schedule, restarts from the best, a stop after a stretch without gain; and the
   results were already optimal for every exact re-split of two OCSes, checked by ILP);
5. re-insert the units in random order, each where both ports are free if it can (at
   its old place if that is one of them, else the first), else by a chain of
   ``max_states`` states and the Konig fallback (heuristics.lumos.mdmcf.konig.place);
6. accept if it keeps at least as many old circuits, or d fewer with probability
   exp(-d / ``temp``); else undo (the journal of heuristics.lumos.mdmcf.chain). The best
   assignment seen is restored at the end.

The result never keeps fewer old circuits than the run it starts from (with the old
configuration mirrored, as MDMCF's is, eq. (7) = const - 4 kept), and every accepted
state realizes C (each unit placed, or the iteration undone). Work budget (``wk``, the
units of heuristics.lumos.mdmcf.eject.Work, never the clock): per iteration and per extension
step 1 + M n / 256 (their scans over the ports, as lumos_eject_steps.SELECT_WORK), one
per unit re-inserted, plus the chain states (time is about proportional: 0.3-0.4 us
per unit at P = 16); deterministic for a given seed and budget.
"""
from __future__ import annotations

import numpy as np

from heuristics.lumos.mdmcf.chain import LOG_ROWS, commit, drop, mark, njit, put, undo
from heuristics.lumos.mdmcf.eject_steps import drop_excess, spent
from heuristics.lumos.mdmcf.konig import place

RUIN = 10                   # up to 2 + RUIN units removed in steps 2-3
TEMP = 1.0                  # annealing temperature, in old circuits kept
STATES = 200                # chain-search bound per unit
EXTEND = 12                 # up to this many more put-backs (step 4)
NPICK = 3                   # steps 1-4 this many times per iteration
SCAN_WORK = 256             # an iteration's O(M n) scans: 1 unit per this many ports


@njit
def _add(ua, ub, U, x, y):
    ua[U], ub[U] = min(x, y), max(x, y)
    return U + 1


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


@njit
def _qualifies(G, m, s):
    """Old circuit m: s -> t not kept while {s, t} has a placed copy not kept (step 1)."""
    out, old = G[0], G[2]
    t = old[m, s]
    if t < 0 or out[m, s] == t:
        return False
    for m2 in range(out.shape[0]):
        if (out[m2, s] == t and old[m2, s] != t) or (out[m2, t] == s and old[m2, t] != s):
            return True
    return False


@njit
def _ruin(G, m, s, t, size, rng, ua, ub, pods, cand, ext, avail, wk, U0):
    """Steps 2-4: put m: s -> t back, removing what blocks it and more (up to ``size``
    units in all), then up to ``ext`` more put-backs; the units to re-insert go to ua, ub
    after the U0 there, the Pods involved are added to ``pods``; returns the number of
    units, or -1 if no copy of {s, t} could be dropped."""
    out, inn, old, cap, cnt = G[0], G[1], G[2], G[3], G[4]
    M, n = out.shape
    pods[s], pods[t] = True, True
    U = U0
    o, i = out[m, s], inn[m, t]
    if o >= 0:
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
                if not done and (m2 != m or x != s) and out[m2, x] == y and old[m2, x] != y:
                    drop(G, m2, x, y)
                    done = True
        if not done:
            return -1
    for related in range(2):
        K = 0
        for m2 in range(M):
            for x in range(n):
                y = out[m2, x]
                if y >= 0 and (m2 != m or x != s) and (pods[x] or pods[y]) == (related == 0):
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
    return _extend(G, U, ext, rng, ua, ub, cand, avail, wk)


@njit
def _extend(G, U, ext, rng, ua, ub, cand, avail, wk):
    """Step 4, up to ``ext`` put-backs: an old circuit m: x -> y not kept, with a port of
    its old place free, whose pair has a unit to re-insert or a copy not kept (that unit
    is used, or that copy dropped); what holds its other port (never kept: x's old Rx is
    y) becomes a unit to re-insert. ``avail`` (n, n): scratch. Returns the units' number."""
    out, inn, old = G[0], G[1], G[2]
    M, n = out.shape
    if ext == 0:
        return U
    avail[:] = 0                                    # units of a pair free to move there
    for m in range(M):
        for x in range(n):
            y = out[m, x]
            if y >= 0 and old[m, x] != y:
                avail[x, y] += 1
                avail[y, x] += 1
    for k in range(U):
        avail[ua[k], ub[k]] += 1
        avail[ub[k], ua[k]] += 1
    for _ in range(ext):
        wk[0] += 1 + M * n // SCAN_WORK
        K = 0
        for m in range(M):
            for x in range(n):
                y = old[m, x]
                if y >= 0 and out[m, x] != y and (out[m, x] < 0 or inn[m, y] < 0) and \
                        avail[x, y] > 0:
                    cand[K] = m * n + x
                    K += 1
        if K == 0:
            break
        c = cand[rng.integers(0, K)]
        m, x = c // n, c % n
        y = old[m, x]
        o, i = out[m, x], inn[m, y]
        done = False
        for k in range(U):                          # a unit of the pair: used here
            if not done and min(ua[k], ub[k]) == min(x, y) and max(ua[k], ub[k]) == max(x, y):
                ua[k], ub[k] = ua[U - 1], ub[U - 1]
                U -= 1
                done = True
        for m2 in range(M):                         # else a copy not kept: dropped
            for e in range(2):
                a, b = (x, y) if e == 0 else (y, x)
                if not done and out[m2, a] == b and old[m2, a] != b:
                    drop(G, m2, a, b)
                    done = True
        avail[x, y] -= 1
        avail[y, x] -= 1
        if o >= 0:                                  # not kept (the old Rx of x is y)
            drop(G, m, x, o)
            U = _add(ua, ub, U, x, o)
        if i >= 0:
            drop(G, m, i, y)
            U = _add(ua, ub, U, i, y)
        put(G, m, x, y)
    return U


@njit
def search(G, ruin, ext, temp, max_states, rng, wk, moves, goal, npick):
    """Steps 1-6 of the module docstring on the complete assignment ``G`` (excess copies
    dropped; its journal from :func:`with_journal` for npick (2 + ruin + ext) units),
    steps 1-4 ``npick`` times per iteration, until the budget
    ``wk`` = [used, limit, stopped] is spent, no old circuit qualifies, or ``goal`` old
    circuits are kept (an upper bound: nothing to gain); returns [iterations, accepted,
    improving, work used at the last new best] (statistics)."""
    out, old, meta = G[0], G[2], G[5]
    M, n = out.shape
    lost = np.empty(M * n, np.int64)
    cand = np.empty(M * n, np.int64)
    ua, ub = np.empty(npick * (ruin + ext + 4), np.int64), np.empty(npick * (ruin + ext + 4),
                                                                     np.int64)
    avail = np.zeros((n, n), np.int64)
    pods = np.zeros(n, np.bool_)
    loose = np.zeros((n, n), np.bool_)
    zero = np.zeros((M, n), np.int64)
    stats = np.zeros(4, np.int64)
    best, best_out = meta[0], out.copy()
    while not spent(wk) and best < goal:
        loose[:] = False                            # 1. pairs with a copy not kept
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
        wk[0] += 1 + M * n // SCAN_WORK             # the scans of the iteration
        stats[0] += 1
        before = meta[0]
        mark(G)
        U = 0
        pods[:] = False
        for _ in range(npick):                      # 2.-4. per pick, while it qualifies
            pick = lost[rng.integers(0, L)]
            m, s = pick // n, pick % n
            if U >= 0 and _qualifies(G, m, s):
                U = _ruin(G, m, s, old[m, s], U + 2 + rng.integers(0, ruin + 1), rng, ua, ub,
                          pods, cand, rng.integers(0, ext + 1), avail, wk, U)
        ok = U >= 0
        for k in range(max(U, 0)):                  # 5. recreate, random order
            r = k + rng.integers(0, U - k)
            ua[k], ua[r], ub[k], ub[r] = ua[r], ua[k], ub[r], ub[k]
            wk[0] += 1
            if not _direct(G, ua[k], ub[k]) and not place(
                    G, ua[k], ub[k], max_states, -1, -1, -1, zero, zero, True, wk, moves):
                ok = False
                break
        if ok:
            drop_excess(G)
        if ok and (meta[0] >= before or rng.random() < np.exp((meta[0] - before) / temp)):
            stats[1] += 1                           # 6. accept
            stats[2] += int(meta[0] > before)
            commit(G)
            if meta[0] > best:
                best = meta[0]
                best_out[:] = out
                stats[3] = wk[0]
        else:
            undo(G)
    if meta[0] < best:                              # back to the best assignment seen
        for m in range(M):
            for s in range(n):
                if out[m, s] >= 0:
                    drop(G, m, s, out[m, s])
        for m in range(M):
            for s in range(n):
                if best_out[m, s] >= 0:
                    put(G, m, s, best_out[m, s])
    return stats


def with_journal(G, units: int | None = None):
    """``G`` with an undo journal long enough for one iteration of up to ``units`` units
    (default NPICK (2 + RUIN + EXTEND)): the ruin's drops and puts (<= 4 rows per unit),
    then each unit re-inserted by a chain (<= 41 moves) or a Konig swap after a shed and a
    path reversal (O(n) moves), each move a put and up to three drops."""
    n = G[0].shape[1]
    units = NPICK * (2 + RUIN + EXTEND) if units is None else units
    rows = max(LOG_ROWS, units * (4 * (41 + 2 * n + 2) + 4 * n + 4) + 64)
    return G[:6] + (np.empty((rows, 4), np.int64),) + G[7:]
