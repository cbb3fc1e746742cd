"""a2a math programs for k = 1: G1 (optimal shift set) and G2 (exact global optimum).

The paper has **no** math program (spec 2.5); both models are the spec's 2.6 extensions.

* G1 (p-median): the regional optimum of the shifted-ring family for a given d.
* G2: the exact optimum over *all* sequences of d degree-1 topologies for unit (uniform) flows,
  with the round structure G[i, h] = rounds on topology i costing >= h (exact for k = 1 by the
  per-source alignment argument: a source sends <= 1 flow per round), P_1 fixed to a canonical
  permutation of one cycle type (one model per type; WLOG because J - I is relabeling-invariant).
  :func:`exact_k1_search` runs the types with a shrinking cutoff below a known strategy
  (issue 31: this is what solves n = 8, d = 3 and 4 in minutes on HiGHS).
"""
from __future__ import annotations

from dataclasses import dataclass

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from heuristics.a2a.bounds import thm1_N, thm1_lb_T
from heuristics.a2a.k1 import BIG, hop_table
from heuristics.a2a.strategy import Candidate
from instances.a2a.instance import by_hops
from models.backend import Result, new_model


# ------------------------------------------------------------------------------------------
# G1: optimal shift set (p-median)
# ------------------------------------------------------------------------------------------
@dataclass
class PMedianHandles:
    n: int
    y: gp.tupledict
    w: gp.tupledict


def build_pmedian(n: int, d: int) -> tuple[gp.Model, PMedianHandles]:
    """G1: min sum H[s,delta] w[s,delta] s.t. each offset assigned once, to an open shift,
    exactly d shifts open, y_1 = 1 (WLOG: unit multiplication is an automorphism of Z_n)."""
    if not 1 <= d <= n - 1:
        raise ValueError(f"d must be in [1, {n - 1}], got {d}")
    H = hop_table(n)
    model = new_model(f"a2a_g1_pmedian_n{n}_d{d}")
    S = range(1, n)
    y = model.addVars(S, vtype=GRB.BINARY, name="y")
    pairs = [(s, dl) for s in S for dl in S if H[s, dl] < BIG]
    w = model.addVars(pairs, lb=0.0, ub=1.0, name="w")
    # every offset is served by exactly one shift that reaches it
    model.addConstrs((w.sum("*", dl) == 1 for dl in S), name="g1_assign")
    # an offset can only use an open shift
    model.addConstrs((w[s, dl] <= y[s] for s, dl in pairs), name="g1_open")
    # exactly d topologies
    model.addConstr(y.sum() == d, name="g1_count")
    # WLOG the base ring (shift 1) is in the set
    model.addConstr(y[1] == 1, name="g1_wlog_unit")
    model.setObjective(gp.quicksum(int(H[s, dl]) * w[s, dl] for s, dl in pairs), GRB.MINIMIZE)
    model.update()
    return model, PMedianHandles(n, y, w)


def extract_pmedian(h: PMedianHandles, res: Result) -> list[int]:
    """The open shifts, base ring first."""
    yv = res.value(h.y)
    shifts = sorted(s for s, v in yv.items() if v > 0.5)
    return [1] + [s for s in shifts if s != 1]


# ------------------------------------------------------------------------------------------
# G2: exact k = 1 global optimum for unit flows
# ------------------------------------------------------------------------------------------
def cycle_types(n: int, min_part: int = 2) -> list[tuple]:
    """Partitions of n into parts >= min_part (non-increasing)."""
    out = []

    def rec(rest, mx, acc):
        if rest == 0:
            out.append(tuple(acc))
            return
        for p in range(min(rest, mx), min_part - 1, -1):
            rec(rest - p, p, acc + [p])
    rec(n, n, [])
    return out


def canonical_perm(cycle_type) -> np.ndarray:
    """The permutation with consecutive cycles (0 1 ... c1-1)(c1 ...)... of the given type."""
    perm, base = [], 0
    for c in cycle_type:
        perm += [base + (j + 1) % c for j in range(c)]
        base += c
    return np.asarray(perm)


@dataclass
class ExactK1Handles:
    n: int
    d: int
    H: int
    x: gp.tupledict           # x[i,u,v]
    b: gp.tupledict           # b[i,s,t,h]
    G: gp.tupledict           # G[i,h]


