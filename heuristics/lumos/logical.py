"""Polynomial logical-topology design from the leaf-level requirement ([002] 4.1.1, A.2).

* ``heuristic_decomposition`` (Theorem 4.1): L = A + A^T by SIMD, A = sum_h A^h by IMD into
  H = K_leaf/tau parts, L_abh = A^h_ab + A^h_ba. With tau = 2 every load is <= 2 = tau
  (contention-free); with tau = 1 loads are <= 2 (contention level <= 2, the best
  possible in general, [002] Fig. 12). SIMD by Euler orientation (O(eta^2 + E)) rather
  than the paper's MCF (O(eta^6 log eta) as analysed in A.3); IMD by peeling flows.
* ``greedy_assign`` (Theorem 4.2): each requirement unit {a, b} goes to a spine h free at
  both leaves, symmetrically (L_abh = L_bah, so (8) holds). Under the theorem's
  condition (every leaf needs at most H/2 paths, tau = 1) a free spine always exists;
  otherwise the least-loaded spine with port room at both Pods (eq. 12) is used and the
  contention level reports the excess.
  O(H) per unit, O(K_leaf * eta) overall.
"""
from __future__ import annotations

import numpy as np

from heuristics.lumos.mdmcf.decompose import int_decompose, sym_decompose, sym_decompose_flow
from instances.lumos.logical import LogicalInstance, LogicalSolution


def heuristic_decomposition(inst: LogicalInstance, simd: str = "euler") -> LogicalSolution:
    """Steps 1-3 of [002] A.2 with per-Pod balancing ([REPO] CijtSolver block balancing,
    spec 2.7): SIMD orients L so that every Pod's out- and in-sums of A differ by <= 1,
    and IMD keeps every Pod's block row/column sums within ceil(1/H). Then spine (i, h)
    gets sum_j C_ijh <= ceil(R_i/H) + ceil(Cl_i/H) <= K_spine (eq. 12; Pod demand
    R_i + Cl_i <= K_spine * H, |R_i - Cl_i| <= 1, K_spine even) for tau = 1 as well,
    where per-leaf balance alone allows up to 2 * K_spine."""
    fab = inst.fabric
    pods = fab.pod_of_leaf(np.arange(fab.n_leaves))
    if simd == "euler":
        A = sym_decompose(inst.L, groups=pods)                                # Step 1
    else:
        A = sym_decompose_flow(inst.L, groups=pods)
    parts = int_decompose(A, fab.H, groups=pods)                             # Step 2
    return LogicalSolution.from_dense({h: X + X.T for h, X in enumerate(parts)})  # Step 3


def theorem42_holds(inst: LogicalInstance) -> bool:
    """[002] Theorem 4.2's condition: tau = 1 and every leaf needs <= (K_leaf/tau)/2 paths."""
    return inst.fabric.tau == 1 and int(inst.L.sum(axis=1).max(initial=0)) <= inst.fabric.H / 2


def greedy_assign(inst: LogicalInstance) -> LogicalSolution:
    fab = inst.fabric
    H, tau = fab.H, fab.tau
    load = np.zeros((fab.n_leaves, H), dtype=np.int64)
    ports = np.zeros((fab.pods, H), dtype=np.int64)          # sum_j C_ijh so far (eq. 12)
    pod = fab.pod_of_leaf(np.arange(fab.n_leaves))
    a_idx, b_idx = np.nonzero(np.triu(inst.L, 1))
    rows = []
    for a, b in zip(a_idx.tolist(), b_idx.tolist()):
        for _ in range(int(inst.L[a, b])):
            both = np.maximum(load[a], load[b])
            room = (ports[pod[a]] < fab.k_spine) & (ports[pod[b]] < fab.k_spine)
            free = np.flatnonzero((both < tau) & room)
            if len(free):
                h = int(free[0])
            else:   # least-loaded spine with port room (the checker reports any eq. 12 excess)
                h = int(np.argmin(np.where(room, both, both + fab.k_leaf + 1)))
            load[a, h] += 1
            load[b, h] += 1
            ports[pod[a], h] += 1
            ports[pod[b], h] += 1
            rows.append((a, b, h))
    entries = np.zeros((0, 4), dtype=np.int64)
    if rows:
        r = np.array(rows, dtype=np.int64)
        key, cnt = np.unique(r, axis=0, return_counts=True)
        half = np.column_stack([key, cnt])
        entries = np.concatenate([half, half[:, [1, 0, 2, 3]]])
    return LogicalSolution(entries)


def extend_split(fab, entries: np.ndarray, L1: np.ndarray, R: np.ndarray | None = None,
                 tau_cap: int | None = None) -> np.ndarray | None:
    """Incremental logical topology (an addition for the running stage, not in [002]): keep
    the running jobs' split ``entries`` (rows a, b, h, count, both orientations) and put
    each unit {a, b} of the new job's requirement ``L1`` on one spine h with room at both
    leaves (load < tau, eq. 6) and at both Pods' spines (eq. 12), symmetrically (eq. 8
    holds); among those, a spine whose
    realized links ``R[h, pod a, pod b]`` exceed the running jobs' use first (an existing
    circuit: nothing to rewire), then the least-loaded. Running jobs' paths never move (the
    reconfiguration is hitless for them). Returns the new rows (both orientations), or None
    when some unit finds no spine (then the caller re-decomposes the whole L, as [002]).
    O(units x H)."""
    H, tau = fab.H, tau_cap or fab.tau
    pod = fab.pod_of_leaf
    load = np.zeros((fab.n_leaves, H), dtype=np.int64)
    np.add.at(load, (entries[:, 0], entries[:, 2]), entries[:, 3])
    # eq. (12): spine (i, h) has k_spine OCS ports; an old split with tau = 1 may load a
    # leaf twice (Heuristic-Decomposition's contention 2), so the Pod budget binds apart
    pod_load = load.reshape(fab.pods, fab.leaves_per_pod, H).sum(axis=1)
    spare = None
    if R is not None:
        used = np.zeros_like(R)
        np.add.at(used, (entries[:, 2], pod(entries[:, 0]), pod(entries[:, 1])), entries[:, 3])
        spare = R - used
    a_, b_ = np.nonzero(np.triu(L1, 1))
    rows = []
    for a, b, c in zip(a_.tolist(), b_.tolist(), L1[a_, b_].tolist()):
        i, j = int(pod(a)), int(pod(b))
        for _ in range(c):
            room = ((load[a] < tau) & (load[b] < tau) & (pod_load[i] < fab.k_spine)
                    & (pod_load[j] < fab.k_spine))
            if not room.any():
                return None
            score = load[a] + load[b] + 0.0
            if spare is not None:
                score = np.where(spare[:, i, j] > 0, score - 4 * tau, score)
            h = int(np.argmin(np.where(room, score, np.inf)))
            load[a, h] += 1
            load[b, h] += 1
            pod_load[i, h] += 1
            pod_load[j, h] += 1
            if spare is not None:
                spare[h, i, j] -= 1
                spare[h, j, i] -= 1
            rows += [(a, b, h, 1), (b, a, h, 1)]
    if not rows:
        return np.zeros((0, 4), dtype=np.int64)
    new = np.array(rows, dtype=np.int64)
    key, inv = np.unique(new[:, :3], axis=0, return_inverse=True)
    return np.column_stack([key, np.bincount(inv.ravel(), new[:, 3])]).astype(np.int64)
