"""Exact Spectra MILP over maximal matchings: enumeration, brute force, bounds, starts, backends."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from heuristics.spectra.bounds import lower_bound
from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraInstance, SpectraSchedule, check_schedule, makespan
from instances.spectra.workloads import random_matrix
from models.backend import solve
from models.spectra.matchings import (build_matching_milp, extract_matching_milp,
                                      matching_start, maximal_matchings)
from tests.conftest import assert_feasible_start, needs_gurobi
from tests.models.spectra.test_milp import brute_force
from toolkit.registry import RunConfig
from toolkit.run import NotApplicable, run_task

GAP = Path(__file__).resolve().parents[3] / "instances" / "spectra"


def gap_instance(name: str) -> SpectraInstance:
    return SpectraInstance.from_dict(json.loads((GAP / f"{name}.json").read_text()))


def exact(inst: SpectraInstance, backend: str = "highs", **kw):
    seed = spectra(inst)
    model, h = build_matching_milp(inst, lb=lower_bound(inst.demand, inst.switches, inst.delay),
                                   ub=makespan(seed, inst.delay), **kw)
    res = solve(model, backend=backend, mip_gap=0.0, start=matching_start(h, seed))
    assert res.status == "optimal"
    sched = extract_matching_milp(h, res)
    bad, m = check_schedule(inst, sched)
    assert not bad and m["makespan"] == pytest.approx(res.objective, rel=1e-6)
    return res.objective


@pytest.mark.parametrize("seed", range(6))
def test_maximal_matchings_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    S = rng.random((4, 4)) < 0.55
    edges = list(zip(*np.nonzero(S)))
    want = set()
    for k in range(len(edges) + 1):
        for sub in itertools.combinations(edges, k):
            r, c = [e[0] for e in sub], [e[1] for e in sub]
            if len(set(r)) < k or len(set(c)) < k:
                continue                                  # not a matching
            if any(i not in r and j not in c for i, j in edges):
                continue                                  # an edge could be added: not maximal
            p = [-1] * 4
            for i, j in sub:
                p[i] = j
            want.add(tuple(p))
    got = maximal_matchings(S)
    assert {tuple(p) for p in got.tolist()} == want and len(got) == len(want)


@pytest.mark.parametrize("n, s, seed", [(3, 2, 1), (2, 2, 7), (2, 3, 5), (3, 1, 3)])
def test_optimum_equals_brute_force_over_all_permutation_sets(n, s, seed):
    """The brute force takes every set of full permutations per switch (no slot limit:
    a permutation twice on one switch is never better), durations by an LP: the true OPT,
    found without matchings."""
    D = random_matrix(n, 0.7, np.random.default_rng(seed))
    inst = SpectraInstance(D, s, 0.05)
    assert exact(inst) == pytest.approx(brute_force(inst, slots=len(list(
        itertools.permutations(range(n))))), rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("name", ["gap_perms_n4_s3_seed1", "gap_random_n4_s2_seed2"])
def test_lb_le_opt_le_spectra_and_slot_milp(name):
    inst = gap_instance(name)
    data = inst.to_dict()
    heur = run_task(data, name, "spectra", RunConfig())
    ex = run_task(data, name, "milp-matchings", RunConfig(backend="highs", mip_gap=0.0))
    assert heur["verified"] and ex["verified"] and ex["status"] == "optimal"
    lb = lower_bound(inst.demand, inst.switches, inst.delay)
    assert lb - 1e-9 <= ex["objective"] <= heur["objective"] + 1e-7
    assert ex["objective"] == pytest.approx(ex["bound"], rel=1e-9)


def test_agrees_with_the_slot_milp():
    """The spec 3.7 slot MILP (another formulation) with T = 3 slots: OPT <= OPT_T always,
    and on this instance T = 3 is enough, so both prove the same optimum."""
    inst = gap_instance("gap_perms_n4_s3_seed1")
    from models.spectra.milp import build_milp
    model, _ = build_milp(inst, 3, lb_cut=lower_bound(inst.demand, inst.switches, inst.delay))
    opt_t = solve(model, backend="highs", mip_gap=0.0)
    assert opt_t.status == "optimal"
    assert exact(inst) == pytest.approx(opt_t.objective, rel=1e-7)


@pytest.mark.parametrize("kw", [dict(symmetry=False), dict(line_cuts=False),
                                dict(switch_line=False), dict(symmetry=False, line_cuts=False)])
def test_cuts_and_symmetry_keep_the_optimum(kw):
    """Two switches share a matching in this instance's optimum (a split entry): a symmetry
    rule that forbade equal first matchings would cut it off."""
    inst = gap_instance("gap_perms_n4_s2_seed1")
    assert exact(inst, **kw) == pytest.approx(exact(inst), rel=1e-7)


@pytest.mark.parametrize("name", ["gap_random_n4_s3_seed1", "gap_perms_n4_s2_seed2"])
def test_start_from_spectra_is_feasible(name):
    inst = gap_instance(name)
    model, h = build_matching_milp(inst, lb=lower_bound(inst.demand, inst.switches, inst.delay),
                                   ub=makespan(spectra(inst), inst.delay))
    assert_feasible_start(model, matching_start(h, spectra(inst)), row_tol=1e-9)


def test_start_merges_a_repeated_matching_on_a_switch():
    """One switch runs the same permutation twice: the start merges them (one delta less)."""
    D = np.array([[0.6, 0.0], [0.0, 0.6]])
    inst = SpectraInstance(D, 2, 0.1)
    ident = np.array([0, 1])
    sched = SpectraSchedule([[(ident, 0.3), (ident, 0.3)], []])
    assert not check_schedule(inst, sched)[0]
    model, h = build_matching_milp(inst)
    start = matching_start(h, sched)
    assert_feasible_start(model, start)
    assert start[h.C] == pytest.approx(0.7)             # 0.1 + 0.6, not 0.8
    assert exact(inst) == pytest.approx(0.4)            # 0.1 + 0.3 on each switch


@needs_gurobi
@pytest.mark.parametrize("name", ["gap_perms_n4_s2_seed1", "gap_random_n4_s2_seed1"])
def test_gurobi_and_highs_agree(name):
    inst = gap_instance(name)
    assert exact(inst, backend="gurobi") == pytest.approx(exact(inst, backend="highs"), rel=1e-6)


def test_declines_large_supports():
    D = random_matrix(9, 0.9, np.random.default_rng(0))
    data = SpectraInstance(D, 2, 0.05).to_dict()
    with pytest.raises(NotApplicable, match="maximal matchings > max_matchings=2000"):
        run_task(data, "big", "milp-matchings", RunConfig(backend="highs"))
