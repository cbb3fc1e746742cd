"""Keep-and-insert by ejection chains with orientation freedom (an addition to MDMCF).

The exact problem of one Cross-Wiring group (spec 2.4, reduced model): the undirected
multigraph C_h (Pod degree <= K) is split over the K/2 even OCSes, each carrying a
directed partial permutation (one circuit out of and one into every Pod per OCS); a unit
of C_ij may be realized as i -> j or j -> i in any of them (the odd OCS mirrors it).
Since the circuit counts are fixed, minimal rewiring (eq. 7) = keeping the most old
circuits (i -> j in the same even OCS). FindConnection and the Kempe insertion of
heuristics.lumos_kempe first fix the orientation A (SIMD) and then colour it; the ILP
optimum typically keeps all old circuits but a handful, and most of their loss is in
that order of decisions. This module decides orientation and OCS together:

1. keep every old circuit whose Pod pair C still needs; a pair with more old copies
   than C_ij keeps them all for now, as *excess* copies (decision: which copies to drop
   is left to the insertions below, which drop an excess copy whose ports they need);
2. insert each missing unit {i, j}, most constrained first (fewest places where both
   ports are free; ``direct_first``: the fewest among units that have such a place,
   a faster order), by an *ejection chain*: place it as s -> t in some OCS m where
   the Tx port of s or the Rx port of t is free; an excess copy on the other port is
   dropped; any other circuit there is ejected and becomes the next unit to place, in
   any OCS and orientation. Chains are searched best-first on their cost (+1 per old
   circuit ejected from its old place, -1 per circuit placed at an old place), with
   bounds on depth and states; among places where both ports are free, the one that
   blocks the fewest free places of the other units. If the search finds nothing, the
   excess copies at the unit's Pods are dropped and the alpha/beta alternating-path
   swap of Konig's theorem places the unit (after reversing one directed path of one
   OCS when both endpoints have free ports of one kind only), which always succeeds;
3. drop the excess copies left (pairs back to C_ij copies);
4. improvement: each old circuit not kept while its pair is realized elsewhere by a
   circuit that is not kept is moved back to its old place, and what it ejects is
   re-inserted by chains; the move stays only if more old circuits are kept.

Each search expands at most ``max_states`` states of O(K) moves each (bounded local
search), so the whole is polynomial. Work budget (``work``, a :class:`Work` shared by the
runs of a group; it replaces a wall-clock guard whose results depended on the machine's
load): once it is spent, the remaining units are placed in list order (no most-
constrained selection, whose cost grows with the square of the number of units) by
chains of at most ``GUARD_STATES`` states, 0 = the Konig fallback alone (short chains
in list order rewired more in a trial at P = 128), and step 4 is skipped or stopped. If
a unit cannot be placed (not expected) the function returns None and MDMCF uses its
other assignments.
"""
from __future__ import annotations

import heapq
import time

import numpy as np

GUARD_STATES = 0            # chain search bound once the budget is spent (Konig only)
SELECT_WORK = (4, 256)      # a most-constrained selection of U units: 4 + M (U + n) / 256


class Work:
    """The deterministic work budget of the ejection chains of one group, shared by its
    runs (restarts), in chain-search states expanded (each O(K) moves in Python, about
    12 us at P = 128): one per state, one per re-keep attempt, and per most-constrained
    selection of U units (numpy over (M, U) and (M, n) arrays) 4 + M (U + n) / 256,
    measured to take about as long (decision: a unit proportional to time that costs
    nothing to count and does not depend on the machine); ``spent`` once
    ``used`` reaches ``limit`` (None: unlimited) or, only when a user time limit set
    ``deadline`` (a time.monotonic() value), once that has passed."""

    __slots__ = ("limit", "used", "deadline")

    def __init__(self, limit: int | None = None, deadline: float | None = None):
        self.limit, self.used, self.deadline = limit, 0, deadline

    def charge(self, n: int) -> None:
        self.used += n

    @property
    def spent(self) -> bool:
        return (self.limit is not None and self.used >= self.limit) or \
            (self.deadline is not None and time.monotonic() > self.deadline)


