"""Bad lumos-staging files: exit 2 and one stderr line naming the file and the field, never
a traceback, a hang or a silent acceptance (the shared harness of tests/fuzz.py)."""
from __future__ import annotations

import copy

import pytest

from tests.fuzz import FUZZ, assert_contract, check_mutants, refused_before_solving, run_cli
from toolkit.registry import problem

_GEN = problem("lumos-staging").generator.run(pods=4, k_leaf=4, k_spine=4, tau=1, fill=0.8, seed=1)
CONFIGS = _GEN.to_dict()                          # old and new configurations
CHANGED = copy.deepcopy(CONFIGS)                  # the changed groups listed directly
del CHANGED["old"], CHANGED["new"]
CHANGED["changed"] = _GEN.changed.tolist()


def _with(base: dict, **fields) -> dict:
    d = copy.deepcopy(base)
    for k, v in fields.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return d


@pytest.mark.parametrize("data, method", [(CONFIGS, "staging-greedy"), (CHANGED, "staging-ilp")])
def test_the_fuzz_seeds_are_valid_and_solved(tmp_path, data, method):
    code, out, err, path = run_cli(tmp_path, data, method)
    assert code == 0, err
    assert_contract(code, out, err, path)
    assert len(data["split"]) > 4 and len(_GEN.changed) >= 2


def test_mutated_configuration_files_keep_the_contract(tmp_path):
    check_mutants(tmp_path, CONFIGS, "staging-greedy")


def test_mutated_changed_files_keep_the_contract(tmp_path):
    check_mutants(tmp_path, CHANGED, "staging-greedy")


S0 = CONFIGS["split"][0]
C0 = CONFIGS["new"]["circuits"][0]


@pytest.mark.parametrize("data, field", [
    (_with(CONFIGS, iota=0), "iota"),
    (_with(CONFIGS, iota=1.5), "iota"),
    (_with(CONFIGS, iota="0.5"), "iota"),
    (_with(CONFIGS, iota=True), "iota"),
    (_with(CONFIGS, new=None), "new"),
    (_with(CONFIGS, old=None), "old"),
    (_with(CONFIGS, changed=[0]), "old"),                      # both ways at once
    (_with(CONFIGS, old=None, new=None), "changed"),           # neither
    (_with(CHANGED, changed=[0, 0]), "changed[1]"),
    (_with(CHANGED, changed=[_GEN.fabric.H]), "changed[0]"),
    (_with(CHANGED, changed=[0.5]), "changed[0]"),
    (_with(CHANGED, changed="0"), "changed"),
    (_with(CHANGED, changed=list(range(_GEN.fabric.H)) + [0]), "changed"),
    (_with(CONFIGS, split=None), "split"),
    (_with(CONFIGS, split=[S0[:3]]), "split[0]"),
    (_with(CONFIGS, split=[S0[:3] + ["1"]]), "split[0][3]"),
    (_with(CONFIGS, split=[[0, 1, 0, 1]]), "split[0]"),                # same Pod
    (_with(CONFIGS, split=[[0, 4, _GEN.fabric.H, 1]]), "split[0]"),    # group out of range
    (_with(CONFIGS, split=[[0, 4, 0, 1]]), "split"),                   # L not symmetric
    (_with(CONFIGS, split=[[0, 4, h, 1] for h in range(4)] + [[4, 0, h, 1] for h in range(4)]
           + [[0, 8, 0, 1], [8, 0, 0, 1]]), "split"),                  # leaf 0: 5 > k_leaf
    (_with(CONFIGS, new={"circuits": [C0, C0]}), "new.circuits[1]"),
    (_with(CONFIGS, new={"circuts": []}), "new.circuts"),
    (_with(CONFIGS, wiring="mesh"), "wiring"),
])
def test_each_bad_input_class_is_one_line_naming_the_field(tmp_path, data, field):
    code, out, err, path = run_cli(tmp_path, data, None)
    assert code == 2, err
    assert_contract(code, out, err, path)
    assert f"field '{field}'" in err, err


def test_absurd_sizes_are_refused_before_allocating(tmp_path, monkeypatch):
    data = _with(CHANGED, fabric={"pods": 2, "k_leaf": 2, "k_spine": 10**6, "tau": 1})
    code, out, err, path = refused_before_solving(tmp_path, monkeypatch, data)
    assert "field 'fabric.k_spine'" in err and "--max-memory" in err, err
