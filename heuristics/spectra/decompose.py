"""Spectra step 1: Decompose D into exactly k = degree(D) weighted permutations.

Liang et al. 2026, Section III-A, Alg. 1 (Decompose) and Alg. 2 (Refine: greedy in
``heuristics.spectra.refine``, or the LP of Eq. 5). Each round
solves a max-weight matching that covers every maximum-degree line of the uncovered
support S_rem (MWM-Node-Coverage) with one Jonker-Volgenant assignment
(``scipy.optimize.linear_sum_assignment``, +inf cost on forbidden cells, spec 2.2.1),
so the degree of S_rem drops by exactly one per round (Koenig). Complexity: k rounds of
O(n^3).

``matching`` picks how each round's assignment is solved; all give max-weight
MWM-Node-Coverage matchings of the same weight every round and differ only where several
tie: "warm" (default) is "jit" from ``JIT_MIN_N`` lines on and "scipy" below; "jit" runs
the rounds compiled (``heuristics.spectra.jit``: numba, Jonker-Volgenant with carried
duals; 3-4x faster than "scipy" on MoE n = 100, but a process pays about 0.3-0.5 s to load
it, 6-10 s the first time it compiles); "scipy" the rounds of ``heuristics.spectra.warm``
(scipy's solver on an incrementally updated cost matrix with carried reduced duals);
"cold" rebuilds every round's cost matrix and solves it from scratch
(``mwm_node_coverage``, the reference).

Decisions where the paper is silent (spec section 6): ``edge_mode="supp"`` lets
non-critical lines use any entry with residual demand; alpha_i is the minimum over the
real (positive-residual) edges; permutations are partial (idle inputs are -1).
"""
from __future__ import annotations

import numpy as np
from heuristics.lsap import linear_sum_assignment

from heuristics.spectra.refine import Decomposition, _eps, refine_greedy
from heuristics.spectra.warm import warm_rounds
from instances.spectra.instance import support

MATCHINGS = ("warm", "jit", "scipy", "cold")
JIT_MIN_N = 32      # "warm" runs the compiled rounds from this many lines on


def degree(D: np.ndarray) -> int:
    """Maximum number of nonzeros (the support of instances.spectra.instance) in any row or column."""
    S = support(D)
    if not S.any():
        return 0
    return int(max(S.sum(axis=1).max(), S.sum(axis=0).max()))


def mwm_node_coverage(D_rem: np.ndarray, S_rem: np.ndarray, eps: float,
                      edge_mode: str = "supp") -> np.ndarray:
    """Max-weight matching on D_rem covering every max-degree line of S_rem with S_rem edges.

    Returns a partial permutation (length-n int array, -1 = idle) holding only real edges.
    """
    n = D_rem.shape[0]
    rdeg, cdeg = S_rem.sum(axis=1), S_rem.sum(axis=0)
    top = max(rdeg.max(), cdeg.max())
    crit_r, crit_c = rdeg == top, cdeg == top
    allowed = S_rem | (D_rem > eps) if edge_mode == "supp" else S_rem.copy()
    forbid = (crit_r[:, None] | crit_c[None, :]) & ~S_rem
    # Rows/cols with no allowed edge may take any cell (a dummy, dropped below).
    W = np.where(allowed, D_rem, 0.0)
    # Critical lines must take a *covering* edge; among valid matchings maximize weight.
    # A bonus larger than all weights on S_rem edges of critical lines is not needed:
    # +inf on the forbidden cells makes the constraint exact (spec 2.2.1).
    cost = -W
    cost[forbid] = np.inf
    r, c = linear_sum_assignment(cost)
    perm = np.full(n, -1, dtype=np.int64)
    real = allowed[r, c]
    perm[r[real]] = c[real]
    col_hit = np.zeros(n, dtype=bool)
    col_hit[perm[perm >= 0]] = True
    if np.any(crit_r & (perm < 0)) or np.any(crit_c & ~col_hit):
        raise AssertionError("MWM-Node-Coverage left a critical line uncovered")
    return perm


def cold_rounds(D: np.ndarray, eps: float, edge_mode: str = "supp"
                ) -> tuple[list[np.ndarray], list[float]]:
    """Alg. 1 lines 2-10 with one fresh ``mwm_node_coverage`` per round: (perms, alphas)."""
    S_rem = D > eps
    D_rem = np.where(S_rem, D, 0.0)
    perms, alphas = [], []
    while S_rem.any():
        perm = mwm_node_coverage(D_rem, S_rem, eps, edge_mode)        # line 4
        rows = np.flatnonzero(perm >= 0)
        cols = perm[rows]
        pos = D_rem[rows, cols] > eps
        alpha = float(D_rem[rows, cols][pos].min()) if pos.any() else 0.0  # line 5
        vals = D_rem[rows, cols] - alpha                                  # line 8
        vals[vals < eps] = 0.0        # clamp round-off (spec 2.2.3); only these cells changed
        D_rem[rows, cols] = vals
        S_rem[rows, cols] = False                                         # line 9
        perms.append(perm)
        alphas.append(alpha)
    return perms, alphas


def decompose(D: np.ndarray, edge_mode: str = "supp", refine: str = "greedy",
              backend: str = "auto", matching: str = "warm",
              deadline: float | None = None) -> Decomposition:
    """Alg. 1: exactly degree(D) permutations covering D, then Refine (Alg. 2 or LP Eq. 5).

    ``matching``: "warm" ("jit" from ``JIT_MIN_N`` lines on, else "scipy"), "jit"
    (``jit.jit_rounds``), "scipy" (``warm.warm_rounds``) or "cold" (one
    fresh assignment per round, ``mwm_node_coverage``). ``deadline`` (a user's time limit,
    as a ``time.perf_counter()`` time): the compiled rounds raise TimeoutError after it
    (the others run in Python, where the run's watchdog stops them).
    """
    if edge_mode not in ("supp", "srem"):
        raise ValueError(f"edge_mode must be 'supp' or 'srem', got {edge_mode!r}")
    if matching not in MATCHINGS:
        raise ValueError(f"matching must be one of {', '.join(MATCHINGS)}, got {matching!r}")
    D = np.asarray(D, dtype=float)
    eps = _eps(D)
    if matching == "warm":
        matching = "jit" if D.shape[0] >= JIT_MIN_N else "scipy"
    if matching == "jit":
        from heuristics.spectra.jit import jit_rounds      # numba: loaded on first use

        perms, alphas = jit_rounds(D, eps, edge_mode, deadline)
    elif matching == "scipy":
        perms, alphas = warm_rounds(D, eps, edge_mode)
    else:
        perms, alphas = cold_rounds(D, eps, edge_mode)
    dec = Decomposition(perms, np.array(alphas))
    if refine == "greedy":
        dec.alphas = refine_greedy(D, dec)
    elif refine == "lp":
        dec.alphas = refine_lp(D, dec, backend=backend)
    elif refine != "none":
        raise ValueError(f"refine must be 'greedy', 'lp' or 'none', got {refine!r}")
    return dec


def refine_lp(D: np.ndarray, dec: Decomposition, backend: str = "auto") -> np.ndarray:
    """Eq. 5: min sum alpha s.t. sum alpha_i P_i >= D, alpha >= 0 (models.spectra.milp)."""
    from models.backend import solve
    from models.spectra.milp import build_refine_lp, extract_refine_lp

    model, handles = build_refine_lp(D, dec.perms)
    res = solve(model, backend=backend)
    if res.status != "optimal":
        raise RuntimeError(f"Refine LP: {res.status} {res.message}")
    return extract_refine_lp(handles, res)
