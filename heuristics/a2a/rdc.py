"""ReconfigureDuringCollective: the paper's constructive algorithm (Sec. 4; spec 3.1, 3.6).

For every d (and, for k >= 2, both families plus direct round-robin) build a strategy, cost it
with the spec 1.4 analytic model (R * d + sum of round times), relabel for skewed traffic, and
keep the cheapest (ties: family order circulant, genkautz, direct; then smaller d; A11).

* k = 1: base ring + shifted rings (``heuristics.a2a.k1``), nested shift order, all d = 1..n-1.
  For uniform traffic the per-d cost is R d + T * (prefix hop sum), computed without building
  any schedule (n = 4096 over all d in seconds); only the chosen d is materialized.
* k >= 2: circulant (best base + contraction) and GenKautz (repaired + greedy b-matching fill)
  from two d = 1 schedules, generic-SP and the paper's own (``heuristics.a2a.gk_literal``;
  spec A8: run both, keep the best), plus direct round-robin.

Candidates are costed as the checker costs their realization: R * d_eff (topologies carrying
traffic, A10) + round times, so sparse traffic that empties a topology does not pay for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from heuristics.a2a import circulant as circ
from heuristics.a2a import general as gen
from heuristics.a2a.bounds import lb_T
from heuristics.a2a.gk_literal import gk_literal_schedule
from heuristics.a2a.k1 import ORDERS, k1_phases, prefix_costs
from heuristics.a2a.relabel import relabel
from heuristics.a2a.strategy import Candidate, FlowTable, direct_round_robin

FAMILIES = ("circulant", "genkautz", "genkautz-literal")


@dataclass
class RDCResult:
    best: Candidate
    label: np.ndarray | None
    cost: float                                   # analytic cost of the chosen strategy
    table: list[dict] = field(default_factory=list)   # one row per candidate (family, d, ...)
    d: int = 0                                    # topologies carrying traffic (d_eff, A10)


@lru_cache(maxsize=64)
def k1_curve(n: int, order: str = "greedy") -> tuple[tuple, tuple]:
    """(shift order, hop sums for d = 1..n-1) for k = 1."""
    o = ORDERS[order](n)
    return tuple(o), tuple(int(x) for x in prefix_costs(n, o))


def k1_candidate(n: int, shifts, order: str = "greedy") -> Candidate:
    return Candidate("ring-shift", k1_phases(n, shifts),
                     {"shifts": [int(s) for s in shifts], "order": order})


@lru_cache(maxsize=32)
def family_candidates(n: int, k: int, family: str, global_reassign: bool | None = None) -> tuple:
    """Candidates for d = 1, 2, ... of one family for k >= 2 (cached per (n, k))."""
    if family == "circulant":
        G0, _ = circ.best_base(n, k)
        return tuple(circ.to_candidate(n, s) for s in circ.contraction_chain(n, k, G0))
    if family in ("genkautz", "genkautz-literal"):
        gr = n <= 32 if global_reassign is None else global_reassign
        arcs, lit = gen.genkautz(n, k), family == "genkautz-literal"
        base = gk_literal_schedule(n, k, arcs) if lit else None
        return tuple(gen.to_candidate(s, family) for s in
                     gen.fill_chain(n, k, arcs, global_reassign=gr, base_rounds=base, simple=lit))
    if family == "direct":
        return (direct_round_robin(n, k),)
    raise ValueError(f"unknown family {family!r}")


def base_candidate(n: int, k: int, family: str) -> Candidate:
    """The d = 1 candidate of a k >= 2 family (without building the contraction chain)."""
    if family == "circulant":
        G0, _ = circ.best_base(n, k)
        return circ.to_candidate(n, [(G0, circ.pack(n, G0, range(1, n), k))])
    if family in ("genkautz", "genkautz-literal"):
        arcs = gen.genkautz(n, k)
        rounds = gk_literal_schedule(n, k, arcs) if family == "genkautz-literal" \
            else gen.sp_schedule(n, arcs)
        return gen.to_candidate([(arcs, rounds)], family)
    raise ValueError(f"unknown family {family!r}")


def _row(c: Candidate, n: int, k: int, d: int, transmit: float, cost: float) -> dict:
    return {"family": c.family, "d": d, "hop_sum": c.hop_sum, "rounds": c.n_rounds,
            "transmission_time": transmit, "total_cost": cost, "lb_T": lb_T(n, k, d)}


def rdc(inst, order: str = "greedy", families=FAMILIES, do_relabel: bool = True,
        relabel_top: int | None = None, relabel_opts: dict | None = None,
        direct: bool = True) -> RDCResult:
    """ReconfigureDuringCollective on an instance (module docstring).

    ``relabel_top``: relabel only the cheapest candidates under the identity (None: every
    candidate, the spec's 3.7 budget); ``direct``: add direct round-robin (k >= 2).

    Every candidate is costed as the checker will cost its realization: R * d_eff (topologies
    that carry traffic under the labeling, A10) + the round times of its flows with traffic.
    """
    n, k, R = inst.n, inst.k, inst.R
    uniform = inst.is_uniform
    tau = float(inst.link.tau(inst.uniform_size if inst.traffic is None else inst.A[0, 1])) \
        if uniform else None
    if k == 1 and uniform:
        shifts, hops = k1_curve(n, order)
        costs = R * np.arange(1, n) + tau * np.asarray(hops, dtype=float)
        d = int(np.argmin(costs)) + 1
        best = k1_candidate(n, shifts[:d], order)
        table = [{"family": "ring-shift", "d": dd, "hop_sum": h, "rounds": n - 1,
                  "transmission_time": tau * h, "total_cost": float(c), "lb_T": lb_T(n, 1, dd)}
                 for dd, (h, c) in enumerate(zip(hops, costs), start=1)]
        return RDCResult(best, None, float(costs[d - 1]), table, best.d)
    if k == 1:
        shifts, _ = k1_curve(n, order)
        cands = [k1_candidate(n, shifts[:d], order) for d in range(1, n)]
    else:
        fams = tuple(families) + (("direct",) if direct else ())
        cands = [c for f in fams for c in family_candidates(n, k, f)]
    rows, scored = [], []
    for i, c in enumerate(cands):
        d, t = (c.d, tau * c.hop_sum) if uniform else FlowTable(c).evaluate(inst.A, inst.link)
        scored.append((R * d + t, i, d))          # ties: family order, then smaller d (A11)
        rows.append(_row(c, n, k, d, t, R * d + t))
    scored.sort()
    label = None
    best_cost, best_i, best_d = scored[0]
    if not uniform and do_relabel:
        for _, i, _ in scored[:len(scored) if relabel_top is None else max(relabel_top, 1)]:
            lab, c, _ = relabel(cands[i], inst, **(relabel_opts or {}))
            d, t = FlowTable(cands[i]).evaluate(inst.A, inst.link, lab)
            rows[i].update(relabeled_d=d, relabeled_transmission_time=t, relabeled_total_cost=c)
            if c < best_cost - 1e-15:
                best_cost, best_d, best_i, label = c, d, i, lab
    return RDCResult(cands[best_i], label, best_cost, rows, best_d)