class _Group:
    """Assignment of one group: out[m][s] = t, inn[m][t] = s (-1 = port free); cnt[a][b]
    = circuits placed between Pods a and b (both directions), cap[a][b] = C_ab."""

    def __init__(self, C: np.ndarray, old_out: list[list[int]], work: Work | None = None):
        self.n, self.M = C.shape[0], len(old_out)
        self.work = Work() if work is None else work
        self.out = [[-1] * self.n for _ in range(self.M)]
        self.inn = [[-1] * self.n for _ in range(self.M)]
        self.old = old_out
        self.cap = C.tolist()
        self.cnt = [[0] * self.n for _ in range(self.n)]
        self.tx_free = np.ones((self.M, self.n), bool)  # numpy mirrors of out/inn < 0
        self.rx_free = np.ones((self.M, self.n), bool)  # (for _most_constrained, step 2)
        self.track = True                               # keep them up to date
        self.over: set = set()                          # pairs that were above C at some time
        self.n_kept = 0                                 # circuits at their old place
        self.log: list | None = None                    # undo journal (see ``mark``)

    def put(self, m, s, t):
        self.out[m][s], self.inn[m][t] = t, s
        if self.track:
            self.tx_free[m, s] = self.rx_free[m, t] = False
        self.cnt[s][t] += 1
        self.cnt[t][s] += 1
        self.n_kept += self.old[m][s] == t
        if self.cnt[s][t] > self.cap[s][t]:
            self.over.add((min(s, t), max(s, t)))
        if self.log is not None:
            self.log.append((False, m, s, t))

    def drop(self, m, s, t):
        self.out[m][s], self.inn[m][t] = -1, -1
        if self.track:
            self.tx_free[m, s] = self.rx_free[m, t] = True
        self.cnt[s][t] -= 1
        self.cnt[t][s] -= 1
        self.n_kept -= self.old[m][s] == t
        if self.log is not None:
            self.log.append((True, m, s, t))

    def mark(self) -> None:
        """Start recording changes, for ``undo``."""
        self.log = []

    def undo(self) -> None:
        log, self.log = self.log, None
        for was_drop, m, s, t in reversed(log):
            (self.put if was_drop else self.drop)(m, s, t)

    def excess_pairs(self) -> list[tuple[int, int]]:
        return [k for k in self.over if self.cnt[k[0]][k[1]] > self.cap[k[0]][k[1]]]

    def commit(self) -> None:
        """Keep the changes since ``mark``."""
        self.log = None

    def chain(self, p: int, q: int, banned=None, max_depth: int = 40, max_states: int = 4000,
              visits: int = 2, damage=None):
        """Cheapest ejection chain found that places unit {p, q}: (cost, moves) with
        moves = [(m, s, t, ejected circuit or None, dropped circuits), ...], or None.
        States are keyed by the circuit in hand; each key is expanded ``visits`` times."""
        out, inn, old, cap, cnt, M, n = self.out, self.inn, self.old, self.cap, self.cnt, \
            self.M, self.n
        tick = 0
        heap = [(0, 0, tick, p, q, banned, None)]       # (cost, depth, tie, unit, banned, path)
        seen: dict = {}
        states = 0
        while heap:
            cost, depth, _, a, b, ban, path = heapq.heappop(heap)
            if a < 0:                                   # a complete chain
                self.work.charge(states)
                return cost, _unwind(path)
            key = (a, b) if ban is None else ban
            if seen.get(key, 0) >= visits:
                continue
            seen[key] = seen.get(key, 0) + 1
            states += 1
            if states > max_states or depth >= max_depth:
                continue
            ov_out, ov_in, ov_cnt = _overrides(path, n)
            if path is not None:
                path = (path[0], path[1], (ov_out, ov_in, ov_cnt))
            bm, bs, bt = ban if ban is not None else (-1, -1, -1)
            done = None                                 # best complete chain from here
            for m in range(M):
                om, im, oldm, base = out[m], inn[m], old[m], m * n
                for s, t in ((a, b), (b, a)):
                    if m == bm and s == bs and t == bt:
                        continue
                    o = ov_out.get(base + s, om[s])
                    i = ov_in.get(base + t, im[t])
                    if o == t:                          # s -> t already there in m
                        continue
                    ej, drops = None, ()
                    if o >= 0:
                        if cnt[s][o] > cap[s][o] and \
                                cnt[s][o] - cap[s][o] + ov_cnt.get(_pk(s, o, n), 0) > 0:
                            drops = ((m, s, o),)        # an excess copy: dropped
                        else:
                            ej = (m, s, o)
                    if i >= 0:
                        if cnt[i][t] > cap[i][t] and cnt[i][t] - cap[i][t] + ov_cnt.get(
                                _pk(i, t, n), 0) - (len(drops) and {s, o} == {i, t}) > 0:
                            drops += ((m, i, t),)
                        elif ej is not None:
                            continue                    # two circuits to move: not a chain
                        else:
                            ej = (m, i, t)
                    c = cost - (oldm[s] == t)
                    tick += 1
                    mv = (m, s, t, ej, drops)
                    if ej is None:                      # complete: the best from this state
                        dmg = 0 if damage is None else int(damage[0][m, s] + damage[1][m, t])
                        if done is None or (c, dmg) < done[0]:
                            done = ((c, dmg), (path, mv))
                        continue
                    c += old[m][ej[1]] == ej[2]
                    heapq.heappush(heap, (c, depth + 1, tick, ej[1], ej[2], ej, (path, mv)))
            if done is not None:                        # first completion found (best-first
                self.work.charge(states)                # on cost so far, not the optimum)
                return done[0][0], _unwind(done[1])
        self.work.charge(states)
        return None

    def kempe(self, p: int, q: int):
        """The cheapest alpha/beta alternating-path swap (Konig's step) that places unit
        {p, q} with a fixed orientation s -> t, alpha free at Tx of s and beta at Rx of t,
        written as an ejection chain: (cost, moves), or None if no orientation has both."""
        out, inn, old, M = self.out, self.inn, self.old, self.M
        best = None
        for s, t in ((p, q), (q, p)):
            for al in range(M):
                if out[al][s] >= 0:
                    continue
                for be in range(M):
                    if inn[be][t] >= 0:
                        continue
                    cost = -(old[al][s] == t)
                    if be == al:
                        moves = [(al, s, t, None, ())]
                    else:
                        moves, cur, col = [], (al, s, t), t
                        while True:
                            r = inn[al][col]
                            if r < 0:
                                moves.append((*cur, None, ()))
                                break
                            moves.append((*cur, (al, r, col), ()))
                            cost += (old[al][r] == col) - (old[be][r] == col)
                            nxt = out[be][r]
                            if nxt < 0:
                                moves.append((be, r, col, None, ()))
                                break
                            moves.append((be, r, col, (be, r, nxt), ()))
                            cost += (old[be][r] == nxt) - (old[al][r] == nxt)
                            cur, col = (al, r, nxt), nxt
                    if best is None or (cost, len(moves)) < best[0]:
                        best = ((cost, len(moves)), moves)
        return None if best is None else (best[0][0], best[1])

    def rebalance(self, p: int, q: int) -> None:
        """When Pods p and q have free ports of one kind only (both Tx or both Rx), no
        orientation of {p, q} has a free Tx and a free Rx: reverse the cheapest directed
        path of one OCS that ends (starts) at p or q; its far end has the other kind of
        free port, so afterwards the endpoints have one of each (then ``kempe`` applies)."""
        out, inn, old, M = self.out, self.inn, self.old, self.M
        best = None
        for y in (p, q):
            for m in range(M):
                tx_free = out[m][y] < 0
                if not tx_free and inn[m][y] >= 0:
                    continue
                path, x = [], y
                while True:
                    z = inn[m][x] if tx_free else out[m][x]
                    if z < 0 or z == y:
                        break
                    path.append((z, x) if tx_free else (x, z))
                    x = z
                cost = sum((old[m][a] == b) - (old[m][b] == a) for a, b in path)
                if path and (best is None or (cost, len(path)) < best[0]):
                    best = ((cost, len(path)), m, path)
        if best is None:
            return
        _, m, path = best
        for a, b in path:
            self.drop(m, a, b)
        for a, b in path:
            self.put(m, b, a)

    def shed(self, a: int, b: int) -> None:
        """Drop the excess copies at Pods a and b (before the fallbacks, which only use
        free ports)."""
        for x, y in self.excess_pairs():
            if a in (x, y) or b in (x, y):
                for m in range(self.M):
                    for s, t in ((x, y), (y, x)):
                        if self.out[m][s] == t and self.cnt[x][y] > self.cap[x][y]:
                            self.drop(m, s, t)

    def apply(self, moves) -> None:
        for m, s, t, ej, drops in moves:
            for d in drops:
                self.drop(*d)
            if ej is not None:
                self.drop(*ej)
            self.put(m, s, t)

    def place(self, a: int, b: int, max_states: int, banned=None, damage=None,
              fallback: bool = True) -> bool:
        found = self.chain(a, b, banned, max_states=max_states, damage=damage)
        if found is None and fallback:
            self.shed(a, b)
            found = self.kempe(a, b)
        if found is None and fallback:
            self.rebalance(a, b)
            found = self.kempe(a, b)
        if found is None:
            return False
        self.apply(found[1])
        return True


