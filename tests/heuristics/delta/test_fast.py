"""DELTA-Fast (Algs. 2-6): feasibility of every individual, repair, X-bar validity, optimality on
enumerable instances, reproducibility."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import instances
from heuristics.delta.fast import (delta_fast, feasible_random_init, repair_topo, task_windows,
                                   x_upper_bound)
from heuristics.delta.sim import simulate
from instances.delta.instance import DeltaInstance, from_job, x_max
from instances.delta.models import TABLE_I
from instances.errors import InstanceError
from tests.models.delta.test_milp import diamond, fork, t0


def enumerate_best(inst):
    xm = x_max(inst)
    return min(simulate(inst, np.array(x, float), trace=False).makespan
               for x in itertools.product(*[range(1, int(v) + 1) for v in xm])
               if np.all(inst.incidence @ np.array(x) <= inst.ports))


@pytest.mark.parametrize("make", [t0, fork, diamond])
def test_ga_finds_the_enumerated_optimum(make):
    inst = make()
    r = delta_fast(inst, pop=12, stall=15, seed=3)
    assert r.makespan == pytest.approx(enumerate_best(inst))


@pytest.mark.parametrize("name", ["gpt-7b-n8", "megatron-177b-n12"])
def test_every_individual_respects_budgets_and_xbar(name):
    inst = instances.load_instance(f"instances/delta/{name}.json")
    t_hat = 1e12
    xbar = x_upper_bound(inst, t_hat)
    seen = []

    def check(x):
        seen.append(x.copy())
        assert np.all(x >= 1) and np.all(x <= xbar) and np.all(x == np.round(x))
        assert np.all(inst.incidence @ x <= inst.ports + 1e-9)

    r = delta_fast(inst, pop=10, stall=5, seed=0, xbar=xbar, check=check)
    assert len(seen) == r.evaluations >= 1     # every evaluated individual was checked


def test_fixed_seed_is_reproducible():
    inst = instances.load_instance("instances/delta/megatron-177b-n12.json")
    a = delta_fast(inst, pop=10, stall=5, seed=7)
    b = delta_fast(inst, pop=10, stall=5, seed=7)
    assert np.array_equal(a.x, b.x) and a.makespan == b.makespan and a.evaluations == b.evaluations


def test_default_does_not_depend_on_the_clock(monkeypatch):
    """No time limit given: a clock that jumps 1000 s per read changes nothing (the old
    default was a 600 s cap)."""
    import time

    inst = instances.load_instance("instances/delta/megatron-177b-n12.json")
    a = delta_fast(inst, pop=10, stall=5, seed=7)
    now = [time.monotonic()]

    def jumpy():
        now[0] += 1000.0
        return now[0]

    monkeypatch.setattr(time, "monotonic", jumpy)
    b = delta_fast(inst, pop=10, stall=5, seed=7)
    assert np.array_equal(a.x, b.x) and a.makespan == b.makespan and b.stop != "time_limit"


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10**6), scale=st.integers(0, 30))
def test_repair_and_random_init_are_feasible(seed, scale):
    inst = instances.load_instance("instances/delta/megatron-177b-n12.json")
    rng = np.random.default_rng(seed)
    xbar = x_max(inst)
    x0 = feasible_random_init(inst, xbar, rng)
    assert np.all(inst.incidence @ x0 <= inst.ports) and np.all((x0 >= 1) & (x0 <= xbar))
    wild = rng.integers(-5, scale + 2, len(xbar)).astype(float)
    x, ok = repair_topo(wild, inst, xbar, rng)
    assert ok == bool(np.all(inst.incidence @ x <= inst.ports))
    assert np.all((x >= 1) & (x <= xbar))
    if ok:
        assert np.all(inst.incidence @ x <= inst.ports)


def test_repair_reports_failure_when_budgets_cannot_connect():
    inst = t0()
    x, ok = repair_topo(np.array([5.0]), inst, np.array([1.0]), np.random.default_rng(0))
    assert ok and x.tolist() == [1.0]
    tight = {
        "problem": "delta", "bandwidth": 1.0,
        "pods": [{"name": "A", "ports": 1}, {"name": "B", "ports": 2}, {"name": "C", "ports": 2}],
        "tasks": [{"src_pod": "A", "dst_pod": "B", "flows": 1, "volume": 1, "src_gpus": [0], "dst_gpus": [1]},
                  {"src_pod": "A", "dst_pod": "C", "flows": 1, "volume": 1, "src_gpus": [2], "dst_gpus": [3]}]}
    with pytest.raises(InstanceError, match=r"pods\[0\]\.ports"):   # a file like this is refused
        instances.from_dict(tight)
    links = [{"name": f"A-{p}", "ends": ["A", p], "incidence": {"A": 1, p: 1}} for p in "BC"]
    tasks = [dict(t, link=e, dir=0) for e, t in enumerate(tight["tasks"])]
    tight = DeltaInstance("tight", 1.0, ["A", "B", "C"], [1, 2, 2], links, tasks, [], [0, 0], [0, 0])
    _, ok = repair_topo(np.array([1.0, 1.0]), tight, np.array([2.0, 2.0]), np.random.default_rng(0))
    assert not ok


def test_xbar_bounds_the_concurrent_flows_of_any_fast_schedule():
    inst = from_job(dict(TABLE_I["gpt-7b"], micro_batches=8))
    x = x_max(inst)
    sim = simulate(inst, x)
    t_hat = sim.makespan                     # any schedule with C <= t_hat
    est, lct = task_windows(inst, t_hat)
    assert np.all(sim.start >= est - 1e-6) and np.all(sim.finish <= lct + 1e-6)
    xbar = x_upper_bound(inst, t_hat)
    res = inst.link_of * 2 + inst.dir_of
    for k in range(len(sim.times) - 1):
        act = sim.vol[sim.vol[:, 1] == k, 0].astype(int)
        for r in np.unique(res[act]):
            flows = inst.flows[act[res[act] == r]].sum()
            assert flows <= xbar[r // 2] + 1e-9


def test_parallel_evaluation_gives_the_same_result():
    inst = instances.load_instance("instances/delta/megatron-177b-n12.json")
    a = delta_fast(inst, pop=10, stall=4, seed=5)
    b = delta_fast(inst, pop=10, stall=4, seed=5, workers=2)
    assert np.array_equal(a.x, b.x) and a.makespan == b.makespan and a.evaluations == b.evaluations


def test_a_link_without_traffic_gets_no_circuit():
    """Spec 3.4.3: genes only for the active pairs E (1 <= x_e <= X-bar_e). A listed link no
    task uses was forced to x >= 1, so Pod A (1 port, links to B and C, traffic only to B)
    got 2 circuits: every individual broke Eq. 5, and so did the GA's answer."""
    d = {"problem": "delta", "bandwidth": 1.0,
         "pods": [{"name": p, "ports": 1} for p in "ABC"],
         "links": [{"name": f"A-{p}", "ends": ["A", p], "incidence": {"A": 1, p: 1}} for p in "BC"],
         "tasks": [{"src_pod": "A", "dst_pod": "B", "flows": 1, "volume": 1, "src_gpus": [0],
                    "dst_gpus": [10]}]}
    inst = instances.from_dict(d)
    xbar = x_upper_bound(inst, 10.0)
    assert xbar.tolist() == [1, 0]
    rng = np.random.default_rng(0)
    assert feasible_random_init(inst, x_max(inst), rng).tolist() == [1, 0]
    x, ok = repair_topo(np.array([3.0, 2.0]), inst, x_max(inst), rng)
    assert ok and x.tolist() == [1, 0]
    seen = []
    ga = delta_fast(inst, pop=4, generations=3, stall=2, check=seen.append)
    assert ga.x.tolist() == [1, 0] and ga.makespan == pytest.approx(1.0)
    assert all(np.all(inst.incidence @ v <= inst.ports) for v in seen)


