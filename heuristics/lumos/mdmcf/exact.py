"""LP-guided exact step of ITV-MDMCF for small groups (an addition, issue 17).

The model is [001] ILP (1)-(7) of one group in the reduced form of models.lumos.ilp
(spec 2.4: the L2 constraint (6) substituted, even OCSes only): y[o, m] = 1 when ordered
pair o = (i, j) with C_ij > 0 is a circuit i -> j in even OCS m (and j -> i in odd OCS m);

* eq. (1): sum_m y[(i, j), m] + y[(j, i), m] = C_ij for each pair i < j;
* eqs. (4), (5): at most one circuit out of (into) each Pod per even OCS;
* eq. (7): min sum_m |X_m - U_m| + |X_m^T - V_m| = sum coef * y + sum U + sum V.

Built straight from numpy arrays into highspy (a gurobipy model costs more to build than
these solves take), single-threaded:

1. the LP relaxation: ceil of its value is a lower bound on eq. (7); a start that meets
   it is optimal, and nothing more is done;
2. otherwise the ILP with y = 1 fixed where the LP has y = 1 on an old mirrored circuit
   (coef < 0: a circuit the LP keeps), from the start as MIP start, within ``max_nodes``
   branch-and-bound nodes and ``checks`` work units (below). Decision: the LP relaxation
   of this model is tight on the measured instances (often equal to the optimum;
   issue 17's quality set), so the circuits it keeps are kept; fixing every y the LP sets
   to 1 was faster but worse (1.06x vs 1.02x worst on that set), the unfixed ILP was exact
   but took up to 2 s per 16-Pod group. The result is proven optimal when it meets the LP bound;
3. optionally (``full``; MDMCF: groups of at most 12 Pods, where it took 20-80 ms), when
   step 2 did not meet the LP bound, the ILP without fixings from step 2's result, within
   the same node limit (the fixings cost 48 vs 44 circuits on one 8-Pod group).

:func:`lp_bound` is step 1's bound alone (the quality benchmark reports it per step).

Work limits, not time limits, so the result is the same on any machine and under any load
(HiGHS is deterministic with one thread): the LP stops after ``LP_ITERS`` simplex
iterations per binary (then there is no bound and the start is returned), and each MIP
after ``max_nodes`` nodes or ``checks`` work units, a unit being one of HiGHS's own MIP
checkpoints (its interrupt callback, called at fixed points of the single-threaded search:
separation rounds, heuristics, nodes), whichever comes first; the best solution found by
then is kept. [DECISION] (issue 28) a node limit alone did not bound the work: one 16-Pod
group took 3.7 s at the root node (cut separation and sub-MIP heuristics, 176 checkpoints)
where ITV-MCF takes 4 ms. ``LP_ITERS`` = 4 is 6-7x the iterations the LPs took on the
16-Pod groups of results/lumos/lumos_reconfig_quality.md. Not polynomial in the worst case
(simplex, bounded branch-and-bound); MDMCF runs it only on small groups
(heuristics.lumos.mdmcf.reconfig).
"""
from __future__ import annotations

import numpy as np


FIX_BELOW = 0.0             # fix LP ones with coef below this: the old mirrored circuits
LP_ITERS = 4                # the LP's simplex iteration limit per binary (module docstring)


def model_size(C: np.ndarray, M: int) -> int:
    """Binaries of the reduced model of one group: ordered pairs with C > 0 times M."""
    return int(np.count_nonzero(C)) * M


