"""Network models of the LumosCore simulator: Best, folded Clos with ECMP, OCS fabric
with planned / probing / two-hop routing (heuristics.lumos.sim.networks, .clos)."""
import re
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from heuristics.lumos.sim.clos import ClosNetwork, clos_for
from heuristics.lumos.sim.networks import BestNetwork, OcsNetwork
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster


def columns(A):
    A = A.tocsc()
    return [A.indices[A.indptr[f]:A.indptr[f + 1]] for f in range(A.shape[1])]


def edges(net, ids):
    """Parsed link names: [(from_node, to_node)], a node is (kind, numbers...)."""
    out = []
    for name in net.link_names(ids):
        a, b = name.split("->")
        out.append((parse_node(a), parse_node(b)))
    return out


def parse_node(s):
    if "." in s:                                  # OCS: podI.leafX / podI.spineH
        pod, what = s.split(".")
        kind, num = re.fullmatch(r"([a-z]+)(\d+)", what).groups()
        return (kind, int(pod[3:]), int(num))
    kind, num = re.fullmatch(r"([a-z]+)(\d+)", s).groups()
    return (kind, int(num))


def chain(es, start, end):
    """Order the links of one route as a walk start -> end; fails if they are not one."""
    es, cur, walk = list(es), start, [start]
    while es:
        nxt = [e for e in es if e[0] == cur]
        assert len(nxt) == 1, f"no unique link out of {cur} in {es}"
        es.remove(nxt[0])
        cur = nxt[0][1]
        walk.append(cur)
    assert cur == end, f"route ends at {cur}, not {end}"
    return walk


# ---------------------------------------------------------------- Best

def test_best_has_no_links():
    net = BestNetwork(Cluster(Fabric(2, 8, 8), 8))
    A, bad = net.route_mask([0, 5, 100], [127, 6, 3], [1, 2, 3])
    assert net.n_links == 0 and net.capacity.shape == (0,)
    assert A.shape == (0, 3) and A.nnz == 0 and not bad.any()
    assert net.nic_gbps == 1600


# ---------------------------------------------------------------- Clos

def clos_graph(net):
    es = edges(net, np.arange(net.n_links))
    G = nx.DiGraph()
    G.add_edges_from(es)
    return es, G


@pytest.mark.parametrize("tiers", [2, 3, 4])
def test_clos_full_structure_closed_forms(tiers):
    k, m = 4, 2
    N = k ** tiers // 2 ** (tiers - 1)                # k^2/2, k^3/4, k^4/8
    net = ClosNetwork(N, k, tiers, 400, gpus_per_server=2)
    assert net.n_links == 2 * (tiers - 1) * N         # m uplinks per switch, both directions
    assert np.all(net.capacity == 400)
    es, G = clos_graph(net)
    assert len(set(es)) == len(es)
    assert all(G.has_edge(b, a) for a, b in es)       # every cable both ways
    names = [n[0] for n in G.nodes]
    order = {"tor": 1, "spine": 2, "agg": 2, "core": 3, "top": 4}
    per_tier = Counter(order[x] for x in names)
    assert per_tier == {l: (m ** (tiers - 1) if l == tiers else 2 * m ** (tiers - 1))
                        for l in range(1, tiers + 1)}
    for v in G.nodes:
        up = sum(order[w[0]] > order[v[0]] for w in G.successors(v))
        down = sum(order[w[0]] < order[v[0]] for w in G.successors(v))
        tier = order[v[0]]
        assert (up, down) == ((m, 0) if tier == 1 else (0, k) if tier == tiers else (m, m))


