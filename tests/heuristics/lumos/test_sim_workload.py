"""Simulator workloads (spec 2.12, 4.2): measured workload level near rho on long seeded
lists, determinism in the seed, trace order and cycling, skipped oversize jobs, the
Helios-style size and duration rules, the per-model ratios."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from heuristics.lumos.sim.workload import (SimJob, helios_jobs, helios_sizes, poisson_arrivals,
                                           trace_jobs, workload_level)
from instances.lumos.placement import Job
from instances.lumos.placement_workloads import MODEL_RATIOS, load_trace

TRACE = load_trace()


def fields(jobs):
    return [(j.id, j.arrival_s, j.duration_s, j.job, j.z_ar, j.z_a2a, j.model) for j in jobs]


def check_jobs(jobs):
    """Common rules: ids in arrival order from 0 at t = 0, ratios from spec 4.2 x U(0.8, 1.2)."""
    t = np.array([j.arrival_s for j in jobs])
    assert [j.id for j in jobs] == list(range(len(jobs)))
    assert t[0] == 0 and np.all(np.diff(t) >= 0)
    for j in jobs:
        ar, a2a = MODEL_RATIOS[j.model]
        assert j.job.model == j.model
        assert 0.8 * ar - 1e-5 <= j.z_ar <= 1.2 * ar + 1e-5
        assert 0.8 * a2a - 1e-5 <= j.z_a2a <= 1.2 * a2a + 1e-5


def test_workload_level_by_hand():
    """Two jobs: 4 GPUs x 10 s and 2 GPUs x 30 s, arrivals 0 and 5 s on 8 GPUs:
    lambda_hat = 1 / 5, mean(k T) = 50, level = 50 / 5 / 8 = 1.25."""
    jobs = [SimJob(0, 0.0, 10.0, Job(4, dp=4), 0.1, 0.1), SimJob(1, 5.0, 30.0, Job(2, dp=2), 0, 0)]
    assert workload_level(jobs, 8) == pytest.approx(1.25)
    with pytest.raises(ValueError):
        workload_level(jobs[:1], 8)


def test_poisson_arrivals_rate():
    """Mean gap 1 / lambda = mean(work) / (rho n_gpus) = 100 / (0.5 * 4) = 50 s."""
    t = poisson_arrivals(np.full(40001, 100.0), 4, 0.5, np.random.default_rng(0))
    assert t[0] == 0 and np.diff(t).mean() == pytest.approx(50, rel=0.02)


@pytest.mark.parametrize("rho", [0.655, 0.801])
def test_trace_jobs_level_order_and_seed(rho):
    jobs = trace_jobs(10000, 4096, rho, seed=7)
    assert len(jobs) == 10000
    assert workload_level(jobs, 4096) == pytest.approx(rho, rel=0.04)
    check_jobs(jobs)
    # trace order, cycling after 1574 rows (every shipped job fits 4096 GPUs)
    k = np.arange(10000) % len(TRACE)
    assert [j.job.gpus for j in jobs] == TRACE[k, 2].tolist()
    assert [j.duration_s for j in jobs] == TRACE[k, 1].astype(float).tolist()
    assert fields(trace_jobs(300, 4096, rho, seed=7)) == fields(trace_jobs(300, 4096, rho, seed=7))
    assert fields(trace_jobs(300, 4096, rho, seed=8)) != fields(trace_jobs(300, 4096, rho, seed=7))


def test_trace_jobs_skip_oversize_and_log(caplog):
    """On 64 GPUs every trace job above 64 is skipped; the next fitting ones are taken."""
    fit = TRACE[TRACE[:, 2] <= 64]
    n = len(fit) + 10                                         # wraps around once
    with caplog.at_level(logging.INFO, logger="heuristics.lumos.sim.workload"):
        jobs = trace_jobs(n, 64, 0.5, seed=1)
    want = np.concatenate([fit[:, 2], fit[:10, 2]])
    assert [j.job.gpus for j in jobs] == want.tolist()
    tenth = np.flatnonzero(TRACE[:, 2] <= 64)[9]                 # last row taken, 2nd pass
    skipped = len(TRACE) - len(fit) + int(np.sum(TRACE[:tenth + 1, 2] > 64))
    assert f"{skipped} trace jobs larger than 64 GPUs skipped" in caplog.text
    with pytest.raises(ValueError):
        trace_jobs(3, 0, 0.5, seed=1)


def test_helios_sizes_distribution():
    s, p = helios_sizes(4096)
    assert s.tolist() == [8, 16, 32, 64, 128, 256, 512, 1024, 2048]
    assert np.allclose(p * s, (p * s)[0])                     # alpha 1: equal GPUs per class
    assert (s * p).sum() == pytest.approx(9 / (1 / 4 - 1 / 2048), rel=1e-12)
    assert helios_sizes(100)[0].tolist() == [8, 16, 32]       # <= n_gpus / 2
    s2, p2 = helios_sizes(4096, alpha=0.5)
    assert np.allclose(p2 * np.sqrt(s2), (p2 * np.sqrt(s2))[0])
    with pytest.raises(ValueError):
        helios_sizes(15)


def test_helios_jobs_rules_level_and_seed():
    jobs = helios_jobs(10000, 4096, 0.655, seed=3)
    check_jobs(jobs)
    assert workload_level(jobs, 4096) == pytest.approx(0.655, rel=0.04)
    n = np.array([j.job.gpus for j in jobs])
    s, p = helios_sizes(4096)
    freq = np.array([(n == x).mean() for x in s])
    assert np.isin(n, s).all()
    assert np.all(np.abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / len(n)) + 1e-3)
    d = np.array([j.duration_s for j in jobs])
    assert np.all(d % 100 == 0) and d.min() >= 2800 and d.max() <= 110000
    assert (d < 3600).any() and (d > 100000).any()            # the U(0.8, 1.1) clip bounds
    for j in jobs:
        job = j.job
        assert job.tp == 8 and job.ep in (8, 16, 32, 64) and job.gpus % job.ep == 0
        groups = job.gpus // 8
        assert job.pp in (4, 8, 16, 32) if groups >= 4 else job.pp == groups
    assert fields(helios_jobs(200, 512, 0.8, seed=3)) == fields(helios_jobs(200, 512, 0.8, seed=3))
    assert fields(helios_jobs(200, 512, 0.8, seed=4)) != fields(helios_jobs(200, 512, 0.8, seed=3))
    assert max(j.job.gpus for j in helios_jobs(500, 512, 0.8, seed=3)) == 256
