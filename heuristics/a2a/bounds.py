"""Lower bounds on the all-to-all completion time (paper Theorem 1; spec 2.2, 2.4).

* :func:`thm1_lb_T` - Theorem 1 (k = 1), transmission part in units of T:
  d q(q+1)/2 + u (q+1), q = floor((n-1)/d), u = (n-1) mod d.
* :func:`lb_T` - the spec's generalized bound for any k (an extension, NOT in the paper, A19):
  M_k(h) = k + ... + k^h destinations within h hops, g_k(F) = min{h : F <= M_k(h)},
  C_k(N) = sum_{j=1..r} g_k(N - k(r - j)), r = ceil(N/k), and
  LB_T(N, k, d) = min_{N_1 + ... + N_d = N} sum_i C_k(N_i) (DP). Equals Theorem 1 for k = 1.
* :func:`lower_bound` - a valid bound in time units for any instance: for every source s with N_s
  flows, every round containing one of its flows costs >= tau(smallest flow of s) per hop, so
  TotalCost >= min_d [d R + max_s tau_min(s) LB_T(N_s, k, d)]. For uniform traffic this is
  exactly d R + T LB_T(n-1, k, d) (Theorem 1 for k = 1). Per d it takes the max with the fluid
  bound below (stronger on skewed traffic). It assumes unsplittable flows (spec 1.3, A23): a
  strategy that sends a flow as several smaller pieces can beat it.
* :func:`fluid_lower_bound` - [OURS] a weaker bound that also holds for split flows (the FAST and
  DirectConnect baselines): source s starts <= k pieces per round and a round costs >= tau(its
  largest piece) >= alpha + beta (sum of s's pieces in it) / k, and s needs >= ceil(N_s / k)
  rounds; so TotalCost >= R + max_s [alpha ceil(N_s / k) + beta (sum_t A[s,t]) / k].

Proof (rigorous form of the paper's, spec 2.2): all flows of a round start at hop 1, so a source
starts <= k flows per round; a degree-k digraph reaches <= k^j new nodes at distance j, so a
source's F-th closest destination on one topology is >= g_k(F) hops away; the sum of a source's
round maxima is >= the sum over its rounds of the longest of its own flows.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np


def thm1_lb_T(n: int, d: int) -> int:
    """Theorem 1 transmission part (units of T) for n GPUs, k = 1, d topologies."""
    return thm1_N(n - 1, d)


def thm1_N(N: int, d: int) -> int:
    """Theorem 1 for a source with N flows: d q (q+1) / 2 + u (q+1), (q, u) = divmod(N, d)."""
    q, u = divmod(N, d)
    return d * q * (q + 1) // 2 + u * (q + 1)


def _g(F: int, k: int) -> int:
    """g_k(F) = min{h >= 1 : F <= k + k^2 + ... + k^h}."""
    h, reach, p = 1, k, k
    while F > reach:
        p *= k
        reach += p
        h += 1
    return h


@lru_cache(maxsize=None)
def _C(N: int, k: int) -> tuple:
    """C_k(m) for m = 0..N (one source's min cost for m flows on one topology)."""
    out = [0]
    for m in range(1, N + 1):
        r = -(-m // k)
        out.append(sum(_g(m - k * (r - j), k) for j in range(1, r + 1)))
    return tuple(out)


@lru_cache(maxsize=None)
def lb_T_all(N: int, k: int, dmax: int) -> tuple:
    """LB_T(N, k, d) for d = 1..dmax (index d-1), by the O(d N^2) DP of spec 2.4 (numpy)."""
    if k == 1:
        return tuple(thm1_N(N, d) for d in range(1, dmax + 1))
    return dp_bound(N, k, dmax)


def dp_bound(N: int, k: int, dmax: int) -> tuple:
    """The spec 2.4 DP itself (any k, including k = 1 where it must equal Theorem 1)."""
    C = np.asarray(_C(N, k), dtype=np.int64)
    m = np.arange(N + 1)
    j = m[:, None] - m[None, :]                 # take j flows on the new topology
    cost_j = np.where(j >= 0, C[np.clip(j, 0, N)], np.iinfo(np.int64).max // 4)
    f = C.copy()
    out = [int(f[N])]
    for _ in range(2, dmax + 1):
        f = (f[None, :] + cost_j).min(axis=1)
        out.append(int(f[N]))
    return tuple(out)


def lb_T(n: int, k: int, d: int) -> int:
    """LB_T(n, k, d): transmission lower bound in units of T for n-1 flows per source."""
    if k == 1:
        return thm1_lb_T(n, d)
    return lb_T_all(n - 1, k, d)[d - 1]


def d_max(n: int, k: int) -> int:
    """Largest useful number of topologies: ceil((n-1)/k) (A25)."""
    return -(-(n - 1) // k)


def lower_bound_curve(inst) -> np.ndarray:
    """Per d = 1..d_max: a lower bound on the cost of any strategy with exactly d used topologies."""
    A, k = inst.A, inst.k
    pos = A > 0
    Ns = pos.sum(axis=1)
    tau = inst.link.tau(np.where(pos, A, np.inf))
    tmin = np.where(Ns > 0, tau.min(axis=1, initial=np.inf), 0.0)
    Nmax = int(Ns.max())
    D = d_max(Nmax + 1, k)
    curve = np.zeros(D)
    for N in np.unique(Ns[Ns > 0]):
        lbs = np.asarray(lb_T_all(int(N), k, D), dtype=float)
        curve = np.maximum(curve, tmin[Ns == N].max() * lbs)
    # the fluid bound holds for whole flows too and is the stronger one on skewed traffic
    curve = np.maximum(curve, fluid_transmission_bound(inst))
    return inst.R * np.arange(1, D + 1) + curve


def fluid_transmission_bound(inst) -> float:
    """Transmission part of :func:`fluid_lower_bound` (any d; split flows allowed)."""
    A, k, link = inst.A, inst.k, inst.link
    Ns = (A > 0).sum(axis=1)
    return float((link.alpha * np.ceil(Ns / k) + link.beta * A.sum(axis=1) / k).max())


def fluid_lower_bound(inst) -> float:
    """A bound valid for split flows too (module docstring)."""
    return inst.R + fluid_transmission_bound(inst)


def lower_bound(inst) -> float:
    """A valid lower bound on the optimal completion time of the instance (module docstring)."""
    return float(lower_bound_curve(inst).min())
