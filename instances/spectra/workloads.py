"""Spectra demand-matrix generators (Liang et al. 2026, Section V; spec section 4).

* ``benchmark_matrix`` - the standard benchmark of Solstice/Eclipse/LESS (spec 4.4): m
  random permutations per port, ``large`` of them sharing ``large_share`` of the
  bandwidth evenly, the rest sharing the remainder; Gaussian noise on the nonzeros.
* ``example_matrix`` - a 3x3 matrix with the weights of the paper's worked example
  (Figs. 2-4: 0.61, 0.3, 0.1 on disjoint shifts; Fig. 2's entries are not in the text).
* ``shifts_matrix`` - sum of disjoint cyclic shifts with given weights (spec 8.4).
* ``random_matrix`` - i.i.d. sparse uniform entries, for tiny exact-MILP checks.
* ``gpt_matrix`` - GPT-3B with TP=4, PP=4, DP=2 on 32 GPUs, Sinkhorn-normalized (spec 4.2).
* ``moe_matrix`` - Qwen2-57B-like MoE expert routing on 64 GPUs, sub-stochastic (spec 4.3).

The GPT and MoE matrices are synthetic reconstructions (spec 6.10), not the paper's
measured matrices, which are not published.
"""
from __future__ import annotations

import numpy as np

from instances.errors import InstanceError
from instances.spectra.instance import SpectraInstance


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


