"""Spectra exact MILP (spec 3.7): brute force, bounds, backend agreement, starts, limits."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from heuristics.spectra.bounds import lower_bound
from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraInstance, check_schedule
from instances.spectra.workloads import random_matrix
from models.backend import solve
from models.spectra.milp import build_milp, extract_milp, milp_start
from tests.conftest import assert_feasible_start, needs_gurobi
from toolkit.registry import RunConfig
from toolkit.run import run_task


def brute_force(inst: SpectraInstance, slots: int) -> float:
    """min makespan over all per-switch sets of <= slots full permutations (restricted to
    supp D), durations by an LP per combination (scipy linprog)."""
    D, s, delta = inst.demand, inst.switches, inst.delay
    n = inst.n
    rows, cols = np.nonzero(D > 0)
    perms = [np.array(p) for p in itertools.permutations(range(n))]
    subsets = [c for k in range(slots + 1) for c in itertools.combinations(range(len(perms)), k)]
    best = np.inf
    for combo in itertools.combinations_with_replacement(range(len(subsets)), s):
        sets = [subsets[i] for i in combo]
        cfgs = [(h, p) for h, S in enumerate(sets) for p in S]
        if not cfgs:
            continue
        nv = len(cfgs) + 1                     # alphas, then C
        A, b = [], []
        for e in range(len(rows)):             # coverage: -sum alpha <= -D_e
            A.append([-float(perms[p][rows[e]] == cols[e]) for _, p in cfgs] + [0])
            b.append(-D[rows[e], cols[e]])
        for h, S in enumerate(sets):           # |S_h| delta + sum alpha - C <= 0
            A.append([1.0 if hh == h else 0.0 for hh, _ in cfgs] + [-1])
            b.append(-len(S) * delta)
        c = np.zeros(nv)
        c[-1] = 1
        res = linprog(c, A_ub=np.array(A, float), b_ub=b, bounds=[(0, None)] * nv, method="highs")
        if res.status == 0:
            best = min(best, res.fun)
    return best


@pytest.mark.parametrize("seed, s, slots", [(1, 2, 2), (2, 2, 2), (3, 1, 3), (4, 2, 2)])
def test_milp_optimum_equals_brute_force(seed, s, slots):
    D = random_matrix(3, 0.7, np.random.default_rng(seed))
    inst = SpectraInstance(D, s, 0.05)
    model, h = build_milp(inst, slots)
    res = solve(model, backend="highs", mip_gap=0.0)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(brute_force(inst, slots), rel=1e-6, abs=1e-7)
    bad, m = check_schedule(inst, extract_milp(h, res))
    assert not bad and m["makespan"] == pytest.approx(res.objective, rel=1e-6)


@pytest.mark.parametrize("seed, s", [(10, 2), (14, 3), (12, 2), (13, 3)])
def test_lb_le_milp_le_spectra(seed, s):
    D = random_matrix(3, 0.8, np.random.default_rng(seed))
    data = SpectraInstance(D, s, 0.03, name=f"r{seed}").to_dict()
    heur = run_task(data, "mem", "spectra", RunConfig())
    exact = run_task(data, "mem", "milp", RunConfig(backend="highs", mip_gap=0.0))
    assert heur["verified"] and exact["verified"] and exact["status"] == "optimal"
    lb = lower_bound(D, s, 0.03)
    assert lb - 1e-9 <= exact["objective"] <= heur["objective"] + 1e-7


@needs_gurobi
@pytest.mark.parametrize("seed", [20, 21])
def test_gurobi_and_highs_agree_on_milp(seed):
    D = random_matrix(3, 0.8, np.random.default_rng(seed))
    data = SpectraInstance(D, 2, 0.05).to_dict()
    g = run_task(data, "mem", "milp", RunConfig(backend="gurobi", mip_gap=0.0))
    h = run_task(data, "mem", "milp", RunConfig(backend="highs", mip_gap=0.0))
    assert g["backend"] == "gurobi" and h["backend"] == "highs"
    assert g["status"] == h["status"] == "optimal"
    assert g["objective"] == pytest.approx(h["objective"], rel=1e-6)


def test_spectra_start_is_a_complete_feasible_point():
    inst = SpectraInstance(random_matrix(4, 0.7, np.random.default_rng(5)), 2, 0.05)
    sched = spectra(inst)
    slots = max(len(sw) for sw in sched.switches)
    model, h = build_milp(inst, slots)
    assert_feasible_start(model, milp_start(h, sched))


@pytest.mark.parametrize("backend", ["gurobi", "highs"])
def test_time_limit_returns_verified_solution_with_gap(backend):
    from tests.conftest import gurobi_available
    if backend == "gurobi" and not gurobi_available():
        pytest.skip("no Gurobi")
    import instances

    data = instances.read_json("instances/examples/tiny_random_n4_s3.json")
    rec = run_task(data, "tiny", "milp", RunConfig(backend=backend, time_limit=1.0))
    assert rec["status"] == "feasible" and rec["verified"]
    assert rec["gap"] > 0 and rec["bound"] < rec["objective"]
