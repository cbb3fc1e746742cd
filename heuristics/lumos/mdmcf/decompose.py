"""Matrix decompositions behind Cross Wiring, as Euler orientations and min-cost flows.

* SIMD, Symmetric Integer Matrix Decomposition ([001] Thm 3.1, [002] Thm 2.1; spec 2.1):
  C = A + A^T with every row and column sum of A within [floor(d/2), ceil(d/2)].
  ``sym_decompose`` (Euler orientation, O(n^2 + E)), ``sym_decompose_flow`` (the paper's
  MCF, "DecomOPT"), ``sym_decompose_rewiring`` (the rewiring-aware variant, spec 2.1(d)).
* IMD, Integer Matrix Decomposition (Zhao et al. 2019; [001] Thm 3.2; spec 2.2): M = sum of
  H parts, each entry, row and column sum within floor/ceil of its share 1/H.
  ``int_decompose`` (sequential peeling, one circulation per part).
* FindConnection (spec 2.5, the tech report's Algorithm 1): split a directed target A over
  a set of OCSes by bisection, each split a min-cost flow against the old circuits.

All functions take and return integer numpy matrices.
"""
from __future__ import annotations

import numpy as np

from heuristics.lumos.mdmcf.mcf import l1_two_sided_steps, min_cost_flow, unit_arcs

BIG = 1 << 40


def _check_sym(C: np.ndarray) -> np.ndarray:
    C = np.asarray(C, dtype=np.int64)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or np.any(C != C.T) or np.any(C < 0):
        raise ValueError("SIMD needs a square, symmetric, non-negative integer matrix")
    if np.any(np.diag(C) % 2):
        raise ValueError("SIMD needs an even diagonal (A_ii + A_ii = C_ii)")
    return C


