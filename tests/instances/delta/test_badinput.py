"""DELTA under bad input (issue 13): every malformed file is exit 2 with one line naming the
file and the field, fast; valid files keep their results. Regression tests for each failure
the issue lists, guards checked against what the generator really builds, and property
tests mutating both file forms."""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings

import instances
from heuristics.delta.sim import critical_path_bound
from instances.delta.dag import build_full_dag
from instances.delta.input import MAX_HORIZON_MS, critical_path_ms, job_size
from instances.delta.models import TABLE_I, Job
from instances.errors import InstanceError
from tests.fuzz import (FUZZ, ODD_VALUES, assert_contract, mutants, refused_before_solving,
                        run_cli)

DERIVED = json.loads(open("instances/delta/gpt-7b-derived.json").read())
JOB = json.loads(open("instances/examples/delta_gpt-7b.json").read())
NAN, INF = math.nan, math.inf


def _derived(edit):
    d = copy.deepcopy(DERIVED)
    edit(d)
    return d


def _job(**fields):
    d = copy.deepcopy(JOB)
    d["job"].update(fields)
    return d


def _set(path, value):
    """An edit putting ``value`` at ``path`` (keys and indices) of the derived form."""
    def edit(d):
        for p in path[:-1]:
            d = d[p]
        d[path[-1]] = value
    return edit


# (case, instance, the field the error must name)
REGRESSIONS = [
    # non-finite numbers and null (check_tree or the field checks)
    ("ports Infinity", _derived(_set(("pods", 0, "ports"), INF)), "pods[0].ports"),
    ("NaN delay", _derived(_set(("deps", 0, 2), NAN)), "deps[0][2]"),
    ("NaN incidence", _derived(_set(("links", 0, "incidence", "r0b0"), NAN)), "links[0].incidence.r0b0"),
    ("tail null", _derived(_set(("tail",), None)), "tail"),
    ("release entry null", _derived(_set(("release", 2), None)), "release[2]"),
    ("NaN release (hung the simulator)", _derived(_set(("release", 0), NAN)), "release[0]"),
    ("Infinity volume (crashed the simulator)", _derived(_set(("tasks", 0, "volume"), INF)),
     "tasks[0].volume"),
    ("NaN gpu_tflops (hung the simulator)", _job(gpu_tflops=NAN), "job.gpu_tflops"),
    # strings and booleans where numbers are needed, fractions where integers are
    ("ports string", _derived(_set(("pods", 1, "ports"), "1")), "pods[1].ports"),
    ("ports true", _derived(_set(("pods", 1, "ports"), True)), "pods[1].ports"),
    ("volume string", _derived(_set(("tasks", 3, "volume"), "1")), "tasks[3].volume"),
    ("flows true", _derived(_set(("tasks", 3, "flows"), True)), "tasks[3].flows"),
    ("delay string", _derived(_set(("deps", 1, 2), "1")), "deps[1][2]"),
    ("micro_batches string", _job(micro_batches="4"), "job.micro_batches"),
    ("micro_batches true", _job(micro_batches=True), "job.micro_batches"),
    ("link 0.5 (was truncated)", _derived(_set(("tasks", 0, "link"), 0.5)), "tasks[0].link"),
    ("ports 3.5", _derived(_set(("pods", 0, "ports"), 3.5)), "pods[0].ports"),
    ("dep index 1.5", _derived(_set(("deps", 0, 1), 1.5)), "deps[0][1]"),
    ("tp 2.5", _job(tp=2.5), "job.tp"),
    # out of range
    ("dep index past the tasks", _derived(_set(("deps", 0, 1), 12)), "deps[0][1]"),
    ("link index past the links", _derived(_set(("tasks", 0, "link"), 3)), "tasks[0].link"),
    ("dir 2", _derived(_set(("tasks", 0, "dir"), 2)), "tasks[0].dir"),
    ("negative GPU", _derived(_set(("tasks", 0, "src_gpus"), [-1, 3])), "tasks[0].src_gpus[0]"),
    ("GPU twice in a task", _derived(_set(("tasks", 0, "src_gpus"), [2, 2])), "tasks[0].src_gpus"),
    ("bandwidth 0", _derived(_set(("bandwidth",), 0)), "bandwidth"),
    ("incidence 0.5", _derived(_set(("links", 0, "incidence", "r0b0"), 0.5)), "links[0].incidence.r0b0"),
    ("incidence of a Pod off the link", _derived(_set(("links", 1, "incidence", "r0b1"), 1)),
     "links[1].incidence.r0b1"),
    ("a Pod with traffic and no port (every method failed)", _derived(_set(("pods", 0, "ports"), 0)),
     "pods[0].ports"),
    ("intra-pod bandwidth 1e-320", _job(intra_bandwidth_gbps=1e-320), "job.intra_bandwidth_gbps"),
    # wrong nesting: name the field, never "invalid instance (TypeError ...)"
    ("tasks an object", _derived(_set(("tasks",), {"a": 1})), "tasks"),
    ("a pod a list", _derived(_set(("pods", 0), ["r0b0", 4])), "pods[0]"),
    ("a task a number", _derived(_set(("tasks", 2), 7)), "tasks[2]"),
    ("a dependency an object", _derived(_set(("deps", 0), {"pre": 0})), "deps[0]"),
    ("ends a string", _derived(_set(("links", 0, "ends"), "r0b0-r0b1")), "links[0].ends"),
    # two links of one name were accepted (a million of them too)
    ("a link name twice", _derived(lambda d: d["links"][1].update(name=d["links"][0]["name"])),
     "links[1].name"),
    ("incidence a list", _derived(_set(("links", 0, "incidence"), [1, 1])), "links[0].incidence"),
    ("job a list", {"problem": "delta", "job": [JOB["job"]]}, "job"),
    ("arch a list", _job(arch=[1]), "job.arch"),
    ("mla a number", _job(arch={"mla": 3}), "job.arch.mla"),
    # unknown keys in nested objects
    ("unknown task key", _derived(_set(("tasks", 0, "colour"), 1)), "tasks[0].colour"),
    ("unknown pod key", _derived(_set(("pods", 1, "prots"), 4)), "pods[1].prots"),
    ("unknown link key", _derived(_set(("links", 2, "colour"), 1)), "links[2].colour"),
    ("unknown job key", _job(micro_batchs=4), "job.micro_batchs"),
    ("unknown arch key", _job(arch={"layer": 4}), "job.arch.layer"),
    # absurd sizes and magnitudes, refused before building or simulating
    ("micro_batches 1e6 (hung)", _job(micro_batches=10**6), "job.micro_batches"),
    ("micro_batches 1e6 as a float", _job(micro_batches=1e6), "job.micro_batches"),
    ("seq_len 4e9 (hung)", _job(seq_len=4 * 10**9), "job.seq_len"),
    ("seq_len 1e6 (hung the simulator)", _job(seq_len=10**6), "job"),
    ("gpu_tflops 1e-3 (hung the simulator)", _job(gpu_tflops=1e-3), "job"),
    ("bandwidth 1e6 Gb/s (hung the simulator)", _job(bandwidth_gbps=1e6), "job.bandwidth_gbps"),
    ("release 3e6 ms (hung the simulator)", _derived(_set(("release", 0), 3e6)), "release[0]"),
    ("delays adding past the horizon", _derived(lambda d: [r.__setitem__(2, 9e5) for r in d["deps"]]),
     "deps"),
    ("a task's volume past the horizon", _derived(_set(("tasks", 0, "volume"), 1e12)), "tasks[0].volume"),
    # both forms at once, or neither
    ("job and tasks", dict(copy.deepcopy(DERIVED), job=JOB["job"]), "job"),
    ("neither job nor tasks", {"problem": "delta", "bandwidth": 1.0}, "tasks"),
]


