"""Uniform-wiring reconfiguration baselines (spec 2.6): Uniform-Greedy and Helios.

Under Uniform wiring an OCS realizes an undirected matching (L2: x_ijkh = x_jikh), so a
group's C_h is realizable only if its multigraph is K_spine-edge-colourable. Both
baselines place what they can and leave the rest as unmet demand (LTRR < 1).

* Uniform-Greedy ([001] cites Lv et al. 2025, no details; spec 2.6 decision): keep old
  circuit pairs while demand remains, then place the remaining units, pairs by residual
  demand descending, each in the lowest-index OCS where both spines' ports are free.
* Helios (Farrington et al. 2010; spec 2.6 decision): OCS k = a maximum-weight matching of
  the residual demand graph, k = 0..K-1; no rewiring awareness.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from instances.lumos.instance import OcsConfig, ReconfigInstance, perm_from_matrix


def _need_uniform(inst: ReconfigInstance):
    if inst.wiring != "uniform":
        raise ValueError(f"uniform baselines need uniform wiring, the instance has {inst.wiring}")


def old_pairs(perm_h: np.ndarray) -> list[tuple[int, int, int]]:
    """(k, i, j), i < j: bidirectional old circuit pairs of one group (uniform wiring)."""
    out = []
    for k, row in enumerate(perm_h):
        for i in np.flatnonzero(row >= 0):
            j = int(row[i])
            if i < j and row[j] == i:
                out.append((k, int(i), j))
    return out


def uniform_greedy(inst: ReconfigInstance) -> OcsConfig:
    _need_uniform(inst)
    fab = inst.fabric
    K = fab.k_spine
    cfg = OcsConfig.empty(fab, inst.wire)
    for h in range(fab.H):
        R = inst.C[h].copy()
        busy = np.zeros((fab.pods, K), dtype=bool)       # port k of spine (i, h) in use
        for k, i, j in old_pairs(inst.old.perm[h]):      # 1. keep old circuits still demanded
            if R[i, j] > 0:
                R[i, j] -= 1
                R[j, i] -= 1
                busy[i, k] = busy[j, k] = True
                cfg.perm[h, k, i], cfg.perm[h, k, j] = j, i
        iu, ju = np.nonzero(np.triu(R, 1))               # 2. residual pairs, largest first
        order = np.argsort(-R[iu, ju], kind="stable")
        for i, j in zip(iu[order], ju[order]):
            for _ in range(R[i, j]):
                free = np.flatnonzero(~busy[i] & ~busy[j])
                if len(free) == 0:
                    break                                 # 3. unmet demand
                k = free[0]
                busy[i, k] = busy[j, k] = True
                cfg.perm[h, k, i], cfg.perm[h, k, j] = j, i
    return cfg


def helios_group(C_h: np.ndarray, K: int) -> list[np.ndarray]:
    """K symmetric 0/1 matchings: OCS k = a maximum-weight matching of the residual demand."""
    R = np.array(C_h, dtype=np.int64)
    mats = [np.zeros_like(R) for _ in range(K)]
    for k in range(K):
        iu, ju = np.nonzero(np.triu(R, 1))
        if len(iu) == 0:
            break
        g = nx.Graph()
        g.add_weighted_edges_from(zip(iu.tolist(), ju.tolist(), R[iu, ju].tolist()))
        for i, j in nx.max_weight_matching(g):
            mats[k][i, j] = mats[k][j, i] = 1
            R[i, j] -= 1
            R[j, i] -= 1
    return mats


def helios(inst: ReconfigInstance) -> OcsConfig:
    _need_uniform(inst)
    fab = inst.fabric
    cfg = OcsConfig.empty(fab, inst.wire)
    for h in range(fab.H):
        for k, X in enumerate(helios_group(inst.C[h], fab.k_spine)):
            cfg.perm[h, k] = perm_from_matrix(X)
    return cfg
