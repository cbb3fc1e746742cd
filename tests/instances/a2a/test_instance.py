"""a2a instance validation, generators and the independent checker (spec 1.3, 5.2, 7.9)."""
from __future__ import annotations

import numpy as np
import pytest

import instances
from instances.a2a.instance import A2AInstance, A2AStrategy, Group, Link, Phase, check_strategy
from instances.a2a.workloads import generate
from instances.errors import InstanceError


def unit(n=4, k=1, R=1.0):
    return A2AInstance(n, k, R, Link.from_dict({"T": 1.0}), uniform_size=1.0)


def ring_strategy(n):
    """Base ring, one round per offset (the paper's Fig. 4 strategy)."""
    u = np.arange(n)
    arcs = np.stack([u, (u + 1) % n], 1)
    rounds = [[Group((u[:, None] + np.arange(h + 1)[None, :]) % n, np.ones(n))] for h in range(1, n)]
    return A2AStrategy([Phase(arcs, rounds)])


def test_roundtrip_and_uniform_form():
    inst = generate("zipf", n=6, k=2, seed=3)
    back = instances.from_dict(inst.to_dict())
    assert np.array_equal(back.A, inst.A) and back.k == 2 and back.link.beta == inst.link.beta
    u = instances.from_dict({"problem": "a2a", "n": 5, "k": 1, "R": 2, "traffic": {"uniform": 3}})
    assert u.is_uniform and u.A[0, 1] == 3 and u.A[2, 2] == 0 and u.T == 3.0


@pytest.mark.parametrize("patch,field", [
    ({"k": 8}, "k"), ({"n": 1}, "n"), ({"R": -1}, "R"), ({"traffic": {"uniform": 0}}, "traffic.uniform"),
    ({"traffic": [[1, 1], [1, 0]]}, "traffic"), ({"link": {"T": 0}}, "link.T"),
    ({"link": {"latency_s": 1}}, "link"), ({"traffic": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]}, "traffic"),
    ({"bogus": 3}, "bogus"), ({"link": {"T": 1, "latency_s": 0}}, "link.latency_s"),
    ({"link": {"bandwidth_gbps": 800, "T0": 1}}, "link.T0"),
])
def test_bad_input_names_the_field(patch, field):
    d = {"problem": "a2a", "n": 4, "k": 1, "R": 1, "traffic": {"uniform": 1}}
    d.update(patch)
    with pytest.raises(InstanceError) as e:
        instances.from_dict(d)
    assert e.value.field == field


@pytest.mark.parametrize("kw,field", [({"seed": -3}, "seed"), ({"T": -1.0}, "T"),
                                      ({"size_mb": 0.0}, "size_mb"), ({"n": 1}, "n"),
                                      ({"workload": "pareto"}, "workload")])
def test_generator_rejects_bad_parameters(kw, field):
    with pytest.raises(InstanceError) as e:
        generate(**{"workload": "zipf", **kw})
    assert e.value.field == field


def test_generators_means_and_support():
    z = generate("zipf", n=8, size_mb=32, seed=1).A
    off = ~np.eye(8, dtype=bool)
    assert z[off].mean() == pytest.approx(32e6) and (z[off] > 0).all()
    assert z[off].max() / z[off].mean() == pytest.approx(3.18, abs=0.01)     # spec 5.2
    r = generate("random", n=32, size_mb=8, seed=2).A
    assert r[~np.eye(32, dtype=bool)].min() > 0
    assert abs(r[~np.eye(32, dtype=bool)].mean() / 8e6 - 1) < 0.05
    assert np.all(np.diag(r) == 0)
    ex = generate("example")
    assert (ex.n, ex.k, ex.R, ex.T) == (8, 1, 7.0, 1.0)


def test_checker_accepts_ring_and_recomputes_cost():
    inst = unit(8, R=7.0)
    bad, m = check_strategy(inst, ring_strategy(8))
    assert bad == [] and m["total_cost"] == 35.0 and m["d"] == 1 and m["hop_sum"] == 28


def test_checker_rejects_contention():
    inst = unit(4)
    st = ring_strategy(4)
    # merge rounds 1 and 2: flows 0->1 (link 0->1 at hop 1) and 0->2 (link 0->1 at hop 1) contend
    st.phases[0].rounds[0] = st.phases[0].rounds[0] + st.phases[0].rounds[1]
    del st.phases[0].rounds[1]
    bad, _ = check_strategy(inst, st)
    assert any("contention" in b for b in bad)


def test_checker_rejects_bad_topologies_and_missing_flows():
    inst = unit(4)
    st = ring_strategy(4)
    st.phases[0].rounds.pop()                                   # offset 3 never sent
    assert any("delivered 0" in b for b in check_strategy(inst, st)[0])
    st = ring_strategy(4)
    st.phases[0].arcs = np.vstack([st.phases[0].arcs, [[0, 2]]])  # out-degree 2 > k = 1
    assert any("degree" in b for b in check_strategy(inst, st)[0])
    st = ring_strategy(4)
    st.phases[0].rounds[0][0].paths[0] = [0, 2]                 # arc 0->2 not in the ring
    assert any("not in the phase" in b for b in check_strategy(inst, st)[0])
    st = ring_strategy(4)
    st.phases[0].arcs = np.vstack([st.phases[0].arcs[1:], [[0, 0]]])
    assert any("self-loop" in b for b in check_strategy(inst, st)[0])


