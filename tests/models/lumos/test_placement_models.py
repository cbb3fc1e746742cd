"""Placement models (spec 2.8) against brute force on tiny clusters: the corrected ILP's
optimum is the least idle-GPU count over every valid placement (all subsets of the free
GPUs), pods_first is lexicographic (fewest Pods, then idle), the greedy and the [REPO]
variant are valid and never better, all are feasible exactly when a placement exists, and
Gurobi and HiGHS agree."""
from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pytest

from heuristics.lumos.placement import NoPlacement, greedy_placement
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job, PlacementInstance
from instances.lumos.placement_check import check_placement
from models.lumos.placement import solve_placement
from tests.conftest import needs_gurobi

# 3 Pods x 2 leaves x 2 servers x 2 GPUs (24 GPUs), or 2 Pods x 2 leaves x 1 server x 4 GPUs
SHAPES = [(Cluster(Fabric(3, 4, 2, 1), 2), [(1, 1), (2, 1), (2, 2), (2, 4), (1, 4), (2, 8)]),
          (Cluster(Fabric(2, 4, 4, 2), 4), [(1, 1), (2, 2), (4, 4), (2, 8), (4, 8), (1, 2)])]
MAX_COMBOS = 100_000


def tiny_cases(n_cases: int = 40, seed: int = 7):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n_cases:
        cl, tp_ep = SHAPES[len(out) % 2]
        tp, ep = tp_ep[rng.integers(len(tp_ep))]
        busy = rng.random(cl.n_gpus) < rng.uniform(0.1, 0.6)
        k = int(rng.integers(1, 5))                  # gpus = tp * k
        gpus = tp * k
        if gpus % ep or comb(int((~busy).sum()), gpus) > MAX_COMBOS:
            continue
        out.append(PlacementInstance(cl, busy, Job(gpus, tp=tp, pp=1, dp=k, ep=ep)))
    return out


def brute_force(inst: PlacementInstance):
    """(least idle, least (pods, idle)) over all valid placements, or None if none."""
    cl, job = inst.cluster, inst.job
    free = np.flatnonzero(inst.free)
    if len(free) < job.gpus:
        return None
    combos = np.array(list(combinations(free, job.gpus)), dtype=np.int64)
    assert len(combos) <= MAX_COMBOS
    rows = np.repeat(np.arange(len(combos)), job.gpus)
    srv = np.zeros((len(combos), cl.n_servers), np.int64)
    np.add.at(srv, (rows, cl.server_of(combos).ravel()), 1)
    pod = np.zeros((len(combos), cl.fabric.pods), np.int64)
    np.add.at(pod, (rows, cl.pod_of(combos).ravel()), 1)
    ok = (srv % job.tp == 0).all(axis=1) & (pod % job.ep == 0).all(axis=1)
    if not ok.any():
        return None
    free_pod = np.bincount(cl.pod_of(free), minlength=cl.fabric.pods)
    idle = ((pod > 0) * free_pod).sum(axis=1) - job.gpus
    pods = (pod > 0).sum(axis=1)
    return int(idle[ok].min()), min(zip(pods[ok].tolist(), idle[ok].tolist()))


CASES = tiny_cases()


def test_cases_cover_feasible_and_infeasible():
    res = [brute_force(i) for i in CASES]
    assert sum(r is None for r in res) >= 2 and sum(r is not None for r in res) >= 25


@pytest.mark.parametrize("k", range(len(CASES)))
def test_ilp_optimum_equals_brute_force_and_heuristics_never_beat_it(k):
    inst = CASES[k]
    best = brute_force(inst)
    sol, res = solve_placement(inst, solve_kw={"backend": "highs"})
    if best is None:
        assert sol is None and res.status == "infeasible" and "no placement" in res.message
        with pytest.raises(NoPlacement):
            greedy_placement(inst)
        assert solve_placement(inst, "authors", solve_kw={"backend": "highs"})[0] is None
        return
    bad, m = check_placement(inst, sol)
    assert bad == [] and res.status == "optimal"
    assert m["idle_gpus"] == res.objective == best[0]
    assert res.bound == best[0]
    # pods_first: lexicographic (fewest Pods, then fewest idle GPUs)
    sol2, res2 = solve_placement(inst, pods_first=True, solve_kw={"backend": "highs"})
    bad, m2 = check_placement(inst, sol2)
    assert bad == [] and (m2["pods_used"], m2["idle_gpus"]) == best[1] and res2.bound is None
    # the greedy and the [REPO] variant: valid, never better than the optimum
    for other in (greedy_placement(inst), solve_placement(inst, "authors",
                                                          solve_kw={"backend": "highs"})[0]):
        bad, mo = check_placement(inst, other)
        assert bad == [] and mo["idle_gpus"] >= best[0]


@needs_gurobi
@pytest.mark.parametrize("k", range(0, len(CASES), 3))
def test_gurobi_and_highs_agree(k):
    inst = CASES[k]
    for variant, first in (("corrected", False), ("corrected", True), ("authors", False)):
        out = [solve_placement(inst, variant, first, {"backend": b}) for b in ("gurobi", "highs")]
        (sg, rg), (sh, rh) = out
        assert rg.status == rh.status
        if sg is None:
            assert sh is None and rg.status == "infeasible"
            continue
        assert (rg.backend, rh.backend) == ("gurobi", "highs")
        mg, mh = check_placement(inst, sg)[1], check_placement(inst, sh)[1]
        if variant == "corrected":
            assert (mg["pods_used"] if first else 0, mg["idle_gpus"]) == \
                   (mh["pods_used"] if first else 0, mh["idle_gpus"])
        assert rg.n_vars == rh.n_vars and rg.n_constrs == rh.n_constrs


def test_ep_split_is_used_only_when_whole_ep_domains_cannot_be_placed():
    cl = Cluster(Fabric(2, 4, 4, 2), 4)             # 2 Pods x 2 leaves x 1 server x 4 GPUs
    busy = np.zeros(cl.n_gpus, bool)
    busy[[0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13]] = True   # 2 free GPUs per Pod
    inst = PlacementInstance(cl, busy, Job(4, tp=2, pp=1, dp=2, ep=4))
    with pytest.raises(NoPlacement, match="ep_split"):
        greedy_placement(inst)
    assert solve_placement(inst, solve_kw={"backend": "highs"})[1].status == "infeasible"
    sol = greedy_placement(inst, ep_split=True)
    bad, m = check_placement(inst, sol)
    assert bad == [] and m["ep_exception"] and m["cross_pod_ep_domains"] == 1
    # with one more free GPU pair in Pod 0 a whole-EP placement exists: no exception then
    busy[[4, 5]] = False
    inst2 = PlacementInstance(cl, busy, inst.job)
    bad, _ = check_placement(inst2, sol)
    assert any("whole EP domains exists" in b for b in bad)
    assert not greedy_placement(inst2, ep_split=True).meta.get("ep_exception")
