"""The rail-optimized intra-Pod layout ([002] Fig. 24; issue 31): GPU r of every server of a
rail group on rail leaf r (instances.lumos.placement), its routes on the OCS fabric and the
Clos, the simulator's flows and the leaf-level requirement under it."""
import numpy as np
import pytest

from heuristics.lumos.requirement import job_requirement
from heuristics.lumos.sim.clos import ClosNetwork
from heuristics.lumos.sim.networks import OcsNetwork
from heuristics.lumos.sim.traffic import COLLECTIVE, alltoall_rows, job_flows
from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job, Placement

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
