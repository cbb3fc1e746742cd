"""Polynomial OCS reconfiguration under Cross Wiring (and the dual-link wiring).

Per OCS group h, independently (spec 2.3, 2.5):

1. A_old = sum of the even OCSes' old matrices;
2. C_h = A + A^T by SIMD, rewiring-aware against A_old (ITV-MDMCF; row/column sums only
   capped at K/2, which is all Theorem 4.1 needs) or oblivious (ITV-MCF, balanced sums);
3. A over the K/2 even OCSes by FindConnection (bisection min-cost flows against the old
   circuits), or by IMD when there is no old configuration to respect; MDMCF also runs
   the keep-and-insert assignment (heuristics.lumos_kempe, an addition) and keeps the
   one that rewires less, per group;
4. odd OCS 2m+1 = transpose of even OCS 2m (the mirror of Cross Wiring);
5. optionally (``refine``, an addition) pairwise re-optimization (heuristics.lumos_refine).

ITV-MDMCF and ITV-MCF are reconstructions: [001]'s MDMCF section is missing from the
paper (spec 7.5); see spec 2.5 for the decisions.
"""
from __future__ import annotations

import time

import numpy as np

from heuristics.lumos_decompose import (find_connection, int_decompose, sym_decompose,
                                        sym_decompose_flow, sym_decompose_rewiring)
from heuristics.lumos_kempe import kempe_connection
from heuristics.lumos_refine import pair_refine
from instances.lumos import Fabric, OcsConfig, ReconfigInstance, make_wiring, perm_from_matrix

SIMD = {"euler": sym_decompose, "flow": sym_decompose_flow}


def old_even(inst: ReconfigInstance, h: int) -> np.ndarray:
    """(K/2, P, P) old 0/1 matrices of the even OCSes 2m of group h (Cross Wiring)."""
    P, K = inst.fabric.pods, inst.fabric.k_spine
    out = np.zeros((K // 2, P, P), dtype=np.int64)
    for m in range(K // 2):
        row = inst.old.perm[h, 2 * m]
        on = row >= 0
        out[m, np.flatnonzero(on), row[on]] = 1
    return out


def split_group(C_h: np.ndarray, K: int, old: np.ndarray | None = None, aware: bool = True,
                simd: str = "euler", refine: bool = False, deadline: float | None = None
                ) -> list[np.ndarray]:
    """The K/2 directed partial permutations A^(m) for the even OCSes of one group."""
    if old is None or not old.any():
        return int_decompose(SIMD[simd](C_h), K // 2)
    # MDMCF: relaxed SIMD (row/col sums <= K/2, what Theorem 4.1 needs) against the old A
    A = sym_decompose_rewiring(C_h, old.sum(axis=0), K // 2) if aware else SIMD[simd](C_h)
    parts = find_connection(A, old)
    if aware:                           # MDMCF: the cheaper of bisection and keep-and-insert
        alt = kempe_connection(A, old)
        if _rewiring(alt, old) < _rewiring(parts, old):
            parts = alt
    return pair_refine(parts, old, deadline=deadline) if refine else parts


def _rewiring(parts, old) -> int:
    return int(sum(np.abs(X - U).sum() for X, U in zip(parts, old)))


def itv_configure(inst: ReconfigInstance, aware: bool = True, simd: str = "euler",
                  refine: bool = False, time_budget: float | None = None) -> OcsConfig:
    """ITV-MDMCF (``aware=True``) or ITV-MCF (``aware=False``) for a Cross-wired instance;
    ``refine`` adds the pairwise local search of heuristics.lumos_refine (within
    ``time_budget`` seconds overall, the groups sharing it)."""
    if inst.wiring != "cross":
        raise ValueError(f"ITV methods need cross wiring, the instance has {inst.wiring}")
    fab = inst.fabric
    cfg = OcsConfig.empty(fab, inst.wire)
    t0 = time.perf_counter()
    for h in range(fab.H):
        deadline = None if time_budget is None else t0 + time_budget * (h + 1) / fab.H
        parts = split_group(inst.C[h], fab.k_spine, old_even(inst, h), aware, simd, refine, deadline)
        for m, X in enumerate(parts):
            cfg.perm[h, 2 * m] = perm_from_matrix(X)
            cfg.perm[h, 2 * m + 1] = perm_from_matrix(X.T)
    return cfg


def cross_realize(fabric: Fabric, C: np.ndarray) -> OcsConfig:
    """Theorem 4.1's constructive proof: SIMD (Euler) then IMD into K/2 parts, mirrored."""
    inst = ReconfigInstance(fabric, C, "cross")
    return itv_configure(inst, aware=False)


def dual_realize(fabric: Fabric, C: np.ndarray) -> OcsConfig:
    """Dual-link wiring (spec 1.3 W3): OCS m realizes A^(m) and its mirror internally:
    in-port (i, slot 0) -> out-port (j, slot 1) and (j, slot 1) -> (i, slot 0)."""
    w = make_wiring(fabric, "dual")
    cfg = OcsConfig.empty(fabric, w)
    for h in range(fabric.H):
        for m, X in enumerate(int_decompose(sym_decompose(C[h]), fabric.k_spine // 2)):
            i, j = np.nonzero(X)
            cfg.perm[h, m, 2 * i] = 2 * j + 1
            cfg.perm[h, m, 2 * j + 1] = 2 * i
    return cfg