def half_bounds(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = np.asarray(d, dtype=np.int64)
    return d // 2, (d + 1) // 2


def sym_bounds_hold(C: np.ndarray, A: np.ndarray) -> bool:
    """C = A + A^T, A >= 0, and the row/column sums of Theorem 3.1."""
    C, A = np.asarray(C), np.asarray(A)
    lo, hi = half_bounds(C.sum(axis=1))
    return bool(np.array_equal(A + A.T, C) and np.all(A >= 0)
                and np.all((A.sum(1) >= lo) & (A.sum(1) <= hi))
                and np.all((A.sum(0) >= lo) & (A.sum(0) <= hi)))


# ----------------------------------------------------------------------------------------
# SIMD
# ----------------------------------------------------------------------------------------
def sym_decompose(C, groups=None) -> np.ndarray:
    """SIMD by Euler orientation (spec 2.1(a)), O(n^2 + E).

    A = floor(C/2); the odd entries form a simple graph G; odd-degree vertices are joined
    to a dummy vertex, every component then has an Euler circuit (Hierholzer), and each
    real edge is oriented the way the circuit walks it. In/out degrees then differ by at
    most the one dummy edge per vertex, so row and column sums of A are floor or ceil
    of d_i/2.

    ``groups`` (a group label per vertex, e.g. the Pod of each leaf) also balances every
    group: odd-degree vertices of one group are first paired by virtual edges (never
    oriented into A; they cancel inside the group), and only the last odd vertex of a
    group goes to the dummy. Then the group's row and column sums of A also differ by
    at most 1 (needed for eq. (12) of the logical topology, spec 2.7).
    """
    C = _check_sym(C)
    n = len(C)
    A = C // 2
    iu, ju = np.nonzero(np.triu(C % 2, 1))
    if len(iu) == 0:
        return A
    deg = np.bincount(np.concatenate([iu, ju]), minlength=n)
    odd = np.flatnonzero(deg % 2)
    pu, pv = np.zeros(0, np.int64), np.zeros(0, np.int64)
    if groups is not None:
        g = np.asarray(groups)[odd]
        order = np.argsort(g, kind="stable")
        odd, g = odd[order], g[order]
        rank = np.arange(len(odd)) - np.searchsorted(g, g, side="left")
        same_next = np.r_[g[1:] == g[:-1], False]
        first = np.flatnonzero((rank % 2 == 0) & same_next)
        pu, pv = odd[first], odd[first + 1]
        paired = np.zeros(len(odd), bool)
        paired[first] = paired[first + 1] = True
        odd = odd[~paired]
    eu = np.concatenate([iu, pu, odd]).tolist()
    ev = np.concatenate([ju, pv, np.full(len(odd), n)]).tolist()
    m_real = len(iu)
    adj: list[list[int]] = [[] for _ in range(n + 1)]
    for e, (u, v) in enumerate(zip(eu, ev)):
        adj[u].append(e)
        adj[v].append(e)
    used = [False] * len(eu)
    ptr = [0] * (n + 1)
    for start in range(n + 1):
        stack = [start]
        while stack:
            v = stack[-1]
            a = adj[v]
            while ptr[v] < len(a) and used[a[ptr[v]]]:
                ptr[v] += 1
            if ptr[v] == len(a):
                stack.pop()
                continue
            e = a[ptr[v]]
            used[e] = True
            w = ev[e] if eu[e] == v else eu[e]
            if e < m_real:                      # orient the real edge v -> w
                A[v, w] += 1
            stack.append(w)
    return A


def _pairs(C: np.ndarray):
    i, j = np.nonzero(np.triu(C, 1))
    return i, j, C[i, j]


def _simd_network(C: np.ndarray, steps_fn, cap: int | None = None, groups=None):
    """Flow network of spec 2.1: supply C_ij at pair {i<j}; pair -> row i carries A_ij
    (unit arcs, costs from ``steps_fn``), pair -> row j carries A_ji; row i -> sink within
    [floor(d_i/2), ceil(d_i/2)] (off-diagonal degree; the diagonal is split evenly), or with
    ``cap`` within [d_i - cap, cap] (row and column sums of A both <= cap). With ``groups``
    rows drain through one node per group, whose sum stays within floor/ceil of half the
    group's degree (C/2 is still a fractional solution, so an integral one exists)."""
    n = len(C)
    pi, pj, c = _pairs(C)
    npairs = len(c)
    rows, sink = npairs, npairs + n
    idx, t = unit_arcs(c)
    cost = steps_fn(pi, pj, c, idx, t)
    d = C.sum(axis=1) - np.diag(C)
    if cap is None:
        lo, hi = half_bounds(d)
    else:
        half = np.diag(C) // 2
        if np.any(half > cap) or np.any(d > 2 * (cap - half)):
            raise ValueError(f"a row of C exceeds 2 * cap = {2 * cap}")
        lo, hi = np.maximum(0, d - (cap - half)), np.minimum(cap - half, d)
    tail = np.concatenate([idx, np.arange(npairs), rows + np.arange(n)])
    head = np.concatenate([rows + pi[idx], rows + pj, np.full(n, sink)])
    lo_a = np.concatenate([np.zeros(len(idx) + npairs, np.int64), lo])
    hi_a = np.concatenate([np.ones(len(idx), np.int64), c, hi])
    n_nodes = npairs + n + 1
    if groups is not None:
        g = np.unique(np.asarray(groups), return_inverse=True)[1]
        G = int(g.max()) + 1
        head[len(idx) + npairs:] = n_nodes + g            # row i -> its group node
        glo, ghi = half_bounds(np.bincount(g, weights=d, minlength=G).astype(np.int64))
        tail = np.concatenate([tail, n_nodes + np.arange(G)])
        head = np.concatenate([head, np.full(G, sink)])
        lo_a, hi_a = np.concatenate([lo_a, glo]), np.concatenate([hi_a, ghi])
        n_nodes += G
    cost_a = np.concatenate([cost, np.zeros(len(tail) - len(cost), np.int64)])
    supply = np.zeros(n_nodes, dtype=np.int64)
    supply[:npairs] = c
    supply[sink] = -c.sum()
    f = min_cost_flow(n_nodes, tail, head, lo_a, hi_a, cost_a, supply)
    a = np.bincount(idx, weights=f[:len(idx)], minlength=npairs).astype(np.int64)
    A = np.diag(np.diag(C) // 2).astype(np.int64)
    A[pi, pj] = a
    A[pj, pi] = c - a
    return A


def sym_decompose_flow(C, groups=None) -> np.ndarray:
    """SIMD as the paper's min-cost flow "DecomOPT(C, A)" ([001] eqs. 8-10, Fig. 14;
    spec 2.1(c)), a feasibility flow (zero costs); ``groups`` as in :func:`sym_decompose`."""
    C = _check_sym(C)
    return _simd_network(C, lambda pi, pj, c, idx, t: np.zeros(len(idx), np.int64),
                         groups=groups)


def sym_decompose_rewiring(C, A_old, cap: int | None = None) -> np.ndarray:
    """Rewiring-aware SIMD (spec 2.1(d)): among all A with C = A + A^T and the row/column
    sums of Theorem 3.1, one that minimizes sum_{i != j} |A_ij - A_old_ij|, by min-cost flow
    with the convex L1 cost of each pair split as unit arcs (slopes -2, 0, +2).

    With ``cap`` (MDMCF passes K_spine/2) the balanced sums are relaxed to what Cross
    Wiring needs, row and column sums <= cap (eqs. 13-14 of [001]'s proof): after a job
    departure the old orientation stays feasible, while the balanced bounds could force
    re-orienting untouched links. Still one min-cost flow, at least as good."""
    C = _check_sym(C)
    A_old = np.asarray(A_old, dtype=np.int64)

    def steps(pi, pj, c, idx, t):
        return l1_two_sided_steps(c[idx], t, A_old[pi, pj][idx], A_old[pj, pi][idx])
    return _simd_network(C, steps, cap)


# ----------------------------------------------------------------------------------------
# IMD
# ----------------------------------------------------------------------------------------
def int_bounds_hold(M: np.ndarray, parts: list[np.ndarray]) -> bool:
    """M = sum of parts and each entry/row/column sum within floor/ceil of 1/H of M's."""
    M = np.asarray(M)
    H = len(parts)
    if not np.array_equal(sum(parts), M):
        return False
    for X in parts:
        for a, b in ((X, M), (X.sum(0), M.sum(0)), (X.sum(1), M.sum(1))):
            if np.any(a < b // H) or np.any(a > -(-b // H)) or np.any(a < 0):
                return False
    return True


def _split_flow(A, lo_row, hi_row, lo_col, hi_col, ent_lo, ent_hi, step_cost=None,
                blocks=None):
    """Integer Y with ent_lo <= Y_ij <= ent_hi (on the support of A), row and column sums
    within bounds, minimizing sum f_ij(Y_ij) (``step_cost(idx, t)``: unit-arc increments
    above ent_lo). One circulation s -> rows -> cols -> t -> s; with ``blocks`` =
    (group of each row/column, lo/hi of group row sums, lo/hi of group column sums)
    s -> row groups -> rows and cols -> column groups -> t."""
    I, J = A.shape
    ai, aj = np.nonzero(A)
    elo, ehi = ent_lo[ai, aj], ent_hi[ai, aj]
    s, t_, r0, c0 = 0, 1, 2, 2 + I
    if blocks is not None:
        return _split_flow_blocks(A, ai, aj, elo, ehi, lo_row, hi_row, lo_col, hi_col, *blocks)
    if step_cost is None:
        et, eh = r0 + ai, c0 + aj
        e_lo, e_hi, e_cost = elo, ehi, np.zeros(len(ai), np.int64)
        nent = len(ai)
    else:
        idx, t = unit_arcs(ehi - elo)
        et, eh = np.concatenate([r0 + ai, r0 + ai[idx]]), np.concatenate([c0 + aj, c0 + aj[idx]])
        e_lo = np.concatenate([elo, np.zeros(len(idx), np.int64)])
        e_hi = np.concatenate([elo, np.ones(len(idx), np.int64)])
        e_cost = np.concatenate([np.zeros(len(ai), np.int64), step_cost(idx, t)])
        nent = len(ai) + len(idx)
    tail = np.concatenate([np.full(I, s), et, c0 + np.arange(J), [t_]])
    head = np.concatenate([r0 + np.arange(I), eh, np.full(J, t_), [s]])
    lo = np.concatenate([lo_row, e_lo, lo_col, [0]])
    hi = np.concatenate([hi_row, e_hi, hi_col, [BIG]])
    cost = np.concatenate([np.zeros(I, np.int64), e_cost, np.zeros(J + 1, np.int64)])
    f = min_cost_flow(2 + I + J, tail, head, lo, hi, cost)
    fe = f[I:I + nent]
    Y = np.zeros_like(A)
    if step_cost is None:
        Y[ai, aj] = fe
    else:
        np.add.at(Y, (ai, aj), fe[:len(ai)])
        np.add.at(Y, (ai[idx], aj[idx]), fe[len(ai):])
    return Y


def _split_flow_blocks(A, ai, aj, elo, ehi, lo_row, hi_row, lo_col, hi_col, g, lo_gr, hi_gr,
                       lo_gc, hi_gc):
    """Feasibility circulation s -> row group -> row -> col -> col group -> t -> s."""
    I, J = A.shape
    G = len(lo_gr)
    s, t_, gr0, r0, c0, gc0 = 0, 1, 2, 2 + G, 2 + G + I, 2 + G + I + J
    tail = np.concatenate([np.full(G, s), gr0 + g[:I], r0 + ai, c0 + np.arange(J),
                           gc0 + np.arange(G), [t_]])
    head = np.concatenate([gr0 + np.arange(G), r0 + np.arange(I), c0 + aj, gc0 + g[:J],
                           np.full(G, t_), [s]])
    lo = np.concatenate([lo_gr, lo_row, elo, lo_col, lo_gc, [0]])
    hi = np.concatenate([hi_gr, hi_row, ehi, hi_col, hi_gc, [BIG]])
    f = min_cost_flow(gc0 + G, tail, head, lo, hi, np.zeros(len(tail), np.int64))
    Y = np.zeros_like(A)
    Y[ai, aj] = f[G + I:G + I + len(ai)]
    return Y


def int_decompose(M, H: int, groups=None) -> list[np.ndarray]:
    """IMD by sequential peeling (spec 2.2): part t solves a circulation with every entry,
    row and column sum of the remainder within floor/ceil of 1/(H - t) of it. The nesting
    lemma keeps all parts within the original floor/ceil(M/H) bounds. H circulations.

    ``groups`` (a label per row = per column, e.g. the Pod of each leaf) adds the block
    sums: the row sum and the column sum of every group also stay within floor/ceil of
    1/H (a laminar family on each side of the bipartite flow, so M/H is still a
    fractional solution and the flow is integral: the [REPO] per-Pod block balancing)."""
    M = np.asarray(M, dtype=np.int64)
    if M.ndim != 2 or np.any(M < 0) or H < 1:
        raise ValueError("IMD needs a non-negative integer matrix and H >= 1")
    gr = None if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    parts, R = [], M.copy()
    for t in range(H):
        q = H - t
        if q == 1:
            parts.append(R.copy())
            break
        r, c = R.sum(1), R.sum(0)
        blocks = None
        if gr is not None:
            gr_sum = np.bincount(gr, weights=r, minlength=gr.max() + 1).astype(np.int64)
            gc_sum = np.bincount(gr, weights=c, minlength=gr.max() + 1).astype(np.int64)
            blocks = (gr, gr_sum // q, -(-gr_sum // q), gc_sum // q, -(-gc_sum // q))
        X = _split_flow(R, r // q, -(-r // q), c // q, -(-c // q), R // q, -(-R // q),
                        blocks=blocks)
        parts.append(X)
        R = R - X
    return parts


# ----------------------------------------------------------------------------------------
# FindConnection (bisection MCF)
# ----------------------------------------------------------------------------------------
def find_connection(A, old) -> list[np.ndarray]:
    """Split directed target A over the OCSes whose old 0/1 matrices are ``old`` (s, n, n)
    (spec 2.5, [REPO] tech report Algorithm 1 with general port bounds).

    Requires row and column sums of A <= s. Splits the OCS list into alternate positions
    S0 (even) and S1 (odd), merges each half's old circuits (U0, U1), and places y_ij of
    A_ij's circuits in S0 by a min-cost flow minimizing sum |y - U0| + |A - y - U1| with
    row/column sums of y within [max(0, r - |S1|), min(|S0|, r)]; recurses on both halves.
    Returns one partial-permutation matrix per OCS, in the order of ``old``. If A equals
    the sum of ``old``, the old matrices come back unchanged (zero rewiring).
    """
    A = np.asarray(A, dtype=np.int64)
    old = np.asarray(old, dtype=np.int64)
    s = len(old)
    if A.sum(0).max(initial=0) > s or A.sum(1).max(initial=0) > s:
        raise ValueError(f"FindConnection: a row/column sum of A exceeds the {s} OCSes")
    if s == 1:
        return [A]
    n0, n1 = (s + 1) // 2, s // 2
    U0, U1 = old[0::2].sum(0), old[1::2].sum(0)
    r, c = A.sum(1), A.sum(0)
    ai, aj = np.nonzero(A)
    av, u0, u1 = A[ai, aj], U0[ai, aj], U1[ai, aj]

    def steps(idx, t):
        return l1_two_sided_steps(av[idx], t, u0[idx], u1[idx])
    zero = np.zeros_like(A)
    Y = _split_flow(A, np.maximum(0, r - n1), np.minimum(n0, r), np.maximum(0, c - n1),
                    np.minimum(n0, c), zero, A, steps)
    left = find_connection(Y, old[0::2])
    right = find_connection(A - Y, old[1::2])
    out: list = [None] * s
    out[0::2], out[1::2] = left, right
    return out
