"""lumos-sim end to end: list, generate (workload spec and explicit job list), solve the
shipped instances with --format json / csv and --out (the solution re-checked from its
file), every method on the wiring it needs, the shared budget, batch resume."""
from __future__ import annotations

import io
import json
import shutil

import numpy as np
import pandas as pd
import pytest

import instances
from tests import cli_worker
from instances.lumos.sim import SimSolution
from instances.lumos.sim_check import check_sim
from tests.conftest import needs_gurobi
from tests.test_cli import ROOT

LUMOS = ROOT / "instances" / "lumos"
SHIPPED = sorted(LUMOS.glob("sim-*-256.json"))     # the 40-job 256-GPU examples


def cli(*args):
    """solve.py in the tests' CLI helper process (tests/cli_worker.py)."""
    return cli_worker.call(args)


def solve_json(f, *args):
    code, out, err = cli("solve", f, "--format", "json", *args)
    lines = out.splitlines()
    assert len(lines) == 1, (out, err)
    return code, json.loads(lines[0]), err


def test_list_and_generate_help():
    code, out, _ = cli("list")
    assert code == 0
    for word in ("lumos-sim", "simulate", "sim-itv-mcf", "sim-itv-ilp", "sim-uniform-ilp",
                 "sim-helios", "alg_time"):
        assert word in out
    code, out, _ = cli("generate", "lumos-sim", "--help")
    for flag in ("--arch", "--gpus", "--jobs", "--rho", "--seed", "--workload", "--explicit"):
        assert flag in out


def test_shipped_instances():
    assert [f.stem for f in SHIPPED] == ["sim-best-256", "sim-clos-256", "sim-lumos-256"]
    recs = {}
    for f in SHIPPED:
        code, rec, err = solve_json(f)
        assert code == 0 and rec["verified"] is True and rec["status"] == "feasible", err
        inst = instances.load_instance(f)
        assert inst.gpus == 256 and len(inst.jobs) == 40 and rec["jobs"] == 40
        assert rec["objective"] == rec["avg_jct_s"]
        assert rec["bound"] == pytest.approx(np.mean([j.duration_s for j in inst.jobs]))
        assert rec["bound"] <= rec["avg_jrt_s"] <= rec["avg_jct_s"]
        recs[f.stem] = rec
    assert recs["sim-best-256"]["mean_slowdown"] == 1 and recs["sim-best-256"]["reconfigurations"] == 0
    assert recs["sim-clos-256"]["mean_cl_ar"] > 1          # 800G ports, contention
    assert recs["sim-lumos-256"]["reconfigurations"] > 0 and recs["sim-lumos-256"]["reconfig_s_max"] > 0
    for key in ("sim_s", "rate_s", "route_s", "admit_s", "p99_jct_s", "avg_jwt_s"):
        assert recs["sim-lumos-256"][key] >= 0


def test_csv_records_parse():
    code, out, err = cli("solve", *SHIPPED, "--format", "csv")
    assert code == 0, err
    df = pd.read_csv(io.StringIO(out))
    assert len(df) == 3 and df.verified.all() and (df.problem == "lumos-sim").all()
    assert (df.objective == df.avg_jct_s).all() and (df.jobs == 40).all()


def test_out_writes_a_solution_that_rechecks(tmp_path):
    f = LUMOS / "sim-lumos-256.json"
    code, rec, _ = solve_json(f, "--out", tmp_path)
    assert code == 0
    saved = json.loads(next(tmp_path.glob("*.simulate.json")).read_text())
    sol = SimSolution.from_dict(saved["solution"])
    assert len(sol.jobs) == 40 and len(sol.reconfigs) == rec["reconfigurations"]
    bad, m = check_sim(instances.load_instance(f), sol)
    assert bad == [] and m["avg_jct_s"] == pytest.approx(rec["objective"])
    # the measured OCS algorithm time delays starts after admission ([001] JWT)
    assert any(j["start_s"] > j["admitted_s"] for j in sol.jobs)
    assert all(r["method"] == "itv-mdmcf" for r in sol.reconfigs)


def test_generate_spec_and_explicit_list_are_the_same_jobs(tmp_path):
    a, b = tmp_path / "spec.json", tmp_path / "list.json"
    base = ("generate", "lumos-sim", "--arch", "uniform-51.2T-tau2", "--gpus", 256, "--jobs", 12,
            "--rho", 0.9, "--seed", 5, "--workload", "trace")
    assert cli(*base, "-o", a)[0] == 0 and cli(*base, "--explicit", 1, "-o", b)[0] == 0
    ia, ib = instances.load_instance(a), instances.load_instance(b)
    assert ib.workload is None and "jobs" in json.loads(b.read_text())
    assert ia.job_rows() == ib.job_rows()
    objs = [solve_json(f, "--option", "alg_time=none")[1]["objective"] for f in (a, b, a)]
    assert objs[0] == objs[1] == objs[2]          # alg_time=none: clock-free, reproducible


def test_generator_refuses_bad_params(tmp_path):
    for args in (("--arch", "torus"), ("--gpus", 300), ("--workload", "x"), ("--jobs", 0),
                 ("--explicit", 2), ("--ecmp", "independent"), ("--rho", -1),
                 ("--rail-rule", "leaf-pairs"), ("--layout", "rail", "--rail-rule", "x")):
        code, out, err = cli("generate", "lumos-sim", *args, "-o", tmp_path / "g.json")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (args, err)