def _unwind(path) -> list:
    moves = []
    while path is not None:
        moves.append(path[1])
        path = path[0]
    return moves[::-1]


def _pk(x: int, y: int, n: int) -> int:
    return x * n + y if x < y else y * n + x


def _overrides(path, n: int):
    """Port occupancy and pair counts changed by a partial chain ``path`` = (parent, last
    move[, its overrides, cached once the state is expanded]): dicts keyed by m * n + pod
    (Tx, Rx) and by the pair key ``_pk``."""
    if path is None:
        return {}, {}, {}
    parent = path[0]
    if parent is None:
        ov_out, ov_in, ov_cnt = {}, {}, {}
    elif len(parent) == 3:
        ov_out, ov_in, ov_cnt = (dict(d) for d in parent[2])
    else:
        ov_out, ov_in, ov_cnt = _overrides(parent, n)
    m, s, t, ej, drops = path[1]
    for f in drops + ((ej,) if ej is not None else ()):
        ov_out[f[0] * n + f[1]] = -1
        ov_in[f[0] * n + f[2]] = -1
        k = _pk(f[1], f[2], n)
        ov_cnt[k] = ov_cnt.get(k, 0) - 1
    ov_out[m * n + s] = t
    ov_in[m * n + t] = s
    k = _pk(s, t, n)
    ov_cnt[k] = ov_cnt.get(k, 0) + 1
    return ov_out, ov_in, ov_cnt


