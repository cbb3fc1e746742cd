"""Bad LumosCore instance files (issue 13): exit 2 and one stderr line naming the file and
the JSON path of the field, never a traceback, a hang, a memory blow-up or a silent
acceptance. Property tests mutate small valid instances of both types and run a fast
heuristic; regression tests pin one case of every failure class the fuzz run found."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings

from tests.fuzz import FUZZ, assert_contract, mutants, refused_before_solving, run_cli
from toolkit.registry import problem


def _reconfig(wiring: str, dense: bool) -> dict:
    inst = problem("lumos-reconfig").generator.run(pods=4 if wiring == "dual" else 6, k_leaf=4,
                                                   k_spine=4, tau=2, wiring=wiring, seed=1)
    d = inst.to_dict()
    if dense:
        del d["links"]
        d["topology"] = inst.C.tolist()
    return d


def _logical(dense: bool) -> dict:
    inst = problem("lumos-logical").generator.run(pods=4, k_leaf=4, k_spine=4, tau=2, seed=1)
    d = inst.to_dict()
    if dense:
        del d["pairs"]
        d["requirement"] = inst.L.tolist()
    return d


# the shared profile with more examples (a run of these small files takes ~20 ms)
LUMOS_FUZZ = settings(FUZZ, max_examples=150)

# the valid starting points, each with a fast method that accepts it
CROSS_LINKS = _reconfig("cross", dense=False)           # links + old circuits
DUAL_DENSE = _reconfig("dual", dense=True)              # dense topology + old circuits
LOGICAL_PAIRS = _logical(dense=False)
LOGICAL_DENSE = _logical(dense=True)


@pytest.mark.parametrize("data, method", [(CROSS_LINKS, "itv-mcf"), (DUAL_DENSE, "realize"),
                                          (LOGICAL_PAIRS, "heuristic-decomposition"),
                                          (LOGICAL_DENSE, "greedy")])
def test_the_fuzz_seeds_are_valid_and_solved(tmp_path, data, method):
    code, out, err, path = run_cli(tmp_path, data, method)
    assert code == 0, err
    assert_contract(code, out, err, path)
    assert ("old" in data) == data["problem"].startswith("lumos-reconfig")


def _fuzz(tmp_path, data, method):
    assert_contract(*run_cli(tmp_path, data, method))


@LUMOS_FUZZ
@given(data=mutants(CROSS_LINKS))
def test_mutated_reconfig_links_files_keep_the_contract(tmp_path, data):
    _fuzz(tmp_path, data, "itv-mcf")


@LUMOS_FUZZ
@given(data=mutants(DUAL_DENSE))
def test_mutated_reconfig_dense_files_keep_the_contract(tmp_path, data):
    _fuzz(tmp_path, data, "realize")


@LUMOS_FUZZ
@given(data=mutants(LOGICAL_PAIRS))
def test_mutated_logical_pairs_files_keep_the_contract(tmp_path, data):
    _fuzz(tmp_path, data, "heuristic-decomposition")


@LUMOS_FUZZ
@given(data=mutants(LOGICAL_DENSE))
def test_mutated_logical_dense_files_keep_the_contract(tmp_path, data):
    _fuzz(tmp_path, data, "greedy")


# --------------------------------------------------------------------------------------
# one regression per failure class of the issue
# --------------------------------------------------------------------------------------
def _with(base: dict, path: tuple, value) -> dict:
    d = copy.deepcopy(base)
    node = d
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return d


_DELETE = object()
LINKS0 = CROSS_LINKS["links"][0]
CIRC2 = CROSS_LINKS["old"]["circuits"][2]
PAIR0 = LOGICAL_PAIRS["pairs"][0]


@pytest.mark.parametrize("data, field", [
    # strings and booleans where integers are needed (accepted before)
    (_with(CROSS_LINKS, ("links", 4), LINKS0[:3] + ["1"]), "links[4][3]"),
    (_with(CROSS_LINKS, ("links", 4), LINKS0[:3] + [True]), "links[4][3]"),
    (_with(CROSS_LINKS, ("old", "circuits", 2), CIRC2[:2] + [True, CIRC2[3]]), "old.circuits[2][2]"),
    (_with(LOGICAL_PAIRS, ("pairs", 1), PAIR0[:2] + ["1"]), "pairs[1][2]"),
    (_with(DUAL_DENSE, ("topology", 0, 1, 0), "0"), "topology[0][1][0]"),
    (_with(LOGICAL_DENSE, ("requirement", 0, 0), False), "requirement[0][0]"),
    # fractions where integers are needed (truncated or vaguely refused before)
    (_with(CROSS_LINKS, ("links", 4), LINKS0[:3] + [0.5]), "links[4][3]"),
    (_with(DUAL_DENSE, ("topology", 0, 1, 0), 0.5), "topology[0][1][0]"),
    (_with(LOGICAL_PAIRS, ("pairs", 1), PAIR0[:2] + [1.5]), "pairs[1][2]"),
    (_with(CROSS_LINKS, ("fabric", "k_spine"), 4.5), "fabric.k_spine"),
    # wrong nesting names the field (was "invalid instance (TypeError ...)" or a vague error)
    (_with(CROSS_LINKS, ("fabric",), [6, 4, 4]), "fabric"),
    (_with(CROSS_LINKS, ("links",), {"h": 0}), "links"),
    (_with(CROSS_LINKS, ("links", 4), 7), "links[4]"),
    (_with(CROSS_LINKS, ("links", 4), [LINKS0]), "links[4]"),
    (_with(CROSS_LINKS, ("old",), [[0, 0, 0, 1]]), "old"),
    (_with(CROSS_LINKS, ("old", "circuits"), {"0": 1}), "old.circuits"),
    (_with(DUAL_DENSE, ("topology", 0), [[0] * 4]), "topology[0]"),
    (_with(DUAL_DENSE, ("topology", 0, 1), 0), "topology[0][1]"),
    (_with(DUAL_DENSE, ("topology",), DUAL_DENSE["topology"][0]), "topology"),
    (_with(LOGICAL_DENSE, ("requirement", 3), {"a": 1}), "requirement[3]"),
    # unknown keys in nested objects, and a wiring that is not a string
    (_with(CROSS_LINKS, ("old", "circuts"), []), "old.circuts"),
    (_with(CROSS_LINKS, ("fabric", "k_ocs_"), 512), "fabric.k_ocs_"),
    (_with(CROSS_LINKS, ("wiring",), ["cross"]), "wiring"),
    (_with(CROSS_LINKS, ("wiring",), 1), "wiring"),
    # out of range and inconsistent rows name the row
    (_with(CROSS_LINKS, ("links", 4), [0, 0, 6, 1]), "links[4]"),
    (_with(CROSS_LINKS, ("links", 4), [0, 2, 2, 1]), "links[4]"),
    (_with(CROSS_LINKS, ("links", 4), [0, 0, 1, 2**62]), "links[4]"),
    (_with(CROSS_LINKS, ("old", "circuits", 2), [9, 0, 0, 0]), "old.circuits[2]"),
    (_with(CROSS_LINKS, ("old", "circuits", 2), CROSS_LINKS["old"]["circuits"][1]), "old.circuits[2]"),
    (_with(LOGICAL_PAIRS, ("pairs", 1), [0, 1, 1]), "pairs[1]"),           # same Pod
    (_with(DUAL_DENSE, ("topology", 0, 1, 0), 2**62), "topology[0][1][0]"),
    (_with(CROSS_LINKS, ("topology",), DUAL_DENSE["topology"]), "links"),  # both given
    (_with(LOGICAL_PAIRS, ("pairs",), _DELETE), "pairs"),
])
def test_each_bad_input_class_is_one_line_naming_the_field(tmp_path, data, field):
    code, out, err, path = run_cli(tmp_path, data, None)
    assert code == 2, err
    assert_contract(code, out, err, path)
    assert f"field '{field}'" in err, err


@pytest.mark.parametrize("data, field, size", [
    # 24,000 Pods: the per-group OCS matrices alone are tens of GiB
    (_with(CROSS_LINKS, ("fabric",), {"pods": 24000, "k_leaf": 4, "k_spine": 4, "tau": 2,
                                      "k_ocs": 24000}), "fabric.pods", "GiB"),
    # k_spine = 1e6 on the leaf level: an n x n requirement with 2e6 leaves (29 TiB and more)
    (_with(LOGICAL_PAIRS, ("fabric",), {"pods": 2, "k_leaf": 2, "k_spine": 10**6, "tau": 1}),
     "fabric.k_spine", "TiB"),
    # a dense topology list is refused from the header, before it is read into numpy
    (_with(DUAL_DENSE, ("fabric",), {"pods": 30000, "k_leaf": 256, "k_spine": 4, "tau": 2,
                                     "k_ocs": 10**6}), "fabric.pods", "TiB"),
    # k_spine = 1e6 OCSes per group: little memory, but a per-OCS loop of minutes
    (_with(CROSS_LINKS, ("fabric", "k_spine"), 10**6), "fabric.k_spine", "OCSes"),
    (_with(LOGICAL_PAIRS, ("fabric", "k_leaf"), 10**6), "fabric.k_leaf", "spines per Pod"),
])
def test_absurd_sizes_are_refused_before_allocating(tmp_path, monkeypatch, data, field, size):
    code, out, err, path = refused_before_solving(tmp_path, monkeypatch, data)
    assert f"field '{field}'" in err and size in err and "--max-memory" in err, err


def test_the_size_limit_follows_the_memory_setting(tmp_path, monkeypatch):
    """The same fabric is refused at a 1 GiB limit and solved at 16 GiB."""
    fab = {"pods": 2000, "k_leaf": 2, "k_spine": 2, "tau": 2, "k_ocs": 2000}
    data = {"problem": "lumos-reconfig", "fabric": fab, "links": [[0, 0, 1, 1]]}
    monkeypatch.setenv("OCS_MAX_MEMORY_GB", "0.1")
    code, out, err, path = run_cli(tmp_path, data, "itv-mcf")
    assert code == 2 and "fabric.pods" in err and "over the 102 MiB limit" in err, err
    monkeypatch.setenv("OCS_MAX_MEMORY_GB", "16")
    code, out, err, path = run_cli(tmp_path, data, "itv-mcf")
    assert code == 0, err
    assert_contract(code, out, err, path)


def test_estimates_cover_measured_peaks():
    """The estimates are upper bounds of the peaks measured (docstrings): 4,000 Pods at
    H = 1, K = 2 peaked at 0.64 GB above the interpreter, 4,000 leaves at H = 2 at 0.77 GB;
    and they grow like the arrays they stand for."""
    from instances.lumos.fabric import Fabric
    from instances.lumos.size import logical_bytes, reconfig_bytes
    assert reconfig_bytes(Fabric(4000, 2, 2, 2, 4000), "cross") > 0.64e9
    assert logical_bytes(Fabric(2, 2, 2000, 1)) > 0.77e9
    small, big = Fabric(100, 2, 2, 2), Fabric(200, 2, 2, 2, 512)
    assert 3.5 < reconfig_bytes(big, "cross") / reconfig_bytes(small, "cross") < 4.1
    assert reconfig_bytes(small, "dual") > reconfig_bytes(small, "cross")   # 2 ports per Pod


def test_valid_integral_floats_and_shipped_files_still_load():
    """Strictness must not refuse what was valid: 1.0 is an integer, and every shipped file
    loads to the same arrays as before (links summed, C symmetric)."""
    import instances
    from instances.lumos.instance import sparse_links
    d = _with(CROSS_LINKS, ("links", 0), [float(v) for v in LINKS0])
    a, b = instances.from_dict(d), instances.from_dict(CROSS_LINKS)
    assert np.array_equal(a.C, b.C) and np.array_equal(a.old.perm, b.old.perm)
    dense = instances.from_dict(DUAL_DENSE)
    sparse = instances.from_dict({**{k: v for k, v in DUAL_DENSE.items() if k != "topology"},
                                  "links": sparse_links(dense.C)})
    assert np.array_equal(dense.C, sparse.C)
    L = instances.from_dict(LOGICAL_DENSE).L
    assert np.array_equal(L, instances.from_dict(LOGICAL_PAIRS).L)

