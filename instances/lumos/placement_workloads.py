"""Cluster states and jobs for ``lumos-placement`` from the authors' trace (spec 4.2).

Trace: ``instances/lumos/trace/request_sequence`` (a copy of the LumosCore authors' file,
MIT, see the README there): tuples (arrival_s, duration_s, n_gpus), 1574 jobs.

Job rules ([DECISION], after the [REPO] hints of spec 4.2; the authors' generator is not
copied): ``tp = gcd(n, T)`` (8 for the trace's multiples of 8; 1, 2 or 4 for its small
jobs); with k = n / tp TP groups, PP is drawn from {4, 8, 16, 32} among the divisors of k,
else the largest power of two <= 32 dividing k; ``dp = k / pp``; EP is drawn from
{8, 16, 32, 64} among the divisors of n, else 1 (no EP constraint); the model is drawn
from the five of spec 4.2 and its AllReduce / All2All communication ratios (spec 4.2,
each x U(0.8, 1.2)) go into the instance meta (the simulator's zeta; placement ignores
them).

Cluster states: ``trace_state`` places trace jobs (from a random offset, in trace order)
by the greedy until ``min(0.98, load + 0.2)`` of the GPUs are busy, then ends random
ones until at most ``load`` are (departures leave realistic holes); ``random_state``
marks whole servers busy independently with probability ``load``.
"""
from __future__ import annotations

import ast
from math import gcd
from pathlib import Path

import numpy as np

from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job, PlacementInstance

TRACE = Path(__file__).resolve().parent / "trace" / "request_sequence"
# spec 4.2 per-model communication ratios: (AllReduce, All2All)
MODEL_RATIOS = {"Pangu": (0.0737, 0.258), "llama_7b": (0.069, 0.255), "llama2_7b": (0.011, 0.052),
                "llama2_13b": (0.0017, 0.058), "GPT2_13b": (0.047, 0.145)}
PP_CHOICES = (4, 8, 16, 32)
EP_CHOICES = (8, 16, 32, 64)


def load_trace(path: Path | str = TRACE) -> np.ndarray:
    """(n, 3) int64 rows (arrival_s, duration_s, n_gpus); InstanceError naming ``trace``
    when the file is missing or malformed."""
    try:
        rows = ast.literal_eval(Path(path).read_text())
        arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
    except OSError as exc:
        raise InstanceError("trace", f"cannot read {path} ({exc.strerror})") from None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise InstanceError("trace", f"{path} is not a list of (arrival_s, duration_s, n_gpus)") from None
    if len(arr) == 0 or (arr[:, 1:] < 1).any() or (arr[:, 0] < 0).any():
        raise InstanceError("trace", f"{path}: needs jobs with arrival >= 0, duration >= 1, GPUs >= 1")
    return arr


def trace_job(n: int, rng: np.random.Generator, T: int = 8) -> tuple[Job, dict]:
    """A job of ``n`` GPUs by the module's rules, and its communication ratios."""
    tp = gcd(int(n), T)
    k = n // tp
    pps = [p for p in PP_CHOICES if k % p == 0]
    pp = int(rng.choice(pps)) if pps else max(p for p in (1, 2, 4, 8, 16, 32) if k % p == 0)
    eps = [e for e in EP_CHOICES if n % e == 0]
    ep = int(rng.choice(eps)) if eps else 1
    model = str(rng.choice(list(MODEL_RATIOS)))
    ar, a2a = MODEL_RATIOS[model]
    ratios = {"allreduce_ratio": round(ar * rng.uniform(0.8, 1.2), 5),
              "all2all_ratio": round(a2a * rng.uniform(0.8, 1.2), 5)}
    return Job(int(n), tp=tp, pp=pp, dp=k // pp, ep=ep, model=model), ratios


def make_cluster(gpus: int, k_leaf: int = 32, k_spine: int = 32, tau: int = 2, T: int = 8,
                 k_ocs: int = 512) -> Cluster:
    """The cluster of ``gpus`` GPUs with the given Pod shape (GPUs per Pod = k_spine k_leaf / tau)."""
    per_pod = k_spine * k_leaf // tau if tau > 0 else 0
    if per_pod <= 0 or gpus % per_pod or gpus < 2 * per_pod:
        raise InstanceError("gpus", f"must be a multiple of the {per_pod} GPUs per Pod "
                            f"(k_spine * k_leaf / tau), at least 2 Pods; got {gpus}")
    return Cluster(Fabric(gpus // per_pod, k_leaf, k_spine, tau, k_ocs), T)


def trace_state(cluster: Cluster, load: float, rng: np.random.Generator, trace: np.ndarray
                ) -> np.ndarray:
    """Busy mask (module docstring). O(jobs x n_gpus / vectorised)."""
    from heuristics.lumos.placement import NoPlacement, greedy_placement

    busy = np.zeros(cluster.n_gpus, dtype=bool)
    fill = min(0.98, load + 0.2) * cluster.n_gpus
    held = []
    k = int(rng.integers(len(trace)))
    for _ in range(4 * len(trace)):
        if busy.sum() >= fill:
            break
        n = int(trace[k % len(trace), 2])
        k += 1
        if n > (~busy).sum():
            continue
        job, _ = trace_job(n, rng, cluster.gpus_per_server)
        try:
            p = greedy_placement(PlacementInstance(cluster, busy, job))
        except NoPlacement:
            continue
        busy[p.gpus] = True
        held.append(p.gpus)
    for j in rng.permutation(len(held)):
        if busy.sum() <= load * cluster.n_gpus:
            break
        busy[held[j]] = False
    return busy


def random_state(cluster: Cluster, load: float, rng: np.random.Generator) -> np.ndarray:
    srv = rng.random(cluster.n_servers) < load
    return np.repeat(srv, cluster.gpus_per_server)