def _closure(edges: np.ndarray) -> np.ndarray:
    R = edges.copy()
    for k in range(len(R)):
        R |= R[:, [k]] & R[[k], :]
    return R


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 14), density=st.floats(0.0, 0.6))
def test_the_max_weight_antichain_flow_equals_the_milp(seed, n, density):
    """Alg. 2's largest antichain by weighted Dilworth (a flow) is the MILP's optimum, the
    integer every antichain's weight is checked against here by enumeration too."""
    from scipy.optimize import LinearConstraint, milp

    from instances.dag import max_weight_antichain

    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    R = _closure(np.triu(rng.random((n, n)) < density, 1))[np.ix_(perm, perm)]
    w = rng.integers(0, 17, n).astype(float)
    got = max_weight_antichain(w, R)
    ia, ib = np.nonzero(np.triu(R | R.T, 1))
    A = np.zeros((len(ia), n))
    A[np.arange(len(ia)), ia] = A[np.arange(len(ia)), ib] = 1
    ref = -milp(-w, constraints=LinearConstraint(A, -np.inf, 1), integrality=np.ones(n),
                bounds=(0, 1)).fun if len(ia) else w.sum()
    assert got == round(ref) and got.is_integer()
    if n <= 8:                      # every subset: the best antichain
        best = max(w[list(s)].sum() for k in range(n + 1) for s in itertools.combinations(range(n), k)
                   if not (R | R.T)[np.ix_(s, s)].any())
        assert got == best


def test_the_max_weight_antichain_refuses_fractional_weights():
    from instances.dag import max_weight_antichain

    assert max_weight_antichain(np.array([3.0, 4.0]), np.array([[False, True], [False, False]])) == 4
    assert max_weight_antichain(np.array([3.0, 4.0]), np.zeros((2, 2), bool)) == 7
    with pytest.raises(ValueError, match="integer weights"):
        max_weight_antichain(np.array([0.5, 1.0]), np.zeros((2, 2), bool))
