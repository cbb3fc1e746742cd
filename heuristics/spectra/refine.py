"""Spectra's Refine, greedy (Liang et al. 2026, Section III-A, Alg. 2): the durations of a
decomposition's permutations, each raised (in generation order) by the largest residual
demand left on its edges. The decomposition itself is ``heuristics.spectra.decompose``;
the Refine LP (Eq. 5) is ``models.spectra.milp.build_refine_lp``, whose extraction lifts
the LP's durations by this greedy step.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from instances.spectra.instance import SUPPORT_EPS


@dataclass
class Decomposition:
    """Weighted partial permutations: ``perms[i][r] = c`` or -1; ``alphas[i]`` durations."""

    perms: list[np.ndarray]
    alphas: np.ndarray

    def coverage(self, n: int) -> np.ndarray:
        served = np.zeros((n, n))
        for p, a in zip(self.perms, self.alphas):
            on = p >= 0
            served[np.flatnonzero(on), p[on]] += a
        return served


def _eps(D: np.ndarray) -> float:
    return SUPPORT_EPS * float(D.max(initial=0.0))


def refine_greedy(D: np.ndarray, dec: Decomposition) -> np.ndarray:
    """Alg. 2: raise each alpha_i (generation order) by the max residual on its edges."""
    n = D.shape[0]
    D_rem = np.maximum(D - dec.coverage(n), 0.0)
    D_rem[D_rem < _eps(D)] = 0.0
    out = dec.alphas.astype(float).copy()
    for i, p in enumerate(dec.perms):
        rows = np.flatnonzero(p >= 0)
        if rows.size == 0:
            continue
        cols = p[rows]
        d = float(D_rem[rows, cols].max())
        if d > 0:
            out[i] += d
            D_rem[rows, cols] = np.maximum(0.0, D_rem[rows, cols] - d)
    return out
