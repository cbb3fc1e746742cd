"""Rank arrangement and communication domains ([002] 4.2.1 Principle 3, A.5-A.7; spec 2.9).

``P`` Pods with ``N`` GPUs each; rank ``p0 * N + n0`` is GPU ``n0`` of Pod ``p0``.

* ``ring_allreduce_rank`` (eq. 42) and its generalisation ``ring_order``: the ring visits
  the first halves of the Pods in Pod order, then the second halves in reverse Pod order,
  so adjacent Pods exchange exactly one flow each way (C_link <= 1, RankArrangable).
* ``hierarchical_ring_rank`` (eq. 43): even lanes traverse the Pods forwards, odd lanes
  backwards, so every inter-Pod link carries one flow in each direction.
* ``alltoall_op`` (eq. 44): the revised AlltoAll schedule; no two GPUs of a Pod target the
  same Pod in a phase iff ``N <= P`` (spec 7.18).
* ``domain_fill`` (A.6): the PP x DP matrix of TP groups coloured by Pod.

Flow matrices ``F[i, j]`` count the flows Pod i -> Pod j in one phase (A.5: C^t_ij);
``c_link`` is their maximum over i != j.
"""
from __future__ import annotations

import numpy as np


# ----------------------------------------------------------------------------------------
# RingAllreduce (A.5.1)
# ----------------------------------------------------------------------------------------
def ring_allreduce_rank(P: int, N: int) -> np.ndarray:
    """Eq. (42): ``G[p0 * N + n0]`` = ring position of GPU n0 of Pod p0 (N even). O(NP)."""
    if N % 2 or N < 2 or P < 1:
        raise ValueError(f"eq. (42) needs N even >= 2 and P >= 1, got N={N}, P={P}")
    p0, n0 = np.divmod(np.arange(N * P), N)
    h = N // 2
    return np.where(n0 < h, p0 * h + n0, N * P - 1 - (p0 * h + n0 - h))


