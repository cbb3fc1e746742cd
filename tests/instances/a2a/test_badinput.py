"""a2a bad input (issue 13): every malformed file is exit 2 with one stderr line naming the file
and the field, through the command line; mutated valid files never break that contract."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from instances.a2a.instance import (A2AInstance, A2AStrategy, BYTES_PER_PAIR, Group, Link, Phase,
                           check_strategy)
from instances.a2a.workloads import generate
from tests.fuzz import assert_contract, check_mutants, expect_bad, patched, run_cli

# two small valid instances: uniform traffic in T-units (k = 1), and a skewed matrix in bytes on
# a physical link (k = 2)
UNIFORM = {"problem": "a2a", "format": 1, "name": "u6", "n": 6, "k": 1, "R": 3.0,
           "link": {"T": 1.0}, "traffic": {"uniform": 1.0}}
MATRIX = json.loads(json.dumps(generate("random", n=6, k=2, R=2e-5, size_mb=4.0, seed=3).to_dict()))


def bad(tmp_path, data, field: str, *words: str, refused_early=None) -> str:
    return expect_bad(tmp_path, data, "rdc", field, *words, refused_early=refused_early)


def test_valid_instances_still_solve(tmp_path):
    assert MATRIX["link"]["bandwidth_gbps"] == 800.0 and isinstance(MATRIX["traffic"], list)
    for data in (UNIFORM, MATRIX):
        code, out, err, path = run_cli(tmp_path, data, "rdc")
        assert code == 0 and json.loads(out)["verified"] is True, err


def test_generator_numpy_scalars_accepted():
    """Sizes coming out of numpy/pandas (np.int64, np.float64) are numbers like any other: the
    Fig. 11 pipeline passes them from a DataFrame (was 'n: must be an integer, got np.int64(6)')."""
    inst = generate("random", n=np.int64(6), k=np.int64(2), R=np.float64(2.0), size_mb=8.0)
    assert (inst.n, inst.k, inst.R) == (6, 2, 2.0) and type(inst.n) is int
    assert A2AInstance(np.int32(4), np.int16(1), np.float32(1.5), inst.link,
                       uniform_size=np.float64(2.0)).n == 4


def test_deeply_nested(tmp_path):
    v = 1.0
    for _ in range(30):
        v = [v]
    code, out, err, path = run_cli(tmp_path, patched(UNIFORM, traffic={"uniform": v}))
    assert_contract(code, out, err, path)
    assert code == 2 and "field 'traffic.uniform[0][0]" in err and "nested deeper" in err, err
    text = json.dumps(UNIFORM).replace('"R": 3.0', '"R": ' + "[" * 100_000 + "]" * 100_000)
    code, out, err, path = run_cli(tmp_path, text)
    assert_contract(code, out, err, path)
    assert code == 2 and "nested too deeply" in err, err


@pytest.mark.parametrize("base, field, value", [
    (UNIFORM, "R", float("nan")), (UNIFORM, "R", float("inf")), (UNIFORM, "n", float("nan")),
    (UNIFORM, "R", 1e308), (UNIFORM, "k", -1e308),
])
def test_non_finite_and_huge_top_level(tmp_path, base, field, value):
    bad(tmp_path, patched(base, **{field: value}), field)


@pytest.mark.parametrize("base, path, value", [
    (UNIFORM, ("traffic", "uniform"), float("nan")),
    (UNIFORM, ("traffic", "uniform"), 1e308),
    (UNIFORM, ("link", "T"), float("-inf")),
    (MATRIX, ("link", "bandwidth_gbps"), float("inf")),
    (MATRIX, ("link", "latency_s"), 1e308),
    (MATRIX, ("traffic", 2, 3), float("nan")),
    (MATRIX, ("traffic", 4, 1), 1e308),
])
def test_non_finite_and_huge_nested(tmp_path, base, path, value):
    data = copy.deepcopy(base)
    node = data
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    field = path[0] + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:])
    bad(tmp_path, data, field)


@pytest.mark.parametrize("base, patch, field", [
    (UNIFORM, {"n": "6"}, "n"), (UNIFORM, {"k": True}, "k"), (UNIFORM, {"R": "3"}, "R"),
    (UNIFORM, {"R": None}, "R"), (UNIFORM, {"traffic": {"uniform": "1"}}, "traffic.uniform"),
    (UNIFORM, {"traffic": {"uniform": True}}, "traffic.uniform"),
    (UNIFORM, {"link": {"T": "1"}}, "link.T"),
    (MATRIX, {"link": {"bandwidth_gbps": True}}, "link.bandwidth_gbps"),
])
def test_strings_booleans_where_numbers(tmp_path, base, patch, field):
    bad(tmp_path, patched(base, **patch), field, "must be")


def test_strings_booleans_in_traffic(tmp_path):
    for entry in ("1", True):
        data = copy.deepcopy(MATRIX)
        data["traffic"][0][1] = entry
        bad(tmp_path, data, "traffic", "no strings, booleans")


@pytest.mark.parametrize("field", ["n", "k"])
def test_fractional_where_integer(tmp_path, field):
    line = bad(tmp_path, patched(UNIFORM, **{field: 0.5}), field, "integer")
    assert "0.5" in line
    bad(tmp_path, patched(UNIFORM, **{field: 2.5}), field, "integer")


@pytest.mark.parametrize("field, value", [("n", 2**63), ("n", 2**64), ("k", 2**64),
                                          ("R", -(2**64))])
def test_integers_beyond_64_bits(tmp_path, field, value):
    bad(tmp_path, patched(UNIFORM, **{field: value}), field, "64 bits")


@pytest.mark.parametrize("base, patch, field, word", [
    (UNIFORM, {"link": [1.0]}, "link", "must be an object, got a list"),
    (UNIFORM, {"link": 1.0}, "link", "must be an object, got a number"),
    (UNIFORM, {"traffic": 1.0}, "traffic", "list of rows"),
    (UNIFORM, {"traffic": [{"uniform": 1.0}]}, "traffic", "6x6"),
    (UNIFORM, {"traffic": [{"uniform": 1.0}] * 6}, "traffic[0]", "must be a list, got an object"),
    (UNIFORM, {"traffic": {"uniform": [1.0]}}, "traffic.uniform", "must be a number"),
    (UNIFORM, {"n": [6]}, "n", "must be an integer"),
    (UNIFORM, {"R": {"value": 3}}, "R", "must be a number"),
    (MATRIX, {"traffic": MATRIX["traffic"][:5]}, "traffic", "6x6, got 5 rows"),
    (MATRIX, {"traffic": [r[:5] for r in MATRIX["traffic"]]}, "traffic[0]", "expected n = 6"),
])
def test_list_versus_object_nesting(tmp_path, base, patch, field, word):
    bad(tmp_path, patched(base, **patch), field, word)


@pytest.mark.parametrize("base, patch, field", [
    (UNIFORM, {"link": {"T": 1.0, "latency_s": 0}}, "link.latency_s"),
    (MATRIX, {"link": dict(MATRIX["link"], bandwith_gbps=1)}, "link.bandwith_gbps"),
    (UNIFORM, {"traffic": {"uniform": 1.0, "seed": 3}}, "traffic.seed"),
])
def test_nested_unknown_keys(tmp_path, base, patch, field):
    bad(tmp_path, patched(base, **patch), field, "unknown field")


def test_misspelt_top_level_field(tmp_path):
    line = bad(tmp_path, patched(UNIFORM, swtiches=2), "swtiches", "unknown field")
    assert "traffic" in line and "link" in line            # the known fields are listed


def test_out_of_range_values(tmp_path):
    bad(tmp_path, patched(UNIFORM, k=6), "k", "n - 1 = 5")
    bad(tmp_path, patched(UNIFORM, n=1, k=1), "n", ">= 2")
    bad(tmp_path, patched(UNIFORM, R=-1.0), "R", ">= 0")
    bad(tmp_path, patched(UNIFORM, traffic={"uniform": 0}), "traffic.uniform", "> 0")
    bad(tmp_path, patched(MATRIX, link={"bandwidth_gbps": 1e-320}), "link.bandwidth_gbps", ">=")


@pytest.mark.parametrize("n", [10**6, 10**9, 4 * 10**9, 10**18])
def test_absurd_n_refused_before_building_with_estimate(tmp_path, monkeypatch, n):
    line = bad(tmp_path, patched(UNIFORM, n=n), "n", f"n = {n} GPUs", "would need about",
               "--max-memory", refused_early=monkeypatch)
    assert "TiB" in line                         # 128 n^2 bytes: 116 TiB at n = 10^6


def test_size_limit_follows_max_memory(tmp_path, monkeypatch):
    n = 400                                      # 128 n^2 = 19.5 MiB
    assert BYTES_PER_PAIR * n * n > 16 * 2**20
    monkeypatch.setenv("OCS_MAX_MEMORY_GB", str(16 / 1024))
    bad(tmp_path, patched(UNIFORM, n=n), "n", "19.5 MiB", "16 MiB limit")
    monkeypatch.delenv("OCS_MAX_MEMORY_GB")
    code, out, err, path = run_cli(tmp_path, patched(UNIFORM, n=n), "one-hop")
    assert code == 0 and json.loads(out)["verified"] is True, err


@pytest.mark.parametrize("base", [UNIFORM, MATRIX], ids=["uniform_k1", "matrix_k2"])
def test_mutated_instances_keep_the_contract(tmp_path, base):
    check_mutants(tmp_path, base, "rdc")


def test_underflowing_sizes_are_delivered_or_refused(tmp_path):
    """Odd but valid: flows of 1e-320 (every time underflows). The checker must not let a
    method drop them (its tolerance follows the traffic's scale), DirectConnect must deliver
    them (they used to round away against a whole chunk), and 0/0 is a ratio of 1, not inf."""
    data = patched(UNIFORM, R=0.0, traffic={"uniform": 1e-320})
    for method in ("rdc", "directconnect-gk", "fast"):
        code, out, err, path = run_cli(tmp_path, data, method)
        assert_contract(code, out, err, path)
        assert code == 0, err
    code, out, err, _ = run_cli(tmp_path, patched(data, link={"T": 5e-324},
                                                  traffic={"uniform": 5e-324}), "rdc")
    rec = json.loads(out)
    assert rec["objective"] == 0.0 and rec["ratio_lb"] == 1.0
    # a strategy that sends nothing is rejected, whatever the scale
    inst = A2AInstance(6, 1, 0.0, Link.from_dict({"T": 1.0}), uniform_size=1e-9)
    empty = A2AStrategy([Phase(np.array([[i, (i + 1) % 6] for i in range(6)]),
                               [[Group(np.zeros((0, 2), dtype=np.int64), np.zeros(0))]])])
    bad_, _ = check_strategy(inst, empty)
    assert any("delivered 0" in b for b in bad_), bad_


def test_static_ring_declined_over_the_memory_limit(tmp_path, monkeypatch):
    """k = 1 static holds the ring's n^2 (n-1)/2 path entries (24 bytes each): n = 200 needs
    about 91 MiB, declined under a 64 MiB limit (exit 2, one line), solved under the default."""
    monkeypatch.setenv("OCS_MAX_MEMORY_GB", str(64 / 1024))
    code, out, err, path = run_cli(tmp_path, patched(UNIFORM, n=200), "static")
    assert code == 2 and out == "" and "ring strategy for n = 200" in err and "GiB" in err, err
    monkeypatch.delenv("OCS_MAX_MEMORY_GB")
    code, out, err, path = run_cli(tmp_path, patched(UNIFORM, n=200), "static")
    assert code == 0 and json.loads(out)["verified"] is True, err
