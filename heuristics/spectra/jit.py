"""Spectra Decompose rounds compiled with numba (``matching="jit"``; the default from n = 32).

Liang et al. 2026, Section III-A, Alg. 1; spec 2.2.1-2.2.3. The same rounds as
``heuristics.spectra.warm.warm_rounds`` (incremental cost matrix, carried duals: read its
docstring), with the loop and the assignment solver in one compiled function, so a round
costs no Python or numpy call overhead, and with a faster solver: Jonker and Volgenant's
(Computing 38, 1987): two passes of augmenting row reduction (each free row takes the
column of its smallest reduced cost, lowering that column's dual to its second smallest,
and displaces the owner), then one shortest augmenting path (Dijkstra on reduced costs)
per row still free. The column duals it returns (and the row duals they imply) are
carried to the next round in full, where the scipy rounds keep only a row update.

Why (issue 17): on MoE n = 100 (99 rounds, every line critical, so every round needs a
new perfect matching) the scipy rounds take about 29 ms: scipy's solver (Crouse's
shortest augmenting path, one Dijkstra per row from an empty matching) takes about 12.5 ms
even given optimal duals, and numpy and call overhead the rest. The same method compiled
took 26 ms (its searches are long on MoE's skewed weights); the row reduction assigns
most rows without a search, and the rounds take about 8 ms (results/spectra/spectra_runtime.md).

Exactness: every round is a max-weight MWM-Node-Coverage matching, like the scipy and
cold rounds; where several tie (integer MoE token counts), this solver may return another
one than scipy's (spec 6.5), so schedules may differ on ties, never in a round's weight
(tests/heuristics/spectra/test_jit.py replays every round against a fresh assignment).
The row reduction is capped at 4n row steps per round (float ties can make it cycle; a
count, not the clock); the rows left go to the augmenting paths, which always finish.

numba compiles on first use (about 6-18 s on 2 busy cores; ``make install`` does it) and
caches the machine code (toolkit.kernel_cache); a new process then imports numba and loads
the cache in about 0.3-0.5 s, which is why ``decompose`` uses scipy
below ``JIT_MIN_N`` lines and the CLI offers ``--option matching=scipy``. The methods that
run these rounds warm them (:func:`warm_up`, toolkit.kernels "spectra") before their clock
starts, so ``runtime_s`` holds neither. Complexity per round:
O(n^2) for the reductions, plus O(n^2) per augmenting path.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from toolkit.kernel_cache import njit

OK, INFEASIBLE, UNCOVERED, STOPPED = 0, 1, 2, 3


@njit
def assign(R, x, y, v, d, pred, cols):
    """Min-cost perfect assignment of the square R >= 0 (+inf = forbidden): x[i] = column.

    Jonker-Volgenant: two passes of augmenting row reduction, then one shortest
    augmenting path per row left free. On return v holds column duals with
    R_ij - v_j >= R_i,x[i] - v_x[i] (row minimum). False if no finite assignment."""
    n = R.shape[0]
    x[:] = -1
    y[:] = -1
    v[:] = 0.0
    free = np.arange(n)
    nfree = n
    budget = 4 * n                      # row reductions (a cap: float ties can cycle)
    for _ in range(2):                  # augmenting row reduction
        k, todo, nfree = 0, nfree, 0
        while k < todo:
            i = free[k]
            k += 1
            if budget == 0:             # the rest go to the augmenting paths
                free[nfree] = i
                nfree += 1
                continue
            budget -= 1
            m1, m2, j1, j2 = np.inf, np.inf, -1, -1
            for j in range(n):
                h = R[i, j] - v[j]
                if h < m2:
                    if h >= m1:
                        m2, j2 = h, j
                    else:
                        m2, j2, m1, j1 = m1, j1, h, j
            if j1 < 0:
                return False
            owner = y[j1]
            if m2 == np.inf and owner >= 0:     # one allowed column, taken: leave i
                free[nfree] = i                 # to its augmenting path
                nfree += 1
                continue
            if m1 < m2 < np.inf:
                v[j1] -= m2 - m1        # row i now takes j1 at its second minimum
            elif owner >= 0 and j2 >= 0:
                j1, owner = j2, y[j2]
            x[i] = j1
            y[j1] = i
            if owner >= 0:
                x[owner] = -1
                if m1 < m2:
                    k -= 1
                    free[k] = owner     # the displaced row goes next
                else:
                    free[nfree] = owner
                    nfree += 1
    for f in range(nfree):              # shortest augmenting paths (Dijkstra)
        start = free[f]
        for j in range(n):
            cols[j] = j
            d[j] = R[start, j] - v[j]
            pred[j] = start
        low, up, end, last = 0, 0, -1, 0
        best = 0.0
        while end < 0:
            if up == low:               # next band of columns at the minimum distance
                last = low - 1
                best = d[cols[up]]
                up += 1
                for k in range(up, n):
                    j = cols[k]
                    h = d[j]
                    if h <= best:
                        if h < best:
                            up = low
                            best = h
                        cols[k] = cols[up]
                        cols[up] = j
                        up += 1
                if best == np.inf:
                    return False
                for k in range(low, up):
                    if y[cols[k]] < 0:
                        end = cols[k]
                        break
                if end >= 0:
                    break
            j1 = cols[low]              # scan the owner of a column at the minimum
            low += 1
            i = y[j1]
            u1 = R[i, j1] - v[j1] - best
            for k in range(up, n):
                j = cols[k]
                h = R[i, j] - v[j] - u1
                if h < d[j]:
                    pred[j] = i
                    if h == best:
                        if y[j] < 0:
                            end = j
                            break
                        cols[k] = cols[up]
                        cols[up] = j
                        up += 1
                    d[j] = h
        for k in range(last + 1):       # the scanned columns' duals
            j = cols[k]
            v[j] += d[j] - best
        while True:                     # augment along the path
            i = pred[end]
            y[end] = i
            end, x[i] = x[i], end
            if i == start:
                break
    return True

@njit(nogil=True)
def rounds(D, eps, supp, stop):
    """Alg. 1 lines 2-10: (perms k x n with -1 = idle, alphas, status). The rounds stop
    (status STOPPED) once ``stop[0]`` is set (by a timer thread: the GIL is released)."""
    n = D.shape[0]
    S = D > eps
    D_rem = np.where(S, D, 0.0)
    rdeg = S.sum(axis=1)
    cdeg = S.sum(axis=0)
    top = 0
    for i in range(n):
        top = max(top, rdeg[i], cdeg[i])
    perms = np.full((top, n), -1, dtype=np.int64)
    alphas = np.zeros(top)
    crit_r = rdeg == top
    crit_c = cdeg == top
    R = -D_rem
    for i in range(n):
        for j in range(n):
            if (crit_r[i] or crit_c[j]) and not S[i, j]:
                R[i, j] = np.inf
    col4row = np.empty(n, dtype=np.int64)
    row4col = np.empty(n, dtype=np.int64)
    pred = np.empty(n, dtype=np.int64)
    cols = np.empty(n, dtype=np.int64)
    v, dist, colmin = np.empty(n), np.empty(n), np.empty(n)
    old = np.empty(n)
    vals = np.empty(n)
    real = np.empty(n, dtype=np.bool_)
    on_S = np.empty(n, dtype=np.bool_)
    t = 0
    while top > 0:
        if stop[0]:
            return perms[:t], alphas[:t], STOPPED
        colmin[:] = np.inf                      # v_j += column minimum (row-major)
        for i in range(n):
            for j in range(n):
                colmin[j] = min(colmin[j], R[i, j])
        for j in range(n):
            if colmin[j] == np.inf:
                return perms[:t], alphas[:t], INFEASIBLE
        for i in range(n):
            for j in range(n):
                R[i, j] -= colmin[j]
        if not assign(R, col4row, row4col, v, dist, pred, cols):
            return perms[:t], alphas[:t], INFEASIBLE
        for i in range(n):                      # R -= u + v: the optimal duals
            d = R[i, col4row[i]] - v[col4row[i]]
            for j in range(n):
                R[i, j] -= d + v[j]
        alpha = np.inf
        for i in range(n):
            c = col4row[i]
            on_S[i] = S[i, c]
            if (crit_r[i] or crit_c[c]) and not on_S[i]:
                return perms[:t], alphas[:t], UNCOVERED
            old[i] = D_rem[i, c]
            real[i] = on_S[i] or (supp and old[i] > eps)
            if real[i]:
                perms[t, i] = c
                if old[i] > eps:
                    alpha = min(alpha, old[i])
        if alpha == np.inf:
            alpha = 0.0
        for i in range(n):
            if real[i]:
                c = col4row[i]
                vals[i] = old[i] - alpha
                if vals[i] < eps:
                    vals[i] = 0.0
                D_rem[i, c] = vals[i]
                S[i, c] = False
                if on_S[i]:
                    rdeg[i] -= 1
                    cdeg[c] -= 1
        alphas[t] = alpha
        t += 1
        top -= 1                    # Koenig: every critical line lost one S_rem edge
        new_r = (rdeg == top) & ~crit_r
        new_c = (cdeg == top) & ~crit_c
        crit_r |= new_r
        crit_c |= new_c
        for i in range(n):          # the matched cells left S_rem
            if real[i]:
                c = col4row[i]
                if crit_r[i] or crit_c[c]:
                    R[i, c] += np.inf
                elif supp and vals[i] > eps:
                    R[i, c] += old[i] - vals[i]
                else:
                    R[i, c] += old[i]
        if top > 0:                 # new critical lines may only use S_rem cells
            for i in range(n):
                if new_r[i]:
                    for j in range(n):
                        if not S[i, j]:
                            R[i, j] = np.inf
            if new_c.any():
                for i in range(n):
                    for j in range(n):
                        if new_c[j] and not S[i, j]:
                            R[i, j] = np.inf
    return perms, alphas, OK


def jit_rounds(D: np.ndarray, eps: float, edge_mode: str = "supp",
               deadline: float | None = None) -> tuple[list[np.ndarray], list[float]]:
    """``warm_rounds`` compiled: the k = degree(D) partial permutations and their alpha_i.
    TimeoutError once ``time.perf_counter()`` passes ``deadline`` (a user's time limit;
    checked before each round)."""
    stop = np.zeros(1, dtype=np.int8)
    timer = None
    if deadline is not None:            # sets the stop flag at the deadline
        timer = threading.Timer(max(deadline - time.perf_counter(), 0.0), stop.fill, (1,))
        timer.daemon = True
        timer.start()
    try:
        perms, alphas, status = rounds(np.ascontiguousarray(D, dtype=np.float64), float(eps),
                                       edge_mode == "supp", stop)
    finally:
        if timer is not None:
            timer.cancel()
    if status == STOPPED:
        raise TimeoutError(f"Decompose stopped at the deadline after {len(alphas)} rounds")
    if status == INFEASIBLE:
        raise ValueError("cost matrix is infeasible")
    if status == UNCOVERED:
        raise AssertionError("MWM-Node-Coverage left a critical line uncovered")
    return list(perms), alphas.tolist()


def warm_up() -> None:
    """Compile or load :func:`rounds` (toolkit.kernels "spectra") with the argument types of
    :func:`jit_rounds` (float64 C-contiguous matrix, float, bool)."""
    jit_rounds(np.array([[1.0, 0.0], [0.0, 2.0]]), 1e-9)
