"""Test reference (see tests/heuristics/lumos/ref_eject.py): state and move search of one Cross-Wiring group for the ejection chains of
heuristics.lumos.mdmcf.eject (an addition to MDMCF): the assignment with its undo journal, the
bounded best-first ejection-chain search, the Konig alternating-path swap and the path
reversal that precedes it when both endpoints have free ports of one kind only; and
the deterministic work budget that all of them charge (see heuristics.lumos.mdmcf.eject).
"""
from __future__ import annotations

import heapq

import numpy as np

from heuristics.lumos.mdmcf.eject import Work     # the same budget, shared with the compiled path


class Group:
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
