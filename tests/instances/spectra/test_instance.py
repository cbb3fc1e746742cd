"""Spectra instance files: validation with one-line errors, round trip, generators."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import instances
from heuristics.spectra.decompose import degree
from instances.errors import InstanceError
from instances.spectra.instance import SpectraInstance
from instances.spectra.workloads import benchmark_matrix, generate

GOOD = {"problem": "spectra", "format": 1, "name": "t", "demand": [[0, 1], [1, 0]],
        "switches": 2, "delay": 0.1}


@pytest.mark.parametrize("patch, field", [
    ({"demand": [[0, 1, 2], [1, 0, 2]]}, "demand"),      # non-square
    ({"demand": [[0, -1], [1, 0]]}, "demand"),           # negative
    ({"demand": [[0, 1], [1]]}, "demand[1]"),            # ragged
    ({"demand": [[0, "a"], [1, 0]]}, "demand"),          # non-numeric
    ({"demand": [1, 2]}, "demand[0]"),                   # 1-D: a row is a number
    ({"switches": 0}, "switches"),
    ({"switches": 1.5}, "switches"),
    ({"switches": "2"}, "switches"),
    ({"delay": -0.1}, "delay"),
    ({"problem": "tsp"}, "problem"),
    ({"format": 9}, "format"),
])
def test_bad_fields_are_named(patch, field, tmp_path):
    d = dict(GOOD, **patch)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(InstanceError) as exc:
        instances.load_instance(path)
    msg = str(exc.value)
    assert f"field '{field}'" in msg and str(path) in msg and "\n" not in msg


@pytest.mark.parametrize("missing", ["demand", "switches", "delay", "problem"])
def test_missing_fields_are_named(missing):
    d = {k: v for k, v in GOOD.items() if k != missing}
    with pytest.raises(InstanceError, match=f"field '{missing}': missing"):
        instances.from_dict(d)


def test_malformed_json_is_one_line(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"problem": "spectra", "demand": [[1, 2]')
    with pytest.raises(InstanceError, match=r"x\.json: malformed JSON at line 1"):
        instances.load_instance(p)


def test_round_trip(tmp_path):
    inst = generate("benchmark", n=12, m=4, switches=3, delay=0.02, seed=5)
    p = tmp_path / "i.json"
    instances.save_instance(inst, p)
    back = instances.load_instance(p)
    assert isinstance(back, SpectraInstance)
    assert np.array_equal(back.demand, inst.demand)
    assert (back.switches, back.delay, back.name) == (3, 0.02, inst.name)


def test_shipped_examples_load():
    from pathlib import Path

    files = sorted(Path("instances/examples").glob("*.json"))
    problems = [instances.load_instance(f).problem for f in files]
    assert problems.count("spectra") >= 5 and set(problems) <= {"spectra", "delta"}


@settings(max_examples=25, deadline=None)
@given(n=st.integers(4, 40), m=st.integers(1, 12), seed=st.integers(0, 10**6))
def test_benchmark_is_doubly_stochastic_before_noise(n, m, seed):
    D = benchmark_matrix(n, m, noise=0.0, rng=np.random.default_rng(seed))
    assert np.allclose(D.sum(axis=0), 1) and np.allclose(D.sum(axis=1), 1)
    assert 1 <= degree(D) <= m


def test_benchmark_noise_keeps_support_nonnegative():
    rng = np.random.default_rng(0)
    D = benchmark_matrix(100, 16, noise=0.003, rng=rng)
    assert (D >= 0).all()
    assert degree(D) == 16  # with probability ~1 for n = 100 (spec 3.5)


def test_generator_rejects_bad_parameters():
    with pytest.raises(InstanceError, match="'n'"):
        generate("benchmark", n=-1)      # n = 0 is "the workload's size"
    with pytest.raises(InstanceError, match="'workload'"):
        generate("nope")
    with pytest.raises(InstanceError, match="'switches'"):
        generate("benchmark", n=5, switches=0)
