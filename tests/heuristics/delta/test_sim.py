"""DELTA simulator, NCT, baselines and checker: hand-checked DAGs and properties."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import instances
from heuristics.delta.baselines import BASELINES, traffic_matrix
from heuristics.delta.nct import critical_chain, evaluate
from heuristics.delta.sim import SimulationError, compile_graph, critical_path_bound, simulate
from instances.delta.instance import DeltaSolution, check_solution, from_job
from instances.delta.models import TABLE_I
from tests.heuristics.delta.draw import delta_dag


def derived(tasks, deps=(), release=None, tail=None, ports=(4, 4), B=1.0):
    """A two-pod derived instance; tasks are (volume, flows, src_gpus, dst_gpus[, src, dst])."""
    names = sorted({"A", "B"} | {p for t in tasks if len(t) > 4 for p in t[4:6]})
    pods = [{"name": p, "ports": ports[min(i, len(ports) - 1)]} for i, p in enumerate(names)]
    ts = []
    for t in tasks:
        v, f, sg, dg = t[:4]
        src, dst = (t[4], t[5]) if len(t) > 4 else ("A", "B")
        ts.append({"src_pod": src, "dst_pod": dst, "flows": f, "volume": v, "src_gpus": sg,
                   "dst_gpus": dg})
    d = {"problem": "delta", "bandwidth": B, "pods": pods, "tasks": ts, "deps": [list(x) for x in deps]}
    if release is not None:
        d["release"] = list(release)
    if tail is not None:
        d["tail"] = list(tail)
    return instances.from_dict(d)


def test_t0_fair_sharing_versus_ideal():
    """Spec 5.6 T0: fair-share DES C = 4, ideal C = 3."""
    inst = derived([(2, 1, [0], [10]), (1, 1, [1], [11])], release=[0, 1], tail=[0, 1])
    for policy in ("maxmin", "link_equal"):
        r = simulate(inst, [1], policy=policy)
        assert r.makespan == pytest.approx(4)
        assert r.finish.tolist() == pytest.approx([3, 3])
    assert simulate(inst, ideal=True).makespan == pytest.approx(3)
    bad, m = check_solution(inst, simulate(inst, [1]).solution([1]))
    assert not bad and m["iteration_time"] == pytest.approx(4)


def test_chain_times_and_nct():
    # a (V=4, F=2) -> delay 2 -> b (V=2, F=1); release 1, tail 0.5; one circuit of B = 1
    inst = derived([(4, 2, [0, 1], [10, 11]), (2, 1, [2], [12])], deps=[(0, 1, 2.0)],
                   release=[1, 0], tail=[0, 0.5])
    r = simulate(inst, [1])
    assert r.makespan == pytest.approx(1 + 4 + 2 + 2 + 0.5)
    assert simulate(inst, ideal=True).makespan == pytest.approx(1 + 2 + 2 + 2 + 0.5)
    g = compile_graph(inst)
    chain, nc, C = critical_chain(g, r.start, r.finish)
    assert chain == [0, 1] and nc == pytest.approx(1 + 2 + 0.5)
    ev = evaluate(inst, [1])
    assert ev["nct"] == pytest.approx((4 + 2) / (2 + 2))
    assert critical_path_bound(inst) == pytest.approx(7.5)


@pytest.mark.parametrize("va, expected", [(2, 6), (3, 7)])
def test_diamond_with_shared_link(va, expected):
    # s -> (a: delay 1, b: delay 3) -> d; a and b share link A->B; d on B->A
    inst = derived([(1, 1, [0], [10]), (va, 1, [1], [11]), (1, 1, [2], [12]), (1, 1, [13], [3], "B", "A")],
                   deps=[(0, 1, 1), (0, 2, 3), (1, 3, 0), (2, 3, 0)])
    r = simulate(inst, [1])
    assert r.makespan == pytest.approx(expected)
    assert simulate(inst, ideal=True).makespan == pytest.approx(6)
    assert not check_solution(inst, r.solution([1]))[0]


def test_nct_is_one_when_links_never_bind():
    inst = instances.load_instance("instances/delta/gpt-7b.json")
    x = np.array([max(t["flows"] for t in inst.tasks if t["link"] == e) for e in range(len(inst.links))],
                 dtype=float)   # as many circuits as concurrent flows per link: NIC-bound only
    ev = evaluate(inst, x)
    assert ev["nct"] == pytest.approx(1.0) and ev["nct_exposed"] == pytest.approx(1.0)
    assert ev["iteration_time"] == pytest.approx(ev["ideal_iteration_time"])


def test_zero_circuits_on_a_used_link_is_infinite():
    inst = derived([(1, 1, [0], [1])])
    assert simulate(inst, [0]).makespan == np.inf


def test_nic_sharing_uses_maxmin():
    # two tasks share source GPU 0: each gets B/2 per flow even with ample circuits
    inst = derived([(1, 1, [0], [10]), (1, 1, [0], [11])])
    assert simulate(inst, [4]).makespan == pytest.approx(2)
    # link_equal (Eq. 17 alone) gave each B: 2B through GPU 0's NIC, a schedule breaking
    # Eq. 10 (the checker refused it). Spec 3.5: it is defined only without NIC sharing.
    with pytest.raises(SimulationError, match="NIC"):
        simulate(inst, [4], policy="link_equal")


def test_link_equal_refuses_a_generated_workload_with_nic_sharing():
    """Async P2P lets a stage's sends overlap (spec 3.5's 'maxmin = link_equal' holds for the
    blocking mode only): link_equal verified False there, now it says why."""
    inst = from_job({**TABLE_I["gpt-7b"], "micro_batches": 4, "p2p_mode": "async"})
    x = BASELINES["sqrt-alloc"](inst)
    assert not check_solution(inst, simulate(inst, x).solution(x))[0]
    with pytest.raises(SimulationError, match="NIC"):
        simulate(inst, x, policy="link_equal")
    blocking = from_job({**TABLE_I["gpt-7b"], "micro_batches": 4})
    r = simulate(blocking, x, policy="link_equal")
    assert r.makespan == pytest.approx(simulate(blocking, x).makespan)
    assert not check_solution(blocking, r.solution(x))[0]


def test_fig1b_peak_demands_under_ideal_network():
    """Fig. 1(b): Pod 1's PP peak is 2 x 400 Gb/s; its DP peak is 4 x 400 Gb/s when the two
    stages' gradient syncs overlap (fp32 gradients here; with bf16 they are successive)."""
    def peaks(grad_bytes):
        inst = from_job(dict(TABLE_I["gpt-7b"], micro_batches=8, grad_bytes=grad_bytes))
        r = simulate(inst, ideal=True)
        rate = np.zeros((len(r.times) - 1, 2))
        kind = np.array([t["kind"] == "dp" for t in inst.tasks])
        src = np.array([t["src_pod"] == "r0b0" for t in inst.tasks])
        m, k, v = r.vol[:, 0].astype(int), r.vol[:, 1].astype(int), r.vol[:, 2]
        sel = src[m]
        np.add.at(rate, (k[sel], kind[m[sel]].astype(int)), v[sel] / np.diff(r.times)[k[sel]])
        return rate.max(axis=0) / inst.bandwidth
    assert peaks(4) == pytest.approx([2, 4])
    assert peaks(2)[0] == pytest.approx(2)


