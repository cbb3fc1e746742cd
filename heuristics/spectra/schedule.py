"""Spectra steps 2 and 3: LPT Schedule (Alg. 3) and Equalize (Alg. 4), and the pipeline.

Liang et al. 2026, Section III-B/C. Job sizes are alpha_i + delta; LPT is Graham's
4/3-approximation for P||Cmax. Equalize repeatedly splits the longest configuration on
the most-loaded switch so that both switches end at mu = (L_max + L_min + delta)/2; the
moved piece pays its own delta. Ties: stable sort, lowest index (spec section 6.5).
"""
from __future__ import annotations

import numpy as np

from heuristics.spectra.decompose import Decomposition, decompose
from instances.spectra.instance import SpectraInstance, SpectraSchedule

GAP_TOL = 1e-12   # relative to the largest load (spec 6.6 uses 1e-12 slack)


def lpt_schedule(dec: Decomposition, s: int, delta: float) -> list[list[list]]:
    """Alg. 3: jobs in non-increasing alpha (stable) to the least-loaded switch.

    Returns per switch a list of ``[perm_index, alpha]`` entries.
    """
    order = np.argsort(-dec.alphas, kind="stable")
    loads = np.zeros(s)
    sched: list[list[list]] = [[] for _ in range(s)]
    for i in order:
        h = int(np.argmin(loads))
        sched[h].append([int(i), float(dec.alphas[i])])
        loads[h] += delta + dec.alphas[i]
    return sched


def equalize(sched: list[list[list]], delta: float, merge_identical: bool = False) -> int:
    """Alg. 4, in place. Returns the number of splits made.

    Stops when max-min load gap <= delta, or when the longest piece on the most-loaded
    switch is not longer than tau = L_max - mu (then it stops entirely, as the paper does).
    ``merge_identical`` (default off, not in the paper) merges a moved piece into an
    identical permutation already on the target switch instead of paying a new delta.
    """
    s = len(sched)
    loads = np.array([sum(delta + a for _, a in sw) for sw in sched])
    splits = 0
    while s > 1:
        hmax, hmin = int(np.argmax(loads)), int(np.argmin(loads))
        tol = GAP_TOL * max(1.0, loads[hmax])
        if loads[hmax] - loads[hmin] <= delta + tol:
            break
        mu = (loads[hmax] + loads[hmin] + delta) / 2
        tau = loads[hmax] - mu
        z = int(np.argmax([a for _, a in sched[hmax]]))
        if sched[hmax][z][1] <= tau or tau <= tol:   # (tau <= tol: only round-off left)
            break
        sched[hmax][z][1] -= tau
        pid = sched[hmax][z][0]
        merged = False
        if merge_identical:
            for entry in sched[hmin]:
                if entry[0] == pid:
                    entry[1] += tau
                    loads[hmin] += tau
                    merged = True
                    break
        if not merged:
            sched[hmin].append([pid, tau])
            loads[hmin] += delta + tau
        loads[hmax] -= tau
        splits += 1
    return splits


def to_schedule(dec: Decomposition, sched: list[list[list]]) -> SpectraSchedule:
    return SpectraSchedule([[(dec.perms[i].copy(), float(a)) for i, a in sw] for sw in sched])


def spectra(inst: SpectraInstance, equalize_loads: bool = True, refine: str = "greedy",
            edge_mode: str = "supp", merge_identical: bool = False,
            dec: Decomposition | None = None, backend: str = "auto",
            matching: str = "warm", deadline: float | None = None) -> SpectraSchedule:
    """Spectra (Section III): Decompose, Schedule (LPT), Equalize.

    ``dec`` may be a cached decomposition (it does not depend on s or delta, spec 6.17);
    ``matching`` picks Decompose's assignment rounds (``decompose.MATCHINGS``);
    ``deadline``: a user's time limit for Decompose (``decompose``).
    """
    if dec is None:
        dec = decompose(inst.demand, edge_mode=edge_mode, refine=refine, backend=backend,
                        matching=matching, deadline=deadline)
    sched = lpt_schedule(dec, inst.switches, inst.delay)
    if equalize_loads:
        equalize(sched, inst.delay, merge_identical=merge_identical)
    return to_schedule(dec, sched)
