"""Spectra bad input (issue 13): every malformed file is exit 2 with one stderr line naming the
file and the field, through the command line; mutated valid files never break that contract."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from instances.spectra.instance import MAX_SWITCHES
from tests.fuzz import assert_contract, check_mutants, expect_bad, patched, run_cli

EXAMPLES = Path("instances/examples")
WORKED = json.loads((EXAMPLES / "worked_example.json").read_text())
TINY = json.loads((EXAMPLES / "tiny_random_n4_s2.json").read_text())


def bad(tmp_path, data, field: str, *words: str, refused_early=None) -> str:
    return expect_bad(tmp_path, data, "spectra", field, *words, refused_early=refused_early)


def test_valid_examples_still_solve(tmp_path):
    for data in (WORKED, TINY):
        code, out, err, path = run_cli(tmp_path, data, "spectra")
        assert code == 0 and json.loads(out)["verified"] is True, err


def deep(levels: int):
    v = 1.0
    for _ in range(levels):
        v = [v]
    return v


def test_deeply_nested_beyond_the_parser(tmp_path):
    """100,000 levels: json.loads itself gives up (RecursionError); one line, no field."""
    text = json.dumps(patched(WORKED, demand=0)).replace('"demand": 0',
                                                          '"demand": ' + "[" * 100_000 + "]" * 100_000)
    code, out, err, path = run_cli(tmp_path, text)
    assert_contract(code, out, err, path)
    assert code == 2 and "nested too deeply" in err, err


@pytest.mark.parametrize("data, field", [
    (patched(WORKED, demand=deep(40)), "demand"),                   # past check_tree's depth 16
    (patched(WORKED, meta={"a": {"b": {"c": deep(30)}}}), "meta.a.b.c"),
])
def test_deeply_nested(tmp_path, data, field):
    code, out, err, path = run_cli(tmp_path, data)
    assert_contract(code, out, err, path)
    assert code == 2 and f"field '{field}[0][0]" in err and "nested deeper than 16" in err, err


@pytest.mark.parametrize("field, value", [
    ("delay", float("nan")), ("delay", float("inf")), ("switches", float("-inf")),
    ("delay", 1e308), ("switches", 1e308),
])
def test_non_finite_and_huge_numbers(tmp_path, field, value):
    bad(tmp_path, patched(WORKED, **{field: value}), field)


@pytest.mark.parametrize("i, j, value", [(0, 1, float("nan")), (2, 2, float("inf")),
                                         (1, 0, 1e308), (1, 1, -1e300)])
def test_non_finite_and_huge_demand_entries(tmp_path, i, j, value):
    data = copy.deepcopy(WORKED)
    data["demand"][i][j] = value
    bad(tmp_path, data, f"demand[{i}][{j}]")


@pytest.mark.parametrize("field, value", [
    ("switches", "2"), ("switches", True), ("delay", "0.01"), ("delay", False),
    ("delay", None), ("switches", None),
])
def test_strings_booleans_null_where_numbers(tmp_path, field, value):
    bad(tmp_path, patched(WORKED, **{field: value}), field)


@pytest.mark.parametrize("entry", ["1", True, None])
def test_strings_booleans_in_demand(tmp_path, entry):
    data = copy.deepcopy(WORKED)
    data["demand"][1][2] = entry
    bad(tmp_path, data, "demand", "no strings, booleans")


def test_fractional_where_integer(tmp_path):
    line = bad(tmp_path, patched(WORKED, switches=0.5), "switches", "integer")
    assert "0.5" in line
    bad(tmp_path, patched(WORKED, switches=2.5), "switches", "integer")


@pytest.mark.parametrize("value", [2**63, 2**64, -(2**64)])
def test_integers_beyond_64_bits(tmp_path, value):
    bad(tmp_path, patched(WORKED, switches=value), "switches", "64 bits")


@pytest.mark.parametrize("patch, field, word", [
    ({"demand": {"rows": [[1]]}}, "demand", "must be a list, got an object"),
    ({"demand": [[0.5, 0.5], {"a": 1}]}, "demand[1]", "must be a list, got an object"),
    ({"demand": [1, 2, 3]}, "demand[0]", "must be a list, got a number"),
    ({"demand": [[[0.61], [0.3], [0.1]]] * 3}, "demand", "no strings, booleans or nesting"),
    ({"switches": [2]}, "switches", "must be an integer"),
    ({"delay": {"value": 0.01}}, "delay", "must be a number"),
    ({"meta": [1, 2]}, "meta", "object"),
    ({"name": ["x"]}, "name", "string"),
])
def test_list_versus_object_nesting(tmp_path, patch, field, word):
    bad(tmp_path, patched(WORKED, **patch), field, word)


def test_misspelt_top_level_field(tmp_path):
    data = patched(WORKED, swtiches=4)
    line = bad(tmp_path, data, "swtiches", "unknown field", "switches")
    assert "demand" in line and "delay" in line          # the known fields are listed


def test_ragged_and_non_square_rows_are_named(tmp_path):
    bad(tmp_path, patched(WORKED, demand=[[1, 2, 3], [1, 2], [1, 2, 3]]), "demand[1]", "expected 3")
    bad(tmp_path, patched(WORKED, demand=[[1, 2, 3], [1, 2, 3]]), "demand", "square, got 2x3")
    bad(tmp_path, patched(WORKED, demand=[[1, 2], [1, 2, 3]]), "demand[1]", "has 3 entries, expected 2")
    bad(tmp_path, patched(WORKED, demand=[]), "demand")


@pytest.mark.parametrize("switches", [10**6, 10**12, MAX_SWITCHES + 1])
def test_absurd_switch_count_refused_before_scheduling(tmp_path, monkeypatch, switches):
    line = bad(tmp_path, patched(WORKED, switches=switches), "switches", f"<= {MAX_SWITCHES}",
               "steps", refused_early=monkeypatch)
    assert "e+" in line                                   # the estimate of the work


def test_switch_cap_is_not_below_what_is_useful(tmp_path):
    """s > n^2 still helps (zero delay splits an entry over switches): not refused."""
    code, out, err, path = run_cli(tmp_path, patched(WORKED, switches=20, delay=0.0), "spectra")
    assert code == 0 and json.loads(out)["verified"] is True, err


def test_absurd_demand_size_refused_before_allocation(tmp_path, monkeypatch):
    """n from the row count: 30,000 empty rows would be a 30,000 x 30,000 matrix (86 GB with
    the working copies). Refused from the count alone, with the estimate, before any array."""
    import numpy as np

    real = np.array
    calls = []

    def spy(obj, *a, **kw):
        if isinstance(obj, list) and len(obj) >= 30_000:
            calls.append(len(obj))
        return real(obj, *a, **kw)

    monkeypatch.setattr(np, "array", spy)
    n = 30_000
    line = bad(tmp_path, patched(WORKED, demand=[[]] * n), "demand", f"{n} x {n}", "GiB",
               "--max-memory", refused_early=monkeypatch)
    assert not calls
    assert "would need about" in line


def test_size_limit_follows_max_memory(tmp_path, monkeypatch):
    """The same 300 x 300 file (about 270 kB: parsing it is under the limit) is refused under
    a 6 MiB limit (the matrix needs about 8 MiB) and solved under the default."""
    monkeypatch.setenv("OCS_MAX_MEMORY_GB", str(6 / 1024))
    data = patched(WORKED, demand=[[1 if (j - i) % 300 < 2 else 0 for j in range(300)]
                                   for i in range(300)])
    bad(tmp_path, data, "demand", "300 x 300", "8.24 MiB", "6 MiB limit")
    monkeypatch.delenv("OCS_MAX_MEMORY_GB")
    code, out, err, path = run_cli(tmp_path, data, "spectra")
    assert code == 0, err


@pytest.mark.parametrize("base", [WORKED, TINY], ids=["worked", "tiny_n4"])
def test_mutated_instances_keep_the_contract(tmp_path, base):
    check_mutants(tmp_path, base, "spectra")


@pytest.mark.parametrize("method", ["baseline", "baseline-milp"])
def test_split_baselines_declined_over_the_memory_limit(tmp_path, method):
    """The Baselines hold s dense n x n sub-matrices: s = 10^4 at n = 100 is 763 MiB, over a
    256 MiB limit (given: not the machine's memory or the default): declined before the
    method runs (exit 2, one line) instead of building them."""
    data = json.loads((EXAMPLES / "bench_n100_s4_d0.04.json").read_text())
    data["switches"] = MAX_SWITCHES
    code, out, err, path = run_cli(tmp_path, data, method, ("--max-memory", "0.25"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "0.745 GiB" in err and "0.25 GiB limit" in err and "declines" in err, err
