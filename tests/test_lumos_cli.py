"""LumosCore end to end: command line, reproduction targets on toy settings."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.test_cli import ROOT, cli

LUMOS = ROOT / "instances" / "lumos"


def test_list_names_the_lumos_methods_and_targets():
    code, out, _ = cli("list")
    assert code == 0
    for word in ("lumos-reconfig", "lumos-logical", "itv-mdmcf", "itv-mcf", "itv-ilp", "uniform-ilp",
                 "uniform-greedy", "helios", "realize", "heuristic-decomposition", "logical-ilp-min",
                 "lumos-table1", "lumos-realization", "lumos-reconfig", "lumos-table6"):
        assert word in out


@pytest.mark.parametrize("method", ["itv-mdmcf", "itv-mcf", "itv-ilp"])
def test_solve_cross_instance(method):
    code, out, err = cli("solve", LUMOS / "cross-rings-P8.json", "--method", method, "--format", "json")
    assert code == 0, err
    rec = json.loads(out)
    assert rec["verified"] and rec["realized"] and rec["objective"] == rec["rewiring"] >= rec["bound"]


def test_realize_three_pod_full_mesh_by_wiring():
    code, out, _ = cli("solve", LUMOS / "three-pod-full-mesh-uniform.json", "--method", "realize",
                       "--format", "json")
    rec = json.loads(out)
    assert code == 1 and rec["status"] == "infeasible" and "odd-set" in rec["proof"]
    for w in ("cross", "dual"):
        code, out, _ = cli("solve", LUMOS / f"three-pod-full-mesh-{w}.json", "--method", "realize",
                           "--format", "json")
        assert code == 0 and json.loads(out)["realized"]


def test_uniform_methods_decline_cross_instances_and_vice_versa():
    code, _, err = cli("solve", LUMOS / "cross-rings-P8.json", "--method", "helios")
    assert code == 2 and "uniform wiring" in err
    code, out, err = cli("solve", LUMOS / "uniform-rings-P8.json", "--method", "uniform-ilp",
                         "--format", "json")
    assert code == 0, err
    assert json.loads(out)["verified"]


def test_generate_and_solve_logical(tmp_path):
    f = tmp_path / "l.json"
    code, _, err = cli("generate", "lumos-logical", "--pods", 3, "--tau", 2, "-o", f)
    assert code == 0, err
    code, out, err = cli("gap", f, "--methods", "heuristic-decomposition,logical-ilp-min")
    assert code == 0, err


def test_reproduce_table1(tmp_path):
    code, out, err = cli("reproduce", "lumos-table1", "--out-dir", tmp_path)
    assert code == 0, err
    df = pd.read_csv(tmp_path / "lumos_table1.csv")
    assert len(df) == 60 and df["match"].all()


def test_benchmark_pipelines_on_toy_scales(tmp_path, monkeypatch):
    import benchmarks.lumos_realization as real
    import benchmarks.lumos_reconfig as rec
    import benchmarks.lumos_table6 as t6

    monkeypatch.setattr(real, "SCALES", {2048: 8})
    monkeypatch.setattr(real, "STEPS", {"quick": (2,), "full": (2,)})
    real.run(quick=True, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_realization.csv")
    assert (df[df.strategy == "ITV-MDMCF"].ltrr > 1 - 1e-9).all()
    monkeypatch.setattr(rec, "PODS", {"quick": (4,), "full": (4,)})
    rec.run(quick=True, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_reconfig.csv")
    first = df[df.step == 1]                  # the same old configuration for every strategy
    ilp = first[first.strategy == "ITV-ILP"].set_index("workload").rewiring
    md = first[first.strategy == "ITV-MDMCF"].set_index("workload").rewiring
    assert (ilp <= md).all()
    monkeypatch.setattr(t6, "SCALES", (512,))
    t6.run(quick=True, out_dir=tmp_path)
    assert (tmp_path / "lumos_table6.md").exists()
