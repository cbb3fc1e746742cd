"""The cluster simulator's event loop on hand-computed cases (issue 16 item 2): one job
alone, two jobs sharing one link, FIFO waiting, the OCS algorithm's time in JWT, slower
NICs; and the real architectures end to end on a small cluster."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import scipy.sparse as sp

from heuristics.lumos.sim.controller import Reconfiguration
from heuristics.lumos.sim.engine import Simulator
from heuristics.lumos.sim.traffic import Flows
from heuristics.lumos.sim.workload import SimJob
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job

CL = Cluster(Fabric(2, 8, 8, 2), 8)      # 2 Pods x 4 leaves x 1 server of 8 GPUs


class OneLink:
    """Every flow crosses one link of ``cap`` Gb/s."""

    def __init__(self, cap=1600.0, nic=1600.0):
        self.capacity, self.nic_gbps = np.array([cap]), nic

    def route_mask(self, src, dst, key):
        n = len(src)
        return sp.csc_matrix(np.ones((1, n))), np.zeros(n, dtype=bool)


class NoLinks(OneLink):
    def __init__(self, nic=1600.0):
        self.capacity, self.nic_gbps = np.zeros(0), nic

    def route_mask(self, src, dst, key):
        n = len(src)
        return sp.csc_matrix((0, n)), np.zeros(n, dtype=bool)


@dataclass
class FakeArch:
    cluster: Cluster
    network: object
    controller: object = None
    name: str = "fake"

    def network_changed(self):
        pass


def one_flow(p, job_id, cls=0):
    """One unit flow of class ``cls`` from the job's first GPU to its last."""
    g = p.gpus
    return Flows(np.array([g[0]]), np.array([g[-1]]), np.array([1]), np.array([1]),
                 np.array([cls]), np.array([job_id]))