# ----------------------------------------------------------------------------------------
# AI workloads (spec 4.2, 4.3). Both are OUR synthetic reconstructions: the paper's
# measured GPT-3B (DeepSpeed, 32 RTX3090) and Qwen2-57B MoE (Megatron-LM, 64 H100)
# matrices are not published.
# ----------------------------------------------------------------------------------------
def sinkhorn(D: np.ndarray, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
    """Sinkhorn-Knopp: alternate row and column scaling until D is doubly stochastic.

    Converges when the support has total support (true for the GPT pattern, spec 4.2).
    """
    D = np.asarray(D, dtype=float).copy()
    if np.any(D.sum(axis=1) <= 0) or np.any(D.sum(axis=0) <= 0):
        raise InstanceError("demand", "Sinkhorn needs every row and column to carry traffic")
    for _ in range(max_iter):
        D /= D.sum(axis=1, keepdims=True)
        D /= D.sum(axis=0, keepdims=True)
        if np.abs(D.sum(axis=1) - 1).max() <= tol:
            return D
    raise InstanceError("demand", f"Sinkhorn did not converge in {max_iter} iterations "
                        "(the support has no total support)")


def gpt_traffic(tp: int = 4, pp: int = 4, dp: int = 2, layers: int = 32, hidden: int = 2560,
                seq: int = 2048, micro_batch: int = 1, n_micro: int = 8, params: float = 3e9,
                bytes_per_value: int = 2) -> np.ndarray:
    """Bytes per training iteration between the tp*pp*dp GPUs of GPT-3B under 3D parallelism.

    Spec 4.2 [OURS]: Megatron/DeepSpeed default rank mapping (TP fastest),
    rank(p, d, t) = p*DP*TP + d*TP + t; act = micro_batch*seq*hidden*bytes.
    TP: 4 ring all-reduces per layer per micro-batch -> (layers/PP)*4*n_micro*2(TP-1)/TP*act
        to the TP-ring successor. PP: n_micro*act/TP forward (p -> p+1) and backward
        (p+1 -> p). DP: ring all-reduce of the gradients, 2(DP-1)/DP*params/(TP*PP)*bytes to
        the DP-ring successor. Self-traffic (a ring of one) does not cross the network.
    """
    for name, v in (("tp", tp), ("pp", pp), ("dp", dp), ("layers", layers), ("hidden", hidden),
                    ("seq", seq), ("micro_batch", micro_batch), ("n_micro", n_micro)):
        if v < 1:
            raise InstanceError(name, f"must be >= 1, got {v}")
    if params <= 0:
        raise InstanceError("params", f"must be > 0, got {params}")
    n = tp * pp * dp
    rank = lambda p, d, t: p * dp * tp + d * tp + t
    act = micro_batch * seq * hidden * bytes_per_value
    tp_bytes = layers / pp * 4 * n_micro * 2 * (tp - 1) / tp * act
    pp_bytes = n_micro * act / tp
    dp_bytes = 2 * (dp - 1) / dp * params / (tp * pp) * bytes_per_value
    D = np.zeros((n, n))
    for p in range(pp):
        for d in range(dp):
            for t in range(tp):
                r = rank(p, d, t)
                D[r, rank(p, d, (t + 1) % tp)] += tp_bytes
                D[r, rank(p, (d + 1) % dp, t)] += dp_bytes
                if p + 1 < pp:
                    D[r, rank(p + 1, d, t)] += pp_bytes      # forward activations
                    D[rank(p + 1, d, t), r] += pp_bytes      # backward gradients
    np.fill_diagonal(D, 0.0)
    return D


def gpt_matrix(noise: float = 0.003, rng: np.random.Generator | None = None, **sizes) -> np.ndarray:
    """GPT-3B workload (spec 4.2): traffic normalized doubly stochastic (Sinkhorn), then
    N(0, noise^2) on the nonzeros (clipped at 0). Randomness comes from the noise only."""
    return add_noise(sinkhorn(gpt_traffic(**sizes)), noise, rng or np.random.default_rng())


MAX_LOG_SIGMA = 10.0     # log-popularity sigmas above this make one expert take all tokens


def moe_traffic(n: int = 64, top_k: int = 8, tokens_per_gpu: int = 4096, moe_layers: int = 28,
                pop_sigma: float = 0.25, drift_sigma: float = 0.1, include_combine: bool = False,
                local: bool = False, rng: np.random.Generator | None = None) -> np.ndarray:
    """Token counts between n GPUs, one expert each, for Qwen2-57B-A14B-like routing.

    Spec 4.3 [OURS]: expert popularity z_j ~ N(0, pop_sigma^2) fixed per matrix; per layer
    p_l ~ exp(z + N(0, drift_sigma^2)); each source GPU dispatches Multinomial(
    tokens_per_gpu*top_k, p_l) tokens per layer. ``include_combine`` adds the return
    traffic D^T; tokens routed to the local expert stay local unless ``local``.
    """
    rng = rng or np.random.default_rng()
    for name, v in (("n", n), ("top_k", top_k), ("tokens_per_gpu", tokens_per_gpu),
                    ("moe_layers", moe_layers)):
        if v < 1:
            raise InstanceError(name, f"must be >= 1, got {v}")
    for name, v in (("pop_sigma", pop_sigma), ("drift_sigma", drift_sigma)):
        if not (np.isfinite(v) and 0 <= v <= MAX_LOG_SIGMA):     # NaN fails every comparison
            raise InstanceError(name, f"must be a finite number in [0, {MAX_LOG_SIGMA:g}], got {v}")
    z = rng.normal(0.0, pop_sigma, n)
    D = np.zeros((n, n))
    for _ in range(moe_layers):
        w = np.exp(z + rng.normal(0.0, drift_sigma, n))
        D += rng.multinomial(tokens_per_gpu * top_k, w / w.sum(), size=n)
    if include_combine:
        D = D + D.T
    if not local:
        np.fill_diagonal(D, 0.0)
    return D


def moe_matrix(noise: float = 0.0, rng: np.random.Generator | None = None, **kw) -> np.ndarray:
    """MoE workload (spec 4.3): token counts divided by the max line sum (sub-stochastic:
    the hottest expert column sums to 1), then optional noise (Fig. 8)."""
    rng = rng or np.random.default_rng()
    D = moe_traffic(rng=rng, **kw)
    top = max(D.sum(axis=0).max(), D.sum(axis=1).max())
    if top > 0:
        D = D / top
    return add_noise(D, noise, rng)


WORKLOADS = ("benchmark", "gpt", "moe", "example", "shifts", "random")
MAX_N = 1024    # ports (and GPUs, flows per port): 10x the paper's largest n, a ~20 MB JSON file


def _check_gpt_sizes(tp: int, pp: int, dp: int) -> None:
    """The GPT sizes the generator accepts: the traffic must exist and be Sinkhorn-normalizable."""
    for f, v in (("tp", tp), ("pp", pp), ("dp", dp)):
        if v < 1:
            raise InstanceError(f, f"must be >= 1, got {v}")
    if not 2 <= tp * pp * dp <= MAX_N:
        raise InstanceError("tp*pp*dp", f"the number of GPUs must be in [2, {MAX_N}], got "
                            f"{tp}*{pp}*{dp} = {tp * pp * dp}")
    if tp == dp == 1 and pp > 2:
        # only the pipeline path p <-> p+1 carries traffic: its support has no total support
        # (no perfect matching for odd pp, unmatched middle links for even pp), so it cannot
        # be normalized doubly stochastic (spec 4.2)
        raise InstanceError("pp", f"with tp = dp = 1 the pipeline alone cannot be normalized "
                            f"doubly stochastic for pp > 2, got pp={pp}; use tp >= 2 or dp >= 2")
DEFAULT_NOISE = {"benchmark": 0.003, "gpt": 0.003, "moe": 0.0, "shifts": 0.003}


# the parameters of one workload only (the others ignore them)
WORKLOAD_PARAMS = {"m": "benchmark", "large": "benchmark", "large_share": "benchmark",
                   "density": "random", "tp": "gpt", "pp": "gpt", "dp": "gpt", "top_k": "moe",
                   "pop_sigma": "moe"}


def _check_workload_params(workload: str, given: dict) -> None:
    """[DECISION] A parameter of another workload, set to anything but its default, is an
    InstanceError naming it (it was ignored silently, nan included), as ``generate delta``
    refuses the SimAI-only ones without ``--from-simai``."""
    import inspect

    defaults = inspect.signature(generate).parameters
    for name, value in given.items():
        owner = WORKLOAD_PARAMS[name]
        if owner != workload and not value == defaults[name].default:
            raise InstanceError(name, f"applies only to --workload {owner}, got --workload "
                                f"{workload} (with {name} = {value!r})")


def generate(workload: str = "benchmark", n: int = 0, m: int = 16, large: int = 0,
             large_share: float = 0.7, noise: float | None = None, density: float = 0.5,
             tp: int = 4, pp: int = 4, dp: int = 2, top_k: int = 8, pop_sigma: float = 0.25,
             switches: int = 4, delay: float = 0.04, seed: int = 0, name: str = "") -> SpectraInstance:
    """One Spectra instance of the named workload (``solve.py generate spectra``).

    ``n = 0`` takes the workload's size (benchmark 100, moe 64, gpt tp*pp*dp = 32);
    ``noise = None`` its noise (0.003 for gpt and benchmark, 0 for moe; spec 6.12).
    """
    if workload not in WORKLOADS:
        raise InstanceError("workload", f"unknown workload {workload!r} ({', '.join(WORKLOADS)})")
    _check_workload_params(workload, dict(m=m, large=large, large_share=large_share,
                                          density=density, tp=tp, pp=pp, dp=dp, top_k=top_k,
                                          pop_sigma=pop_sigma))
    if workload == "gpt":
        _check_gpt_sizes(tp, pp, dp)
        if n not in (0, tp * pp * dp):
            raise InstanceError("n", f"gpt has n = tp*pp*dp = {tp * pp * dp} GPUs, got n={n}")
    n = n or {"moe": 64, "gpt": tp * pp * dp}.get(workload, 100)
    noise = DEFAULT_NOISE.get(workload, 0.0) if noise is None else noise
    if not 1 <= n <= MAX_N:
        raise InstanceError("n", f"must be in [1, {MAX_N}] (a dense n x n matrix), got {n}")
    if workload == "moe" and n < 2:
        raise InstanceError("n", f"moe needs n >= 2 GPUs (tokens for the local expert do not "
                            f"cross the network), got {n}")
    if not 1 <= m <= MAX_N:
        raise InstanceError("m", f"must be in [1, {MAX_N}], got {m}")
    if not 0 < large_share < 1 and workload == "benchmark":
        raise InstanceError("large_share", f"must be in (0, 1), got {large_share}")
    if not np.isfinite(noise) or noise < 0:
        raise InstanceError("noise", f"must be >= 0, got {noise}")
    if seed < 0:
        raise InstanceError("seed", f"must be >= 0, got {seed}")
    rng = np.random.default_rng(seed)
    tag = f"-s{switches}-d{delay:g}-seed{seed}"
    if workload == "benchmark":
        D = benchmark_matrix(n, m, large, large_share, noise, rng)
        auto = f"bench-n{n}-m{m}" + tag
    elif workload == "gpt":
        D = gpt_matrix(noise, rng, tp=tp, pp=pp, dp=dp)
        auto = f"gpt-tp{tp}pp{pp}dp{dp}" + tag
    elif workload == "moe":
        if not 1 <= top_k <= n:
            raise InstanceError("top_k", f"must be in [1, n={n}], got {top_k}")
        D = moe_matrix(noise, rng, n=n, top_k=top_k, pop_sigma=pop_sigma)
        auto = f"moe-n{n}" + tag
    elif workload == "example":
        D, auto = example_matrix(), "worked-example"
    elif workload == "shifts":
        D = add_noise(shifts_matrix(n, [0.5, 0.3, 0.2]), noise, rng)
        auto = f"shifts-n{n}-seed{seed}"
    else:
        if not 0 < density <= 1:
            raise InstanceError("density", f"must be in (0, 1], got {density}")
        D = random_matrix(n, density, rng)
        auto = f"random-n{n}-p{density:g}" + tag
    meta = {"workload": workload, "seed": seed}
    if workload in ("benchmark", "gpt", "moe", "shifts"):
        meta["noise"] = noise
    return SpectraInstance(D, switches, delay, name=name or auto, meta=meta)
