"""NCT consistent with the iteration time (issue 18): a hand-computed ranking inversion of
the backward-chain NCT, and the monotonicity property over random topologies."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import instances
from heuristics.delta.fast import feasible_random_init
from heuristics.delta.nct import evaluate, ideal_reference, nct_metrics
from tests.heuristics.delta.draw import delta_dag


@st.composite
def contended_instance(draw):
    """Random DAG on 3-4 Pods whose compute (releases, delays, tails) and communication
    times are of one magnitude, with few ports, so that topologies move the critical path."""
    return delta_dag(draw, pods=(3, 4), tasks=(2, 10), flows=(1, 4), volume=(1, 100),
                     delay=(0, 20), dep_one_in=3, bandwidth=st.just(1.0),
                     ports=lambda n: st.integers(n, 3 * n), release=(0, 50), tail=(0, 20))


def two_paths():
    """Task a: A -> B, 2 flows, 4 MB, released at 10 ms (compute before it); task b: A -> C,
    2 flows, 13 MB, released at 0. B = 1 MB/ms; Pod A has 3 ports, so x = (x_AB, x_AC) is
    (2, 1) or (1, 2). Ideal: both at 2 MB/ms, C* = max(10 + 2, 6.5) = 12 on a's path:
    NC* = 10, ideal comm 2."""
    tasks = [{"src_pod": "A", "dst_pod": d, "flows": 2, "volume": v, "src_gpus": g,
              "dst_gpus": [10 + g[0], 10 + g[1]]}
             for d, v, g in (("B", 4.0, [0, 1]), ("C", 13.0, [2, 3]))]
    return instances.from_dict({
        "problem": "delta", "bandwidth": 1.0,
        "pods": [{"name": "A", "ports": 3}, {"name": "B", "ports": 2}, {"name": "C", "ports": 2}],
        "tasks": tasks, "release": [10.0, 0.0], "tail": [0.0, 0.0]})


def test_faster_topology_gets_the_smaller_nct_where_the_chain_inverts():
    inst = two_paths()
    ref = ideal_reference(inst)
    assert (ref["ideal_iteration_time"], ref["ideal_nc_time"], ref["ideal_comm_time"]) == \
        pytest.approx((12, 10, 2))
    ab = [e for e, l in enumerate(inst.links) if sorted(l["ends"]) == ["A", "B"]][0]
    x_fast, x_slow = np.ones(2), np.ones(2)
    x_fast[ab], x_slow[1 - ab] = 2, 2
    fast, slow = evaluate(inst, x_fast), evaluate(inst, x_slow)
    # fast: a at 2 MB/ms ends at 12, b at 1 MB/ms ends at 13; slow: a ends at 14, b at 6.5
    assert (fast["iteration_time"], slow["iteration_time"]) == pytest.approx((13, 14))
    # the spec's backward chain: fast's runs through b (no compute): 13 / 2; slow's through a: 4 / 2
    assert (fast["nct_chain"], slow["nct_chain"]) == pytest.approx((6.5, 2.0))
    # on the ideal critical path: (C - 10) / 2
    assert (fast["nct"], slow["nct"]) == pytest.approx((1.5, 2.0))
    assert (fast["nct_exposed"], slow["nct_exposed"]) == pytest.approx(((13 - 10) / 2, (14 - 10) / 2))


def test_nct_is_one_at_the_ideal_iteration_time():
    inst = two_paths()
    C = ideal_reference(inst)["ideal_iteration_time"]
    m = nct_metrics(inst, C)
    assert m["nct"] == pytest.approx(1.0) and m["nct_exposed"] == pytest.approx(1.0)
    assert nct_metrics(inst, np.inf)["nct"] == np.inf


@settings(max_examples=60, deadline=None)
@given(inst=contended_instance(), seeds=st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=6))
def test_shorter_iteration_never_gets_a_larger_nct(inst, seeds):
    """(The backward-chain NCT, nct_chain, fails this within a few dozen examples.)"""
    evs = [evaluate(inst, feasible_random_init(inst, np.full(len(inst.links), 8.0),
                                               np.random.default_rng(s))) for s in seeds]
    evs.sort(key=lambda e: e["iteration_time"])
    ideal_comm = evs[0]["ideal_comm_time"]
    for a, b in zip(evs, evs[1:]):
        if a["iteration_time"] < b["iteration_time"]:
            assert a["nct"] <= b["nct"]
            # strictly larger unless the times differ by round-off only (a few ulps)
            if (ideal_comm > 1e-6 * a["ideal_iteration_time"]
                    and b["iteration_time"] - a["iteration_time"] > 1e-12 * b["iteration_time"]):
                assert a["nct"] < b["nct"]
        assert a["nct_exposed"] <= b["nct_exposed"] or a["iteration_time"] == b["iteration_time"]
    for e in evs:      # NCT is the iteration time beyond the ideal path's compute, over its comm
        if ideal_comm > 1e-6 * e["ideal_iteration_time"]:
            assert e["nct"] * ideal_comm == pytest.approx(e["iteration_time"] - e["ideal_nc_time"])
