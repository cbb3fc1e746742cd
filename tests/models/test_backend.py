"""models.backend: Gurobi/HiGHS agreement, auto fallback, MIP starts, limits, statuses."""
from __future__ import annotations

import gurobipy as gp
import numpy as np
import pytest
from gurobipy import GRB
from scipy.optimize import linear_sum_assignment

from models import backend as B
from tests.conftest import needs_gurobi


def knapsack(seed: int, n: int = 25):
    rng = np.random.default_rng(seed)
    w = rng.integers(5, 40, n)
    v = w + rng.integers(0, 10, n)
    m = B.new_model("knapsack")
    y = m.addVars(n, vtype=GRB.BINARY, name="y")
    m.addConstr(gp.quicksum(int(w[i]) * y[i] for i in range(n)) <= int(w.sum() // 2), name="cap")
    m.setObjective(gp.quicksum(int(v[i]) * y[i] for i in range(n)), GRB.MAXIMIZE)
    m.update()
    return m, y, w, v


def brute_knapsack(w, v, cap):
    best = 0
    n = len(w)
    for mask in range(1 << n):
        sel = [(mask >> i) & 1 for i in range(n)]
        if np.dot(sel, w) <= cap:
            best = max(best, int(np.dot(sel, v)))
    return best


def facility(seed: int):
    """Small capacitated facility location (mixed binary/continuous, min)."""
    rng = np.random.default_rng(seed)
    F, C = 5, 8
    fixed = rng.integers(20, 60, F)
    cost = rng.integers(1, 20, (F, C))
    dem = rng.integers(1, 10, C)
    cap = np.full(F, dem.sum() // 2 + 5)
    m = B.new_model("facility")
    o = m.addMVar(F, vtype=GRB.BINARY, name="open")
    x = m.addMVar((F, C), lb=0.0, name="x")
    m.addConstr(x.sum(axis=0) == dem, name="demand")
    m.addConstr(x.sum(axis=1) <= cap * o, name="capacity")
    m.setObjective(fixed @ o + (cost * x).sum(), GRB.MINIMIZE)
    m.update()
    return m


@needs_gurobi
@pytest.mark.parametrize("seed", range(4))
def test_gurobi_and_highs_agree_on_small_milps(seed):
    for m in (knapsack(seed)[0], facility(seed)):
        g = B.solve(m, backend="gurobi", mip_gap=0.0)
        h = B.solve(m, backend="highs", mip_gap=0.0)
        assert g.status == h.status == "optimal"
        assert g.backend == "gurobi" and h.backend == "highs"
        assert g.objective == pytest.approx(h.objective, rel=1e-6, abs=1e-6)


def test_highs_matches_brute_force_knapsack():
    m, y, w, v = knapsack(7, n=14)
    res = B.solve(m, backend="highs", mip_gap=0.0)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(brute_knapsack(w, v, int(w.sum() // 2)))
    # the solution read back through Result.value is the reported objective
    vals = res.value(y)
    assert sum(v[i] * round(vals[i]) for i in range(len(v))) == pytest.approx(res.objective)


def test_auto_falls_back_to_highs_above_licence_size_and_is_optimal():
    rng = np.random.default_rng(0)
    cost = rng.integers(1, 100, (50, 50))          # 2500 binaries > 2000
    m = B.new_model("assignment")
    x = m.addMVar(cost.shape, vtype=GRB.BINARY, name="x")
    m.addConstr(x.sum(axis=1) == 1)
    m.addConstr(x.sum(axis=0) == 1)
    m.setObjective((cost * x).sum(), GRB.MINIMIZE)
    m.update()
    res = B.solve(m, backend="auto")
    r, c = linear_sum_assignment(cost)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(cost[r, c].sum())
    assert res.n_vars == 2500 and res.n_int_vars == 2500
    assert np.allclose(res.value(x).sum(axis=0), 1)
    assert res.backend_reason
    try:
        limited = B.gurobi_size_limited()
    except B.BackendError:
        limited = True  # no Gurobi at all: HiGHS is the only choice
    if limited:
        assert res.backend == "highs"
        assert "2500 vars" in res.backend_reason or "could not start" in res.backend_reason


@pytest.mark.parametrize("backend", ["gurobi", "highs"])
def test_mip_start_is_accepted(backend, tmp_path):
    if backend == "gurobi":
        pytest.importorskip("gurobipy")
        from tests.conftest import gurobi_available
        if not gurobi_available():
            pytest.skip("no Gurobi")
    m, y, w, v = knapsack(3, n=30)
    start = {y[i]: (1 if i < 3 else 0) for i in range(30)}
    log = tmp_path / "solve.log"
    res = B.solve(m, backend=backend, start=start, log=str(log))
    assert res.status == "optimal"
    text = log.read_text()
    expected = int(sum(v[:3]))
    if backend == "gurobi":
        assert f"Loaded user MIP start with objective {expected}" in text
    else:
        assert f"MIP start solution is feasible, objective value is {expected}" in text


@needs_gurobi
def test_parameters_and_start_do_not_leak_between_solves():
    m, y, _, _ = knapsack(3, n=30)
    first = B.solve(m, backend="gurobi", start={y[0]: 1}, params={"SolutionLimit": 1})
    second = B.solve(m, backend="gurobi")
    assert first.status == "feasible"
    assert second.status == "optimal" and second.objective >= first.objective


@pytest.mark.parametrize("backend", ["gurobi", "highs"])
def test_infeasible_is_reported(backend, tmp_path):
    from tests.conftest import gurobi_available
    if backend == "gurobi" and not gurobi_available():
        pytest.skip("no Gurobi")
    m = B.new_model()
    a = m.addVars(3, vtype=GRB.BINARY)
    m.addConstr(a.sum() >= 4, name="too_many")
    m.update()
    iis = tmp_path / "model.ilp"
    res = B.solve(m, backend=backend, iis_path=str(iis))
    assert res.status == "infeasible" and not res.has_solution
    assert "infeasible" in res.message
    if backend == "gurobi":
        assert iis.exists() and "too_many" in iis.read_text()


@pytest.mark.parametrize("backend", ["gurobi", "highs"])
def test_unbounded_is_reported(backend):
    from tests.conftest import gurobi_available
    if backend == "gurobi" and not gurobi_available():
        pytest.skip("no Gurobi")
    m = B.new_model()
    z = m.addVar(lb=-GRB.INFINITY)
    i = m.addVar(vtype=GRB.INTEGER, lb=-GRB.INFINITY)
    m.addConstr(z <= i)
    m.setObjective(z + i, GRB.MINIMIZE)
    m.update()
    assert B.solve(m, backend=backend).status == "unbounded"


@pytest.mark.parametrize("backend", ["gurobi", "highs"])
def test_lexicographic_helper_same_on_both_backends(backend):
    from tests.conftest import gurobi_available
    if backend == "gurobi" and not gurobi_available():
        pytest.skip("no Gurobi")
    m = B.new_model()
    a = m.addVars(4, vtype=GRB.INTEGER, ub=5, name="a")
    m.addConstr(a.sum() >= 7)
    m.update()
    stage1 = gp.LinExpr(a.sum())
    stage2 = gp.LinExpr(3 * a[0] + a[1] + 2 * a[2] + 5 * a[3])
    res = B.solve_lexicographic(m, [stage1, stage2], backend=backend)
    assert [r.status for r in res] == ["optimal", "optimal"]
    assert res[0].objective == pytest.approx(7) and res[1].objective == pytest.approx(9)
    vals = res[1].value(a)
    assert sum(vals.values()) == pytest.approx(7)


def test_highs_param_mapping_and_unknown_params_reported():
    m, *_ = knapsack(1)
    res = B.solve(m, backend="highs", params={"MIPGap": 0.0, "Heuristics": 0.5})
    assert res.status == "optimal"
    assert "Heuristics" in res.message


def test_unknown_backend_and_quadratic_model_are_clear_errors():
    m, y, *_ = knapsack(0, n=5)
    with pytest.raises(B.BackendError, match="unknown backend"):
        B.solve(m, backend="cplex")
    m.setObjective(y[0] * y[1], GRB.MAXIMIZE)
    m.update()
    res = B.solve(m, backend="highs")
    assert res.status == "error" and "linear" in res.message


def test_convergence_time_rule():
    from models.result import convergence_time
    assert convergence_time([]) is None
    # improvements of 1%, then 0.005% (below 0.01%): converged at the 1% one
    assert convergence_time([(1.0, 100.0), (2.0, 99.0), (3.0, 98.995)]) == 2.0
    assert convergence_time([(0.5, -10.0)]) == 0.5


@pytest.mark.parametrize("backend", ["highs", pytest.param("gurobi", marks=needs_gurobi)])
def test_incumbent_trajectory_improves_to_the_optimum(backend):
    """Every improving MIP solution is recorded with its time; the last is the optimum."""
    rng = np.random.default_rng(3)
    n = 25
    w, v = rng.integers(5, 50, n), rng.integers(5, 60, n)
    m = B.new_model()
    x = m.addVars(n, vtype=GRB.BINARY)
    m.addConstr(gp.quicksum(int(w[i]) * x[i] for i in range(n)) <= int(w.sum()) // 3)
    m.setObjective(5 - gp.quicksum(int(v[i]) * x[i] for i in range(n)))
    m.update()
    res = B.solve(m, backend=backend, start={x[i]: 0 for i in range(n)})
    assert res.status == "optimal" and res.incumbents
    times, objs = zip(*res.incumbents)
    assert list(times) == sorted(times) and all(a >= b - 1e-9 for a, b in zip(objs, objs[1:]))
    assert objs[-1] == pytest.approx(res.objective) and 0 <= res.converged_s() <= res.runtime_s + 1e-3