@pytest.mark.parametrize("case, data, field", REGRESSIONS, ids=[c for c, _, _ in REGRESSIONS])
def test_bad_file_is_one_line_naming_the_field(tmp_path, monkeypatch, case, data, field):
    """Refused before the method runs: the cases that hung the simulator never reach it."""
    code, out, err, path = refused_before_solving(tmp_path, monkeypatch, data, "prop-alloc")
    assert f"field '{field}'" in err, err
    assert "invalid instance" not in err and "Error" not in err.split(":", 2)[-1], err


@pytest.mark.parametrize("data", [DERIVED, JOB, "instances/delta/t0-hand.json"],
                         ids=["derived", "job", "t0-hand"])
def test_valid_files_still_solve(tmp_path, data):
    if isinstance(data, str):
        data = json.loads(open(data).read())
    code, out, err, path = run_cli(tmp_path, data, "prop-alloc")
    assert code == 0, err
    assert_contract(code, out, err, path)


def test_integral_floats_stay_valid_where_integers_are_needed():
    d = copy.deepcopy(DERIVED)
    d["deps"][0] = [float(d["deps"][0][0]), float(d["deps"][0][1]), d["deps"][0][2]]
    d["pods"][0]["ports"] = 4.0
    d["tasks"][0]["flows"] = 2.0
    inst = instances.from_dict(d)
    ref = instances.from_dict(copy.deepcopy(DERIVED))
    assert np.array_equal(inst.deps, ref.deps) and np.array_equal(inst.ports, ref.ports)
    assert inst.tasks[0]["flows"] == 2 and isinstance(inst.tasks[0]["flows"], int)


def test_derived_form_round_trip_is_unchanged():
    """Checking normalizes nothing a valid file says: its derived form reads back equal."""
    inst = instances.from_dict(copy.deepcopy(DERIVED))
    back = inst.to_dict(derived=True)
    for key in ("bandwidth", "pods", "links", "tasks", "deps", "release", "tail", "q0"):
        assert back[key] == DERIVED[key], key


