"""The paper's "Baseline": a LESS-style split of D into s sub-matrices, one per OCS.

Liang et al. 2026, Section V: LESS (Liu, Xu, Singh, UCC 2019) splits D into s
sub-workloads D_1..D_s, one per switch, to "maximize the sparsity ... by minimizing the
sum of nonzero elements across D_1, ..., D_s" with "a balancing criterion"; the paper then
schedules each D_h on its own switch with Spectra's Decompose. There is no LPT and no
Equalize: L_h = |P_h| delta + sum alpha_h, makespan = max_h L_h.

LESS's exact split procedure is not given in the paper (spec 2.6.3). **[OURS]** default:
the greedy "sparsity + balance" split below; ``models.spectra.split`` holds the exact MILP
for LESS's stated objective. Both are independent of delta: cache per (D, s).
"""
from __future__ import annotations

import numpy as np

from heuristics.spectra.decompose import Decomposition, decompose
from instances.spectra.instance import SpectraInstance, SpectraSchedule, effective, max_line_sum

BALANCE_TOL = 1e-12     # relative slack on the per-line cap T


def line_cap(D: np.ndarray, s: int) -> float:
    """T = rho / s: the perfect-balance cap on every line of every sub-matrix."""
    return max_line_sum(D) / s


def greedy_split(D: np.ndarray, s: int) -> np.ndarray:
    """Spec 2.6.3 [OURS] greedy split; returns parts of shape (s, n, n), sum_h parts = D.

    Nonzeros in non-increasing D_ij order (stable, row-major). An entry goes whole to the
    switch h where it fits under T = rho/s with the smallest resulting line load
    max(R[h,i], C[h,j]) + v, then the fewest nonzeros on its row/column, then the lowest h.
    If it fits nowhere it is water-filled over the switches with room, in decreasing
    room order, and any remainder goes to the least-loaded switch: an entry is split
    (one extra nonzero per piece) only when forced. O(nnz(D) * s).
    """
    D = effective(D)
    n = D.shape[0]
    parts = np.zeros((s, n, n))
    T = line_cap(D, s)
    cap = T * (1 + BALANCE_TOL)
    rows, cols = np.nonzero(D)
    vals = D[rows, cols]
    order = np.argsort(-vals, kind="stable")
    R = [[0.0] * n for _ in range(s)]      # line loads and nonzero counts, per switch
    C = [[0.0] * n for _ in range(s)]
    RN = [[0] * n for _ in range(s)]
    CN = [[0] * n for _ in range(s)]
    hs = range(s)

    def give(h, i, j, piece):
        parts[h, i, j] += piece
        R[h][i] += piece
        C[h][j] += piece
        RN[h][i] += 1
        CN[h][j] += 1

    for e in order:
        i, j, v = int(rows[e]), int(cols[e]), float(vals[e])
        load = [max(R[h][i], C[h][j]) for h in hs]
        fits = [(load[h] + v, max(RN[h][i], CN[h][j]), h) for h in hs if load[h] + v <= cap]
        if fits:
            give(min(fits)[2], i, j, v)
            continue
        left = v
        for h in sorted(hs, key=lambda h: (-(T - load[h]), h)):    # water-fill by room
            room = T - load[h]
            if room <= 0 or left <= 0:
                break
            piece = min(room, left)
            give(h, i, j, piece)
            left -= piece
        if left > BALANCE_TOL * v:
            h = min(hs, key=lambda h: (max(R[h][i], C[h][j]), h))
            give(h, i, j, left)
    return parts


def decompose_parts(parts: np.ndarray, edge_mode: str = "supp",
                    refine: str = "greedy") -> list[Decomposition]:
    """Spectra's Decompose (Alg. 1 + Refine) on every sub-matrix; delta-independent."""
    return [decompose(P, edge_mode=edge_mode, refine=refine) for P in parts]


def baseline_schedule(decs: list[Decomposition]) -> SpectraSchedule:
    """Sub-matrix h's permutations all run on switch h (no LPT, no Equalize)."""
    return SpectraSchedule([[(p.copy(), float(a)) for p, a in zip(d.perms, d.alphas)]
                            for d in decs])


def baseline(inst: SpectraInstance, parts: np.ndarray | None = None, edge_mode: str = "supp",
             refine: str = "greedy") -> SpectraSchedule:
    """Baseline (Section V): split D (greedy unless ``parts`` is given), Decompose each part
    and run it on its own switch."""
    if parts is None:
        parts = greedy_split(inst.demand, inst.switches)
    return baseline_schedule(decompose_parts(parts, edge_mode, refine))


def split_nnz(parts: np.ndarray) -> int:
    """LESS's objective: the total number of nonzeros across D_1..D_s."""
    return int(sum(int((P > 0).sum()) for P in parts))