def eject_connection(C, old, improve: bool = True, max_states: int = 4000,
                     rounds: int = 2, seed: int | None = None, direct_first: bool = False,
                     rekeep_states: int = 1000, work: Work | None = None
                     ) -> list[np.ndarray] | None:
    """Split the undirected C (P x P, degree <= 2 * len(old)) over the even OCSes whose old
    0/1 matrices are ``old`` (M, P, P), choosing orientation and OCS per unit; returns M
    directed partial permutations with sum X + X^T = C, or None if a unit found no place
    (then use another assignment). ``max_states``/``rekeep_states``: bound of each chain
    search in steps 2/4; ``rounds``: passes of step 4 (``improve``); ``seed``/``direct_first``: the insertion order; ``work``:
    the work budget of the module docstring (None: unlimited; share one Work between the
    runs of a group)."""
    C = np.asarray(C, dtype=np.int64)
    g = _new_group(C, old, work)
    for m in range(g.M):                                # 1. keep (excess copies too)
        for s, t in enumerate(g.old[m]):
            if t >= 0 and C[s, t] > 0:
                g.put(m, s, t)
    R = np.triu(C - np.array(g.cnt), 1)
    ri, rj = np.nonzero(R > 0)
    units = [(int(i), int(j)) for i, j in zip(ri, rj) for _ in range(int(R[i, j]))]
    rng = None if seed is None else np.random.default_rng(seed)
    if rng is not None:
        units = [units[k] for k in rng.permutation(len(units))]
    if not _insert(g, units, max_states, rng, direct_first):    # 2. insert
        return None
    g.track = False                                     # the masks are for step 2 only
    _drop_excess(g)                                     # 3.
    if improve:
        _rekeep(g, rekeep_states, rounds)               # 4.
    return _matrices(g)


def _new_group(C: np.ndarray, old, work: Work | None) -> _Group:
    old = np.asarray(old, dtype=np.int64)
    M, n = old.shape[0], old.shape[1]
    old_out = np.full((M, n), -1, dtype=np.int64)
    for m in range(M):
        r, c = np.nonzero(old[m])
        old_out[m, r] = c
    return _Group(C, old_out.tolist(), work)


def _matrices(g: _Group) -> list[np.ndarray]:
    X = np.zeros((g.M, g.n, g.n), dtype=np.int64)
    m, s = np.nonzero(np.array(g.out) >= 0)
    X[m, s, np.array(g.out)[m, s]] = 1
    return list(X)