@pytest.mark.parametrize("name", ["gpt-7b", "megatron-177b-n12", "mixtral-8x22b-n16"])
@pytest.mark.parametrize("method", sorted(BASELINES))
def test_baselines_respect_budgets_and_connect_every_pair(name, method):
    inst = instances.load_instance(f"instances/delta/{name}.json")
    x = BASELINES[method](inst)
    assert np.all(x >= 1) and np.all(x == np.round(x))
    assert np.all(inst.incidence @ x <= inst.ports)
    r = simulate(inst, x)
    bad, m = check_solution(inst, r.solution(x))
    assert not bad
    assert m["iteration_time"] >= critical_path_bound(inst) - 1e-6


def test_baseline_allocation_rules():
    # one pod pair with 9x the traffic of another, both from pod A (6 ports)
    inst = derived([(9, 1, [0], [10], "A", "B"), (1, 1, [1], [20], "A", "C")], ports=(6, 6))
    assert traffic_matrix(inst).tolist() == [9, 1]
    assert BASELINES["prop-alloc"](inst).tolist() == [5, 1]     # 5.4 : 0.6 -> 5 : 1
    assert BASELINES["sqrt-alloc"](inst).tolist() == [4, 2]     # 4.5 : 1.5 -> 4 : 1, fill by D/(x(x+1))
    # Iter-Halve picks e0 at 9, 4.5, 2.25, 1.125, then e1 at 1, then e0 at 0.5625 > 0.5
    assert BASELINES["iter-halve"](inst).tolist() == [5, 1]


