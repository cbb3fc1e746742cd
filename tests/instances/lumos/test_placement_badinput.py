"""Bad lumos-placement files (issue 13 contract): exit 2 with one stderr line naming the file
and the field, never a traceback, a hang or a silent acceptance. The property test mutates a
small valid file (tests/fuzz.py) and runs the greedy and the ILP; a mutant that stays valid
but leaves no room for the job is a clear refusal (exit 1, status infeasible, the reason),
not bad input."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from tests.fuzz import FUZZ, assert_contract, expect_bad, mutants, patched, run_cli

SEED = {"problem": "lumos-placement", "format": 1, "name": "fuzz-seed",
        "cluster": {"fabric": {"pods": 2, "k_leaf": 8, "k_spine": 4, "tau": 2}, "gpus_per_server": 4},
        "busy_servers": [0, 5], "busy_gpus": [4, 5, 9],
        "job": {"gpus": 8, "tp": 2, "pp": 2, "dp": 2, "ep": 4, "model": "Pangu"}}


def _contract(tmp_path, data, method):
    code, out, err, path = run_cli(tmp_path, data, method)
    if code == 1:                                   # valid instance, no room for the job
        rec = json.loads(out)
        assert rec["status"] == "infeasible" and rec["message"].startswith("no placement"), rec
        assert not rec["verified"] and rec["objective"] is None
    else:
        assert_contract(code, out, err, path)
    return code


@pytest.mark.parametrize("method", ["placement-greedy", "placement-ilp", "placement-authors"])
def test_the_seed_is_valid_and_solved(tmp_path, method):
    assert _contract(tmp_path, SEED, method) == 0


@settings(FUZZ, max_examples=120)
@given(data=mutants(SEED))
def test_mutated_files_keep_the_contract_greedy(tmp_path, data):
    _contract(tmp_path, data, "placement-greedy")


@settings(FUZZ, max_examples=60)
@given(data=mutants(SEED))
def test_mutated_files_keep_the_contract_ilp(tmp_path, data):
    _contract(tmp_path, data, "placement-ilp")


def test_a_full_cluster_is_a_refusal_not_bad_input(tmp_path):
    full = patched(SEED, busy_servers=list(range(8)), busy_gpus=[])
    for method in ("placement-greedy", "placement-ilp", "placement-authors"):
        assert _contract(tmp_path, full, method) == 1


@pytest.mark.parametrize("over, field, word", [
    ({"busy_gpus": [4, 4]}, "busy_gpus[1]", "twice"),
    ({"busy_gpus": [32]}, "busy_gpus[0]", "does not exist"),
    ({"busy_servers": [1.5]}, "busy_servers[0]", "integer"),
    ({"job": {"gpus": 8, "tp": 8, "dp": 1}}, "job.tp", "inside a server"),
    ({"job": {"gpus": 8, "tp": 2, "dp": 2}}, "job.gpus", "tp * pp * dp"),
    ({"job": {"gpus": 8, "tp": 2, "dp": 4, "ep": 3}}, "job.ep", "divide"),
    ({"job": {"gpus": 8, "tp": 2, "dp": 4, "mdoel": "x"}}, "job.mdoel", "unknown"),
    ({"cluster": {"fabric": {"pods": 2, "k_leaf": 8, "k_spine": 4}, "gpus_per_server": 3}},
     "cluster.gpus_per_server", "divide"),
    ({"cluster": {"fabric": {"pods": 2, "k_leaf": 8, "k_spine": 4}, "layout": "rails"}},
     "cluster.layout", "server, rail"),
    ({"cluster": {"fabric": {"pods": 2, "k_leaf": 8, "k_spine": 4, "tau": 2},   # 2 leaves a Pod
                  "gpus_per_server": 4, "layout": "rail"}}, "cluster.layout", "rail group"),
    # the rail requirement rule is a simulation setting (lumos-sim): placement computes no L
    ({"cluster": {"fabric": {"pods": 2, "k_leaf": 8, "k_spine": 8}, "gpus_per_server": 4,
                  "layout": "rail", "rail_rule": "leaf-pairs"}}, "cluster.rail_rule", "unknown"),
    ({"cluster": {"fabric": {"pods": 2, "k_leaf": 2 ** 40, "k_spine": 2 ** 20}}}, "cluster.fabric.k_leaf",
     "--max-memory"),
])
def test_each_bad_field_is_named(tmp_path, over, field, word):
    expect_bad(tmp_path, patched(SEED, **over), "placement-greedy", field, word)


def test_unknown_option_is_bad_input(tmp_path):
    code, out, err, path = run_cli(tmp_path, SEED, "placement-greedy", ["--option", "pods_first=1"])
    assert code == 2 and "pods_first" in err and out == ""
