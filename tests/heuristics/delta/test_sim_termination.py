"""DELTA simulator termination (issue 18): bounded steps on any instance magnitude, the
hanging cases as regressions, the checker's scaled tolerance, and deadlines that stop the
simulator and DELTA-Fast."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import instances
from heuristics.delta import sim as delta_sim
from heuristics.delta.baselines import BASELINES
from heuristics.delta.fast import delta_fast, feasible_random_init
from heuristics.delta.sim import SimulationInterrupted, critical_path_bound, simulate
from instances.delta.instance import DeltaSolution, check_solution
from toolkit.registry import RunConfig
from toolkit.run import run_task
from tests.heuristics.delta.draw import delta_dag

GBPS = 0.125          # 1 Gb/s in MB/ms


def one_task(release, volume, flows=8, bandwidth_gbps=1600.0):
    """One task A -> B with ``flows`` flows on distinct GPUs (8 ports per Pod)."""
    return instances.from_dict({
        "problem": "delta", "bandwidth": bandwidth_gbps * GBPS,
        "pods": [{"name": "A", "ports": 8}, {"name": "B", "ports": 8}],
        "tasks": [{"src_pod": "A", "dst_pod": "B", "flows": flows, "volume": volume,
                   "src_gpus": list(range(flows)), "dst_gpus": list(range(100, 100 + flows))}],
        "release": [release], "tail": [0.0]})


@pytest.mark.parametrize("release, volume", [(16255.470089450788, 147.4), (19424.8579049568, 365.147),
                                             (17598.222815471134, 259.653)])
def test_one_late_task_at_1600g_terminates(release, volume):
    """These left ~1.4e-9 MB after the event that should have ended them (rounding of
    t + V/rate at t ~ 1e4 ms), more than the old absolute 1e-9 MB: the old simulator
    looped on zero-length steps forever."""
    inst = one_task(release, volume)
    r = simulate(inst, [8])
    assert r.events == 2                       # wait for the release, then send
    assert r.finish[0] == pytest.approx(release + volume / (8 * 200.0), rel=1e-12)
    assert not check_solution(inst, r.solution(np.array([8.0])))[0]


@pytest.fixture(scope="module")
def deepseek_1600():
    with open("instances/delta/deepseek-671b.json") as fh:
        d = json.load(fh)
    d["job"]["bandwidth_gbps"] = 1600.0
    return instances.from_dict(d)


def test_deepseek_at_1600g_terminates_and_verifies(deepseek_1600):
    """The issue's reproduction: the ideal reference (and Iter-Halve) hung at 1600 Gb/s."""
    inst = deepseek_1600
    r = simulate(inst, ideal=True)
    assert r.events <= 2 * inst.n_tasks and r.makespan >= critical_path_bound(inst) * (1 - 1e-12)
    for name in ("prop-alloc", "iter-halve"):
        x = BASELINES[name](inst)
        r = simulate(inst, x)
        assert r.events <= 2 * inst.n_tasks
        assert not check_solution(inst, r.solution(x))[0]


