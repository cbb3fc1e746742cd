"""LumosCore end to end: command line, reproduction targets on toy settings."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import instances

from tests import cli_worker
from tests.test_cli import ROOT, cli as cli_subprocess

LUMOS = ROOT / "instances" / "lumos"


def cli(*args):
    """solve.py in the tests' CLI helper process (tests/cli_worker.py)."""
    return cli_worker.call(args)


def test_list_names_the_lumos_methods_and_targets():
    code, out, _ = cli("list")
    assert code == 0
    for word in ("lumos-reconfig", "lumos-logical", "itv-mdmcf", "itv-mcf", "itv-ilp", "uniform-ilp",
                 "uniform-greedy", "helios", "realize", "heuristic-decomposition", "logical-ilp-min",
                 "lumos-table1", "lumos-realization", "lumos-reconfig", "lumos-table6"):
        assert word in out


def test_gap_study_of_the_cross_methods():
    code, out, err = cli_subprocess("gap", LUMOS / "cross-rings-P8.json", "--methods", "itv-mdmcf,itv-mcf,itv-ilp",
                         "--format", "json")
    assert code == 0, err
    recs = {r["method"]: r for r in map(json.loads, out.strip().splitlines())}
    assert all(r["verified"] and r["realized"] for r in recs.values())
    assert recs["itv-ilp"]["status"] == "optimal"
    assert recs["itv-ilp"]["objective"] <= min(recs["itv-mdmcf"]["objective"], recs["itv-mcf"]["objective"])
    assert all(r["objective"] >= r["problem_bound"] for r in recs.values())


def test_realize_three_pod_full_mesh_by_wiring():
    files = [LUMOS / f"three-pod-full-mesh-{w}.json" for w in ("uniform", "cross", "dual")]
    code, out, _ = cli_subprocess("solve", *files, "--method", "realize", "--format", "json")
    uni, cross, dual = map(json.loads, out.strip().splitlines())
    assert code == 1 and uni["status"] == "infeasible" and "odd-set" in uni["proof"]
    assert cross["realized"] and dual["realized"] and cross["verified"] and dual["verified"]


def test_wiring_specific_methods_decline_other_wirings():
    from toolkit.registry import RunConfig
    from toolkit.run import NotApplicable, run_task

    data = instances.read_json(LUMOS / "cross-rings-P8.json")
    with pytest.raises(NotApplicable, match="uniform wiring"):
        run_task(data, "x.json", "helios", RunConfig())
    rec = run_task(instances.read_json(LUMOS / "uniform-rings-P8.json"), "u.json", "uniform-ilp",
                   RunConfig(backend="highs"))
    assert rec["verified"] and rec["shortfall"] >= 0


def test_generate_logical(tmp_path):
    f = tmp_path / "l.json"
    code, _, err = cli("generate", "lumos-logical", "--pods", 3, "--tau", 2, "-o", f)
    assert code == 0, err
    inst = instances.load_instance(f)
    assert inst.problem == "lumos-logical" and inst.fabric.tau == 2


def test_reproduce_table1(tmp_path):
    from toolkit.reproduce import run_target

    run_target("lumos-table1", out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_table1.csv")
    assert len(df) == 60 and df["match"].all()


def test_benchmark_pipelines_on_toy_scales(tmp_path, monkeypatch):
    import benchmarks.lumos.realization as real
    import benchmarks.lumos.reconfig as rec
    import benchmarks.lumos.table6 as t6

    for mod in (real, rec, t6):
        monkeypatch.setattr(mod, "K", 4)
    monkeypatch.setattr(real, "SCALES", {32: 8})
    monkeypatch.setattr(real, "STEPS", {"quick": (2,), "full": (2,)})
    report = real.run(quick=True, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_realization.csv")
    assert (df[df.strategy == "ITV-MDMCF"].ltrr > 1 - 1e-9).all()
    assert "| 32 | ITV-MDMCF | - | 1 | 1 |" in report.headline     # no paper value at 32 GPUs
    monkeypatch.setattr(rec, "PODS", {"quick": (4,), "full": (4,)})
    report = rec.run(quick=True, out_dir=tmp_path)
    assert "| MDMCF MRAR over ITV-MCF | +2.77% average | " in report.headline
    assert report.headline.split("\n\n", 1)[1] in (tmp_path / "lumos_reconfig.md").read_text()
    df = pd.read_csv(tmp_path / "lumos_reconfig.csv")
    first = df[df.step == 1]                  # the same old configuration for every strategy
    ilp = first[first.strategy == "ITV-ILP"].set_index("workload").rewiring
    md = first[first.strategy == "ITV-MDMCF"].set_index("workload").rewiring
    assert (ilp <= md).all()
    monkeypatch.setattr(t6, "SCALES", (32,))
    monkeypatch.setattr(t6, "SIM_SCALES", {"quick": (256,), "full": (256,)})   # 2 Pods
    monkeypatch.setattr(t6, "SIM_JOBS", {"quick": 30, "full": 30})
    report = t6.run(quick=True, out_dir=tmp_path)
    assert (tmp_path / "lumos_table6.md").exists()
    paper = next(ln for ln in report.headline.splitlines() if ln.startswith("| paper |"))
    assert paper == "| paper | nan |"            # [002] Table 6 has no 256-GPU column
    sim = pd.read_csv(tmp_path / "lumos_table6_sim.csv")
    assert len(sim) > 0 and set(sim.strategy) <= set(t6.SIM_STRATS)
    assert ((sim.reallocated_share >= 0) & (sim.reallocated_share <= 2)).all()
