"""Relabeling for skewed traffic (paper Sec. 3.2, 4.4; spec 3.7, A12).

Find a bijection position -> GPU so that pairs with large flows share rounds: minimize the spec
1.4 cost R d_eff + transmission of a fixed candidate over labelings (a labeling can empty a
topology of traffic, which then is not paid for, A10) by first-improvement pairwise-swap local
search from the identity, plus seeded random restarts. The spec's defaults (4 restarts, 50
passes) are options; the toolkit defaults are smaller (2 passes, no restarts, at most 4000 cost
evaluations) because a full evaluation is O(n^2) and ``rdc`` relabels its 3 cheapest candidates
(``relabel_top``; documented deviation).
"""
from __future__ import annotations

import numpy as np

from heuristics.a2a.strategy import Candidate, FlowTable


def relabel(cand: Candidate, inst, passes: int = 2, restarts: int = 0, max_evals: int = 4000,
            seed: int = 0, R: float | None = None) -> tuple[np.ndarray, float, float]:
    """Best labeling found: (label, cost R d_eff + transmission with it, with the identity).

    ``R`` defaults to the instance's; ``R=0`` minimizes the transmission time alone.
    """
    R = inst.R if R is None else R
    table = FlowTable(cand)
    A, link, n = inst.A, inst.link, inst.n
    if inst.is_uniform:
        c = table.cost(A, link, R)
        return np.arange(n), c, c
    rng = np.random.default_rng(seed)
    base = table.cost(A, link, R)
    best_lab, best = np.arange(n), base
    evals = 0
    for r in range(restarts + 1):
        lab = np.arange(n) if r == 0 else rng.permutation(n)
        cur = table.cost(A, link, R, lab)
        for _ in range(passes):
            improved = False
            pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
            for j in rng.permutation(len(pairs)):
                if evals >= max_evals:
                    break
                a, b = pairs[j]
                lab[a], lab[b] = lab[b], lab[a]
                c = table.cost(A, link, R, lab)
                evals += 1
                if c < cur - 1e-12:
                    cur, improved = c, True
                else:
                    lab[a], lab[b] = lab[b], lab[a]
            if not improved or evals >= max_evals:
                break
        if cur < best - 1e-12:
            best, best_lab = cur, lab.copy()
    return best_lab, best, base