def job(i, arrival, T, gpus=8, z_ar=0.5, z_a2a=0.0):
    return SimJob(i, float(arrival), float(T), Job(gpus, tp=8, dp=gpus // 8), z_ar, z_a2a)


def run(arch, jobs, **kw):
    return Simulator(arch, flows=kw.pop("flows", one_flow), **kw).run(jobs).jobs.set_index("job")


def test_one_job_alone_runs_its_trace_time():
    df = run(FakeArch(CL, OneLink()), [job(0, 3.0, 100.0)])
    assert df.loc[0, "jrt_s"] == pytest.approx(100.0)
    assert df.loc[0, "jwt_s"] == 0 and df.loc[0, "jct_s"] == pytest.approx(100.0)
    assert df.loc[0, "cl_ar"] == pytest.approx(1.0)


def test_two_jobs_sharing_one_link():
    # 0-50: A alone at 1600 (CL 1). From 50 both get 800: CL 2, s = 0.5 + 0.5 * 2 = 1.5.
    # A's 50 s left take 75 s (ends 125); B then has 100 - 75 / 1.5 = 50 left, alone: 175.
    df = run(FakeArch(CL, OneLink()), [job(0, 0, 100.0), job(1, 50, 100.0)])
    assert df.loc[0, "finish_s"] == pytest.approx(125.0)
    assert df.loc[1, "finish_s"] == pytest.approx(175.0)
    assert df.loc[0, "cl_ar"] == pytest.approx((50 * 1 + 75 * 2) / 125)
    assert df.loc[1, "cl_ar"] == pytest.approx((75 * 2 + 50 * 1) / 125)


def test_all_to_all_share_counts_its_own_ratio():
    # class-1 flow, z_a2a = 0.2: both jobs from 0 at CL 2: s = 0.8 + 0.2 * 2 = 1.2
    flows = lambda p, j: one_flow(p, j, cls=1)      # noqa: E731
    df = run(FakeArch(CL, OneLink()), [job(0, 0, 60.0, z_ar=0, z_a2a=0.2),
                                       job(1, 0, 60.0, z_ar=0, z_a2a=0.2)], flows=flows)
    assert df.jrt_s.tolist() == pytest.approx([72.0, 72.0])
    assert df.cl_a2a.tolist() == pytest.approx([2.0, 2.0])


def test_slower_nic_doubles_the_communication_share():
    # an 800 Gb/s NIC against Best's 1.6 Tb/s: CL 2 with no link at all
    df = run(FakeArch(CL, NoLinks(nic=800.0)), [job(0, 0, 100.0, z_ar=0.3)])
    assert df.loc[0, "jrt_s"] == pytest.approx(100.0 * (0.7 + 0.3 * 2))


def test_fifo_head_waits_for_gpus_and_blocks_the_queue():
    # A holds all 64 GPUs until 100; B (64 GPUs) starts then; C (8 GPUs), behind B in the
    # queue, finds no free GPU until B ends at 150 (strict FIFO).
    jobs = [job(0, 0, 100.0, gpus=64), job(1, 10, 50.0, gpus=64), job(2, 20, 10.0)]
    df = run(FakeArch(CL, NoLinks()), jobs)
    assert df.loc[1, "start_s"] == pytest.approx(100.0) and df.loc[1, "jwt_s"] == pytest.approx(90.0)
    assert df.loc[2, "start_s"] == pytest.approx(150.0)


class FixedController:
    """Every admission is a reconfiguration that takes ``wall`` seconds."""

    def __init__(self, wall):
        self.wall, self.released = wall, []

    def admit(self, p, job_id, t):
        return Reconfiguration(t, self.wall, False, "fixed")

    def release(self, job_id):
        self.released.append(job_id)


def test_algorithm_time_enters_the_waiting_time_one_admission_at_a_time():
    ctrl = FixedController(5.0)
    jobs = [job(0, 0, 10.0), job(1, 0, 10.0), job(2, 12, 10.0)]
    df = run(FakeArch(CL, NoLinks(), ctrl), jobs)
    # the controller is one server: starts at 5 and 10; job 2 arrives at 12, starts at 17
    assert df.start_s.tolist() == pytest.approx([5.0, 10.0, 17.0])
    assert df.jwt_s.tolist() == pytest.approx([5.0, 10.0, 5.0])
    assert sorted(ctrl.released) == [0, 1, 2]
    df0 = run(FakeArch(CL, NoLinks(), FixedController(5.0)), jobs, alg_time="none")
    assert df0.jwt_s.tolist() == [0, 0, 0]


def test_a_job_larger_than_the_cluster_is_dropped_and_counted():
    res = Simulator(FakeArch(CL, NoLinks()), flows=one_flow).run(
        [job(0, 0, 10.0), SimJob(1, 0.0, 10.0, Job(128, tp=8, dp=16), 0.1, 0.0)])
    assert res.jobs.job.tolist() == [0] and res.stats["dropped_too_big"] == 1


def _keys_with(pred, n):
    """The first ``n`` keys (0, 1, ...) whose ECMP choices satisfy ``pred``."""
    from heuristics.lumos.sim.networks import mix64
    out, k = [], 0
    while len(out) < n:
        if pred(lambda salt: int(mix64(np.array([k]), salt)[0] % np.uint64(2))):
            out.append(k)
        k += 1
    return out


@pytest.mark.parametrize("ecmp, routing", [("polarized", "ecmp"), ("independent", "ecmp"),
                                           ("polarized", "probing"), ("polarized", "optimal")])
def test_clos_hash_polarisation_doubles_the_contention(ecmp, routing):
    """k = 4 three-tier Clos (16 GPUs, ToR = 2 GPUs, 2-tier blocks of 4). Flow A: GPU 0 ->
    GPU 8, flow B: GPU 2 -> GPU 12, both cross-block. Keys with tier-1 port 0 for both and,
    under the independent hash, different tier-2 ports. Polarized: tier 2 repeats port 0 for
    both, so both climb agg 0 -> core 0 of block 0: one 1600 Gb/s link, 800 each, CL 2,
    JRT = T (0.5 + 0.5 * 2) = 150. Independent: different cores, no shared link: JRT 100.
    Probing (issue 31): B, routed after A, sees A on agg 0 -> core 0 and takes a rehash
    through the other aggregation switch: JRT 100; the contention-free optimum: 100."""
    from heuristics.lumos.sim.clos import ClosNetwork

    net = ClosNetwork(16, 4, 3, 1600.0, ecmp=ecmp, gpus_per_server=2)
    if ecmp == "polarized":
        ka, kb = _keys_with(lambda p: p(0) == 0, 2)
    else:
        ka = _keys_with(lambda p: p(1) == 0 and p(2) == 0, 1)[0]
        kb = _keys_with(lambda p: p(1) == 0 and p(2) == 1, 1)[0]
    fixed = {0: (0, 8, ka), 1: (2, 12, kb)}

    def flows(p, j):
        s, d, k = fixed[j]
        return Flows(np.array([s]), np.array([d]), np.array([1]), np.array([1]),
                     np.array([0]), np.array([k]))
    jobs = [SimJob(0, 0.0, 100.0, Job(2, tp=2), 0.5, 0.0), SimJob(1, 0.0, 100.0, Job(2, tp=2), 0.5, 0.0)]
    df = run(FakeArch(net.cluster, net), jobs, flows=flows, routing=routing)
    want = 150.0 if (ecmp, routing) == ("polarized", "ecmp") else 100.0
    assert df.jrt_s.tolist() == pytest.approx([want, want])
    assert df.cl_ar.tolist() == pytest.approx([want / 50 - 1] * 2)


@pytest.mark.parametrize("arch", ["best", "clos-25.6T-3tier", "lumos-51.2T-tau2", "uniform-51.2T-tau2"])
def test_real_architectures_keep_the_schedule_invariants(arch):
    """A small cluster (256 GPUs) and 40 Helios-style jobs: every rate vector of the run is
    max-min fair by the definition (``check_rates``); every job finishes; strict FIFO
    (starts in arrival order); the GPUs in use never exceed the cluster; on Best JRT equals
    the trace time; elsewhere JRT >= (1 - z) T and every OCS configuration passes the
    lumos-reconfig checker (controller check=True)."""
    from heuristics.lumos.sim.architectures import make_arch
    from heuristics.lumos.sim.workload import helios_jobs
    from toolkit.registry import RunConfig

    jobs = helios_jobs(40, 256, 0.9, seed=3)
    a = make_arch(arch, 256, cfg=RunConfig(backend="highs"), check=True)
    res = Simulator(a, check_rates=True).run(jobs)       # every rate vector max-min fair
    df = res.jobs.sort_values("job")
    assert len(df) == len(jobs)
    assert df.sort_values("arrival_s").start_s.is_monotonic_increasing
    ev = sorted([(s, g) for s, g in zip(df.start_s, df.gpus)] +
                [(f, -g) for f, g in zip(df.finish_s, df.gpus)], key=lambda x: (x[0], x[1]))
    assert max(np.cumsum([g for _, g in ev])) <= 256
    z = {j.id: j.z_ar + j.z_a2a for j in jobs}
    T = {j.id: j.duration_s for j in jobs}
    if arch == "best":
        assert df.jrt_s.to_numpy() == pytest.approx(df.trace_s.to_numpy())
    assert all(r.jrt_s >= (1 - z[r.job]) * T[r.job] - 1e-6 for r in df.itertuples())
    if a.controller is not None:
        assert len(res.reconfigs) > 0