def test_checker_rejects_corrupted_schedules():
    inst = derived([(2, 1, [0], [10]), (1, 1, [1], [11])], deps=[(0, 1, 0.5)])
    r = simulate(inst, [1])
    good = r.solution([1])
    assert not check_solution(inst, good)[0]
    cases = {
        "ports": DeltaSolution(np.array([5]), good.times, good.vol, good.start, good.finish),
        "delivers": DeltaSolution(good.x, good.times, good.vol * [1, 1, 0.5], good.start, good.finish),
        "dependency": DeltaSolution(good.x, good.times, good.vol, good.start - [0, 1], good.finish),
        "over capacity": DeltaSolution(good.x, good.times / 2, good.vol, good.start / 2, good.finish / 2),
    }
    for words, sol in cases.items():
        bad, _ = check_solution(inst, sol)
        assert any(words in b for b in bad), (words, bad)


def test_checker_rejects_non_finite_schedules():
    """NaN compares False with everything: a NaN start/finish or time passed every check
    and reported iteration_time 0 (max(q0, nan) = q0)."""
    inst = derived([(2, 1, [0], [10]), (1, 1, [1], [11])], deps=[(0, 1, 0.5)])
    good = simulate(inst, [1]).solution([1])
    nan = np.full(2, np.nan)
    t_nan = good.times.copy()
    t_nan[-1] = np.nan
    vol_inf = good.vol.copy()
    vol_inf[0, 2] = np.inf
    for sol in (DeltaSolution(good.x, good.times, good.vol, nan, nan),
                DeltaSolution(good.x, good.times, good.vol, good.start, good.finish * [1, np.inf]),
                DeltaSolution(good.x, t_nan, good.vol, good.start, good.finish),
                DeltaSolution(good.x, good.times, vol_inf, good.start, good.finish),
                DeltaSolution(np.array([np.nan]), good.times, good.vol, good.start, good.finish)):
        bad, _ = check_solution(inst, sol)
        assert any("finite" in b for b in bad), bad


@st.composite
def random_instance(draw):
    return delta_dag(draw)


@settings(max_examples=60, deadline=None)
@given(inst=random_instance(), method=st.sampled_from(sorted(BASELINES)),
       policy=st.sampled_from(["maxmin", "link_equal"]))
def test_random_dags_simulate_to_verified_schedules(inst, method, policy):
    x = BASELINES[method](inst)
    assert np.all(inst.incidence @ x <= inst.ports) and np.all(x >= 1)
    try:
        r = simulate(inst, x, policy=policy)
    except SimulationError as exc:        # link_equal is undefined with NIC sharing
        assert policy == "link_equal" and "NIC" in str(exc)
        return
    bad, m = check_solution(inst, r.solution(x))
    assert not bad, bad
    assert m["iteration_time"] == pytest.approx(r.makespan)
    assert r.makespan >= critical_path_bound(inst) - 1e-7
    assert np.all(r.start >= inst.release - 1e-9)


def test_chain_ignores_idle_time_left_off_the_critical_path():
    """A MILP schedule may park slack anywhere (spec 2.1 notes): delaying a non-critical task
    within its slack must not change NC, while delaying a critical one counts as comm."""
    inst = derived([(1, 1, [0], [10]), (1, 1, [1], [11]), (1, 1, [2], [12]), (1, 1, [13], [3], "B", "A")],
                   deps=[(0, 1, 1), (0, 2, 3), (1, 3, 0), (2, 3, 0)])
    r = simulate(inst, [2])
    g = compile_graph(inst)
    _, nc0, C0 = critical_chain(g, r.start, r.finish)
    slack = r.start[3] - r.finish[1]
    assert slack > 0                              # a (delay 1) waits for b (delay 3)
    s, f = r.start.copy(), r.finish.copy()
    s[1] += slack / 2                             # idle gap before a, a still on time for d
    f[1] += slack / 2
    chain, nc, C = critical_chain(g, s, f)
    assert (nc, C) == pytest.approx((nc0, C0)) and 1 not in chain
    s, f = r.start.copy(), r.finish.copy()
    s[2:] += 0.5                                  # idle gap before the critical b
    f[2:] += 0.5
    _, nc, C = critical_chain(g, s, f)
    assert C == pytest.approx(C0 + 0.5) and nc == pytest.approx(nc0)
