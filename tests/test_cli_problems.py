"""solve.py per problem end to end: generate and solve, reproduce, the Spectra, DELTA and a2a
methods and their generators' bad parameters (the CLI helpers: tests/test_cli.py)."""
from __future__ import annotations

import json

import pytest

from tests.test_cli import ROOT, cli


def test_generate_and_solve(tmp_path):
    f = tmp_path / "g.json"
    code, _, err = cli("generate", "spectra", "--workload", "benchmark", "--n", 20, "--m", 4,
                       "--switches", 3, "--seed", 9, "-o", f)
    assert code == 0, err
    code, out, _ = cli("solve", f, "--format", "csv")
    assert code == 0 and "True" in out
    bad = tmp_path / "bad.json"
    code, _, err = cli("generate", "spectra", "--switches", 0, "-o", bad)
    assert code == 2 and "switches" in err and not bad.exists()


def test_reproduce_worked_example(tmp_path):
    code, out, err = cli("reproduce", "spectra-example", "--out", tmp_path)
    assert code == 0, err
    text = (tmp_path / "spectra_example.md").read_text()
    for row in ("| Final makespan (Fig. 4b) | 0.525 | 0.525 |",
                "| Baseline makespan | not stated | 0.535 |",      # hand-checked in the tests
                "| Spectra (Eclipse) makespan | not stated | 0.525 |"):
        assert row in text and row in out           # the headline on stdout is the report's table
    assert f"--out {tmp_path.as_posix()}`" in text      # the command that wrote it there
    assert cli("reproduce", "nope")[0] == 2


def test_spectra_ai_workloads_and_comparators_from_the_cli(tmp_path):
    for wl, n, k in (("gpt", 32, 4), ("moe", 64, 63)):
        f = tmp_path / f"{wl}.json"
        code, _, err = cli("generate", "spectra", "--workload", wl, "--switches", 2, "--delay", 0.04,
                           "--seed", 3, "-o", f)
        assert code == 0, err
        data = json.loads(f.read_text())
        assert len(data["demand"]) == n and data["meta"]["workload"] == wl
    code, out, err = cli("gap", tmp_path / "gpt.json", "--methods",
                         "spectra,spectra-eclipse,baseline,baseline-milp", "--backend", "highs",
                         "--format", "json")
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert {r["method"] for r in recs} == {"spectra", "spectra-eclipse", "baseline", "baseline-milp"}
    for r in recs:
        assert r["verified"] and r["objective"] >= r["lower_bound"] - 1e-9 and r["degree"] == 4
    code, _, err = cli("generate", "spectra", "--workload", "gpt", "--n", 20, "-o", tmp_path / "x.json")
    assert code == 2 and "'n'" in err
    code, _, err = cli("solve", tmp_path / "gpt.json", "--method", "spectra-eclipse",
                       "--option", "alpha_search=bogus")
    assert code == 2 and "alpha_search" in err


@pytest.mark.parametrize("args, field", [
    (("--workload", "benchmark", "--seed", -1), "'seed'"),
    (("--workload", "moe", "--pop-sigma", "nan"), "'pop_sigma'"),
    (("--workload", "moe", "--pop-sigma", "inf"), "'pop_sigma'"),
    (("--workload", "gpt", "--tp", 1, "--pp", 1, "--dp", 1), "'tp*pp*dp'"),
    (("--workload", "moe", "--n", 1, "--top-k", 1), "'n'"),
    (("--workload", "benchmark", "--n", 100000), "'n'"),
    # a parameter of another workload (was silently ignored, whatever its value)
    (("--density", "nan"), "'density': applies only to --workload random"),
    (("--workload", "moe", "--tp", 8), "'tp': applies only to --workload gpt"),
    (("--workload", "gpt", "--m", 4), "'m': applies only to --workload benchmark"),
    (("--workload", "random", "--top-k", 0), "'top_k': applies only to --workload moe"),
])
def test_spectra_generate_bad_parameter_is_one_line_exit_2(tmp_path, args, field):
    f = tmp_path / "x.json"
    code, _, err = cli("generate", "spectra", *args, "-o", f)
    assert code == 2 and field in err and "Traceback" not in err and not f.exists()
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("method", ["prop-alloc", "sqrt-alloc", "iter-halve"])
def test_delta_baselines_from_the_cli(method):
    code, out, err = cli("solve", ROOT / "instances/delta/gpt-7b.json",
                         ROOT / "instances/delta/megatron-177b-n12.json", "--method", method,
                         "--format", "json")
    assert code == 0, err
    for line in out.strip().splitlines():
        rec = json.loads(line)
        assert rec["problem"] == "delta" and rec["verified"] is True
        assert rec["nct"] >= 1 - 1e-9 and rec["objective"] >= rec["bound"] - 1e-6
        assert rec["port_ratio"] <= 1


