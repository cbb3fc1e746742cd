"""The lumos-placement instance file and checker: strict parsing, round trip, and every
corruption of a valid placement rejected by the checker."""
from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

import instances
from heuristics.lumos.placement import greedy_placement
from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job, PlacementInstance
from instances.lumos.placement_check import check_placement, whole_ep_possible

# 3 Pods x 2 leaves x 2 servers x 4 GPUs = 48 GPUs
CL = Cluster(Fabric(3, 8, 2, 1), 4)


def _inst(busy_ids=(), job=Job(8, tp=2, pp=2, dp=2, ep=4)):
    busy = np.zeros(CL.n_gpus, bool)
    busy[list(busy_ids)] = True
    return PlacementInstance(CL, busy, job)


def _file(**over):
    d = {"problem": "lumos-placement", "cluster": CL.to_dict(), "busy_servers": [0, 5],
         "busy_gpus": [9, 10], "job": {"gpus": 8, "tp": 2, "pp": 2, "dp": 2, "ep": 4}}
    d.update(over)
    return d


def test_file_round_trip_and_busy_mask():
    inst = instances.from_dict(_file())
    assert np.flatnonzero(inst.busy).tolist() == [0, 1, 2, 3, 9, 10, 20, 21, 22, 23]
    back = instances.from_dict(inst.to_dict())
    assert np.array_equal(back.busy, inst.busy) and back.job == inst.job
    assert inst.to_dict()["busy_servers"] == [0, 5] and inst.to_dict()["busy_gpus"] == [9, 10]


@pytest.mark.parametrize("over, field", [
    ({"busy_gpus": [48]}, "busy_gpus[0]"), ({"busy_gpus": [1, 1]}, "busy_gpus[1]"),
    ({"busy_servers": [12]}, "busy_servers[0]"), ({"busy_servers": ["1"]}, "busy_servers[0]"),
    ({"busy_gpus": 3}, "busy_gpus"), ({"job": {"gpus": 8, "tp": 8, "dp": 1}}, "job.tp"),
    ({"job": {"gpus": 8, "tp": 2, "pp": 2}}, "job.gpus"), ({"job": {"gpus": 8, "ep": 3, "dp": 8}}, "job.ep"),
    ({"cluster": {"fabric": {"pods": 3, "k_leaf": 8, "k_spine": 2}, "gpus_per_server": 3}},
     "cluster.gpus_per_server"),
    ({"cluster": {"fabric": {"pods": 3, "k_leaf": 8}}}, "cluster.fabric.k_spine"),
    ({"cluster": {"fabric": {"pods": 2, "k_leaf": 2 ** 40, "k_spine": 2 ** 20}}}, "cluster.fabric.k_leaf"),
    ({"jobs": []}, "jobs"),
])
def test_bad_files_name_the_field(over, field):
    with pytest.raises(InstanceError) as exc:
        instances.from_dict(_file(**over), "f.json")
    assert exc.value.field == field and str(exc.value).startswith("f.json: ")


def test_valid_placement_and_metrics():
    inst = _inst(busy_ids=range(0, 12))      # Pod 0: only server 3 (4 GPUs) free
    sol = greedy_placement(inst)
    bad, m = check_placement(inst, sol)
    assert bad == []
    assert m["pods_used"] == 1 and m["idle_gpus"] == 8 and m["cross_pod_ep_domains"] == 0
    assert m["free_gpus"] == 48 - 12 - 8


def _corruptions(inst, sol):
    """(name, corrupted solution) pairs, each breaking one rule."""
    g = sol.gpus.copy()
    free = np.flatnonzero(inst.free & ~np.isin(np.arange(CL.n_gpus), g))
    busy = np.flatnonzero(inst.busy)
    other_pod = free[CL.pod_of(free) != CL.pod_of(g[0])]
    same_pod_other_server = free[(CL.pod_of(free) == CL.pod_of(g[0]))
                                 & (CL.server_of(free) != CL.server_of(g[0]))]

    def ns(gpus, job=sol.job, meta=None):
        return SimpleNamespace(gpus=np.asarray(gpus), job=job, meta=meta or {})

    yield "busy GPU", ns(np.r_[g[:-1], busy[0]])
    yield "missing GPU id", ns(np.r_[g[:-1], CL.n_gpus])
    yield "negative id", ns(np.r_[g[:-1], -1])
    yield "duplicate", ns(np.r_[g[:-1], g[0]])
    yield "too few", ns(g[:-2])
    yield "too many", ns(np.r_[g, free[:2]])
    yield "not integers", ns(g.astype(float) + 0.5)
    yield "TP split over servers", ns(np.r_[g[1:], same_pod_other_server[0]])
    yield "EP split over Pods", ns(np.r_[g[2:], other_pod[:2]])
    yield "EP split claimed without need", ns(np.r_[g[2:], other_pod[:2]], meta={"ep_exception": True})
    yield "another job", ns(g, job=Job(8, tp=2, pp=1, dp=4, ep=4))


def test_checker_rejects_every_corruption():
    inst = _inst(busy_ids=[0, 1, 12, 13, 14, 15, 30])
    sol = greedy_placement(inst)
    assert check_placement(inst, sol)[0] == []
    assert whole_ep_possible(inst)
    names = []
    for name, bad_sol in _corruptions(inst, sol):
        bad, _ = check_placement(inst, bad_sol)
        assert bad, f"checker accepted: {name}"
        names.append(name)
    assert len(names) == 11


def test_checker_accepts_its_own_mutation_when_valid():
    """Moving a whole TP group + EP domain to another Pod's free server stays valid: the
    checker is not rejecting everything that differs from the method's output."""
    inst = _inst(job=Job(4, tp=2, pp=1, dp=2, ep=4))
    sol = greedy_placement(inst)
    moved = copy.copy(sol)
    moved.gpus = np.array([40, 41, 42, 43])
    assert check_placement(inst, moved)[0] == []
