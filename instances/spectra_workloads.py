"""Spectra demand-matrix generators (Liang et al. 2026, Section V; spec section 4).

* ``benchmark_matrix`` - the standard benchmark of Solstice/Eclipse/LESS (spec 4.4): m
  random permutations per port, ``large`` of them sharing ``large_share`` of the
  bandwidth evenly, the rest sharing the remainder; Gaussian noise on the nonzeros.
* ``example_matrix`` - a 3x3 matrix with the weights of the paper's worked example
  (Figs. 2-4: 0.61, 0.3, 0.1 on disjoint shifts; Fig. 2's entries are not in the text).
* ``shifts_matrix`` - sum of disjoint cyclic shifts with given weights (spec 8.4).
* ``random_matrix`` - i.i.d. sparse uniform entries, for tiny exact-MILP checks.
"""
from __future__ import annotations

import numpy as np

from instances.errors import InstanceError
from instances.spectra import SpectraInstance


def add_noise(D: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Absolute N(0, sigma^2) on the nonzeros, negatives clipped to 0, no renormalization."""
    if sigma <= 0:
        return D
    nz = D > 0
    out = D.copy()
    out[nz] = np.maximum(D[nz] + rng.normal(0.0, sigma, nz.sum()), 0.0)
    return out


def benchmark_matrix(n: int = 100, m: int = 16, large: int = 0, large_share: float = 0.7,
                     noise: float = 0.003, rng: np.random.Generator | None = None) -> np.ndarray:
    """Spec 4.4: D = sum_l w_l P_l over m uniform random permutations (doubly stochastic before noise)."""
    rng = rng or np.random.default_rng()
    large = large or max(1, round(m / 4))
    if not 1 <= large <= m:
        raise InstanceError("large", f"must be in [1, m={m}], got {large}")
    small = m - large
    if small == 0:      # no small flows (m = large): the large flows share all the bandwidth
        large_share = 1.0
    D = np.zeros((n, n))
    rows = np.arange(n)
    for l in range(m):
        w = large_share / large if l < large else (1 - large_share) / small
        D[rows, rng.permutation(n)] += w
    return add_noise(D, noise, rng)


def shifts_matrix(n: int, weights) -> np.ndarray:
    """D = sum_k weights[k] * (cyclic shift by k)."""
    D = np.zeros((n, n))
    for k, w in enumerate(weights):
        D[np.arange(n), (np.arange(n) + k) % n] += w
    return D


def example_matrix() -> np.ndarray:
    """Worked example (Figs. 2-4): decomposes into weights 0.61, 0.3, 0.1."""
    return shifts_matrix(3, [0.61, 0.3, 0.1])


def random_matrix(n: int, density: float, rng: np.random.Generator) -> np.ndarray:
    """Entries U(0,1) with probability ``density``, else 0."""
    return np.where(rng.random((n, n)) < density, rng.random((n, n)), 0.0)


def generate(workload: str = "benchmark", n: int = 100, m: int = 16, large: int = 0,
             large_share: float = 0.7, noise: float = 0.003, density: float = 0.5,
             switches: int = 4, delay: float = 0.04, seed: int = 0, name: str = "") -> SpectraInstance:
    """One Spectra instance of the named workload (``solve.py generate spectra``)."""
    if n < 1:
        raise InstanceError("n", f"must be >= 1, got {n}")
    if m < 1:
        raise InstanceError("m", f"must be >= 1, got {m}")
    if not 0 < large_share < 1 and workload == "benchmark":
        raise InstanceError("large_share", f"must be in (0, 1), got {large_share}")
    if noise < 0:
        raise InstanceError("noise", f"must be >= 0, got {noise}")
    rng = np.random.default_rng(seed)
    if workload == "benchmark":
        D = benchmark_matrix(n, m, large, large_share, noise, rng)
        auto = f"bench-n{n}-m{m}-s{switches}-d{delay:g}-seed{seed}"
    elif workload == "example":
        D, auto = example_matrix(), "worked-example"
    elif workload == "shifts":
        D = add_noise(shifts_matrix(n, [0.5, 0.3, 0.2]), noise, rng)
        auto = f"shifts-n{n}-seed{seed}"
    elif workload == "random":
        if not 0 < density <= 1:
            raise InstanceError("density", f"must be in (0, 1], got {density}")
        D = random_matrix(n, density, rng)
        auto = f"random-n{n}-p{density:g}-seed{seed}"
    else:
        raise InstanceError("workload", f"unknown workload {workload!r} "
                            "(benchmark, example, shifts, random)")
    meta = {"workload": workload, "seed": seed}
    return SpectraInstance(D, switches, delay, name=name or auto, meta=meta)
