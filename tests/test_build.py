"""The model in the user's hands (issue 30 item 4): ``toolkit.api.build`` hands over the
gurobipy model of every model method, and the method's own extraction and the problem's
checker read the solution of the model as the caller changed and solved it."""
from __future__ import annotations

import math
import subprocess
import sys
import threading
from pathlib import Path

import gurobipy as gp
import pytest

from models.backend import gurobi_size_limited
from tests.conftest import needs_gurobi
from toolkit.api import ConfigError, NotApplicable, build, solve
from toolkit.registry import problems

ROOT = Path(__file__).resolve().parents[1]
SPECTRA, DELTA = "instances/examples/shifts_n6_s1.json", "instances/delta/t0-hand.json"
LOGICAL, PLACE = "instances/lumos/logical-testbed-tau2.json", "instances/lumos/placement-bestfit-48.json"


def _generated(problem: str, **params):
    return lambda: problems()[problem].generator.run(**params)


A2A = _generated("a2a", n=3, k=1)
# exact-k1 solves G2 only where the shifted rings miss Theorem 1: first at n = 7, d = 3
A2A_G2 = _generated("a2a", n=7, k=1)
# a small instance per model method whose first model the pip licence optimizes
CASES = {
    "spectra-lp": (SPECTRA, {}), "baseline-milp": (SPECTRA, {}), "milp": (SPECTRA, {}),
    "milp-matchings": (SPECTRA, {}),
    "delta-joint": (DELTA, {}), "delta-topo": (DELTA, {}), "delta-joint-hotstart": (DELTA, {}),
    "delta-fts": (DELTA, {"step": 0.25}),
    "pmedian": (A2A, {}), "exact-k1": (A2A_G2, {"d": 3}), "exact-te": (A2A, {}), "pack-ilp": (A2A, {}),
    "itv-ilp": ("instances/lumos/cross-rings-P8.json", {}),
    "uniform-ilp": ("instances/lumos/three-pod-full-mesh-uniform.json", {}),
    "logical-ilp": (LOGICAL, {}), "logical-ilp-min": (LOGICAL, {}),
    "staging-ilp": ("instances/lumos/staging-P8-tau1.json", {}),
    "placement-ilp": (PLACE, {}), "placement-authors": (PLACE, {}),
    "sim-itv-ilp": ("instances/lumos/sim-lumos-256.json", {"alg_time": "none"}),
    "sim-uniform-ilp": (_generated("lumos-sim", arch="uniform-51.2T-tau2", gpus=256, jobs=40,
                                   workload="trace"), {"alg_time": "none"}),
}


def _instance(source):
    return source() if callable(source) else str(ROOT / source)


def _model_methods() -> dict:
    return {m.name: (p, m) for p in problems().values() for m in p.methods.values()
            if m.kind == "model"}


def test_every_model_method_has_a_case():
    assert set(CASES) == set(_model_methods())


@needs_gurobi
@pytest.mark.parametrize("name", sorted(CASES))
def test_build_hands_over_the_model_and_reads_back_a_checked_solution(name):
    source, options = CASES[name]
    inst = _instance(source)
    b = build(inst, name, **options)
    assert isinstance(b.model, gp.Model) and b.model.NumVars > 0 and b.nth == 1
    assert all(v.Start == val for v, val in b.start)        # the method's MIP start is set
    b.model.optimize()
    sol = b.extract()
    check = b.check(sol)
    assert check.ok, check.violations
    assert math.isfinite(check.objective)
    prob, method = _model_methods()[name]
    assert b.problem == prob.name and check.objective == check.metrics[prob.objective]
    rec = solve(inst, name, options=options)
    assert rec.verified
    if method.exact and rec.status == "optimal":    # the optimum, whichever optimal solution
        assert check.objective == pytest.approx(rec.objective, rel=1e-6)


@needs_gurobi
def test_the_caller_s_constraint_and_parameter_reach_the_method_s_solution():
    # the worked example's exact makespan is 0.525; with at most 3 configurations in all it
    # is 0.62 (the three circulant permutations: 0.61 + delta on one switch)
    b = build(ROOT / "instances/examples/worked_example.json", "milp")
    used = [v for v in b.model.getVars() if v.VarName.startswith("u[")]
    b.model.addConstr(gp.quicksum(used) <= 3, name="at_most_3")
    b.model.Params.MIPGap = 0.0
    b.model.optimize()
    sched = b.extract()
    assert sum(len(sw) for sw in sched.switches) == 3
    assert b.check().objective == pytest.approx(0.62) == pytest.approx(b.model.ObjVal)
    with pytest.raises(ValueError, match="finished this run"):
        b.extract()


@needs_gurobi
def test_a_model_not_yet_solved_or_without_solution_is_a_clear_error():
    b = build(ROOT / "instances/examples/worked_example.json", "milp")
    with pytest.raises(ValueError, match="not solved yet"):
        b.extract()                                  # the run stays paused
    b.model.addConstr(b.model.getVarByName("C") <= 0.1, name="impossible")
    b.model.optimize()
    with pytest.raises(ValueError, match="ended without a solution.*infeasible"):
        b.extract()


def test_heuristics_unknown_options_and_missing_models_are_value_errors():
    path = ROOT / "instances/examples/worked_example.json"
    with pytest.raises(ValueError, match="method spectra is a heuristic.*milp"):
        build(path, "spectra")
    with pytest.raises(ConfigError, match="bogus"):
        build(path, "milp", bogus=1)
    with pytest.raises(NotApplicable, match="max_vars"):
        build(ROOT / "instances/examples/bench_n100_s4_d0.04.json", "milp")
    with pytest.raises(ValueError, match="solved 3 model.*none is model 9"):
        build(ROOT / "instances/a2a/uniform_n4_k1.json", "pmedian", nth=9)


@needs_gurobi
def test_nth_model_and_close_ends_the_paused_run():
    b = build(ROOT / "instances/a2a/uniform_n4_k1.json", "pmedian", nth=2)
    assert b.model.ModelName.endswith("_d2")         # one model per d: the second is d = 2
    worker = next(t for t in threading.enumerate() if t.name == "build pmedian")
    b.close()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert b.model.NumVars > 0                       # the model stays the caller's


@needs_gurobi
def test_a_model_over_the_licence_limit_solves_on_the_toolkit_backends():
    b = build(ROOT / "instances/lumos/logical-P8-tau1.json", "logical-ilp")
    assert b.model.NumVars > 2000
    if gurobi_size_limited():
        with pytest.raises(gp.GurobiError) as err:
            b.model.optimize()
        assert err.value.errno == 10010
    res = b.solve(backend="auto")
    assert res.has_solution and res.backend == ("highs" if gurobi_size_limited() else "gurobi")
    assert b.check(b.extract(res)).ok


@needs_gurobi
def test_the_docs_example_runs():
    r = subprocess.run([sys.executable, str(ROOT / "docs/examples/build_and_resolve.py")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "makespan 0.5250" in r.stdout and "makespan 0.6200" in r.stdout
    assert "checker ok" in r.stdout