@pytest.mark.parametrize("name", sorted(TABLE_I))
@pytest.mark.parametrize("replicas", ["canonical", "full"])
def test_job_size_estimate_matches_the_built_dag(name, replicas):
    """The guard's estimate is the generator's task count exactly, and its node count
    within 25%: the refusal of micro_batches=1e6 is based on the real size."""
    job = Job.from_dict(dict(TABLE_I[name], micro_batches=4, replicas=replicas))
    tasks, nodes = job_size(job)
    dag, _ = build_full_dag(job)
    assert tasks == len(dag.tasks)
    assert 0.8 <= nodes / len(dag.names) <= 1.25


def _longest_path(inst) -> float:
    """Release -> task -> delay -> ... -> tail at full NIC rate, relaxing every dependency
    until nothing changes (the plain definition)."""
    dur = inst.volume / (inst.flows * inst.bandwidth)
    es = inst.release.astype(float).copy()
    changed = True
    while changed:
        changed = False
        for a, b, d in inst.deps:
            a, b = int(a), int(b)
            if es[a] + dur[a] + d > es[b]:
                es[b], changed = es[a] + dur[a] + d, True
    return max(inst.q0, float(np.max(es + dur + inst.tail, initial=0.0)))


def test_horizon_is_the_simulators_critical_path_bound():
    for f in ("instances/delta/gpt-7b.json", "instances/delta/megatron-177b-n12.json",
              "instances/delta/t0-hand.json"):
        inst = instances.load_instance(f)
        assert critical_path_ms(inst) == critical_path_bound(inst)      # one value, cached
        assert critical_path_ms(inst) == pytest.approx(_longest_path(inst), rel=1e-12)
        assert critical_path_ms(inst) < MAX_HORIZON_MS / 20     # shipped files are far inside


def test_programmatic_construction_rejects_non_finite_arrays():
    inst = instances.from_dict(copy.deepcopy(DERIVED))
    for key in ("release", "tail"):
        arr = getattr(inst, key).copy()
        arr[0] = np.nan
        with pytest.raises(InstanceError, match=f"'{key}'"):
            type(inst)(inst.name, inst.bandwidth, inst.pods, inst.ports, inst.links, inst.tasks,
                       inst.deps, arr if key == "release" else inst.release,
                       arr if key == "tail" else inst.tail, inst.q0)


def _sweep(tmp_path, base, paths):
    """Every odd value (tests.fuzz.ODD_VALUES) at every path, one at a time: each run keeps
    the contract; returns how many were accepted (exit 0) and refused (exit 2)."""
    seen = {0: 0, 2: 0}
    for path in paths:
        for value in ODD_VALUES:
            d = copy.deepcopy(base)
            _set(path, value)(d)
            code, out, err, f = run_cli(tmp_path, d, "prop-alloc")
            try:
                assert_contract(code, out, err, f)
            except AssertionError as exc:
                raise AssertionError(f"{path} = {value!r}: {exc}") from None
            seen[code] += 1
    return seen


def test_every_job_field_with_every_odd_value(tmp_path):
    seen = _sweep(tmp_path, JOB, [("job", k) for k in JOB["job"]] + [("job", "arch")])
    assert seen[0] >= 5 and seen[2] >= 200, seen       # both outcomes really occur


def test_every_derived_field_with_every_odd_value(tmp_path):
    paths = [("bandwidth",), ("q0",), ("release", 0), ("tail", 1), ("deps", 0, 0), ("deps", 0, 2),
             ("pods", 0, "ports"), ("pods", 0, "name"), ("links", 0, "incidence", "r0b0"),
             ("links", 1, "ends")] + [("tasks", 0, k) for k in DERIVED["tasks"][0]]
    seen = _sweep(tmp_path, DERIVED, paths)
    assert seen[0] >= 10 and seen[2] >= 300, seen


@settings(FUZZ, max_examples=120)
@given(data=mutants(DERIVED))
def test_mutated_derived_form_keeps_the_contract(tmp_path_factory, data):
    code, out, err, path = run_cli(tmp_path_factory.mktemp("d"), data, "prop-alloc")
    assert_contract(code, out, err, path)


@settings(FUZZ, max_examples=200)
@given(data=mutants(JOB))
def test_mutated_job_form_keeps_the_contract(tmp_path_factory, data):
    code, out, err, path = run_cli(tmp_path_factory.mktemp("j"), data, "prop-alloc")
    assert_contract(code, out, err, path)


def test_derived_form_of_every_shipped_instance_loads_back():
    """to_dict(derived=True) is what DELTA-Fast's workers read back: with replica
    isomorphism the Pods a task names (r0b0 -> r7b0) are neither its orbit link's ends
    (DP0: r0b0-r1b0, direction 1) nor all listed Pods, and that is valid (a check of them
    against the link broke the GA's process pool)."""
    from pathlib import Path

    for path in sorted(Path("instances/delta").glob("*.json")):
        inst = instances.load_instance(path)
        back = instances.from_dict(inst.to_dict(derived=True))
        assert back.to_dict(derived=True) == inst.to_dict(derived=True), path.name
