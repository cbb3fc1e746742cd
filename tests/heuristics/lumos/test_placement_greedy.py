"""placement-greedy (spec 2.8) on random cluster states: always a valid placement or a
NoPlacement exactly when no placement with whole EP domains exists; never better than the
exact ILP; locality (a job that fits one leaf gets one leaf); best fit among leaves."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from heuristics.lumos.placement import NoPlacement, best_fit, greedy_placement
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job, PlacementInstance
from instances.lumos.placement_check import check_placement, whole_ep_possible
from models.lumos.placement import solve_placement

CL = Cluster(Fabric(4, 16, 8, 2), 4)      # 4 Pods x 4 leaves x 4 servers x 4 GPUs = 256 GPUs


@st.composite
def cases(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    load = draw(st.floats(0.0, 0.95))
    busy = rng.random(CL.n_gpus) < load
    if draw(st.booleans()):                            # whole busy servers (tp = T jobs)
        busy = np.repeat(rng.random(CL.n_servers) < load, CL.gpus_per_server)
    tp = draw(st.sampled_from([1, 2, 4]))
    k = draw(st.integers(1, 24))
    ep = draw(st.sampled_from([d for d in (1, 2, 4, 8, 16, 32) if (tp * k) % d == 0]))
    return PlacementInstance(CL, busy, Job(tp * k, tp=tp, pp=1, dp=k, ep=ep))


@settings(max_examples=80, deadline=None, derandomize=True)
@given(inst=cases())
def test_greedy_is_valid_or_refuses_exactly_when_infeasible_and_never_beats_the_ilp(inst):
    sol, res = solve_placement(inst, solve_kw={"backend": "highs"})
    try:
        g = greedy_placement(inst)
    except NoPlacement as exc:
        assert not whole_ep_possible(inst) and sol is None and res.status == "infeasible"
        assert str(exc)
        return
    bad, m = check_placement(inst, g)
    assert bad == [] and not m["ep_exception"]
    assert sol is not None and res.status == "optimal"
    assert m["idle_gpus"] >= res.objective == check_placement(inst, sol)[1]["idle_gpus"]
    cap_leaf = (inst.free.reshape(CL.n_servers, 4).sum(1) // inst.job.tp).reshape(16, 4).sum(1)
    if (cap_leaf * inst.job.tp >= inst.job.gpus).any():
        assert m["leaves_used"] == 1                            # locality first


def test_best_fit_prefers_the_tightest_candidate_then_the_largest():
    cap = np.array([5, 3, 8, 3])
    free = np.array([9, 4, 8, 3])
    assert best_fit(cap, free, 3).tolist() == [0, 0, 0, 3]     # fits: fewest free wins
    # none holds 10: the largest (8) first, then the rest (2) in the tightest that holds it
    assert best_fit(cap, free, 10).tolist() == [0, 0, 8, 2]
    assert best_fit(cap, free, 20) is None and best_fit(cap, free, 0).sum() == 0


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_full_cluster_is_refused_with_a_reason(tp):
    inst = PlacementInstance(CL, np.ones(CL.n_gpus, bool), Job(tp, tp=tp))
    with pytest.raises(NoPlacement, match="free TP slots"):
        greedy_placement(inst)
