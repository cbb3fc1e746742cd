"""The LumosCore running stage end to end (spec 3; issue 15 item 3): a job arrives on a
cluster with a job already running -> placement (a registered method) -> leaf-level
requirement L -> logical topology -> OCS reconfiguration from the running configuration ->
hitless stages. Every stage's output passes that stage's problem checker."""
from __future__ import annotations

import numpy as np
import pytest

from heuristics.lumos.requirement import leaf_requirement
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.logical import LogicalInstance
from instances.lumos.placement import Cluster, Job, Placement, PlacementInstance
from instances.lumos.staging import StagingInstance, changed_groups
from toolkit.registry import RunConfig, problem


def _run(prob_name: str, method: str, inst):
    """Run a registered method and check its solution with the problem's checker."""
    prob = problem(prob_name)
    out = prob.methods[method].run(inst, RunConfig(backend="highs"))
    assert out.solution is not None, (prob_name, method, out.solver and out.solver.message)
    bad, metrics = prob.check(inst, out.solution)
    assert bad == [], (prob_name, method, bad)
    return out.solution, metrics


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("placer", ["placement-greedy", "placement-ilp"])
def test_job_to_hitless_stages(P, placer):
    fab = Fabric(P, 8, 8, 2)
    cl = Cluster(fab, 4)                     # 2 servers of 4 GPUs per leaf
    S = cl.gpus_per_pod // 4                 # servers per Pod
    # running job: PP = 2 over the first server of Pods 0 and 1
    running = Placement(cl, Job(8, tp=4, pp=2), np.r_[0:4, 4 * S:4 * S + 4])
    busy = np.zeros(cl.n_gpus, dtype=bool)
    busy[running.gpus] = True
    # arriving job: TP 4, PP = P, DP 4: 16P GPUs, more than the free GPUs of any Pod (32)
    pinst = PlacementInstance(cl, busy, Job(16 * P, tp=4, pp=P, dp=4))
    placed, pm = _run("lumos-placement", placer, pinst)
    assert pm["pods_used"] >= 2 and not (busy[placed.gpus]).any()

    # leaf-level requirements: before (the running job) and after (both jobs)
    r_old = leaf_requirement(running, [])
    r_new = leaf_requirement(placed, [r_old.L1])
    assert (r_new.L >= r_old.L1).all() and r_new.L.sum() > r_old.L.sum()

    # logical topologies, then OCS configurations: the new one reconfigured from the old
    split_old, _ = _run("lumos-logical", "heuristic-decomposition", LogicalInstance(fab, r_old.L))
    split_new, lm = _run("lumos-logical", "heuristic-decomposition", LogicalInstance(fab, r_new.L))
    assert lm["contention_free"]
    old, _ = _run("lumos-reconfig", "itv-mdmcf",
                  ReconfigInstance(fab, split_old.topology(fab), "cross"))
    new, rm = _run("lumos-reconfig", "itv-mdmcf",
                   ReconfigInstance(fab, split_new.topology(fab), "cross", old))

    # the changed OCS groups in hitless stages: the heuristic and the exact model
    changed = changed_groups(old, new)
    assert len(changed) >= 1
    sinst = StagingInstance(fab, split_new.entries, changed, 0.5, "cross", old, new)
    _, greedy = _run("lumos-staging", "staging-greedy", sinst)
    _, exact = _run("lumos-staging", "staging-ilp", sinst)
    assert exact["stages"] <= greedy["stages"] <= len(changed)
    assert exact["stages"] >= greedy["lower_bound"]
