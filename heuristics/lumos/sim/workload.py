"""Job workloads for the LumosCore cluster simulator (spec 2.12, 4.2).

A ``SimJob`` is a job with its arrival time, its running time on the trace (T_trace) and
its communication ratios z_ar (AllReduce) and z_a2a (All2All): the simulator's running
time is T_trace * [(1 - z_ar - z_a2a) + z_ar CL_ar + z_a2a CL_a2a] (spec 4.2 [DECISION]).
Parallelism, model and ratios come from ``instances.lumos.placement_workloads.trace_job``
(spec 4.2 per-model ratios x U(0.8, 1.2)).

Arrivals (spec 2.12): Poisson, first at 0, exponential inter-arrivals at total rate
lambda = rho * n_gpus / E[k T], E[k T] the mean GPU-seconds of the jobs generated, so that
the workload level ([001] eq. 17 = [002] eq. 9) sum_k k lambda_k T_k / n_gpus is rho.

* ``trace_jobs``: sizes and durations from the authors' trace, in order, cycling.
* ``helios_jobs``: a Helios-style generator after the [REPO] hints of spec 4.2 (its
  [DECISION]s are in its docstring).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from instances.lumos.placement import Job
from instances.lumos.placement_workloads import TRACE, load_trace, trace_job

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SimJob:
    """One job of a simulation: ``id`` (0.. in arrival order), ``arrival_s``,
    ``duration_s`` = T_trace (its running time without contention), ``job`` (GPUs and
    TP/PP/DP/EP), ``z_ar`` / ``z_a2a`` communication ratios, ``model``."""

    id: int
    arrival_s: float
    duration_s: float
    job: Job
    z_ar: float
    z_a2a: float
    model: str = ""


def poisson_arrivals(work: np.ndarray, n_gpus: int, rho: float,
                     rng: np.random.Generator) -> np.ndarray:
    """Arrival times for jobs of GPU-seconds ``work`` (k T each) at workload level ``rho``:
    0, then cumulative Exp(1 / lambda) gaps, lambda = rho n_gpus / mean(work) (spec 2.12)."""
    lam = rho * n_gpus / float(np.mean(work))
    gaps = rng.exponential(1.0 / lam, len(work) - 1)
    return np.concatenate([[0.0], np.cumsum(gaps)])


def workload_level(jobs, n_gpus: int) -> float:
    """Measured workload level (eq. 17) of ``jobs`` over their arrival span: lambda_hat *
    mean(k T) / n_gpus with lambda_hat = (n - 1) / (last arrival - first arrival)."""
    jobs = list(jobs)
    t = np.array([j.arrival_s for j in jobs], dtype=float)
    if len(jobs) < 2 or t.max() <= t.min():
        raise ValueError("workload_level needs at least two jobs with distinct arrivals")
    work = np.array([j.job.gpus * j.duration_s for j in jobs], dtype=float)
    return float((len(jobs) - 1) / (t.max() - t.min()) * work.mean() / n_gpus)


def _sim_jobs(sizes, durations, n_gpus: int, rho: float, rng: np.random.Generator,
              T: int) -> list[SimJob]:
    """Jobs of the given sizes and durations by ``trace_job``, then Poisson arrivals."""
    built = [trace_job(int(n), rng, T) for n in sizes]
    durations = np.asarray(durations, dtype=float)
    arr = poisson_arrivals(np.asarray(sizes, dtype=float) * durations, n_gpus, rho, rng)
    return [SimJob(k, float(arr[k]), float(durations[k]), job, r["allreduce_ratio"],
                   r["all2all_ratio"], job.model) for k, (job, r) in enumerate(built)]


def _check(n_jobs: int, n_gpus: int, rho: float) -> None:
    if n_jobs < 1 or n_gpus < 1 or not rho > 0:
        raise ValueError(f"need n_jobs >= 1, n_gpus >= 1, rho > 0; got {n_jobs}, {n_gpus}, {rho}")


def trace_jobs(n_jobs: int, n_gpus: int, rho: float, seed: int, path: Path | str = TRACE,
               gpus_per_server: int = 8) -> list[SimJob]:
    """``n_jobs`` jobs with the sizes and durations of the trace at ``path`` (the shipped
    authors' trace by default), in trace order, cycling through it as often as needed; the
    trace's own arrival times are ignored (all 0 in the shipped one): Poisson arrivals at
    level ``rho`` on ``n_gpus`` GPUs. [DECISION] Trace jobs larger than ``n_gpus`` are
    skipped (the next ones are taken, so ``n_jobs`` are returned) and their count logged
    (INFO); ValueError when none fits. Deterministic in ``seed``."""
    _check(n_jobs, n_gpus, rho)
    trace = load_trace(path)
    fit = np.flatnonzero(trace[:, 2] <= n_gpus)
    if len(fit) == 0:
        raise ValueError(f"no trace job fits {n_gpus} GPUs (smallest: {trace[:, 2].min()})")
    rows = fit[np.arange(n_jobs) % len(fit)]
    scanned = (n_jobs - 1) // len(fit) * len(trace) + int(rows[-1]) + 1
    if scanned > n_jobs:
        log.info("trace_jobs: %d trace jobs larger than %d GPUs skipped", scanned - n_jobs,
                 n_gpus)
    rng = np.random.default_rng(seed)
    return _sim_jobs(trace[rows, 2], trace[rows, 1], n_gpus, rho, rng, gpus_per_server)


def helios_sizes(n_gpus: int, alpha: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(sizes, probabilities) of ``helios_jobs``: 2^k GPUs, 8 <= 2^k <= min(2048,
    n_gpus / 2), P(2^k) proportional to 2^(-alpha k)."""
    top = min(2048, n_gpus // 2)
    if top < 8:
        raise ValueError(f"helios_jobs needs n_gpus >= 16, got {n_gpus}")
    sizes = 2 ** np.arange(3, int(np.log2(top)) + 1)
    p = sizes.astype(float) ** -alpha
    return sizes, p / p.sum()


def helios_jobs(n_jobs: int, n_gpus: int, rho: float, seed: int, alpha: float = 1.0,
                gpus_per_server: int = 8) -> list[SimJob]:
    """Helios-style jobs after the [REPO] hints of spec 4.2, Poisson arrivals at level rho.

    * Sizes: powers of two from 8 to min(2048, n_gpus / 2), P(2^k) proportional to
      2^(-alpha k) ([DECISION]: the Helios -> TPUv4 size mapping is unpublished; the
      default alpha = 1 gives every size class the same expected GPU count, mean size
      9 / (1/4 - 1/2048) ~ 36 GPUs at n_gpus >= 4096; ``helios_sizes``).
    * Durations: [DECISION] log-uniform on [2880, 110000] s, the hull of the clip range
      (heavy-tailed; the Helios durations themselves are not shipped), then as [REPO]:
      clipped to [3600 U(0.8, 1.1), 100000 U(0.8, 1.1)] and rounded to 100 s.
    * TP / PP / DP / EP and model with its ratios: ``trace_job`` (PP from {4, 8, 16, 32}
      among the divisors of the TP-group count, else the largest power of two <= 32
      dividing it, i.e. capped by size; EP from {8, 16, 32, 64} dividing the size).
    Deterministic in ``seed``."""
    _check(n_jobs, n_gpus, rho)
    rng = np.random.default_rng(seed)
    sizes, p = helios_sizes(n_gpus, alpha)
    n = rng.choice(sizes, n_jobs, p=p)
    d = np.exp(rng.uniform(np.log(0.8 * 3600), np.log(1.1 * 100000), n_jobs))
    lo, hi = 3600 * rng.uniform(0.8, 1.1, n_jobs), 100000 * rng.uniform(0.8, 1.1, n_jobs)
    d = np.maximum(100.0, np.round(np.clip(d, lo, hi) / 100) * 100)
    return _sim_jobs(n, d, n_gpus, rho, rng, gpus_per_server)
