"""Keep-and-insert assignment of a directed target to OCSes (an addition to MDMCF).

FindConnection's bisection (spec 2.5) places a *new* circuit in a half of the OCSes by
its merged cost alone, where adding it costs the same in either half, so it may land
where no OCS has both ports free and force a cascade of moves further down. For small
changes (a job arriving or leaving) this is the common case. The alternative here
works on the OCSes themselves:

1. keep every old circuit that A still needs (up to A_ij copies of entry ij);
2. insert each remaining unit i -> j in an OCS where input i and output j are both free;
   when no such OCS exists, take colours alpha free at i and beta free at j and swap
   alpha/beta along the alternating path from j (the constructive step of Konig's
   edge-colouring theorem; the path never reaches i), choosing among all (alpha, beta)
   the swap that keeps the most old circuits, then the shortest.

Always succeeds when the row and column sums of A are <= the number of OCSes.
O(units * colours^2 * P) in the worst case; MDMCF keeps whichever of this and
FindConnection rewires less.
"""
from __future__ import annotations

import numpy as np


def kempe_connection(A, old) -> list[np.ndarray]:
    """Split A over the OCSes with old 0/1 matrices ``old`` (s, n, n); returns s matrices."""
    A = np.asarray(A, dtype=np.int64)
    old = np.asarray(old, dtype=np.int64)
    M, n = old.shape[0], old.shape[1]
    if A.sum(0).max(initial=0) > M or A.sum(1).max(initial=0) > M:
        raise ValueError(f"a row/column sum of A exceeds the {M} OCSes")
    prev = np.full((M, n), -1, dtype=np.int64)         # old output of input i in OCS m
    for m in range(M):
        r, c = np.nonzero(old[m])
        prev[m, r] = c
    out = np.full((M, n), -1, dtype=np.int64)          # current: out[m, i] = j
    inn = np.full((M, n), -1, dtype=np.int64)          # inn[m, j] = i
    R = A.copy()
    for m in range(M):                                 # 1. keep
        for i in np.flatnonzero(prev[m] >= 0):
            j = prev[m, i]
            if R[i, j] > 0:
                R[i, j] -= 1
                out[m, i], inn[m, j] = j, i
    prev_l = prev.tolist()
    out_l, inn_l = out.tolist(), inn.tolist()
    ri, rj = np.nonzero(R)
    for i, j in zip(ri.tolist(), rj.tolist()):         # 2. insert
        for _ in range(int(R[i, j])):
            _insert(i, j, M, out_l, inn_l, prev_l)
    X = np.zeros((M, n, n), dtype=np.int64)
    for m in range(M):
        for i, j in enumerate(out_l[m]):
            if j >= 0:
                X[m, i, j] = 1
    return list(X)


def _insert(i, j, M, out, inn, prev) -> None:
    free_i = [m for m in range(M) if out[m][i] < 0]
    free_j = [m for m in range(M) if inn[m][j] < 0]
    common = [m for m in free_i if inn[m][j] < 0]
    if common:
        m = next((m for m in common if prev[m][i] == j), common[0])
        out[m][i], inn[m][j] = j, i
        return
    best = None
    for al in free_i:
        for be in free_j:
            path, col = [], j                          # alternating alpha/beta path from column j
            while True:
                r = inn[al][col]
                if r < 0:
                    break
                path.append((r, col, al))
                c = out[be][r]
                if c < 0:
                    break
                path.append((r, c, be))
                col = c
            gain = (prev[al][i] == j) + sum((prev[be if c == al else al][r] == cc) - (prev[c][r] == cc)
                                            for r, cc, c in path)
            key = (gain, -len(path))
            if best is None or key > best[0]:
                best = (key, al, be, path)
    _, al, be, path = best
    for r, cc, c in path:
        out[c][r], inn[c][cc] = -1, -1
    for r, cc, c in path:
        c2 = be if c == al else al
        out[c2][r], inn[c2][cc] = cc, r
    out[al][i], inn[al][j] = j, i
