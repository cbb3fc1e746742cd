"""Exact Spectra makespan MILP over enumerated maximal matchings (not in the paper; issue 17).

Why this formulation (and not the slot MILP of spec 3.7, ``models.spectra.milp``):

* **No slot symmetry.** A configuration that serves only entries of supp(D) is a matching of
  the bipartite support graph, and may be extended to a *maximal* matching without changing
  its cost (the extra circuits only serve more). Two configurations with the same matching on
  one switch merge into one (one delta saved). So an optimal schedule is a *set* of maximal
  matchings per switch with durations: variables z_hm (matching m on switch h) and alpha_hm.
  The slot MILP instead chooses T anonymous slots, each with |E| circuit binaries, and every
  permutation of the slots is a different solution.
* **Exact without a slot count.** The slot MILP gives OPT_T, the optimum with T slots per
  switch; here a switch may use any number of configurations, so the optimum is the true OPT
  of Eqs. 1-4 (with supp(D) as in spec 2.2.3).
* **Small for small n.** The maximal matchings of a support graph number 5-14 at n = 4,
  89-342 at n = 6 and 150-2100 at n = 7 (density-0.6 random and m = n - 1 permutation
  supports); they are enumerated in milliseconds, and the method declines above
  ``max_matchings``. Column generation (branch-and-price, pricing = a max-weight matching
  with the duals) would scale further, but its branching must keep pricing an assignment
  problem and the LP bound alone is the weak one below; with every column present the
  MILP solver does the branching.
* **Line cuts close the gap.** With z, alpha, y only, the root bound is the Theorem 1-2
  bound and branching on z barely moves it: at n = 6, s = 2 HiGHS stopped after 60 s with
  the bound at LB and the incumbent at LB + delta/2 (the cost of splitting one entry over
  two switches). The binaries w_he (entry e is served on switch h) and, per line and switch,
  the Theorem 1 argument as a cut (``line_makespan``) let the solver branch on which switch
  serves which entry of a critical line; the instances of issue 17 then closed in 16-37 s.
  That is not the worst case: on the spectra-gap set (``python solve.py reproduce
  spectra-gap``: 160 instances of 4 generator families, n = 3-5, s = 2-4, HiGHS, 2 shared
  cores) 157 closed within 1200 s, the slowest in 611 s wall (median 24.8 s at n = 5), and
  3 at n = 5 stayed open at 1200 s; proofs at n = 6 take minutes (issue 28: up to 509 s).

Model (switch h in [s], maximal matching m in M, entry e in E = supp D, pair (m, e) with e in m,
line l = a row or column of D)::

    min C
    s.t. y_hme <= alpha_hm,  y_hme <= D_e z_hm                   (serve_le_duration/_on_circuit)
         sum_{h, m ni e} y_hme >= D_e                  for all e  (eq3_cover)
         alpha_hm <= A_m z_hm,  A_m = min(max_{e in m} D_e, UB - delta)   (duration_if_used)
         C >= sum_m (delta z_hm + alpha_hm)            for all h  (eq4_makespan)
         LB <= C <= UB                (Theorems 1-2 and the heuristic's makespan; cuts)
         z_hm <= sum_{m' <= m} z_{h-1, m'}             for h >= 2 (sym_switches)
       line cuts (w_he binary):
         sum_{m ni e} y_hme <= D_e w_he,  sum_h w_he >= 1          (serve_if_assigned, ...)
         C >= sum_{e in l} (delta w_he + sum_{m ni e} y_hme)   for all h, l  (line_makespan)
         sum_m z_hm >= sum_{e in l} w_he                       for all h, l  (line_configs)
         C >= sum_m delta z_hm + sum_{e in l, m ni e} y_hme   for all h, l  (switch_line)

The line cuts are valid because the configurations that serve the entries of one line on one
switch are distinct (a matching holds one entry per line): with w_he = [e served on h], each
costs its delta plus at least its service. ``sym_switches`` orders the identical switches by
the index of their first matching (ties allowed: two switches may share a matching, e.g. a
piece split by Equalize; empty switches last): every schedule has such a relabelling, so it
is valid. ``switch_line`` is implied by the LP (y <= alpha, one entry of l per matching) but
helped HiGHS: a perms n = 6, s = 2, delta = 0.02 instance closed in 40 s with it and was still
open (gap delta/2) after 120 s without; another closed in the same time either way. The
service variables y make the LP know that one configuration serves an entry
for at most D_e.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import gurobipy as gp
import numpy as np
import scipy.sparse as sp
from gurobipy import GRB

from instances.spectra.instance import SpectraInstance, SpectraSchedule, support
from models.backend import Result, new_model


def maximal_matchings(S: np.ndarray, cap: int | None = None,
                      check: Callable[[], None] | None = None) -> np.ndarray:
    """All maximal matchings of the bipartite graph with biadjacency S (n x n bool).

    Returns an (M, n) int array, row r = a matching as a partial permutation (-1 = idle
    input), in lexicographic order of the rows' choices. Breadth-first over the inputs,
    vectorized over the partial matchings; ``cap`` bounds the partial matchings kept (a
    ValueError before it would be passed, so memory stays O(cap n)). Maximality: no support
    entry (i, j) with input i idle and output j free. ``check`` (e.g. ``Budget.check``) is
    called after each vectorized step (one output of one input, one input of the
    maximality test: at K_8, 1.4 million partial matchings, about 0.1 s a step); it may raise
    to stop (the run's time limit).
    """
    check = check or (lambda: None)
    S = np.asarray(S, dtype=bool)
    n = S.shape[0]
    perms = np.full((1, n), -1, dtype=np.int64)
    used = np.zeros((1, n), dtype=bool)
    for i in range(n):
        grow = int((~used[:, S[i]]).sum())           # new partial matchings through input i
        if cap is not None and len(perms) + grow > cap:
            raise ValueError(f"more than {cap} partial matchings")
        parts_p, parts_u = [perms], [used]          # input i idle
        for j in np.flatnonzero(S[i]):
            ok = ~used[:, j]
            p, u = perms[ok].copy(), used[ok].copy()
            p[:, i], u[:, j] = j, True
            parts_p.append(p)
            parts_u.append(u)
            check()
        perms, used = np.concatenate(parts_p), np.concatenate(parts_u)
    # blocked[r] = some support entry (i, j) has input i idle and output j free in matching r
    blocked, free = np.zeros(len(perms), dtype=bool), ~used
    for i in range(n):
        blocked |= (perms[:, i] < 0) & free[:, S[i]].any(axis=1)
        check()
    keep = perms[~blocked]
    order = np.lexsort(keep.T[::-1])
    return keep[order]


def count_maximal_matchings(inst: SpectraInstance, cap: int = 200_000,
                            check: Callable[[], None] | None = None) -> int:
    """Number of maximal matchings of supp(D) (the model's columns); cap + 1 when the
    enumeration would hold more than ``cap`` partial matchings. ``check`` as in
    :func:`maximal_matchings`."""
    try:
        return len(maximal_matchings(support(inst.demand), cap=cap, check=check))
    except ValueError:
        return cap + 1


BLOCK = 20000       # (matching, entry) pairs per block of rows between two budget checks
# [DECISION] sym_switches has M (M + 1) / 2 nonzeros a switch: above this many (M > 4471,
# only with max_matchings raised; M = 40320 would need 13 GB) the optional cut is left out
SYM_NNZ_MAX = 10**7


@dataclass
class MatchingHandles:
    inst: SpectraInstance
    matchings: np.ndarray      # (M, n) partial permutations
    pair_m: np.ndarray         # (P,) matching of each (m, e) pair
    pair_e: np.ndarray         # (P,) entry of each pair, index into edges
    edges: np.ndarray          # (|E|, 2) rows/cols of supp(D)
    z: gp.MVar                 # (s, M) matching m on switch h
    alpha: gp.MVar             # (s, M) its duration
    y: gp.MVar                 # (s, P) service of the pair on switch h
    w: gp.MVar | None          # (s, |E|) entry e served on switch h (line cuts)
    C: gp.Var


def matching_pairs(matchings: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(matching, entry) index pairs with the entry in the matching."""
    hit = matchings[:, edges[:, 0]] == edges[None, :, 1]       # (M, |E|)
    return np.nonzero(hit)


def _service_vars(model: gp.Model, s: int, P: int, check: Callable[[], None]) -> gp.MVar:
    """y (s x P), BLOCK pairs at a time between checks (at K_8, P = 322560 pairs a switch
    take about 1 s to add), named y[h,p] as one (s, P) ``addMVar`` names them."""
    if P <= BLOCK:
        return model.addMVar((s, P), lb=0.0, name="y")
    rows = []
    for h in range(s):
        parts = []
        for a in range(0, P, BLOCK):
            b = min(a + BLOCK, P)
            parts.append(model.addMVar(b - a, lb=0.0, name=[f"y[{h},{p}]" for p in range(a, b)]))
            check()
        rows.append(gp.hstack(parts))
    return gp.vstack(rows)


def build_matching_milp(inst: SpectraInstance, lb: float | None = None,
                        ub: float | None = None, symmetry: bool = True, line_cuts: bool = True,
                        switch_line: bool = True, matchings: np.ndarray | None = None,
                        check: Callable[[], None] | None = None
                        ) -> tuple[gp.Model, MatchingHandles]:
    """The model in the module docstring; ``lb``/``ub`` are the optional cuts LB <= C <= UB,
    ``switch_line`` needs ``line_cuts``. ``check`` (e.g. ``Budget.check``) is called between
    constraint groups; it may raise to stop the build (the run's time limit).
    ``sym_switches`` is left out above SYM_NNZ_MAX nonzeros a switch."""
    check = check or (lambda: None)
    D, s, delta = inst.demand, inst.switches, inst.delay
    S = support(D)
    rows, cols = np.nonzero(S)
    edges = np.stack([rows, cols], axis=1)
    dem = D[rows, cols]
    mt = maximal_matchings(S, check=check) if matchings is None else matchings
    if len(rows) == 0:
        mt = mt[:0]
    check()
    M = len(mt)
    pm, pe = matching_pairs(mt, edges)
    P = len(pm)
    cap = np.zeros(M)
    np.maximum.at(cap, pm, dem[pe])                  # A_m = max entry the matching serves
    if ub is not None:
        cap = np.minimum(cap, max(ub - delta, 0.0))
    model = new_model("spectra_matching_milp")
    z = model.addMVar((s, M), vtype=GRB.BINARY, name="z")
    alpha = model.addMVar((s, M), lb=0.0, ub=np.tile(cap, (s, 1)), name="alpha")
    check()
    y = _service_vars(model, s, P, check)
    C = model.addVar(lb=0.0 if lb is None else lb, ub=GRB.INFINITY if ub is None else ub,
                     name="C")
    # Selection matrices: pair -> its matching (P x M), entry -> its pairs (|E| x P).
    Pm = sp.csr_matrix((np.ones(P), (np.arange(P), pm)), shape=(P, M))
    Ep = sp.csr_matrix((np.ones(P), (pe, np.arange(P))), shape=(len(rows), P))
    Dm = sp.diags(dem[pe]) @ Pm
    for h in range(s if M else 0):
        # Service of an entry within a configuration: at most its duration, and at most D_e
        # (only when the configuration is used); BLOCK pairs at a time between checks.
        for a in range(0, P, BLOCK):
            b = min(a + BLOCK, P)
            model.addConstr(y[h, a:b] <= Pm[a:b] @ alpha[h], name=f"serve_le_duration[{h},{a}]")
            model.addConstr(y[h, a:b] <= Dm[a:b] @ z[h], name=f"serve_on_circuit[{h},{a}]")
            check()
    # A duration only on a used configuration (A_m bounds any useful duration); a switch at a
    # time (one (s, M) product takes 10x as long, without a check).
    for h in range(s):
        model.addConstr(alpha[h] <= cap * z[h],
                        name=[f"duration_if_used[{h},{m}]" for m in range(M)])
        check()
    # Eq. 3 coverage: every entry served for D_e over all switches and configurations.
    if M:
        model.addConstr(sum(Ep @ y[h] for h in range(s)) >= dem, name="eq3_cover")
        check()
    # Eqs. 2/4 makespan: C >= sum_m (delta z_hm + alpha_hm) on every switch.
    model.addConstr(C >= delta * z.sum(axis=1) + alpha.sum(axis=1), name="eq4_makespan")
    w = None
    if line_cuts and M:
        # Line cuts: w_he = 1 when entry e is served on switch h. The configurations serving
        # the entries of one line on one switch are distinct (one entry per line in a
        # matching), so each served entry costs its own delta plus its service on that switch.
        w = model.addMVar((s, len(rows)), vtype=GRB.BINARY, name="w")
        E = len(rows)
        lines = {"r": sp.csr_matrix((np.ones(E), (rows, np.arange(E))), shape=(D.shape[0], E)),
                 "c": sp.csr_matrix((np.ones(E), (cols, np.arange(E))), shape=(D.shape[0], E))}
        lines = {k: Lm[np.flatnonzero(Lm.getnnz(axis=1))] for k, Lm in lines.items()}
        # a line's service on a switch as one sparse matrix on y (line -> its pairs), and
        # delta per configuration as one on z: products of a matrix and an MVar (an
        # expression's sum broadcast over the lines takes 5x as long)
        served = {k: (Lm @ Ep).tocsr() for k, Lm in lines.items()}
        per_config = {k: sp.csr_matrix(np.full((Lm.shape[0], M), delta)) for k, Lm in
                      lines.items()} if switch_line else {}
        check()
        for h in range(s):
            model.addConstr(Ep @ y[h] <= dem * w[h], name=f"serve_if_assigned[{h}]")
            check()
            for k, Lm in lines.items():
                model.addConstr(C >= delta * (Lm @ w[h]) + served[k] @ y[h],
                                name=f"line_makespan[{h},{k}]")
                model.addConstr(z[h].sum() >= Lm @ w[h], name=f"line_configs[{h},{k}]")
                if switch_line:
                    model.addConstr(C >= per_config[k] @ z[h] + served[k] @ y[h],
                                    name=f"switch_line[{h},{k}]")
                check()
        model.addConstr(w.sum(axis=0) >= 1, name="served_somewhere")
    # Identical switches: ordered by their first (lowest-index) matching, empty ones last.
    if symmetry and s > 1 and M and M * (M + 1) // 2 <= SYM_NNZ_MAX:
        r, c = np.tril_indices(M)
        L = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(M, M))     # sum over m' <= m
        for h in range(1, s):
            model.addConstr(z[h] <= L @ z[h - 1], name=f"sym_switches[{h}]")
    model.setObjective(C, GRB.MINIMIZE)
    check()
    model.update()
    return model, MatchingHandles(inst, mt, pm, pe, edges, z, alpha, y, w, C)


def schedule_to_matchings(h: MatchingHandles, sched: SpectraSchedule) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """A verified schedule as (z, alpha) over the model's matchings, switches ordered as the
    symmetry constraint wants. Each configuration is cut to supp(D), extended greedily to a
    maximal matching, and merged with a same-matching configuration on its switch (never a
    longer makespan)."""
    S = support(h.inst.demand)
    s, M = h.z.shape
    index = {m.tobytes(): k for k, m in enumerate(h.matchings)}
    z = np.zeros((s, M))
    al = np.zeros((s, M))
    for hh, sw in enumerate(sched.switches):
        for perm, a in sw:
            perm = np.asarray(perm, dtype=np.int64).copy()
            on = perm >= 0
            perm[on] = np.where(S[np.flatnonzero(on), perm[on]], perm[on], -1)
            used = np.zeros(len(perm), dtype=bool)
            used[perm[perm >= 0]] = True
            for i in np.flatnonzero(perm < 0):       # greedy extension to maximality
                free = np.flatnonzero(S[i] & ~used)
                if len(free):
                    perm[i] = free[0]
                    used[free[0]] = True
            k = index[perm.tobytes()]
            z[hh, k] = 1.0
            al[hh, k] += a
    first = [np.flatnonzero(z[hh])[0] if z[hh].any() else M for hh in range(s)]
    order = np.argsort(first, kind="stable")
    return z[order], al[order]


def matching_start(h: MatchingHandles, sched: SpectraSchedule) -> dict:
    """A complete MIP start from any verified schedule (durations capped at A_m, which
    loses no service since A_m is the largest entry a matching serves)."""
    z, al = schedule_to_matchings(h, sched)
    al = np.minimum(al, h.alpha.UB) if h.z.shape[1] else al
    dem = h.inst.demand[h.edges[:, 0], h.edges[:, 1]]
    y = np.minimum(al[:, h.pair_m], dem[h.pair_e][None, :] * z[:, h.pair_m])
    # Two configurations on one switch may both serve an entry: cap its service there at D_e.
    served = np.zeros((y.shape[0], len(dem)))
    for hh in range(y.shape[0]):
        np.add.at(served[hh], h.pair_e, y[hh])
    y *= np.minimum(1.0, dem[None, :] / np.maximum(served, 1e-300))[:, h.pair_e]
    start = {}
    pairs = [(h.z, z), (h.alpha, al), (h.y, y)]
    if h.w is not None:
        pairs.append((h.w, (served > 0).astype(float)))
    for var, val in pairs:
        start.update(zip(np.ravel(var.tolist()), np.ravel(val)))
    loads = h.inst.delay * z.sum(axis=1) + al.sum(axis=1)
    start[h.C] = float(loads.max(initial=0.0))
    return start


def extract_matching_milp(h: MatchingHandles, res: Result) -> SpectraSchedule:
    """The schedule in the solution. Durations are lifted by any coverage shortfall left
    within solver tolerances (on the longest configuration through the entry)."""
    z = res.value(h.z) > 0.5
    al = np.where(z, np.maximum(res.value(h.alpha), 0.0), 0.0)
    dem = h.inst.demand[h.edges[:, 0], h.edges[:, 1]]
    for e in range(len(dem)):
        mask = np.zeros_like(z)
        mask[:, h.pair_m[h.pair_e == e]] = True
        mask &= z
        gap = dem[e] - al[mask].sum()
        if gap > 0 and mask.any():
            hh, m = np.unravel_index(np.argmax(np.where(mask, al, -1.0)), al.shape)
            al[hh, m] += gap
    return SpectraSchedule([[(h.matchings[m].copy(), float(al[hh, m]))
                             for m in np.flatnonzero(z[hh])] for hh in range(z.shape[0])])