def test_generate_delta_workload(tmp_path):
    f = tmp_path / "m.json"
    code, _, err = cli("generate", "delta", "--model", "megatron-177b", "--micro-batches", 6,
                       "--bandwidth-gbps", 800, "-o", f)
    assert code == 0, err
    d = json.loads(f.read_text())
    assert d["job"]["micro_batches"] == 6 and d["job"]["bandwidth_gbps"] == 800
    code, out, err = cli("solve", f, "--format", "json")
    assert code == 0 and json.loads(out)["verified"]
    code, _, err = cli("generate", "delta", "--model", "gpt-9", "-o", tmp_path / "bad.json")
    assert code == 2 and "model" in err and not (tmp_path / "bad.json").exists()


def test_delta_milps_from_the_cli_on_the_hand_checked_case():
    expected = {"delta-joint": (3.0, 3.0), "delta-topo": (4.0, 4.0)}   # (milp objective, reported C)
    for method, (milp, C) in expected.items():
        code, out, err = cli("solve", ROOT / "instances/delta/t0-hand.json", "--method", method,
                             "--mip-gap", 0, "--format", "json")
        assert code == 0, err
        rec = json.loads(out)
        assert rec["verified"] and rec["status"] == "optimal"
        assert rec["milp_objective"] == pytest.approx(milp, abs=1e-6)
        assert rec["objective"] == pytest.approx(C, abs=1e-6)


def test_delta_fast_and_hotstart_from_the_cli():
    for method in ("delta-fast", "delta-joint-hotstart"):
        code, out, err = cli("solve", ROOT / "instances/delta/t0-hand.json", "--method", method,
                             "--option", "stall=10", "--option", "pop=8", "--format", "json")
        assert code == 0, err
        rec = json.loads(out)
        assert rec["verified"]
        assert rec["objective"] == pytest.approx(4.0 if method == "delta-fast" else 3.0, abs=1e-6)


def test_a2a_motivating_example_from_the_cli(tmp_path):
    f = tmp_path / "ex.json"
    code, _, err = cli("generate", "a2a", "--workload", "example", "-o", f)
    assert code == 0, err
    for method, expect in (("rdc", 30.0), ("static", 35.0), ("one-hop", 56.0), ("pmedian", 30.0)):
        code, out, err = cli("solve", f, "--method", method, "--format", "json")
        assert code == 0, err
        rec = json.loads(out)
        assert rec["verified"] and rec["objective"] == expect and rec["lower_bound"] == 30.0


def test_a2a_bad_input_and_exact_model_decline(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"problem": "a2a", "n": 4, "k": 1, "R": 1, "traffic": {"uniform": -1}}))
    code, _, err = cli("solve", bad)
    assert code == 2 and "traffic.uniform" in err
    f = tmp_path / "z.json"
    code, _, err = cli("generate", "a2a", "--workload", "zipf", "--n", 8, "--k", 2, "-o", f)
    assert code == 0, err
    code, out, err = cli("solve", f, "--method", "exact-k1")
    assert code != 0 and "uniform" in err


def test_a2a_input_validation_and_declines_exit_2(tmp_path):
    code, _, err = cli("generate", "a2a", "--workload", "zipf", "--seed", -3, "-o", tmp_path / "z.json")
    assert code == 2 and "seed" in err and "Traceback" not in err
    code, _, err = cli("generate", "a2a", "--T", -1, "-o", tmp_path / "t.json")
    assert code == 2 and "'T'" in err
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"problem": "a2a", "n": 4, "k": 1, "R": 1, "traffic": {"uniform": 1},
                                 "bogus": 3}))
    code, _, err = cli("solve", extra)
    assert code == 2 and "bogus" in err
    n6k3 = tmp_path / "n6k3.json"
    n6k3.write_text(json.dumps({"problem": "a2a", "n": 6, "k": 3, "R": 1, "traffic": {"uniform": 1}}))
    code, _, err = cli("solve", n6k3, "--method", "topoopt")
    assert code == 2 and "coprime" in err and "Traceback" not in err


@pytest.mark.parametrize("args, field", [
    (("--workload", "example", "--n", 5000), "'n': does not apply to --workload example"),
    (("--workload", "example", "--k", 3), "'k': does not apply to --workload example"),
    (("--T", 1, "--bandwidth-gbps", -5), "'bandwidth_gbps': does not apply with --T > 0"),
    (("--T", 1, "--chunk-mb", 0), "'chunk_mb': does not apply with --T > 0"),
])
def test_a2a_generate_parameter_that_does_not_apply_is_one_line_exit_2(tmp_path, args, field):
    """They were ignored silently, whatever their value (the example is the paper's fixed
    instance; T-unit mode has no bandwidth, latency or chunk size)."""
    f = tmp_path / "x.json"
    code, _, err = cli("generate", "a2a", *args, "-o", f)
    assert code == 2 and field in err and not f.exists(), err
    assert len(err.strip().splitlines()) == 1