def test_parallel_circuits_allow_two_flows_on_one_link():
    inst = A2AInstance(3, 2, 0.0, Link.from_dict({"T": 1.0}),
                       traffic=[[0, 1, 1], [0, 0, 0], [0, 0, 0]])
    arcs = np.array([[0, 1], [0, 1], [1, 2]])
    # flows (0,1) and (0,2) both use link 0->1 at hop 1: one on each of its two circuits
    st = A2AStrategy([Phase(arcs, [[Group(np.array([[0, 1]]), np.array([1.0])),
                                    Group(np.array([[0, 1, 2]]), np.array([1.0]))]])])
    bad, m = check_strategy(inst, st)
    assert bad == [] and m["total_cost"] == 2.0
    st.phases[0].arcs = arcs[1:]                                # one circuit only: contention
    assert any("contention" in b for b in check_strategy(inst, st)[0])


def split_strategy():
    """Review repro: n=4, k=2, circulant {1,2}; round X sends offset 3 as two halves on paths
    (+1,+2) and (+2,+1), round Y sends offsets 1 and 2 directly (cost 3 < the bound 4)."""
    u = np.arange(4)
    arcs = np.concatenate([np.stack([u, (u + 1) % 4], 1), np.stack([u, (u + 2) % 4], 1)])
    p12, p21 = np.stack([u, (u + 1) % 4, (u + 3) % 4], 1), np.stack([u, (u + 2) % 4, (u + 3) % 4], 1)
    X = [Group(np.concatenate([p12, p21]), np.full(8, 0.5))]
    Y = [Group(np.concatenate([np.stack([u, (u + 1) % 4], 1), np.stack([u, (u + 2) % 4], 1)]), np.ones(8))]
    return A2AStrategy([Phase(arcs, [X, Y])])


def test_checker_rejects_split_flows_unless_marked_splittable():
    from heuristics.a2a.bounds import fluid_lower_bound, lower_bound
    from toolkit.methods.a2a import metrics

    inst = A2AInstance(4, 2, 1.0, Link.from_dict({"T": 1.0}), uniform_size=1.0)
    st = split_strategy()
    bad, m = check_strategy(inst, st)
    assert any("unsplittable" in b and "(0,3)" in b for b in bad)
    assert m["total_cost"] == 3.0 < lower_bound(inst) == 4.0       # why splitting must be refused
    st.info["splittable"] = True
    bad, m = metrics(inst, st)
    assert bad == [] and m["splittable"] and m["lower_bound_kind"].startswith("fluid")
    assert m["lower_bound"] == fluid_lower_bound(inst) == 2.5 <= m["total_cost"]
    # a whole flow sent twice (two full copies) is still wrong, splittable or not
    st.phases[0].rounds[0][0].size[:] = 1.0
    assert any("delivered 2" in b for b in check_strategy(inst, st)[0])


def test_checker_and_reader_robustness():
    """Review D4: empty groups, non-integer node ids in files, arcs that are not pairs."""
    inst = unit(4)
    st = ring_strategy(4)
    st.phases[0].rounds[0].append(Group(np.zeros((0, 3), dtype=int), np.zeros(0)))
    bad, m = check_strategy(inst, st)
    assert bad == [] and m["total_cost"] == 7.0                    # an empty group sends nothing
    back = A2AStrategy.from_dict(ring_strategy(4).to_dict())
    assert check_strategy(inst, back) == check_strategy(inst, ring_strategy(4))
    d = ring_strategy(4).to_dict()
    d["phases"][0]["rounds"][0][0]["path"] = [0, 1.9]
    with pytest.raises(InstanceError, match="integer"):
        A2AStrategy.from_dict(d)
    d = ring_strategy(4).to_dict()
    d["phases"][0]["arcs"] = [[0, 1, 2], [1, 2, 3]]
    with pytest.raises(InstanceError, match="pairs"):
        A2AStrategy.from_dict(d)
    st = ring_strategy(4)
    st.phases[0].arcs = np.array([[0, 1, 2], [1, 2, 3]])
    assert any("(m, 2)" in b for b in check_strategy(inst, st)[0])


def test_checker_rejects_in_degree_alone_unrequested_flows_and_loops():
    inst = unit(4)
    st = ring_strategy(4)
    st.phases[0].arcs = np.array([[0, 1], [2, 1], [1, 3], [3, 0]])  # in(1) = 2, every out <= 1
    bad = check_strategy(inst, st)[0]
    assert any("degree exceeds" in b and "max out 1, max in 2" in b for b in bad)
    sparse = A2AInstance(4, 1, 1.0, Link.from_dict({"T": 1.0}),
                         traffic=[[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    u = np.arange(4)
    arcs = np.stack([u, (u + 1) % 4], 1)
    ok = A2AStrategy([Phase(arcs, [[Group(np.array([[0, 1]]), np.array([1.0]))]])])
    assert check_strategy(sparse, ok)[0] == []
    extra = A2AStrategy([Phase(arcs, [[Group(np.array([[0, 1], [1, 2]]), np.array([1.0, 1.0]))]])])
    assert any("(1,2) has no traffic but is sent" in b for b in check_strategy(sparse, extra)[0])
    loop = A2AStrategy([Phase(arcs, [[Group(np.array([[0, 1]]), np.array([1.0]))],
                                     [Group(np.array([[0, 1, 2, 3, 0]]), np.array([1.0]))]])])
    assert any("starts and ends at the same GPU" in b for b in check_strategy(sparse, loop)[0])
