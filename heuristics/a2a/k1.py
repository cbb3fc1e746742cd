"""Degree k = 1: base ring plus shifted rings (paper Sec. 4.2-4.3; spec 3.2).

Nodes are 0..n-1 (the base n-cycle sigma_i = i-1, A-free by symmetry; relabeling is separate).
The s-shifted ring is the permutation i -> i+s (mod n). Given shifts S = (s_1 = 1, s_2, ...):

* H[s, delta] = min{h >= 1 : h s = delta (mod n)} (infinite if gcd(s, n) does not divide delta);
* offset delta is sent on the topology with the fewest hops (tie: the earliest), in one round
  {u -> u + delta : all u} on the path u, u+s, u+2s, ... of H hops;
* transmission = sum_delta min_i H[s_i, delta] (units of T), optimal for the given shift set
  (each source's flows lower-bound the sum of round maxima and every round is full).

Shift orders (the paper only says "prioritize using a n-1 shift", A6):
GREEDY (default, nested: s_1 = 1, s_2 = n-1, then the largest reduction; ties to gcd(s, n) = 1,
then the smallest s), SEQ (1, n-1, 2, 3, ..., n-2; Fig. 13 calibration), CONTRACT (the offset
with the current largest hop count). PMEDIAN (exact in-family, G1) is ``build_pmedian`` in
``models/a2a/milp.py``.
"""
from __future__ import annotations

from math import gcd

import numpy as np

BIG = np.iinfo(np.int32).max


def hop_row(n: int, s: int) -> np.ndarray:
    """H[s, .]: hops from 0 to every offset on the s-shifted ring (BIG = unreachable; [0] = 0)."""
    period = n // gcd(s, n)
    row = np.full(n, BIG, dtype=np.int64)
    h = np.arange(1, period)
    row[(h * s) % n] = h
    row[0] = 0
    return row


def hop_table(n: int) -> np.ndarray:
    """H (n x n): row s = :func:`hop_row` (row 0 unused)."""
    return np.stack([hop_row(n, s) if s else np.zeros(n, np.int64) for s in range(n)])


def _apply(cur: np.ndarray, n: int, s: int) -> None:
    np.minimum(cur, hop_row(n, s), out=cur)


def greedy_order(n: int, dmax: int | None = None) -> list[int]:
    """GREEDY shift order (spec 3.2): each next shift maximizes the reduction of sum_delta cur.

    Only offsets reachable in fewer hops than the current maximum can gain, so candidate s is
    scored on h = 1..M-1 (M = current max hop): gain(s) = sum_h max(0, cur[h s mod n] - h) over
    h < n / gcd(s, n). Cost O(n M) per step, O(n^2 log n)-like in total.
    """
    dmax = n - 1 if dmax is None else min(dmax, n - 1)
    order = [1] + ([n - 1] if n > 2 else [])
    cur = hop_row(n, 1)
    if n > 2:
        _apply(cur, n, n - 1)
    s_all = np.arange(1, n)
    period = n // np.gcd(s_all, n)
    coprime = (period == n).astype(np.int64)
    while len(order) < dmax:
        M = int(cur[1:].max())
        if M <= 1:
            break
        h = np.arange(1, M)
        best_key, best_s = -1, 0
        # blocks of candidates keep the (candidates x hops) work array small
        block = max(1, (1 << 22) // len(h))
        for a in range(0, n - 1, block):
            s = s_all[a:a + block]
            idx = (s[:, None] * h[None, :]) % n
            gain = np.where(h[None, :] < period[a:a + block, None],
                            np.maximum(cur[idx] - h[None, :], 0), 0).sum(axis=1)
            key = gain * 2 + coprime[a:a + block]
            j = int(np.argmax(key))
            if key[j] > best_key:
                best_key, best_s = int(key[j]), int(s[j])
        order.append(best_s)
        _apply(cur, n, best_s)
    # all offsets are direct only when every shift is used; finish with the remaining ones
    used = set(order)
    order += [s for s in range(1, n) if s not in used][:dmax - len(order)]
    return order


def seq_order(n: int) -> list[int]:
    """SEQ: 1, n-1, 2, 3, ..., n-2 (the simple rule closest to the paper's Fig. 13; spec 3.2)."""
    return [1] + ([n - 1] if n > 2 else []) + list(range(2, n - 1))


def contract_order(n: int) -> list[int]:
    """CONTRACT: next shift = the offset with the current max hop (coprime first, then smallest)."""
    order = [1]
    cur = hop_row(n, 1)
    cop = np.array([gcd(s, n) == 1 for s in range(n)])
    while len(order) < n - 1:
        c = cur.copy()
        c[0] = -1
        M = c.max()
        cand = np.flatnonzero(c == M)
        pick = cand[cop[cand]] if cop[cand].any() else cand
        s = int(pick[0])
        order.append(s)
        _apply(cur, n, s)
    return order


ORDERS = {"greedy": greedy_order, "seq": lambda n, dmax=None: seq_order(n),
          "contract": lambda n, dmax=None: contract_order(n)}


def prefix_costs(n: int, order: list[int]) -> np.ndarray:
    """Transmission sum (units of T) of the first d shifts, for d = 1..len(order)."""
    cur = hop_row(n, order[0])
    out = [int(cur[1:].sum())]
    for s in order[1:]:
        _apply(cur, n, s)
        out.append(int(cur[1:].sum()))
    return np.asarray(out)


def assignment(n: int, shifts) -> tuple[np.ndarray, np.ndarray]:
    """(topology index, hops) per offset delta = 0..n-1: the fewest hops, ties to the earliest."""
    H = np.stack([hop_row(n, s) for s in shifts])         # (d, n)
    topo = H.argmin(axis=0)
    hops = H[topo, np.arange(n)]
    if np.any(hops[1:] >= BIG):
        raise ValueError(f"shift set {list(shifts)} does not reach every offset of Z_{n}")
    return topo, hops


def shift_cost(n: int, shifts) -> int:
    """Transmission sum in units of T for the shift set (spec 7.4)."""
    return int(assignment(n, shifts)[1][1:].sum())


def k1_phases(n: int, shifts) -> list[tuple[np.ndarray, list[list[np.ndarray]]]]:
    """Abstract phases for a shift set: (arcs, rounds), a round = [paths array (n, h+1)].

    Topologies that win no offset are dropped (A10: an unused topology is not paid for).
    """
    topo, hops = assignment(n, shifts)
    u = np.arange(n)
    phases = []
    for i, s in enumerate(shifts):
        deltas = [dl for dl in range(1, n) if topo[dl] == i]
        if not deltas:
            continue
        arcs = np.stack([u, (u + s) % n], axis=1)
        rounds = [[(u[:, None] + s * np.arange(hops[dl] + 1)[None, :]) % n]
                  for dl in sorted(deltas, key=lambda x: (hops[x], x))]
        phases.append((arcs, rounds))
    return phases