@st.composite
def magnitudes_instance(draw):
    """Random DAG on 2-4 Pods at 200-1600 Gb/s with times up to 2e4 ms and volumes from
    1e-3 to 1e3 MB, plus a random feasible topology."""
    inst = delta_dag(draw, tasks=(1, 12), flows=(1, 8), gpus=9, volume=(1e-3, 1e3),
                     delay=(0, 1e3), bandwidth=st.floats(200, 1600).map(lambda v: v * GBPS),
                     ports=lambda n: st.integers(8, 24), release=(0, 2e4), tail=(0, 1e3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = feasible_random_init(inst, np.full(len(inst.links), 8.0), rng)
    return inst, x


@settings(max_examples=250, deadline=None)     # ~2% of these hung the old simulator
@given(case=magnitudes_instance(), ideal=st.booleans())
def test_random_instances_terminate_in_2m_steps_with_verified_schedules(case, ideal):
    inst, x = case
    assert np.all(inst.incidence @ x <= inst.ports) and np.all(x >= 1)
    r = simulate(inst, None if ideal else x, ideal=ideal)
    assert r.events <= 2 * inst.n_tasks
    assert np.all(np.isfinite(r.finish)) and np.all(r.finish >= r.start)
    # each event may end a task early by the simulator's tolerance (REL_TIME)
    slack = r.events * delta_sim.REL_TIME * (r.makespan + delta_sim.compile_graph(inst).t_scale)
    assert r.makespan >= critical_path_bound(inst) - slack
    if not ideal:
        bad, m = check_solution(inst, r.solution(x))
        assert not bad, bad
        assert m["iteration_time"] == r.makespan


def test_checker_tolerance_scales_with_the_horizon():
    """A 3e-9 MB excess in a 1e-9 ms interval at t = 5000 ms is rounding (accepted); a
    1e-3 MB excess in the same interval is a violation."""
    inst = one_task(0.0, 1.0, flows=1)              # B = 200 MB/ms, one flow
    t = np.array([0.0, 5000.0, 5000.0 + 1e-9])
    for excess, ok in ((3e-9, True), (1e-3, False)):
        w = np.array([[0, 0, 200.0 * 5000], [0, 1, 200.0 * 1e-9 + excess]])
        inst.tasks[0]["volume"] = inst.volume[0] = w[:, 2].sum()
        bad, _ = check_solution(inst, DeltaSolution(np.array([1.0]), t, w, np.zeros(1), t[-1:]))
        assert (not bad) == ok, bad
        if not ok:
            assert any("over capacity in interval 1" in b for b in bad)


def test_past_deadline_interrupts_a_simulation_and_a_future_one_changes_nothing(deepseek_1600):
    inst = deepseek_1600
    x = BASELINES["prop-alloc"](inst)
    with pytest.raises(SimulationInterrupted):
        simulate(inst, x, deadline=time.monotonic() - 1.0)
    a = simulate(inst, x)
    b = simulate(inst, x, deadline=time.monotonic() + 3600.0)
    assert a.makespan == b.makespan and np.array_equal(a.finish, b.finish)


def test_ga_stops_at_its_time_limit_inside_a_slow_simulation(deepseek_1600, monkeypatch):
    """Each max-min step takes STEP s on a clock of the test's (``time.monotonic``, which
    the deadlines read), not a sleep: DELTA-Fast's first simulation alone would outlast the
    limit, and it returns within one deadline check of the simulator (every 64 events)
    after it, whatever the machine's load."""
    inst = instances.from_dict(deepseek_1600.to_dict(derived=True))
    shared = [t for t in inst.tasks]          # make every step a max-min one: one shared NIC
    for t in shared:
        t["src_gpus"] = [0] + list(t["src_gpus"][1:])
    inst = instances.from_dict({**inst.to_dict(derived=True), "tasks": shared})
    step, limit, now, steps = 0.01, 0.5, [0.0], [0]
    real = delta_sim._maxmin

    def slow(*args):
        now[0] += step
        steps[0] += 1
        return real(*args)

    monkeypatch.setattr(delta_sim, "_maxmin", slow)
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    simulate(inst, BASELINES["prop-alloc"](inst))
    assert steps[0] * step > 2 * limit         # one whole simulation outlasts the limit
    steps[0] = 0
    r = delta_fast(inst, pop=8, stall=50, time_limit=limit, seeds=[BASELINES["prop-alloc"](inst)])
    assert r.stop == "time_limit" and steps[0] <= round(limit / step) + 64, steps[0]
    assert np.all(inst.incidence @ r.x <= inst.ports) and np.all(r.x >= 1)


def test_delta_fast_method_stops_at_the_limit(deepseek_1600, monkeypatch):
    """Through the toolkit (what --time-limit sets): the GA, which would otherwise run for
    minutes here, stops at the limit and its topology is verified. The deadlines' clock
    (``time.monotonic``) moves 0.1 s a read: the limit passes after 20 reads, at any load."""
    data = deepseek_1600.to_dict(derived=True)
    now = [time.monotonic()]

    def clock():
        now[0] += 0.1
        return now[0]

    monkeypatch.setattr(time, "monotonic", clock)
    rec = run_task(data, "ds", "delta-fast", RunConfig(time_limit=2.0))
    assert rec["ga_stop"] == "time_limit" and rec["verified"] and rec["time_limit_s"] == 2.0