def test_the_rail_rule_asks_fewer_links_of_the_same_first_admission(tmp_path):
    """The shipped rail files differ only in ``rail_rule``: their first cross-Pod admission
    (the same job, the same history before it) asks fewer links under leaf-pairs; the
    generator writes the leaf-pairs file."""
    first = {}
    for rule, f in (("lane-pairs", "sim-rail-256-lumos.json"),
                    ("leaf-pairs", "sim-rail-leafpairs-256-lumos.json")):
        code, rec, err = solve_json(LUMOS / f, "--option", "alg_time=none", "--out", tmp_path / rule)
        assert code == 0 and rec["verified"] is True and rec["reconfigurations"] > 0, err
        saved = json.loads(next((tmp_path / rule).glob("*.simulate.json")).read_text())
        first[rule] = SimSolution.from_dict(saved["solution"]).reconfigs[0]
    lane, leaf = first["lane-pairs"], first["leaf-pairs"]
    assert (lane["job"], lane["t"]) == (leaf["job"], leaf["t"])
    assert 0 < leaf["req_links"] < lane["req_links"]
    g = tmp_path / "g.json"
    assert cli("generate", "lumos-sim", "--arch", "lumos-25.6T-tau1", "--jobs", 40, "--rho", 0.8,
               "--seed", 1, "--layout", "rail", "--rail-rule", "leaf-pairs", "-o", g)[0] == 0
    made, shipped = (instances.load_instance(x) for x in (g, LUMOS / "sim-rail-leafpairs-256-lumos.json"))
    assert made.rail_rule == shipped.rail_rule == "leaf-pairs" and made.job_rows() == shipped.job_rows()


@pytest.fixture(scope="module")
def uniform(tmp_path_factory):
    f = tmp_path_factory.mktemp("u") / "uniform.json"
    assert cli("generate", "lumos-sim", "--arch", "uniform-51.2T-tau2", "--jobs", 30, "--seed", 1, "--rho", 0.8,
               "-o", f)[0] == 0
    return f


@pytest.mark.parametrize("method, wiring", [("sim-itv-mcf", "cross"), ("sim-itv-ilp", "cross"),
                                            ("sim-uniform-ilp", "uniform"), ("sim-helios", "uniform")])
def test_each_strategy_on_its_wiring_and_declined_elsewhere(uniform, method, wiring):
    own, other = (LUMOS / "sim-lumos-256.json", uniform) if wiring == "cross" else \
        (uniform, LUMOS / "sim-lumos-256.json")
    code, rec, err = solve_json(own, "--method", method, "--backend", "highs")
    assert code == 0 and rec["verified"] and rec["reconfigurations"] > 0, err
    assert rec["reconfig_method"] == method[4:]
    if method.endswith("-ilp"):
        assert rec["backend"] == "highs" and rec["n_vars"] > 0 and rec["ilp_fallbacks"] == 0
        assert rec["message"].endswith("optimal") and rec["time_limit_s"] == 600
    code, out, err = cli("solve", other, "--method", method)
    assert code == 2 and out == "" and "declines" in err
    for clock_free in (LUMOS / "sim-best-256.json", LUMOS / "sim-clos-256.json"):
        assert cli("solve", clock_free, "--method", method)[0] == 2


@needs_gurobi
def test_a_spent_budget_stops_the_simulation():
    """--time-limit is the whole run's budget (issue 28): spent, the simulation stops with
    status time_limit_no_solution (a partial simulation is no result), said in the record."""
    code, rec, err = solve_json(LUMOS / "sim-lumos-256.json", "--method", "sim-itv-ilp",
                                "--backend", "gurobi", "--time-limit", 1e-4)
    assert code == 1 and rec["status"] == "time_limit_no_solution" and not rec["verified"]
    assert rec["time_limit_s"] == 1e-4 and "time limit of 0.0001 s reached" in rec["message"]


def test_an_ilp_without_incumbent_falls_back_to_its_start_method(monkeypatch):
    """An ILP reconfiguration that ends without an incumbent (its share of the budget too
    short) is replaced by its MIP start method (ITV-MDMCF); the run still finishes."""
    from dataclasses import replace

    from models.backend import Result
    from toolkit.registry import MethodOutput, RunConfig, problem
    from toolkit.run import run_task

    methods = problem("lumos-reconfig").methods
    monkeypatch.setitem(methods, "itv-ilp", replace(methods["itv-ilp"], fn=lambda i, c: (
        MethodOutput(None, Result("time_limit_no_solution", backend="highs")))))
    rec = run_task(instances.read_json(LUMOS / "sim-lumos-256.json"), "s", "sim-itv-ilp",
                   RunConfig(backend="highs"))
    assert rec["verified"] and rec["ilp_fallbacks"] == rec["reconfigurations"] > 0
    assert "fell back" in rec["message"]


def test_batch_resumes_on_two_instances(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(LUMOS / "sim-best-256.json", d)
    args = ("batch", d, "--methods", "simulate", "--out", tmp_path / "runs", "--no-progress")
    code, _, err = cli(*args)
    assert code == 0 and "1 ran, 0 already" in err, err
    shutil.copy(LUMOS / "sim-clos-256.json", d)
    code, _, err = cli(*args)
    assert code == 0 and "1 ran, 1 already" in err, err
    code, _, err = cli(*args)
    assert code == 0 and "0 ran, 2 already" in err, err
    df = pd.read_csv(tmp_path / "runs" / "records.csv")
    assert len(df) == 2 and df.verified.all() and set(df.name) == {"sim-best-256", "sim-clos-256"}
    assert len(list((tmp_path / "runs").glob("*.simulate.json"))) == 2
