"""All-to-all traffic generators (paper Sec. 5.1; spec 5.2, A13, A14).

* ``uniform`` - every ordered pair sends S (the paper's Uniform workload).
* ``random``  - S_f ~ U(0, 2 S) i.i.d. per ordered pair (mean S; spec A13).
* ``zipf``    - the N = n(n-1) flows get a random rank r (a permutation) and
  S_f = S * N * r^-s / sum_i i^-s with s = 0.4 (paper: "Zipfian ... factor=0.4"); mean exactly S.
  ``numpy.random.zipf`` needs an exponent > 1, so 0.4 is a rank exponent (spec 5.2).
* ``example`` - the motivating example (Sec. 2.3): n = 8, k = 1, one chunk per pair, R = 7T.

1 MB = 10^6 bytes (A14). With ``T > 0`` traffic is in chunks and tau(S) = T * S.
"""
from __future__ import annotations

import numpy as np

from instances.a2a.instance import A2AInstance, Link
from instances.errors import InstanceError

MB = 1e6
ZIPF_EXPONENT = 0.4


def random_matrix(n: int, mean: float, rng: np.random.Generator) -> np.ndarray:
    """U(0, 2 mean) per off-diagonal entry (strictly positive draws)."""
    A = rng.uniform(0.0, 2.0 * mean, (n, n))
    A = np.where(A > 0, A, mean)          # a 0.0 draw has probability ~0; keep every flow
    np.fill_diagonal(A, 0.0)
    return A


def zipf_matrix(n: int, mean: float, rng: np.random.Generator,
                exponent: float = ZIPF_EXPONENT) -> np.ndarray:
    """Rank-Zipf sizes over the n(n-1) flows, normalized to the given mean (spec 5.2)."""
    N = n * (n - 1)
    w = np.arange(1, N + 1, dtype=float) ** -exponent
    sizes = mean * N * w / w.sum()
    A = np.zeros((n, n))
    off = ~np.eye(n, dtype=bool)
    A[off] = sizes[rng.permutation(N)]
    return A


def _check_applies(workload: str, T: float, given: dict) -> None:
    """[DECISION] A parameter the instance would not use, set to anything but its default,
    is an InstanceError naming it (it was ignored silently, whatever its value): every one
    but ``seed`` and ``name`` with the fixed example, the physical link with ``T > 0``."""
    import inspect

    defaults = inspect.signature(generate).parameters
    physical = ("bandwidth_gbps", "latency_s", "chunk_mb")
    for name, value in given.items():
        if value == defaults[name].default:
            continue
        if workload == "example":
            raise InstanceError(name, f"does not apply to --workload example (the paper's "
                                f"fixed instance, Sec. 2.3), got {value!r}")
        if name in physical and T > 0:
            raise InstanceError(name, f"does not apply with --T > 0 (T-unit mode, tau(S) = "
                                f"T * S), got {value!r}")


def generate(workload: str = "uniform", n: int = 16, k: int = 1, R: float = 1e-5,
             size_mb: float = 32.0, T: float = 0.0, bandwidth_gbps: float = 800.0,
             latency_s: float = 500e-9, chunk_mb: float = 4.0, seed: int = 0,
             name: str = "") -> A2AInstance:
    """One all-to-all instance (``solve.py generate a2a``).

    Physical units by default (800 Gb/s, 500 ns, 4 MB chunks, sizes in MB, R in seconds).
    With ``T > 0``: traffic in chunks (``size_mb`` is then the mean number of chunks per flow)
    and R in the same time unit as T (the paper's T-unit examples).
    """
    _check_applies(workload, T, dict(n=n, k=k, R=R, size_mb=size_mb, T=T,
                                     bandwidth_gbps=bandwidth_gbps, latency_s=latency_s,
                                     chunk_mb=chunk_mb))
    if workload == "example":
        return A2AInstance(8, 1, 7.0, Link.from_dict({"T": 1.0}), uniform_size=1.0,
                           name=name or "motivating-example",
                           meta={"workload": "example", "paper": "Sec. 2.3, Figs. 3-5"})
    if n < 2:
        raise InstanceError("n", f"must be >= 2, got {n}")
    if not size_mb > 0:
        raise InstanceError("size_mb", f"must be > 0, got {size_mb}")
    if not T >= 0:
        raise InstanceError("T", f"must be >= 0 (0 = physical units, > 0 = T-unit mode), got {T}")
    if seed < 0:
        raise InstanceError("seed", f"must be >= 0, got {seed}")
    if T > 0:
        link, mean = Link.from_dict({"T": T}), float(size_mb)
    else:
        link = Link.from_dict({"bandwidth_gbps": bandwidth_gbps, "latency_s": latency_s,
                               "chunk_bytes": chunk_mb * MB})
        mean = size_mb * MB
    rng = np.random.default_rng(seed)
    uni = None
    if workload == "uniform":
        A, uni = None, mean
    elif workload == "random":
        A = random_matrix(n, mean, rng)
    elif workload == "zipf":
        A = zipf_matrix(n, mean, rng)
    else:
        raise InstanceError("workload", f"unknown workload {workload!r} (uniform, random, zipf, example)")
    auto = f"{workload}-n{n}-k{k}-{size_mb:g}{'u' if T > 0 else 'MB'}-R{R:g}" + \
        ("" if workload == "uniform" else f"-seed{seed}")
    return A2AInstance(n, k, R, link, traffic=A, uniform_size=uni, name=name or auto,
                       meta={"workload": workload, "seed": seed, "size_mb": size_mb})
