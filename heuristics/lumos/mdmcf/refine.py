"""Pairwise re-optimization of a Cross-Wiring group (an addition to MDMCF, not in the papers).

FindConnection's bisection costs at merged levels only approximate the rewiring of the
final OCSes, and the SIMD orientation is chosen before the OCS assignment. This local
search takes two even OCSes a, b of one group, joins the links they carry (with their
mirrors: an undirected multigraph G of degree <= 4), and re-solves that two-OCS problem:
rewiring-aware SIMD of G against u_a + u_b with row/column sums <= 2, then the exact
two-way FindConnection split (at |S| = 2 the bisection cost is the true rewiring). A
move is kept only if it lowers the rewiring of a and b, so the result is never worse.
Only the connected components of G that touch a changed Pod are re-solved, so a pass
costs little when few circuits change. Polynomial: one min-cost flow pair per move.
"""
from __future__ import annotations

import time

import numpy as np

from heuristics.lumos.mdmcf.decompose import find_connection, sym_decompose_rewiring


def _cost(X: np.ndarray, U: np.ndarray) -> int:
    return int(np.abs(X - U).sum())


def _dirty(Xa, Ua) -> np.ndarray:
    d = Xa != Ua
    return d.any(axis=0) | d.any(axis=1)


def _joined(adj: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The nodes of the components of the undirected graph ``adj`` (symmetric, boolean)
    that hold a ``start`` node (a mask): breadth first, one numpy step per level (where
    scipy's connected components cost an import of scipy.sparse, issue 29 item 3)."""
    seen, frontier = start.copy(), start
    while frontier.any():
        frontier = adj[frontier].any(axis=0) & ~seen
        seen |= frontier
    return seen


def refine_pair(Xa, Xb, Ua, Ub) -> tuple[np.ndarray, np.ndarray, int]:
    """Re-solve OCSes a, b on the components of their joint link graph that touch a
    changed Pod; returns the (possibly) improved pair and the rewiring saved."""
    dirty = _dirty(Xa, Ua) | _dirty(Xb, Ub)
    if not dirty.any():
        return Xa, Xb, 0
    G = Xa + Xa.T + Xb + Xb.T
    S = np.flatnonzero(_joined(G > 0, dirty))
    ix = np.ix_(S, S)
    ua, ub = Ua[ix], Ub[ix]
    A = sym_decompose_rewiring(G[ix], ua + ub, 2)
    na, nb = find_connection(A, np.stack([ua, ub]))
    gain = _cost(Xa[ix], ua) + _cost(Xb[ix], ub) - _cost(na, ua) - _cost(nb, ub)
    if gain <= 0:
        return Xa, Xb, 0
    Xa, Xb = Xa.copy(), Xb.copy()
    Xa[ix], Xb[ix] = na, nb
    return Xa, Xb, gain


def pair_refine(parts: list[np.ndarray], old: np.ndarray, rounds: int = 3,
                deadline: float | None = None) -> list[np.ndarray]:
    """Improve the even-OCS matrices ``parts`` of one group against their ``old`` matrices
    by pairwise moves until a round finds nothing (or ``rounds``/``deadline`` ends it)."""
    X = [np.asarray(p, dtype=np.int64) for p in parts]
    M = len(X)
    for _ in range(rounds):
        gained = 0
        for a in range(M):
            if np.array_equal(X[a], old[a]):
                continue
            for b in range(M):
                if b == a:
                    continue
                if deadline is not None and time.perf_counter() > deadline:
                    return X
                X[a], X[b], g = refine_pair(X[a], X[b], old[a], old[b])
                gained += g
        if not gained:
            break
    return X