class Csr:
    """The row-wise (CSR) arrays of a 0/1 matrix given by the (row, column) pairs of its
    ones, each pair once, as ``scipy.sparse.csr_matrix`` holds them (rows in order, each
    row's columns sorted; HiGHS reads the model in this order): built with numpy, where
    scipy.sparse cost every ITV-MDMCF process its import (issue 29 item 3)."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]):
        self.shape, self.nnz = shape, len(rows)
        self.indices = cols[np.lexsort((cols, rows))]
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=shape[0]))])
        self.data = np.ones(self.nnz)


class _Reduced:
    """The reduced model of one group as arrays (module docstring): variable k is ordered
    pair ``o[k]`` = (``oi``, ``oj``)[o[k]] in even OCS ``m[k]``; ``A`` x in [rlo, rup] holds
    eq. (1) (its first rows) and eqs. (4)-(5); eq. (7) = ``const`` + ``cost`` x."""

    def __init__(self, C: np.ndarray, U: np.ndarray, V: np.ndarray):
        C = np.asarray(C, dtype=np.int64)
        self.M, self.P = M, P = U.shape[0], C.shape[0]
        self.oi, self.oj = oi, oj = np.nonzero(C)
        self.n = n = len(oi) * M
        self.o = o = np.repeat(np.arange(len(oi)), M)     # variable -> ordered pair
        self.m = m = np.tile(np.arange(M), len(oi))       # variable -> even OCS
        pair = np.minimum(oi, oj) * P + np.maximum(oi, oj)  # unordered pair of each o
        pid, e_of = np.unique(pair, return_inverse=True)
        rows = np.concatenate([e_of[o], len(pid) + oi[o] * M + m,
                               len(pid) + P * M + oj[o] * M + m])
        self.A = Csr(rows, np.tile(np.arange(n), 3), (len(pid) + 2 * P * M, n))
        dem = C[pid // P, pid % P].astype(float)
        self.rlo = np.concatenate([dem, np.full(2 * P * M, -np.inf)])
        self.rup = np.concatenate([dem, np.ones(2 * P * M)])
        coef = (1 - 2 * U[m, oi[o], oj[o]]) + (1 - 2 * V[m, oj[o], oi[o]])
        self.const, self.cost = float(U.sum() + V.sum()), coef.astype(float)

    def x_of(self, parts) -> np.ndarray:
        """The variables of a split (M directed 0/1 matrices)."""
        return np.asarray(parts)[self.m, self.oi[self.o], self.oj[self.o]].astype(float)

    def solve(self, lb: np.ndarray, integral: bool, max_nodes: int = 0, x0=None,
              checks: int | None = None, lp_iters: int | None = None):
        """(x, eq. (7)) of the LP relaxation (within ``lp_iters`` simplex iterations; None
        if it stops before the optimum) or the ILP (``integral``) with the lower bounds
        ``lb`` (1 = fixed), from ``x0``, within ``max_nodes`` nodes and ``checks`` HiGHS
        MIP checkpoints (None or 0: unlimited); (None, None) if HiGHS finds no solution.
        One thread, deterministic."""
        import highspy

        from models import interrupt
        from models.highs import _highs_thread_pool

        _highs_thread_pool(1)
        n, A = self.n, self.A
        h = highspy.Highs()
        for k, v in (("output_flag", False), ("threads", 1), ("mip_max_nodes", int(max_nodes)),
                     ("mip_rel_gap", 0.0), ("mip_abs_gap", 1 - 1e-6)):
            h.setOptionValue(k, v)
        if lp_iters and not integral:
            h.setOptionValue("simplex_iteration_limit", int(lp_iters))
        h.passModel(n, A.shape[0], A.nnz, 2, 1, self.const, self.cost, lb, np.ones(n),
                    self.rlo, self.rup, A.indptr.astype(np.int32), A.indices.astype(np.int32),
                    A.data, np.full(n, int(integral), dtype=np.int32))
        if x0 is not None:
            h.setSolution(n, np.arange(n, dtype=np.int32), x0)
        if integral and checks:
            seen = [0]

            def checkpoint(e):          # the work limit: HiGHS's own MIP checkpoints
                seen[0] += 1
                if seen[0] >= checks:
                    e.interrupt()
            h.cbMipInterrupt.subscribe(checkpoint)
        with interrupt.solver_running():    # a run's time-limit watchdog waits for it
            h.run()
        info = h.getInfo()
        if info.primal_solution_status != highspy.SolutionStatus.kSolutionStatusFeasible or \
                (not integral and h.getModelStatus() != highspy.HighsModelStatus.kOptimal):
            return None, None
        return np.array(h.getSolution().col_value), float(info.objective_function_value)


def lp_bound(C: np.ndarray, U: np.ndarray, V: np.ndarray) -> int:
    """A lower bound on eq. (7) of one group: the ceiling of the reduced model's LP
    relaxation (at least heuristics.lumos.mdmcf.group_split.group_bound, which relaxes eqs.
    (4)-(5)); inf if the LP is infeasible (C not realizable)."""
    red = _Reduced(C, U, V)
    if not red.n:                       # no unit to place: every old circuit goes
        return int(red.const)
    _, obj = red.solve(np.zeros(red.n), False)
    return np.inf if obj is None else int(np.ceil(obj - 1e-6))


def lp_guided(C: np.ndarray, U: np.ndarray, V: np.ndarray, start: list[np.ndarray],
              max_nodes: int, full: bool = False,
              checks: int | None = None) -> tuple[list[np.ndarray], bool]:
    """The LP-guided step (module docstring) for one group: C (P x P, symmetric), U / V
    the old even / odd OCS matrices (M, P, P), ``start`` a feasible split (M matrices).
    ``full``: step 3 too; ``checks``: each MIP's work limit (None or 0: nodes only).
    Returns (M directed partial permutations, proven optimal); the start itself when
    HiGHS finds nothing better."""
    red = _Reduced(C, U, V)
    n, cost, m, o, oi, oj = red.n, red.cost, red.m, red.o, red.oi, red.oj
    M, P = red.M, red.P
    start_x = red.x_of(start)
    start_cost = red.const + float(cost @ start_x)

    def solve(lb, integral, x0=None):
        return red.solve(lb, integral, max_nodes, x0, checks, max(1, round(LP_ITERS * n)))

    lp_x, lp_obj = solve(np.zeros(n), False)            # the LP relaxation: a lower bound
    if lp_x is None:
        return start, False
    floor = np.ceil(lp_obj - 1e-6)
    if start_cost <= floor:
        return start, True
    ones = (lp_x > 1 - 1e-6) & (cost < FIX_BELOW)       # fix what the LP already decides
    x, obj = solve(ones.astype(float), True, start_x if not (ones & (start_x < 0.5)).any()
                   else None)
    if x is None or obj >= start_cost:
        x, obj = start_x, start_cost
    if obj > floor and full:                            # 3. the ILP unfixed, from there
        x2, obj2 = solve(np.zeros(n), True, np.round(x))
        if x2 is not None and obj2 < obj:
            x, obj = x2, obj2
    if obj >= start_cost:
        return start, False
    optimal = obj <= floor
    x = np.round(x).astype(np.int64)
    X = np.zeros((M, P, P), dtype=np.int64)
    on = x > 0
    X[m[on], oi[o[on]], oj[o[on]]] = 1
    return list(X), optimal
