"""Bad lumos-sim files (issue 13 contract): exit 2 with one stderr line naming the file and
the field, never a traceback, a hang or a silent acceptance. The property tests mutate a
small explicit job list on Best and a workload spec on LumosCore (tests/fuzz.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.fuzz import FUZZ, assert_contract, expect_bad, mutants, patched, run_cli

LIST = {"problem": "lumos-sim", "format": 1, "name": "fuzz-list", "arch": "best", "gpus": 256,
        "jobs": [[0, 100, 256, 8, 1, 32, 1, 0.1, 0.2], [10, 50, 8, 8, 1, 1, 1, 0.05, 0.0],
                 [20, 30, 128, 8, 2, 8, 8, 0.0, 0.3], [25, 40, 16, 8, 2, 1, 8, 0.07, 0.25]]}
SPEC = {"problem": "lumos-sim", "format": 1, "name": "fuzz-spec", "arch": "lumos-51.2T-tau2",
        "gpus": 256, "workload": {"kind": "helios", "jobs": 6, "rho": 0.8, "seed": 3}}
RAIL = {**SPEC, "name": "fuzz-rail", "layout": "rail", "rail_rule": "leaf-pairs"}
CLOS = {"problem": "lumos-sim", "format": 1, "name": "fuzz-clos", "arch": "clos-25.6T-3tier",
        "gpus": 256, "ecmp": "independent",
        "workload": {"kind": "trace", "jobs": 5, "rho": 0.7, "seed": 0}}


@pytest.mark.parametrize("data", [LIST, SPEC, CLOS, RAIL], ids=["list", "spec", "clos", "rail"])
def test_the_seeds_are_valid_and_verified(tmp_path, data):
    code, out, err, path = run_cli(tmp_path, data, "simulate")
    assert_contract(code, out, err, path)
    assert code == 0


@settings(FUZZ, max_examples=80)
@given(data=mutants(LIST))
def test_mutated_job_lists_keep_the_contract(tmp_path, data):
    assert_contract(*run_cli(tmp_path, data, "simulate"))


@settings(FUZZ, max_examples=30)
@given(data=mutants(SPEC))
def test_mutated_workload_specs_keep_the_contract(tmp_path, data):
    assert_contract(*run_cli(tmp_path, data, "simulate"))


@settings(FUZZ, max_examples=20)
@given(data=mutants(RAIL))
def test_mutated_rail_specs_keep_the_contract(tmp_path, data):
    assert_contract(*run_cli(tmp_path, data, "simulate"))


def _row(k, i, v):
    jobs = [list(r) for r in LIST["jobs"]]
    jobs[k][i] = v
    return {"jobs": jobs}


@pytest.mark.parametrize("over, field, word", [
    ({"arch": "lumos-12T-tau1"}, "arch", "unknown architecture"),
    ({"gpus": 300}, "gpus", "multiple"),
    ({"arch": "clos-51.2T-3tier"}, "gpus", "clos-51.2T-3tier"),      # 256 < 2 (k/2)^2 = 512
    ({"gpus": 128 * 2 ** 40}, "gpus", "--max-memory"),
    ({"arch": "lumos-51.2T-tau2", "gpus": 128 * 2 ** 13}, "gpus", "--max-memory"),   # dense L
    ({"ecmp": "independent"}, "ecmp", "Clos"),
    ({"layout": "rails"}, "layout", "server, rail"),
    ({"layout": 1}, "layout", "string"),
    ({"rail_rule": "leaf-pairs"}, "rail_rule", "rail layout only"),          # server layout
    ({"layout": "rail", "rail_rule": "leaf-pairs"}, "rail_rule", "OCS"),     # on Best
    ({"arch": "clos-25.6T-3tier", "layout": "rail", "rail_rule": "lane-pairs"}, "rail_rule",
     "OCS"),
    ({"arch": "lumos-25.6T-tau1", "layout": "rail", "rail_rule": "lanes"}, "rail_rule",
     "lane-pairs, leaf-pairs"),
    ({"arch": "lumos-25.6T-tau1", "layout": "rail", "rail_rule": 1}, "rail_rule", "string"),
    ({"failures": {"rate": 1.0}}, "failures.rate", "< 1"),
    ({"failures": {"rate": -0.1}}, "failures.rate", ">= 0"),
    ({"failures": {"seed": 1}}, "failures.rate", "missing"),
    ({"failures": {"rate": 0.1, "sede": 1}}, "failures.sede", "unknown"),
    ({"failures": [0.1]}, "failures", "object"),
    ({"arch": "clos-25.6T-3tier", "ecmp": "random"}, "ecmp", "polarized"),
    ({"workload": {"kind": "helios", "jobs": 3, "rho": 1}}, "workload", "exactly one"),
    ({"jobs": []}, "jobs", "at least one"),
    ({"jobs": [[0, 100, 8, 8, 1, 1, 1, 0.1]]}, "jobs[0]", "9 numbers"),
    (_row(1, 2, 8.5), "jobs[1][2]", "integer"),
    (_row(1, 3, True), "jobs[1][3]", "integer"),
    (_row(1, 0, -1), "jobs[1][0]", "within [0,"),
    (_row(1, 1, 0), "jobs[1][1]", "within (0,"),
    (_row(1, 1, 1e15), "jobs[1][1]", "1e+12"),
    (_row(1, 2, 512), "jobs[1][2]", "exceed the cluster"),
    (_row(1, 2, 16), "jobs[1][2]", "tp * pp * dp"),
    (_row(1, 6, 3), "jobs[1][6]", "divide"),
    (_row(1, 7, 1.5), "jobs[1][7]", "[0, 1]"),
    (_row(0, 8, 0.95), "jobs[0][8]", "z_ar + z_a2a"),
    ({"jobs": [[0, 100, 16, 16, 1, 1, 1, 0, 0]]}, "jobs[0][3]", "TP inside a server"),
    ({"jobs": [[0, 100, 256, 8, 1, 32, 256, 0, 0]]}, "jobs[0]", "empty cluster"),   # EP > a Pod
    ({"jobs": [[0, 1, 8, 8, 1, 1, 1, 0, 0]] * 200_001}, "jobs", "--max-memory"),
])
def test_each_bad_field_is_named(tmp_path, over, field, word):
    expect_bad(tmp_path, patched(LIST, **over), "simulate", field, word)


@pytest.mark.parametrize("w, field, word", [
    ({"kind": "sense", "jobs": 4, "rho": 0.8}, "workload.kind", "helios"),
    ({"kind": "helios", "jobs": 0, "rho": 0.8}, "workload.jobs", ">= 1"),
    ({"kind": "helios", "jobs": 10 ** 9, "rho": 0.8}, "workload.jobs", "--max-memory"),
    ({"kind": "helios", "jobs": 4, "rho": 0}, "workload.rho", "> 0"),
    ({"kind": "helios", "jobs": 4, "rho": 1e-300}, "workload.rho", "arrivals"),
    ({"kind": "helios", "jobs": 4, "rho": 0.8, "seed": -1}, "workload.seed", ">= 0"),
    ({"kind": "helios", "jobs": 4}, "workload.rho", "missing"),
    ({"kind": "helios", "jobs": 4, "rho": 0.8, "sede": 1}, "workload.sede", "unknown"),
])
def test_each_bad_workload_field_is_named(tmp_path, w, field, word):
    expect_bad(tmp_path, patched(SPEC, workload=w), "simulate", field, word)


def test_a_method_for_another_wiring_declines_with_one_line(tmp_path):
    code, out, err, path = run_cli(tmp_path, LIST, "sim-itv-ilp")
    assert code == 2 and out == "" and "declines" in err and "cross wiring" in err
    assert len(err.strip().splitlines()) == 1