def max_hops(n: int, d: int, upper: int) -> int:
    """The most hops any flow can take in a k = 1 strategy with d topologies whose hop sum is
    <= ``upper`` (0: none can). [OURS] A source's round maxima sum to >= its own flows' hop
    counts, which are distinct on one topology (a permutation has one h-hop destination): a
    source with a flow of h hops among r flows on that topology pays >= the least sum of r
    distinct positive integers containing h, and >= Theorem 1 (``thm1_N``) for its other
    n - 1 - r flows on the other d - 1 topologies."""
    def least(h: int) -> int:
        rs = range(1, n) if d > 1 else (n - 1,)
        return min((r * (r + 1) // 2 if h <= r else h + r * (r - 1) // 2)
                   + (thm1_N(n - 1 - r, d - 1) if d > 1 else 0) for r in rs)
    return max((h for h in range(1, n) if least(h) <= upper), default=0)


def build_exact_k1(n: int, d: int, p1_type=None, allow_idle: bool = False,
                   symmetry: bool = True, upper: int | None = None
                   ) -> tuple[gp.Model, ExactK1Handles]:
    """G2 (spec 2.6): exact min sum of round hop counts over d degree-1 topologies, unit flows.

    ``p1_type``: a cycle type (partition of n) fixing P_1 to :func:`canonical_perm`; None
    leaves P_1 free. ``allow_idle`` allows fixed points (idle ports). ``upper``: a known
    feasible hop sum (e.g. the shifted rings'); [OURS] the model then keeps only strategies
    of hop sum <= upper (constraint ``cutoff_upper``) and walks of at most
    :func:`max_hops` hops, so it is infeasible iff no strategy beats ``upper``.
    """
    H = n - 1 if upper is None else max(1, min(n - 1, max_hops(n, d, upper)))
    V = range(n)
    I = range(d)
    model = new_model(f"a2a_g2_exact_k1_n{n}_d{d}")
    arcs = [(u, v) for u in V for v in V if u != v or allow_idle]
    x = model.addVars([(i, u, v) for i in I for u, v in arcs], vtype=GRB.BINARY, name="x")
    # each topology is a permutation (a derangement unless idle ports are allowed)
    model.addConstrs((x.sum(i, u, "*") == 1 for i in I for u in V), name="perm_out")
    model.addConstrs((x.sum(i, "*", v) == 1 for i in I for v in V), name="perm_in")
    if p1_type is not None:
        P1 = canonical_perm(p1_type)
        for u, v in arcs:
            x[0, u, v].LB = x[0, u, v].UB = float(P1[u] == v)
    # walk indicator z[i,h,s,w]: the h-hop walk from s on P_i ends at w (forced integral)
    z = model.addVars([(i, h, s, w) for i in I for h in range(2, H + 1) for s in V for w in V],
                      lb=0.0, ub=1.0, name="z")

    def Z(i, h, s, w):
        return x.get((i, s, w), 0.0) if h == 1 else z[i, h, s, w]
    model.addConstrs((z.sum(i, h, s, "*") == 1 for i in I for h in range(2, H + 1) for s in V),
                     name="walk_one_end")
    # [OURS] valid cut: P_i^h is a permutation, so one h-hop walk ends at each node
    model.addConstrs((z.sum(i, h, "*", w) == 1 for i in I for h in range(2, H + 1) for w in V),
                     name="walk_one_start")
    model.addConstrs((z[i, h, s, w] >= Z(i, h - 1, s, v) + x[i, v, w] - 1
                      for i in I for h in range(2, H + 1) for s in V for v, w in arcs),
                     name="walk_step")
    # routing choice: flow (s,t) on topology i with h hops, only where the walk ends at t
    flows = [(s, t) for s in V for t in V if s != t]
    b = model.addVars([(i, s, t, h) for i in I for s, t in flows for h in range(1, H + 1)],
                      vtype=GRB.BINARY, name="b")
    model.addConstrs((b[i, s, t, h] <= Z(i, h, s, t) for i in I for s, t in flows
                      for h in range(1, H + 1)), name="route_on_walk")
    model.addConstrs((b.sum("*", s, t, "*") == 1 for s, t in flows), name="deliver_once")
    # round structure: G[i,h] rounds on topology i cost >= h; source s has <= 1 flow per round
    G = model.addVars([(i, h) for i in I for h in range(1, H + 1)], lb=0.0, ub=n - 1,
                      vtype=GRB.INTEGER, name="G")
    model.addConstrs((G[i, h] >= G[i, h + 1] for i in I for h in range(1, H)), name="rounds_nested")
    model.addConstrs((gp.quicksum(b[i, s, t, hh] for t in V if t != s for hh in range(h, H + 1))
                      <= G[i, h] for i in I for s in V for h in range(1, H + 1)),
                     name="source_rounds")
    if symmetry and d > 1:
        # topologies by non-increasing transmission, P_1 first: any strategy can be reordered
        # so, and relabeled so that its first topology is the canonical one of its type
        model.addConstrs((G.sum(i, "*") >= G.sum(i + 1, "*") for i in range(d - 1)),
                         name="sym_order")
    if upper is not None:
        model.addConstr(G.sum() <= upper, name="cutoff_upper")
    model.setObjective(G.sum(), GRB.MINIMIZE)
    model.update()
    return model, ExactK1Handles(n, d, H, x, b, G)


def extract_exact_k1(h: ExactK1Handles, res: Result) -> Candidate:
    """Topologies and rounds: round r of topology i costs #{h : G[i,h] >= r}; each source's
    flows on i, longest first, go to rounds 1, 2, ... (Hall alignment; contention-free because
    the h-th positions P^h(s) of distinct sources differ on a permutation)."""
    n = h.n
    xv, bv, Gv = res.value(h.x), res.value(h.b), res.value(h.G)
    phases = []
    for i in range(h.d):
        perm = np.full(n, -1)
        for (ii, u, v), val in xv.items():
            if ii == i and val > 0.5:
                perm[u] = v
        per_src: dict[int, list] = {s: [] for s in range(n)}
        for (ii, s, t, hh), val in bv.items():
            if ii == i and val > 0.5:
                per_src[s].append((hh, t))
        n_rounds = max((len(v) for v in per_src.values()), default=0)
        if n_rounds == 0:
            continue
        rounds: list[list] = [[] for _ in range(n_rounds)]
        for s, fl in per_src.items():
            for r, (hh, _) in enumerate(sorted(fl, reverse=True)):
                walk = [s]
                for _ in range(hh):
                    walk.append(int(perm[walk[-1]]))
                rounds[r].append(walk)
        arcs = np.stack([np.arange(n), perm], 1)
        arcs = arcs[arcs[:, 0] != arcs[:, 1]]
        phases.append((arcs, [[P for P, _ in by_hops(r)] for r in rounds]))
    G_sum = sum(v for v in Gv.values())
    return Candidate("exact-k1", phases, {"milp_hop_sum": float(G_sum)})


def exact_k1_search(n: int, d: int, upper: int, solve_one) -> tuple[Candidate | None, list]:
    """G2 for every cycle type of P_1, looking only for strategies of hop sum <= ``upper``
    (pass a known strategy's hop sum minus 1 to look for a strictly better one).

    [OURS] A type's model carries the cutoff (``build_exact_k1(upper=...)``); once a type
    yields a strategy of hop sum v, the later types look for <= v - 1 only, and the search
    stops when the cutoff falls below Theorem 1. ``solve_one(model, types_left)`` solves one
    model (``types_left`` counts this one) and returns its Result. Returns the best strategy
    found (None: none within ``upper``) and the Results, one per type solved. When every
    Result is optimal or infeasible, the best of the strategy found and the one ``upper``
    came from is the optimum for this d (every skipped or infeasible type holds no strategy
    below the cutoff it was given)."""
    types = cycle_types(n)
    lb = thm1_lb_T(n, d)
    best, results = None, []
    for j, ty in enumerate(types):
        if upper < lb:
            break
        model, h = build_exact_k1(n, d, ty, upper=upper)
        res = solve_one(model, len(types) - j)
        results.append(res)
        if res.has_solution:
            cand = extract_exact_k1(h, res)
            if best is None or cand.hop_sum < best.hop_sum:
                best = cand
            upper = min(upper, best.hop_sum - 1)
    return best, results
