"""The lumos-sim checker (instances/lumos/sim_check.py): a hand-computed schedule on Best,
one corrupted solution per rule, and the simulator's own output accepted on every kind of
architecture (hypothesis over explicit job lists)."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from instances.lumos.sim import SimInstance, SimSolution
from instances.lumos.sim_check import check_sim

# 256 GPUs: job 0 takes the whole cluster for 100 s; jobs 1 (8 GPUs, 50 s) and 2 (128 GPUs,
# 30 s) queue behind it and both start at 100 s (FIFO, 136 GPUs fit)
JOBS = [[0, 100, 256, 8, 1, 32, 1, 0.1, 0.2], [10, 50, 8, 8, 1, 1, 1, 0.05, 0.0],
        [20, 30, 128, 8, 2, 8, 8, 0.0, 0.3]]


def inst(arch="best", jobs=JOBS):
    return SimInstance.from_dict({"problem": "lumos-sim", "arch": arch, "gpus": 256, "jobs": jobs})


def rec(job, arrival, admitted, start, finish):
    return dict(job=job, arrival_s=arrival, admitted_s=admitted, start_s=start, finish_s=finish,
                jrt_s=finish - start, jwt_s=start - arrival, jct_s=finish - arrival,
                cl_ar=1.0, cl_a2a=1.0)


HAND = [rec(0, 0, 0, 0, 100), rec(1, 10, 100, 100, 150), rec(2, 20, 100, 100, 130)]


def check(records, reconfigs=(), arch="best"):
    return check_sim(inst(arch), SimSolution(copy.deepcopy(list(records)), list(reconfigs)))


def test_hand_schedule_is_valid_and_its_metrics_are_hand_computed():
    bad, m = check(HAND)
    assert bad == []
    assert m["avg_jct_s"] == pytest.approx((100 + 140 + 110) / 3)
    assert m["avg_jwt_s"] == pytest.approx((0 + 90 + 80) / 3)
    assert m["avg_jrt_s"] == pytest.approx(60) and m["mean_slowdown"] == 1
    assert m["p99_jct_s"] == pytest.approx(110 + 0.98 * 30)    # linear, sorted 100, 110, 140
    assert m["makespan_s"] == 150 and m["jobs"] == 3 and m["reconfigurations"] == 0
    assert m["reconfig_s_mean"] is None


def test_the_simulator_computes_the_hand_schedule():
    from heuristics.lumos.sim.architectures import make_arch
    from heuristics.lumos.sim.engine import Simulator

    i = inst()
    res = Simulator(make_arch("best", 256)).run(i.jobs)
    got = res.jobs.sort_values("job")[["start_s", "finish_s"]].to_numpy()
    assert np.allclose(got, [[0, 100], [100, 150], [100, 130]])
    assert check_sim(i, SimSolution(res.jobs.to_dict("records"), []))[0] == []


@pytest.mark.parametrize("edit, words", [
    (lambda r: r.pop(1), "1 jobs never finished (first: job 1)"),
    (lambda r: r.append(dict(r[2])), "job 2 finished 2 times"),
    (lambda r: r[0].update(job=7), "job 7 is not a job of the instance"),
    (lambda r: r[0].update(start_s="x"), "start_s must be a finite number"),
    (lambda r: r[2].update(finish_s=None), "finish_s must be a finite number"),
    # 2. arrival <= admitted <= start, admitted == start without OCS
    (lambda r: r.__setitem__(2, rec(2, 20, 15, 15, 45)), "job 2 is admitted at 15 s, before its arrival"),
    (lambda r: r.__setitem__(2, rec(2, 20, 101, 100, 130)), "before its admission"),
    (lambda r: r.__setitem__(2, rec(2, 20, 100, 100.5, 130.5)), "no OCS algorithm to wait for"),
    # 3. FIFO: job 1 arrived first but is admitted after job 2
    (lambda r: r.__setitem__(1, rec(1, 10, 101, 101, 151)), "not FIFO: job 2"),
    # 4. 256 + 8 GPUs at 95 s
    (lambda r: r.__setitem__(1, rec(1, 10, 95, 95, 145)), "264 GPUs held at t = 95"),
    # 5. faster than its trace time
    (lambda r: r.__setitem__(2, rec(2, 20, 100, 100, 120)), "job 2 runs 20 s, less than its trace time"),
    (lambda r: r.__setitem__(2, rec(2, 20, 100, 100, 135)), "job 2 runs 35 s on best"),
    # 6. recorded times
    (lambda r: r[1].update(jct_s=141), "recorded jct_s = 141, expected 140 (JCT = JWT + JRT)"),
    (lambda r: r[1].update(jwt_s=80, jct_s=130), "recorded jwt_s = 80, expected 90"),
    (lambda r: r[1].update(jrt_s=60, jct_s=150), "recorded jrt_s = 60, expected 50"),
])
def test_each_corruption_is_rejected(edit, words):
    recs = copy.deepcopy(HAND)
    edit(recs)
    bad, _ = check(recs)
    assert any(words in b for b in bad), bad


def test_reconfigurations_only_on_ocs_fabrics():
    rc = [dict(t=0.0, wall_s=0.01, method="itv-mdmcf", job=0)]
    bad, _ = check(HAND, rc)
    assert any("no OCS" in b for b in bad), bad
    bad, m = check(HAND, rc, arch="lumos-51.2T-tau2")
    assert bad == [] and m["reconfigurations"] == 1 and m["reconfig_s_max"] == 0.01


def test_contention_and_algorithm_delay_are_allowed_off_best():
    slow = copy.deepcopy(HAND)
    slow[2] = rec(2, 20, 100, 100, 135)                  # JRT 35 > T = 30: contention
    assert check(slow, arch="clos-25.6T-3tier")[0] == []
    late = copy.deepcopy(HAND)
    late[2] = rec(2, 20, 100, 100.5, 130.5)              # waits 0.5 s for the OCS algorithm
    assert check(late, arch="lumos-51.2T-tau2")[0] == []
    assert check(late, arch="clos-25.6T-3tier")[0] != []


def test_records_without_admission_are_checked_by_their_starts():
    recs = [{k: v for k, v in r.items() if k != "admitted_s"} for r in HAND]
    assert check(recs)[0] == []
    recs[1].update(rec(1, 10, 101, 101, 151))
    del recs[1]["admitted_s"]
    assert any("not FIFO" in b for b in check(recs)[0])


ARCHS = ["best", "clos-25.6T-3tier", "lumos-51.2T-tau2", "uniform-51.2T-tau2"]
SHAPES = [(8, 8, 1, 1, 1), (16, 8, 2, 1, 8), (32, 8, 1, 4, 8), (64, 8, 4, 2, 16),
          (128, 8, 2, 8, 64), (4, 4, 1, 1, 1), (24, 8, 1, 3, 8)]


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(arch=st.sampled_from(ARCHS), rows=st.lists(st.tuples(
    st.floats(0, 500), st.floats(10, 300), st.sampled_from(SHAPES), st.floats(0, 0.4),
    st.floats(0, 0.4)), min_size=1, max_size=8))
def test_simulator_output_passes_the_checker(arch, rows):
    from toolkit.registry import RunConfig, problem

    jobs = [[a, d, *shape, za, zb] for a, d, shape, za, zb in rows]
    i = inst(arch, jobs)
    m = problem("lumos-sim").methods["simulate"]
    out = m.run(i, RunConfig())
    bad, met = check_sim(i, out.solution)
    assert bad == [], bad
    assert met["avg_jct_s"] >= np.mean([r[1] for r in jobs]) - 1e-6       # the bound
    if arch == "best":
        assert met["mean_slowdown"] == pytest.approx(1)