def _most_constrained(g: _Group, units: np.ndarray, rng=None, direct_first: bool = False
                      ) -> tuple[int, tuple]:
    """The index k of the unit (row of the (U, 2) array ``units``) with the fewest places
    where both ports are free (excess copies count as free); if it has one, also the
    place that blocks the fewest places of the other units, as a move (m, s, t, None,
    dropped excess copies), else the number of the units' places on each Tx and Rx port
    ((M, n) arrays use_tx, use_rx), to break ties of chains."""
    FO, FI = g.tx_free.copy(), g.rx_free.copy()        # a port held by an excess copy
    M, n = FO.shape
    for x, y in g.excess_pairs():                       # (pair above C) counts as free
        for m in range(M):
            for s, t in ((x, y), (y, x)):
                if g.out[m][s] == t:
                    FO[m, s] = FI[m, t] = True
    ua, ub = units[:, 0], units[:, 1]
    fwd, rev = FO[:, ua] & FI[:, ub], FO[:, ub] & FI[:, ua]      # (M, U)
    n_places = fwd.sum(0) + rev.sum(0)
    pri = np.where(n_places > 0, n_places, 1 << 20) if direct_first else n_places
    if rng is None:
        k = int(np.argmin(pri))
    else:
        k = int(rng.choice(np.flatnonzero(pri == pri.min())))
    a, b = int(ua[k]), int(ub[k])
    use_tx = np.zeros(M * n, np.int64)                 # other units' places on each port
    use_rx = np.zeros(M * n, np.int64)
    for d, src, dst in ((fwd, ua, ub), (rev, ub, ua)):
        m_, k_ = np.nonzero(d)
        use_tx += np.bincount(m_ * n + src[k_], minlength=M * n)
        use_rx += np.bincount(m_ * n + dst[k_], minlength=M * n)
    use_tx, use_rx = use_tx.reshape(M, n), use_rx.reshape(M, n)
    if n_places[k] == 0:
        return k, (use_tx, use_rx)
    best = None
    for m in range(M):
        for s, t, ok in ((a, b, fwd[m, k]), (b, a, rev[m, k])):
            if not ok:
                continue
            drops = []
            o, i = g.out[m][s], g.inn[m][t]
            if o >= 0:
                drops.append((m, s, o))
            if i >= 0 and (m, i, t) not in drops:
                drops.append((m, i, t))
            if len(drops) == 2 and {drops[0][1], drops[0][2]} == {drops[1][1], drops[1][2]} \
                    and g.cnt[s][o] - 2 < g.cap[s][o]:
                continue                                # both copies of one pair: not both excess
            key = (-(g.old[m][s] == t), len(drops), int(use_tx[m, s] + use_rx[m, t]),
                   0 if rng is None else rng.random())
            if best is None or key < best[0]:
                best = (key, (m, s, t, None, tuple(drops)))
    return k, (use_tx, use_rx) if best is None else best[1]


def _insert(g: _Group, units: list, max_states: int, rng=None, direct_first=False) -> bool:
    """Step 2 for the ``units`` (pairs) not placed yet."""
    u = np.array(units, dtype=np.int64).reshape(-1, 2)
    while len(u):
        if g.work.spent:                                # the budget: Konig in list order
            return all(g.place(a, b, GUARD_STATES) for a, b in u.tolist())
        g.work.charge(SELECT_WORK[0] + g.M * (len(u) + g.n) // SELECT_WORK[1])
        k, spot = _most_constrained(g, u, rng, direct_first)
        a, b = u[k].tolist()
        u = np.delete(u, k, axis=0)
        if len(spot) == 5:
            g.apply([spot])
        elif not g.place(a, b, max_states, damage=spot):
            return False
    return True


def _drop_excess(g: _Group) -> None:
    """Pairs still above C_ab lose copies, those not at their old place first."""
    for kept_first in (False, True):
        for m in range(g.M):
            for s, t in enumerate(g.out[m]):
                if t >= 0 and g.cnt[s][t] > g.cap[s][t] and (g.old[m][s] == t) == kept_first:
                    g.drop(m, s, t)


def _rekeep(g: _Group, rekeep_states: int, rounds: int = 2) -> None:
    """Step 4: return lost old circuits to their old place when that keeps more."""
    for _ in range(rounds):
        improved = False
        for m in range(g.M):
            for s, t in enumerate(g.old[m]):
                if t < 0 or g.out[m][s] == t:
                    continue
                spot = _loose_copy(g, s, t)
                if spot is None:
                    continue
                if g.work.spent:
                    return
                g.work.charge(1)
                before = g.n_kept
                g.mark()
                g.drop(*spot)
                ejected = []
                if g.out[m][s] >= 0:
                    ejected.append((m, s, g.out[m][s]))
                if g.inn[m][t] >= 0 and (m, g.inn[m][t], t) not in ejected:
                    ejected.append((m, g.inn[m][t], t))
                for e in ejected:
                    g.drop(*e)
                g.put(m, s, t)
                if all(g.place(e[1], e[2], rekeep_states, banned=e, fallback=False)
                       for e in ejected) \
                        and g.n_kept > before:
                    improved = True
                    g.commit()
                else:
                    g.undo()
        if not improved:
            break


def _loose_copy(g: _Group, a: int, b: int):
    """A placed circuit between Pods a and b (either direction) that is not kept."""
    for m in range(g.M):
        for s, t in ((a, b), (b, a)):
            if g.out[m][s] == t and g.old[m][s] != t:
                return (m, s, t)
    return None
