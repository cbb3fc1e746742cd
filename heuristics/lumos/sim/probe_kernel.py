"""The sequential scan of probing-based routing, compiled (``routing.probe``; issue 31).

Kept apart from ``routing`` so that only a probing simulation imports numba."""
from __future__ import annotations

import numpy as np

from toolkit.kernel_cache import njit


@njit
def choose_paths(cand, same, cap, load, cls, w):
    """Per flow in order: the candidate (axis 0 of ``cand``: (probes, n, hops) link ids,
    -1 padded) with the largest bottleneck share min_l cap[l] / (load[cls, l] + w), ties to
    fewer hops then the lower index; ``same[f]``: candidate 0 is the only distinct one.
    Adds each flow's weight to its chosen links in ``load`` (in place). O(n probes hops)."""
    probes, n, width = cand.shape
    choice = np.zeros(n, np.int64)
    for f in range(n):
        c_best = 0
        if not same[f]:
            best, best_hops = -1.0, 0
            for c in range(probes):
                s, hops = np.inf, 0
                for k in range(width):
                    link = cand[c, f, k]
                    if link >= 0:
                        hops += 1
                        v = cap[link] / (load[cls[f], link] + w[f])
                        if v < s:
                            s = v
                if s > best or (s == best and hops < best_hops):
                    best, best_hops, c_best = s, hops, c
        choice[f] = c_best
        for k in range(width):
            link = cand[c_best, f, k]
            if link >= 0:
                load[cls[f], link] += w[f]
    return choice


def warm_up() -> None:
    """Compile or load :func:`choose_paths` (toolkit.kernels "lumos-probe")."""
    cand = np.array([[[0, 1]], [[2, -1]]], np.int64)
    choose_paths(cand, np.zeros(1, np.bool_), np.ones(3), np.zeros((2, 3)),
                 np.zeros(1, np.int64), np.ones(1))
