"""Baseline split MILP (spec 2.6.3, not in the paper): hand optimum, backends, method."""
from __future__ import annotations

import numpy as np
import pytest

from heuristics.spectra.baseline import greedy_split, split_nnz
from instances.spectra.instance import SpectraInstance
from instances.spectra.workloads import benchmark_matrix, example_matrix, random_matrix
from models.backend import solve
from models.spectra.split import build_split_milp, extract_split, split_size, split_start
from tests.conftest import needs_gurobi
from toolkit.registry import RunConfig
from toolkit.run import run_task


def test_split_milp_on_worked_example():
    """s=2, T = 0.505: each 0.61 entry exceeds T and must be split (3 extra nonzeros), so the
    optimum is 9 + 3 = 12, which the greedy split reaches (it is a feasible MIP start)."""
    D = example_matrix()
    model, h = build_split_milp(SpectraInstance(D, 2, 0.01))
    assert (model.NumVars, model.NumConstrs) == split_size(SpectraInstance(D, 2, 0.01))
    start = split_start(h, greedy_split(D, 2))
    assert start is not None
    res = solve(model, backend="highs", mip_gap=0.0, start=start)
    assert res.status == "optimal" and res.objective == pytest.approx(12)
    parts = extract_split(h, res)
    assert np.allclose(parts.sum(axis=0), D) and (parts >= 0).all() and split_nnz(parts) == 12
    assert parts.sum(axis=2).max() <= h.cap + 1e-9 and parts.sum(axis=1).max() <= h.cap + 1e-9


@pytest.mark.parametrize("seed", [1, 2])
def test_split_milp_at_most_greedy_when_greedy_respects_the_cap(seed):
    D = benchmark_matrix(8, 3, noise=0.0, rng=np.random.default_rng(seed))
    model, h = build_split_milp(SpectraInstance(D, 2, 0.04))
    g = greedy_split(D, 2)
    res = solve(model, backend="highs", mip_gap=0.0, time_limit=30)
    assert res.status == "optimal"
    assert res.objective >= int((D > 0).sum())           # every nonzero of D lands somewhere
    if split_start(h, g) is not None:
        assert res.objective <= split_nnz(g)


@needs_gurobi
def test_split_milp_gurobi_and_highs_agree():
    D = random_matrix(4, 0.7, np.random.default_rng(3))
    objs = []
    for backend in ("gurobi", "highs"):
        model, _ = build_split_milp(SpectraInstance(D, 3, 0.04))
        res = solve(model, backend=backend, mip_gap=0.0)
        assert res.status == "optimal"
        objs.append(res.objective)
    assert objs[0] == pytest.approx(objs[1])


def test_baseline_milp_method_is_verified_and_keeps_its_bound_out():
    data = SpectraInstance(example_matrix(), 2, 0.01).to_dict()
    rec = run_task(data, "w", "baseline-milp", RunConfig(backend="highs"))
    assert rec["verified"] and rec["status"] == "feasible" and rec["split_status"] == "optimal"
    assert rec["objective"] == pytest.approx(0.535) and rec["split_nnz"] == 12
    assert rec["bound"] == pytest.approx(rec["lower_bound"])   # the makespan LB, not nnz
