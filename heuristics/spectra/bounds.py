"""Spectra lower bounds (Liang et al. 2026, Section IV), and the Appendix degree model.

LB = max over the 2n lines i of max(LB1_i, LB2_i) (Property 2, Eq. 6), with
  LB1_i = (w_i + delta * max(k_i, s)) / s                                        (Thm 1, Eq. 7)
  LB2_i = delta + min(x_1, max(x_2, (w_i+delta)/s, x_s+delta),
                      min_{2<=m<=s^2} max(x_{m+1}, (w_i + m delta)/s))            (Thm 2, Eq. 8)
LB2 applies only to lines with exactly k_i = s nonzeros and s >= 2 (x_{m+1} = 0 for m >= s).
Vectorized over lines: O(n^2 + n s log s).
"""
from __future__ import annotations

import math

import numpy as np

from instances.spectra.instance import effective


def _lines(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 2n lines of D (round-off entries dropped, as the algorithms do): rows, columns."""
    D = effective(D)
    return D, D.T


def lb1(D: np.ndarray, s: int, delta: float) -> float:
    """Theorem 1 over all lines (Eq. 7 with Eq. 6)."""
    return max(_lb1_lines(L, s, delta) for L in _lines(D))


def _lb1_lines(L: np.ndarray, s: int, delta: float) -> float:
    k = (L > 0).sum(axis=1)
    w = L.sum(axis=1)
    vals = np.where(k > 0, (w + delta * np.maximum(k, s)) / s, 0.0)
    return float(vals.max(initial=0.0))


def lb2(D: np.ndarray, s: int, delta: float) -> float:
    """Theorem 2 over the lines with k_i == s (Eq. 8 with Eq. 6); 0 if none apply."""
    if s < 2:
        return 0.0
    return max(_lb2_lines(L, s, delta) for L in _lines(D))


def _lb2_lines(L: np.ndarray, s: int, delta: float) -> float:
    k = (L > 0).sum(axis=1)
    L = L[k == s]
    if L.shape[0] == 0:
        return 0.0
    x = -np.sort(-L, axis=1)[:, :s]                  # x_1 >= ... >= x_s (the s nonzeros)
    w = x.sum(axis=1)
    m0 = x[:, 0]
    m1 = np.maximum.reduce([x[:, 1], (w + delta) / s, x[:, s - 1] + delta])
    # m >= 2: max(x_{m+1}, (w + m delta)/s); x_{m+1} = 0 beyond s, where the term grows in m.
    ms = np.arange(2, s + 1)
    xnext = np.hstack([x, np.zeros((x.shape[0], 1))])[:, ms]   # x_{m+1} (0-based column m)
    mge2 = np.maximum(xnext, (w[:, None] + ms[None, :] * delta) / s).min(axis=1)
    return float((delta + np.minimum.reduce([m0, m1, mge2])).max())


def lower_bound(D: np.ndarray, s: int, delta: float) -> float:
    """The paper's LB: max of Theorem 1 and Theorem 2 over all lines."""
    return max(lb1(D, s, delta), lb2(D, s, delta))


def prob_line_degree(n: int, k: int) -> float:
    """Proposition 1 (Eq. 9): a line of k random permutations has k nonzeros w.p. n!/((n-k)! n^k)."""
    if k > n:
        return 0.0
    return math.exp(math.lgamma(n + 1) - math.lgamma(n - k + 1) - k * math.log(n))


def prob_degree(n: int, k: int) -> float:
    """Proposition 2 (Eq. 10): P(degree(D) = k) ~ 1 - (1 - p)^(2n)."""
    return 1.0 - (1.0 - prob_line_degree(n, k)) ** (2 * n)