@pytest.mark.parametrize("tiers,ecmp", [(2, "polarized"), (3, "polarized"), (3, "independent")])
def test_clos_k4_every_route_is_a_shortest_up_down_path(tiers, ecmp):
    k, m = 4, 2
    N = k ** tiers // 2 ** (tiers - 1)
    net = ClosNetwork(N, k, tiers, 400, ecmp=ecmp, gpus_per_server=2)
    _, G = clos_graph(net)
    order = {"tor": 1, "spine": 2, "agg": 2, "core": 3, "top": 4}
    s, d = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    s, d = np.tile(s.ravel(), 5), np.tile(d.ravel(), 5)
    key = np.repeat(np.arange(5) * 7919, N * N)
    A, bad = net.route_mask(s, d, key)
    assert A.shape == (net.n_links, len(s)) and not bad.any()
    for f, col in enumerate(columns(A)):
        start, end = ("tor", s[f] // m), ("tor", d[f] // m)
        if start == end:
            assert len(col) == 0
            continue
        walk = chain(edges(net, col), start, end)
        tiers_seen = [order[v[0]] for v in walk]
        top = int(np.argmax(tiers_seen))
        assert tiers_seen == list(range(1, tiers_seen[top] + 1)) + list(range(tiers_seen[top] - 1, 0, -1))
        assert len(col) == nx.shortest_path_length(G, start, end)


def test_clos_cluster_matches_blocks():
    net = ClosNetwork(128, 8, 3, 800, gpus_per_server=4)    # m = 4: 8 Pods of 16 GPUs
    cl = net.cluster
    assert cl.n_gpus == 128 and cl.fabric.pods == 8 and cl.fabric.k_leaf == 4
    g = np.arange(128)
    s, d = np.repeat(g, 128), np.tile(g, 128)
    hops = np.diff(net.route(s, d, s * 31 + d).indptr)
    same_leaf, same_pod = cl.leaf_of(s) == cl.leaf_of(d), cl.pod_of(s) == cl.pod_of(d)
    assert np.array_equal(hops, np.where(same_leaf, 0, np.where(same_pod, 2, 4)))


def test_clos_partial_build():
    # k = 4, 3 tiers, 8 of 16 GPUs: 2 Pods (4 ToRs, 4 aggs), all 4 cores
    net = ClosNetwork(8, 4, 3, 100, gpus_per_server=2)
    assert net.n_switches == [4, 4, 4] and net.n_links == 2 * (4 * 2 + 4 * 2)
    es, G = clos_graph(net)
    assert sorted(v for v in G.nodes if v[0] == "core") == [("core", c) for c in range(4)]
    assert all(G.out_degree(v) == 2 for v in G.nodes if v[0] == "core")   # 2 built Pods
    # 4-tier k = 8 with 2 of 8 top-level blocks
    net = ClosNetwork(128, 8, 4, 100, gpus_per_server=4)
    assert net.n_switches == [32, 32, 32, 64]
    with pytest.raises(ValueError):
        ClosNetwork(10, 4, 3, 100, gpus_per_server=2)       # not whole Pods
    with pytest.raises(ValueError):
        ClosNetwork(32, 4, 3, 100, gpus_per_server=2)       # over k^3/4 = 16


def test_clos_hash_polarisation():
    """k = 8, 3 tiers (m = 4): cross-Pod flows from ToR 0 reach core s3 = p1*m + p2.
    Polarized: p1 = p2 = p, so only cores 0, 5, 10, 15 (m of m^2); independent: all 16."""
    rng = np.random.default_rng(1)
    n = 2000
    src = rng.integers(0, 4, n)                 # ToR 0
    dst = rng.integers(16, 128, n)              # other Pods
    key = rng.integers(0, 2 ** 62, n)
    used = {}
    for ecmp in ("polarized", "independent"):
        net = ClosNetwork(128, 8, 3, 800, ecmp=ecmp, gpus_per_server=4)
        A = net.route(src, dst, key)
        assert np.all(np.diff(A.indptr) == 4)
        used[ecmp] = {b for a, b in edges(net, np.unique(A.indices)) if b[0] == "core"}
    assert used["polarized"] == {("core", p * 5) for p in range(4)}
    assert used["independent"] == {("core", c) for c in range(16)}
    # deterministic in the key; another seed moves flows
    a1 = ClosNetwork(128, 8, 3, 800, ecmp="independent", seed=3, gpus_per_server=4)
    a2 = ClosNetwork(128, 8, 3, 800, ecmp="independent", seed=3, gpus_per_server=4)
    b = ClosNetwork(128, 8, 3, 800, ecmp="independent", seed=4, gpus_per_server=4)
    assert (a1.route(src, dst, key) != a2.route(src, dst, key)).nnz == 0
    assert (a1.route(src, dst, key) != b.route(src, dst, key)).nnz > 0


def test_clos_for():
    assert clos_for(25.6, 3, 4096) == (800, 32)
    assert clos_for(51.2, 3, 8192) == (1600, 32)
    assert clos_for(51.2, 3, 16384) == (800, 64)
    assert clos_for(25.6, 4, 4096) == (1600, 16)           # k^4/8 = 8192 (spec 4.1)
    assert clos_for(51.2, 3, 65536) == (800, 64)
    assert clos_for(51.2, 3, 65537) == (400, 128)
    with pytest.raises(ValueError):
        clos_for(12.8, 2, 10 ** 6)


# ---------------------------------------------------------------- OCS

def sym_R(H, P, links):
    R = np.zeros((H, P, P), dtype=np.int64)
    for h, i, j, c in links:
        R[h, i, j] = R[h, j, i] = c
    return R


# 5 Pods x 4 leaves x 4 GPUs, H = 4; Pod 4 is isolated
FAB = Fabric(5, 4, 4, 1)
R0 = sym_R(4, 5, [(0, 0, 1, 1), (0, 1, 2, 1), (1, 0, 1, 2), (1, 0, 3, 1), (1, 3, 2, 1)])
ROUTES = np.array([(0, 4, 0, 1), (4, 0, 0, 1), (0, 4, 1, 3), (4, 0, 1, 3),
                   (1, 5, 3, 5), (5, 1, 3, 5), (1, 5, 0, 1), (5, 1, 0, 1), (2, 3, 0, 1)])
KEYS = np.arange(4000) * 1_000_003


def ocs_spines(net, src, dst):
    """Per flow: the chain of nodes, checked to run leaf(src) -> leaf(dst)."""
    A, bad = net.route_mask(np.full(len(KEYS), src), np.full(len(KEYS), dst), KEYS)
    lpp, kl = net.cluster.fabric.leaves_per_pod, net.cluster.fabric.k_leaf
    la, lb = src // kl, dst // kl
    walks = [chain(edges(net, c), ("leaf", la // lpp, la % lpp), ("leaf", lb // lpp, lb % lpp))
             if len(c) else [] for c in columns(A)]
    return walks, bad


def test_ocs_planned_follows_L_in_proportion():
    net = OcsNetwork(Cluster(FAB, 4), R0, ROUTES, nic_gbps=800)
    walks, bad = ocs_spines(net, 0, 16)               # leaf 0 (Pod 0) -> leaf 4 (Pod 1)
    assert not bad.any() and all(len(w) == 4 for w in walks)
    hs = np.array([w[1][2] for w in walks])
    assert all(w[1][:2] == ("spine", 0) and w[2] == ("spine", 1, w[1][2]) for w in walks)
    assert set(hs) == {0, 1} and abs(np.mean(hs == 1) - 0.75) < 0.03
    back, _ = ocs_spines(net, 16, 0)                  # same key, reverse: same spine
    assert np.array_equal(hs, [w[1][2] for w in back])
    # leaf 1 -> leaf 5: the h = 3 row has no OCS link, so all flows take h = 0
    walks, _ = ocs_spines(net, 4, 20)
    assert {w[1][2] for w in walks} == {0}


def test_ocs_probing_fallback_and_two_hop():
    net = OcsNetwork(Cluster(FAB, 4), R0, ROUTES)
    walks, bad = ocs_spines(net, 8, 24)               # leaf 2 -> leaf 6: no L row
    hs = np.array([w[1][2] for w in walks])
    assert not bad.any() and set(hs) == {0, 1} and abs(np.mean(hs == 1) - 2 / 3) < 0.03
    walks, bad = ocs_spines(net, 0, 32)               # Pod 0 -> Pod 2: no direct link
    assert not bad.any() and all(len(w) == 5 for w in walks)
    via = Counter((w[1][2], w[2][1]) for w in walks)  # (group, middle Pod)
    assert set(via) == {(0, 1), (1, 3)} and abs(via[0, 1] / len(walks) - 0.5) < 0.03
    assert all(w[2][2] == w[3][2] == w[1][2] for w in walks)


def test_ocs_intra_pod_unroutable_same_leaf():
    net = OcsNetwork(Cluster(FAB, 4), R0, ROUTES)
    walks, bad = ocs_spines(net, 0, 4)                # leaf 0 -> leaf 1, Pod 0
    assert not bad.any() and all(len(w) == 3 for w in walks)
    share = Counter(w[1][2] for w in walks)
    assert set(share) == {0, 1, 2, 3} and all(abs(c / len(walks) - 0.25) < 0.03 for c in share.values())
    A, bad = net.route_mask([0, 0, 64, 1], [64, 3, 67, 2], [5, 5, 5, 5])
    assert bad.tolist() == [True, False, False, False]    # Pod 4 has no link; same leaf; same leaf
    assert np.diff(A.indptr).tolist() == [0, 0, 0, 0]


def test_ocs_capacities_and_names():
    fab = Fabric(3, 4, 4, 2)                          # H = 2 spines, 2 leaves per Pod
    net = OcsNetwork(Cluster(fab, 4), sym_R(2, 3, [(0, 0, 1, 3)]), np.zeros((0, 4), int), 1600)
    assert net.n_links == 2 * 6 * 2 + 2
    assert np.all(net.capacity[:24] == 2 * 1600) and np.all(net.capacity[24:] == 3 * 1600)
    assert net.link_names([0, 3, 12, 24, 25]) == [
        "pod0.leaf0->pod0.spine0", "pod0.leaf1->pod0.spine1", "pod0.spine0->pod0.leaf0",
        "pod0.spine0->pod1.spine0", "pod1.spine0->pod0.spine0"]
    with pytest.raises(ValueError):
        OcsNetwork(Cluster(fab, 4), np.triu(sym_R(2, 3, [(0, 0, 1, 3)])), np.zeros((0, 4), int))


@st.composite
def ocs_cases(draw):
    P = draw(st.integers(2, 5))
    fab = Fabric(P, 4, 4, 1)
    H, nL = fab.H, fab.n_leaves
    links = draw(st.lists(st.tuples(st.integers(0, H - 1), st.integers(0, P - 1),
                                    st.integers(0, P - 1), st.integers(1, 3)), max_size=8))
    R = sym_R(H, P, [t for t in links if t[1] != t[2]])
    rows = draw(st.lists(st.tuples(st.integers(0, nL - 1), st.integers(0, nL - 1),
                                   st.integers(0, H - 1), st.integers(1, 3)), max_size=10))
    n = draw(st.integers(1, 30))
    flows = draw(st.lists(st.tuples(st.integers(0, fab.gpus - 1), st.integers(0, fab.gpus - 1),
                                    st.integers(-2 ** 62, 2 ** 62)), min_size=n, max_size=n))
    return fab, R, np.array(rows, dtype=np.int64).reshape(-1, 4), np.array(flows).T


@settings(max_examples=40, deadline=None)
@given(ocs_cases())
def test_ocs_routes_match_brute_force(case):
    fab, R, rows, (src, dst, key) = case
    net = OcsNetwork(Cluster(fab, 4), R, rows)
    A, bad = net.route_mask(src, dst, key)
    lpp = fab.leaves_per_pod
    for f, col in enumerate(columns(A)):
        a, b = src[f] // 4, dst[f] // 4
        i, j = a // lpp, b // lpp
        plan = {h for (x, y, h, c) in rows if {x, y} == {a, b} and R[h, i, j] > 0}
        direct = {h for h in range(fab.H) if R[h, i, j] > 0}
        two = {(h, k) for h in range(fab.H) for k in range(fab.pods) if R[h, i, k] and R[h, k, j]}
        expect_bad = i != j and not direct and not two
        assert bad[f] == expect_bad
        if a == b or expect_bad:
            assert len(col) == 0
            continue
        w = chain(edges(net, col), ("leaf", i, a % lpp), ("leaf", j, b % lpp))
        h = w[1][2]
        assert all(v[0] == "leaf" or v[2] == h for v in w)     # one spine group
        if i == j:
            assert len(w) == 3
        elif plan:
            assert len(w) == 4 and h in plan
        elif direct:
            assert len(w) == 4 and h in direct
        else:
            assert len(w) == 5 and (h, w[2][1]) in two
        caps = net.capacity[col]
        assert np.all(caps > 0)


def test_empty_flows_and_logical_solution_input():
    from instances.lumos.logical import LogicalSolution
    nets = [BestNetwork(Cluster(FAB, 4)), ClosNetwork(16, 4, 3, 100, gpus_per_server=2),
            OcsNetwork(Cluster(FAB, 4), R0, LogicalSolution(ROUTES))]
    for net in nets:
        A, bad = net.route_mask([], [], [])
        assert A.shape == (net.n_links, 0) and bad.shape == (0,)
    a = nets[2].route(np.zeros(50, int), np.full(50, 16), KEYS[:50])
    b = OcsNetwork(Cluster(FAB, 4), R0, ROUTES).route(np.zeros(50, int), np.full(50, 16), KEYS[:50])
    assert (a != b).nnz == 0
    with pytest.raises(ValueError):
        nets[1].route([0], [16], [0])                   # GPU id out of range
