"""Probing-based routing, the contention-free optimum and GPU failures in the cluster
simulator (issue 31 item 1; heuristics.lumos.sim.routing, .failures)."""
from __future__ import annotations

import numpy as np
import pytest

from heuristics.lumos.sim.architectures import make_arch
from heuristics.lumos.sim.clos import ClosNetwork
from heuristics.lumos.sim.engine import Simulator
from heuristics.lumos.sim.failures import FailureModel, FailureProcess
from heuristics.lumos.sim.routing import PROBES, Router, candidate_keys, padded_links, probe
from heuristics.lumos.sim.traffic import Flows
from heuristics.lumos.sim.workload import helios_jobs


def _flows(rng, n, n_gpus):
    src = rng.integers(0, n_gpus, n)
    dst = (src + rng.integers(1, n_gpus, n)) % n_gpus
    return Flows(src, dst, rng.integers(1, 4, n), np.ones(n, np.int64),
                 rng.integers(0, 2, n).astype(np.int8), rng.integers(0, 2 ** 62, n))


@pytest.mark.parametrize("seed", range(6))
def test_probing_keeps_the_widest_candidate_in_order(seed):
    """Each flow, in row order, takes a candidate whose bottleneck share (capacity over the
    unit flows of its class already there plus its own) is the largest of its PROBES
    candidates: never below the ECMP path's nor the worst one's; the load is the sum of the
    chosen paths. Checked by a plain re-computation."""
    rng = np.random.default_rng(seed)
    net = ClosNetwork(128, 8, 3, 800.0, ecmp=("polarized", "independent")[seed % 2],
                      gpus_per_server=4)
    fl = _flows(rng, 300, 128)
    load = np.zeros((2, net.n_links))
    keys = probe(net, fl, load)
    cands = [padded_links(net.route(fl.src, fl.dst, k)) for k in candidate_keys(fl.key)]
    chosen = padded_links(net.route(fl.src, fl.dst, keys))
    ref = np.zeros((2, net.n_links))
    share = lambda path, f: min((net.capacity[l] / (ref[fl.cls[f], l] + fl.weight[f])
                                 for l in path if l >= 0), default=np.inf)
    for f in range(len(fl)):
        opts = [share(c[f], f) for c in cands]
        got = share(chosen[f], f)
        assert got == max(opts) >= opts[0] >= min(opts) or got == max(opts) >= min(opts)
        assert any((chosen[f] == c[f]).all() for c in cands)
        for l in chosen[f][chosen[f] >= 0]:
            ref[fl.cls[f], l] += fl.weight[f]
    assert np.array_equal(ref, load)


def test_probing_spreads_what_polarized_ecmp_piles_up():
    """Polarized ECMP on a 3-tier Clos: many flows from one ToR; probing's worst link load
    is at most ECMP's."""
    net = ClosNetwork(128, 8, 3, 800.0, ecmp="polarized", gpus_per_server=4)
    n = 64
    fl = Flows(np.arange(n) % 4, 64 + np.arange(n), np.ones(n, np.int64),
               np.ones(n, np.int64), np.zeros(n, np.int8), np.arange(n, dtype=np.int64) * 7919)
    load = np.zeros((2, net.n_links))
    probe(net, fl, load)
    ecmp = np.asarray(net.route(fl.src, fl.dst, fl.key).sum(axis=1)).ravel()
    assert load[0].max() < ecmp.max()


@pytest.mark.parametrize("arch", ["clos-25.6T-3tier", "lumos-25.6T-tau1", "uniform-25.6T-tau1"])
def test_routings_are_deterministic_conserve_load_and_the_optimum_is_fastest(arch):
    """Same input, same output (twice); probing takes every unit flow off its links when
    its job ends or is re-routed (load 0 at the end); the contention-free optimum's
    per-job JRT is the lowest of the three routings and its Avg.JCT too."""
    jobs = helios_jobs(40, 256, 0.9, seed=5)
    out = {}
    for routing in ("ecmp", "probing", "optimal"):
        runs = [Simulator(make_arch(arch, 256), alg_time="none", routing=routing).run(jobs)
                for _ in range(2)]
        a, b = (r.jobs.sort_values("job") for r in runs)
        assert a.jct_s.tolist() == b.jct_s.tolist()
        assert runs[0].stats["probe_load_left"] == 0.0
        out[routing] = a.set_index("job")
    assert (out["optimal"].cl_ar <= out["ecmp"].cl_ar + 1e-9).all()
    for r in ("ecmp", "probing"):
        assert out["optimal"].jct_s.mean() <= out[r].jct_s.mean() + 1e-6
    assert out["probing"].jct_s.mean() <= out["ecmp"].jct_s.mean() * 1.02


def test_router_refuses_unknown_modes():
    with pytest.raises(ValueError, match="routing"):
        Router("spray")
    with pytest.raises(ValueError, match="routing"):
        Simulator(make_arch("best", 256), routing="spray")
    assert candidate_keys(np.arange(3)).shape == (PROBES, 3)


def test_failure_process_down_share_is_its_rate():
    """Little's law: the time-average share of GPUs down over a long horizon is the rate
    (within 10 %, 20,000 failures); a failure never hits a GPU already down."""
    m = FailureModel(0.05, seed=1, hard_s=7200.0)
    fp = FailureProcess(m, 1000)
    down = np.zeros(1000, dtype=bool)
    heap, t, area = [], 0.0, 0.0
    import heapq
    while fp.count < 20_000:
        nxt = min(fp.next_t, heap[0][0] if heap else np.inf)
        area += down.sum() * (nxt - t)
        t = nxt
        if heap and heap[0][0] <= fp.next_t:
            down[heapq.heappop(heap)[1]] = False
        else:
            g, back = fp.fail(down)
            assert not down[g]
            down[g] = True
            heapq.heappush(heap, (back, g))
    assert area / t / 1000 == pytest.approx(0.05, rel=0.1)


def test_failures_are_seeded_and_cost_capacity():
    """A loaded cluster with 2 % of its GPUs down: the same seed gives the same run,
    another seed another; jobs wait longer than without failures; every job finishes."""
    jobs = helios_jobs(60, 256, 1.2, seed=2)
    run = lambda f: Simulator(make_arch("clos-25.6T-3tier", 256), alg_time="none",
                              routing="ecmp", failures=f).run(jobs)
    base = run(None)
    a, b = run(FailureModel(0.02, seed=3)), run(FailureModel(0.02, seed=3))
    c = run(FailureModel(0.02, seed=4))
    assert a.stats["failures"] > 0 and len(a.jobs) == len(jobs)
    assert a.jobs.jct_s.tolist() == b.jobs.jct_s.tolist()
    assert a.jobs.jct_s.tolist() != c.jobs.jct_s.tolist()
    assert a.jobs.jwt_s.mean() > base.jobs.jwt_s.mean()
    with pytest.raises(ValueError, match="rate"):
        FailureModel(1.0)
