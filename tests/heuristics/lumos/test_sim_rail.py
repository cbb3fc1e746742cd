"""The rail-optimized intra-Pod layout ([002] Fig. 24; issue 31): GPU r of every server of a
rail group on rail leaf r (instances.lumos.placement), its routes on the OCS fabric and the
Clos, the simulator's flows and the leaf-level requirement under it, by either rail rule
(lane-pairs, the authors'; leaf-pairs, Principle 3)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hs

from heuristics.lumos.requirement import RAIL_RULES, job_requirement, leaf_requirement
from heuristics.lumos.sim.clos import ClosNetwork
from heuristics.lumos.sim.networks import OcsNetwork
from heuristics.lumos.sim.traffic import COLLECTIVE, alltoall_rows, job_flows
from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job, Placement
from tests.heuristics.lumos.test_requirement import sym

FAB = Fabric(2, 4, 4)            # 2 Pods x 4 leaves x 4 GPU ports: 32 GPUs
T = 2                            # 2 GPUs per server: rail groups of 4 servers on 2 leaves


def ocs(layout):
    cl = Cluster(FAB, T, layout)
    return OcsNetwork(cl, np.zeros((FAB.H, 2, 2), np.int64), np.zeros((0, 4), np.int64))


def clos(layout):
    return ClosNetwork(64, 8, 3, 800.0, gpus_per_server=T, layout=layout)   # m = 4


def same_rank_pairs(cl):
    """Every (src, dst) of two GPUs of one rank on different servers of one rail group."""
    g = np.arange(cl.n_gpus)
    group = cl.server_of(g) // cl.fabric.k_leaf
    s, d = np.meshgrid(g, g, indexing="ij")
    keep = ((group[s] == group[d]) & (s % T == d % T) & (cl.server_of(s) != cl.server_of(d)))
    return s[keep], d[keep]


def test_rail_leaves_hold_one_rank_of_a_rail_group():
    cl = Cluster(FAB, T, "rail")
    g = np.arange(cl.n_gpus)
    leaf = cl.leaf_of(g)
    assert np.array_equal(np.bincount(leaf), np.full(FAB.n_leaves, FAB.k_leaf))
    assert np.array_equal(leaf, g // (T * FAB.k_leaf) * T + g % T)
    assert np.array_equal(FAB.pod_of_leaf(leaf), cl.pod_of(g))     # rails inside their Pod
    assert np.array_equal(Cluster(FAB, T).leaf_of(g), g // FAB.k_leaf)


@pytest.mark.parametrize("make", [ocs, clos], ids=["ocs", "clos"])
def test_rail_local_flows_never_leave_the_leaf(make):
    rail, server = make("rail"), make("server")
    src, dst = same_rank_pairs(rail.cluster)
    assert len(src) > 0
    A = rail.route(src, dst, np.arange(len(src)))
    assert A.nnz == 0                                              # the leaf switches them
    assert server.route(src, dst, np.arange(len(src))).nnz > 0    # the server layout does not
    # every other pair inside a Pod leaves its leaf: up at the source's, down at the dest's
    g = np.arange(rail.cluster.n_gpus)
    s, d = np.meshgrid(g, g, indexing="ij")
    other = (rail.cluster.leaf_of(s) != rail.cluster.leaf_of(d)) & (
        rail.cluster.pod_of(s) == rail.cluster.pod_of(d))
    s, d = s[other], d[other]
    A = rail.route(s, d, np.arange(len(s))).tocsc()
    assert (np.diff(A.indptr) >= 2).all()
    names = rail.link_names(A.indices[A.indptr[:-1]])             # lowest id: an up link
    first = [n.split("->")[0] for n in names]
    want = ([f"pod{p}.leaf{a % FAB.leaves_per_pod}" for p, a in
             zip(rail.cluster.pod_of(s), rail.cluster.leaf_of(s))] if make is ocs else
            [f"tor{a}" for a in rail.cluster.leaf_of(s)])
    assert first == want


def test_a_job_filling_one_rail_group_keeps_its_collectives_in_the_leaves():
    job = Job(8, tp=2, pp=2, dp=2)                  # GPUs 0-7: servers 0-3, one rail group
    for make in (ocs, clos):
        flows = {lay: job_flows(Placement(make(lay).cluster, job, np.arange(8)), 1)
                 for lay in ("rail", "server")}
        for lay, f in flows.items():
            assert (f.cls == COLLECTIVE).sum() > 0
            A = make(lay).route(f.src, f.dst, f.key)
            assert (A.nnz == 0) == (lay == "rail"), (make.__name__, lay)


def test_rail_alltoall_rows_cover_every_off_server_peer():
    cl = Cluster(FAB, T, "rail")
    p = Placement(cl, Job(16, tp=2, dp=8, ep=8), np.arange(16))
    src, dst, w = alltoall_rows(p)
    assert (cl.server_of(src) != cl.server_of(dst)).all()
    key = src * FAB.n_leaves + cl.leaf_of(dst)
    assert len(np.unique(key)) == len(key)                         # one row per (src, leaf)
    # each GPU reaches its 7 domain peers, one of them on its own server (NVLink)
    assert np.array_equal(np.bincount(src, w, 16), np.full(16, 6.0))


def test_rail_requirement_counts_every_cross_pod_gpu_pair():
    cl = Cluster(FAB, T, "rail")
    gpus = np.r_[0:8, 16:24]                        # a rail group in each Pod
    for job in (Job(16, tp=2, pp=2, dp=4), Job(16, tp=2, pp=4, dp=2), Job(16, tp=1, dp=16)):
        p = Placement(cl, job, gpus)
        L = job_requirement(p)
        f = job_flows(p, 0)
        c = f.cls == COLLECTIVE
        pairs = np.unique(np.sort(np.stack([f.src[c], f.dst[c]], axis=1), axis=1), axis=0)
        pairs = pairs[cl.pod_of(pairs[:, 0]) != cl.pod_of(pairs[:, 1])]
        want = np.zeros_like(L)
        np.add.at(want, (cl.leaf_of(pairs[:, 0]), cl.leaf_of(pairs[:, 1])), 1)
        np.add.at(want, (cl.leaf_of(pairs[:, 1]), cl.leaf_of(pairs[:, 0])), 1)
        assert len(pairs) and np.array_equal(L, want), job


def test_leaf_pairs_merge_the_lane_pairs_of_a_leaf_pair():
    """Hand count. Pod 0 holds servers 0-1 (GPUs 0-3: rail leaves 0, 1), Pod 1 servers 8-13
    (GPUs 16-27: leaves 4-7); tp 2, pp 2, dp 4. The A.6 fill puts replicas 0-1 of stage 0 in
    Pod 0, the rest in Pod 1 (stage 0's in servers 8-9, leaves 4, 5): PP crosses in replicas
    0 and 1, stage 0's DP ring twice. Each crossing joins lane 0 on leaves 0-4, lane 1 on
    1-5: 2 PP + 2 DP GPU pairs per leaf pair (lane-pairs), 1 PP + 1 DP unit (leaf-pairs).
    The server layout (servers 0-1 on leaf 0, 8-9 on 4, 10-11 on 5) ignores the rule: one
    PP leaf pair {0, 5} (TP = 2 units), one DP pair {0, 4} (TP / 2)."""
    job, gpus = Job(16, tp=2, pp=2, dp=4), np.r_[0:4, 16:28]
    rail = Placement(Cluster(FAB, T, "rail"), job, gpus)
    lane, leaf = (job_requirement(rail, rail_rule=r) for r in RAIL_RULES)
    assert np.array_equal(job_requirement(rail), lane)                     # the default
    assert np.array_equal(lane, sym(8, [(0, 4, 4), (1, 5, 4)]))
    assert np.array_equal(leaf, sym(8, [(0, 4, 2), (1, 5, 2)]))
    server = Placement(Cluster(FAB, T), job, gpus)
    for rule in RAIL_RULES:
        assert np.array_equal(job_requirement(server, rail_rule=rule), sym(8, [(0, 5, 2), (0, 4, 1)]))
    with pytest.raises(ValueError, match="lane-pairs, leaf-pairs"):
        job_requirement(rail, rail_rule="lanes")


@hs.composite
def rail_jobs(draw):
    """A rail cluster (2-3 Pods, rail groups of T leaves) and one job on random TP slots."""
    T = draw(hs.sampled_from([2, 4]))
    cl = Cluster(Fabric(draw(hs.integers(2, 3)), draw(hs.sampled_from([4, 8])), 2 * T), T,
                 "rail")
    rng = np.random.default_rng(draw(hs.integers(0, 2**32 - 1)))
    tp = int(rng.choice([d for d in (1, 2, 4) if T % d == 0]))
    slots = cl.n_gpus // tp
    pp = int(rng.integers(1, 5))
    dp = int(rng.integers(1, slots // pp + 1))
    take = rng.choice(slots, pp * dp, replace=False)
    gpus = np.sort((take[:, None] * tp + np.arange(tp)).ravel())
    return Placement(cl, Job(len(gpus), tp=tp, pp=pp, dp=dp), gpus)


@settings(max_examples=60, deadline=None)
@given(rail_jobs())
def test_leaf_pairs_never_ask_more_than_lane_pairs(p):
    """leaf-pairs asks 1 or 2 units (PP, DP) of every leaf pair lane-pairs asks of, never
    more than it; the server layout's L is the same under both rules; ``leaf_requirement``
    estimates a running placement by the rule it is given."""
    lane, leaf = (job_requirement(p, rail_rule=r) for r in RAIL_RULES)
    assert np.array_equal(lane > 0, leaf > 0) and (leaf <= lane).all()
    assert set(np.unique(leaf[leaf > 0])) <= {1, 2}
    server = Placement(Cluster(p.cluster.fabric, p.cluster.gpus_per_server), p.job, p.gpus)
    assert np.array_equal(*(job_requirement(server, rail_rule=r) for r in RAIL_RULES))
    for rule, want in zip(RAIL_RULES, (lane, leaf)):
        fits = bool((want.sum(axis=1) <= p.cluster.fabric.k_leaf).all())
        r = leaf_requirement(p, [p] if fits else [], rail_rule=rule)  # a running L within cap
        assert np.array_equal(r.L1_estimate, want) and np.array_equal(r.L2, want * fits)


def test_the_controller_refuses_an_unknown_rule():
    from heuristics.lumos.sim.controller import OcsController

    with pytest.raises(ValueError, match="lane-pairs, leaf-pairs"):
        OcsController(Cluster(FAB, T, "rail"), rail_rule="leaf")


@pytest.mark.parametrize("kw, words", [
    (dict(fabric=FAB, gpus_per_server=T, layout="rails"), "server, rail"),
    (dict(fabric=Fabric(2, 8, 4, 2), gpus_per_server=4, layout="rail"), "rail group"),
])
def test_bad_layouts_are_named(kw, words):
    with pytest.raises(InstanceError) as e:
        Cluster(**kw)
    assert e.value.field == "layout" and words in e.value.msg


def test_the_new_targets_are_registered():
    from toolkit.reproduce import TARGETS

    for name, fn in (("lumos-fig24", "run_fig24"), ("lumos-jct-ilp-probing", "run_ilp_probing")):
        assert TARGETS[name].entry.endswith(":" + fn) and TARGETS[name].quick
