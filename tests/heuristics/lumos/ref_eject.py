"""Test reference: the pure-Python ejection chains as they were before the numba port
(heuristics.lumos.mdmcf.eject before issue 17 item 2), kept only to check that the compiled path
gives the same assignments and work counts. The algorithm, its decisions and the work
budget are described in heuristics.lumos.mdmcf.eject's docstring.
"""
from __future__ import annotations

import numpy as np

from tests.heuristics.lumos.ref_chain import Group, Work

GUARD_STATES = 0            # chain search bound once the budget is spent (Konig only)
SELECT_WORK = (4, 256)      # a most-constrained selection of U units: 4 + M (U + n) / 256


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


def _new_group(C: np.ndarray, old, work: Work | None) -> Group:
    old = np.asarray(old, dtype=np.int64)
    M, n = old.shape[0], old.shape[1]
    old_out = np.full((M, n), -1, dtype=np.int64)
    for m in range(M):
        r, c = np.nonzero(old[m])
        old_out[m, r] = c
    return Group(C, old_out.tolist(), work)


def _matrices(g: Group) -> list[np.ndarray]:
    X = np.zeros((g.M, g.n, g.n), dtype=np.int64)
    m, s = np.nonzero(np.array(g.out) >= 0)
    X[m, s, np.array(g.out)[m, s]] = 1
    return list(X)


def _most_constrained(g: Group, units: np.ndarray, rng=None, direct_first: bool = False
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


def _insert(g: Group, units: list, max_states: int, rng=None, direct_first=False) -> bool:
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


def _drop_excess(g: Group) -> None:
    """Pairs still above C_ab lose copies, those not at their old place first."""
    for kept_first in (False, True):
        for m in range(g.M):
            for s, t in enumerate(g.out[m]):
                if t >= 0 and g.cnt[s][t] > g.cap[s][t] and (g.old[m][s] == t) == kept_first:
                    g.drop(m, s, t)


def _rekeep(g: Group, rekeep_states: int, rounds: int = 2) -> None:
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


def _loose_copy(g: Group, a: int, b: int):
    """A placed circuit between Pods a and b (either direction) that is not kept."""
    for m in range(g.M):
        for s, t in ((a, b), (b, a)):
            if g.out[m][s] == t and g.old[m][s] != t:
                return (m, s, t)
    return None