def ring_order(pod) -> np.ndarray:
    """Generalised eq. (42) for any Pod sizes: ``order[k]`` = index of the member at ring
    position k. Pods are taken in order of first appearance in ``pod``, members of a Pod in
    their given order; the ring visits the first ceil(n_i / 2) members of each Pod forwards,
    then the rest of each Pod, reversed, in reverse Pod order (with equal even n_i this is
    the inverse of ``ring_allreduce_rank``). Every ring edge between two Pods joins Pods
    adjacent in that order, one edge each way when every Pod has >= 2 members. O(n log n)."""
    pod = np.asarray(pod)
    n = len(pod)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    _, first, inv = np.unique(pod, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")[inv]   # Pod order
    by_pod = np.lexsort((np.arange(n), rank))        # members grouped by Pod, stable
    r = rank[by_pod]
    start = np.searchsorted(r, r, side="left")
    size = np.searchsorted(r, r, side="right") - start
    k = np.arange(n) - start                          # index within its Pod
    front = k < (size + 1) // 2
    back = by_pod[~front]
    # second halves: reverse Pod order, each reversed = the whole back list reversed
    return np.concatenate([by_pod[front], back[::-1]]).astype(np.int64)


def ring_next(pod) -> np.ndarray:
    """``ring_order`` for every row of a 2-D array at once, as successors: ``nxt[r, c]`` =
    the column after member c in row r's generalised eq. (42) ring (Pods of a row taken
    in order of first appearance, members in column order; a row of one member points to
    itself). Vectorised over rows. O(R n log(R n))."""
    pod = np.asarray(pod)
    R, n = pod.shape
    if pod.size == 0:
        return np.zeros((R, n), dtype=np.int64)
    row = np.repeat(np.arange(R), n)
    _, inv = np.unique(pod.ravel(), return_inverse=True)           # labels -> 0..m-1
    _, first, grp = np.unique(row * (inv.max() + 1) + inv.ravel(), return_index=True,
                              return_inverse=True)                  # (row, Pod) groups
    q = np.argsort(np.argsort(first, kind="stable"), kind="stable")[grp.ravel()]
    flat = np.arange(R * n)
    by_q = np.lexsort((flat, q))                                    # grouped, column order
    qs = q[by_q]
    start = np.searchsorted(qs, qs, side="left")
    size = np.searchsorted(qs, qs, side="right") - start
    k, front = np.empty(R * n, dtype=np.int64), np.empty(R * n, dtype=bool)
    k[by_q] = np.arange(R * n) - start                              # index in its group
    front[by_q] = k[by_q] < (size + 1) // 2
    # ring positions: fronts by (Pod rank, index), then backs by reversed (Pod rank, index)
    order = np.lexsort((np.where(front, k, -k), np.where(front, q, -q), ~front, row))
    order = order.reshape(R, n)
    nxt = np.empty(R * n, dtype=np.int64)
    nxt[order] = np.roll(order, -1, axis=1)
    return nxt.reshape(R, n) % n


def ring_pod_flows(pod_in_ring_order, P: int) -> np.ndarray:
    """F[i, j]: flows Pod i -> Pod j when every ring member sends to the next one (one
    RingAllreduce step; every step has the same pattern). ``pod_in_ring_order[k]`` is the
    Pod of the member at ring position k."""
    p = np.asarray(pod_in_ring_order)
    F = np.zeros((P, P), dtype=np.int64)
    if len(p) > 1:
        np.add.at(F, (p, np.roll(p, -1)), 1)
    np.fill_diagonal(F, 0)
    return F


# ----------------------------------------------------------------------------------------
# Hierarchical RingAllreduce (A.5.2)
# ----------------------------------------------------------------------------------------
def hierarchical_ring_rank(P: int, N: int) -> np.ndarray:
    """Eq. (43): ``G[p0 * N + n0]`` = position of Pod p0 in lane n0's inter-Pod ring: p0 for
    even n0, (P - p0) mod P for odd n0 (spec 7.17: the printed P - p0 read mod P). O(NP)."""
    p0, n0 = np.divmod(np.arange(N * P), N)
    return np.where(n0 % 2 == 0, p0, (P - p0) % P)


def hierarchical_ring_pod_flows(G: np.ndarray, P: int, N: int) -> np.ndarray:
    """F[i, j] in one phase: in every lane n0, the Pod at ring position r sends to the Pod
    at position (r + 1) mod P (GPU n0 to GPU n0)."""
    G = np.asarray(G).reshape(P, N)                    # G[p0, n0]
    F = np.zeros((P, P), dtype=np.int64)
    for n0 in range(N):
        pod_at = np.empty(P, dtype=np.int64)
        pod_at[G[:, n0]] = np.arange(P)               # pod_at[r] = Pod at ring position r
        np.add.at(F, (pod_at, np.roll(pod_at, -1)), 1)
    np.fill_diagonal(F, 0)
    return F


def c_link(F: np.ndarray) -> int:
    """C_link of A.5: the most flows from one Pod to another in a phase."""
    F = np.array(F, copy=True)
    np.fill_diagonal(F, 0)
    return int(F.max(initial=0))


def bidirectional_links(F: np.ndarray) -> int:
    """Bidirectional optical links a phase needs (L2 compatibility: every logical link is
    bidirectional, spec 1.2): sum over Pod pairs of max(F_ij, F_ji)."""
    F = np.array(F, copy=True)
    np.fill_diagonal(F, 0)
    return int(np.triu(np.maximum(F, F.T), 1).sum())


# ----------------------------------------------------------------------------------------
# AlltoAll (A.7)
# ----------------------------------------------------------------------------------------
def alltoall_op(P: int, N: int) -> np.ndarray:
    """Eq. (44): ``op[src, t - 1]`` = destination rank of ``src = p0 * N + n0`` in phase
    t = 1..N*P: (p0 (N + 1) + N n0 + t - 1) mod (N P). Shape (NP, NP). O((NP)^2)."""
    NP = N * P
    p0, n0 = np.divmod(np.arange(NP), N)
    base = p0 * (N + 1) + N * n0
    return (base[:, None] + np.arange(NP)[None, :]) % NP


def alltoall_pod_clash(P: int, N: int) -> bool:
    """True if in some phase two GPUs of one Pod send to the same Pod under eq. (44)
    (destination Pod = rank // N; a GPU's own Pod counts as a destination Pod)."""
    dest_pod = (alltoall_op(P, N) // N).reshape(P, N, N * P)       # [p0, n0, t]
    s = np.sort(dest_pod, axis=1)
    return bool(np.any(s[:, 1:, :] == s[:, :-1, :]))


# ----------------------------------------------------------------------------------------
# PP/DP communication-domain arrangement (A.6)
# ----------------------------------------------------------------------------------------
def domain_fill(psi, pp: int, dp: int) -> np.ndarray:
    """A.6 greedy: the (pp, dp) matrix of TP groups (row r = the DP domain of pipeline stage
    r, column c = the PP domain of replica c) coloured by Pod. ``psi[i]`` = the job's TP
    groups in Pod i (the paper's servers, equal when TP = GPUs per server), sum = pp * dp.
    Pods sorted ascending by psi (ties by Pod id); elements filled left -> right, top ->
    bottom, each into the first Pod with groups left. Hence each Pod's elements are one
    run in row-major order: every PP domain (column) meets the Pods in that sorted order,
    crossing k - 1 Pod boundaries at most for k Pods, and only the rows where one Pod's
    run ends are split across Pods. O(P log P + pp * dp)."""
    psi = np.asarray(psi, dtype=np.int64)
    if np.any(psi < 0) or psi.sum() != pp * dp:
        raise ValueError(f"psi must be >= 0 and sum to pp * dp = {pp * dp}, got sum {psi.sum()}")
    pods = np.flatnonzero(psi)
    pods = pods[np.argsort(psi[pods], kind="stable")]
    return np.repeat(pods, psi[pods]).reshape(pp, dp)
