"""Leaf-level requirement L = L1 + L2 (spec 2.10): hand-computed L on tiny placements, an
independent loop-based oracle on random placements, the K_leaf cap decision, and the
pipeline placement -> L -> lumos-logical heuristic and checker -> OCS configuration."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from heuristics.lumos.logical import heuristic_decomposition
from heuristics.lumos.mdmcf.reconfig import itv_configure
from heuristics.lumos.requirement import cap_share, job_requirement, leaf_requirement
from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.check import check_config
from instances.lumos.logical import LogicalInstance
from instances.lumos.placement import Cluster, Job, Placement
from toolkit.registry import problem


def sym(n, entries):
    L = np.zeros((n, n), dtype=np.int64)
    for a, b, v in entries:
        L[a, b] = L[b, a] = v
    return L


# ---------------------------------------------------------------------------------------
# hand-computed cases (expected matrices written from the spec 2.9/2.10 rules)
# ---------------------------------------------------------------------------------------
def test_hand_pp_pair_two_pods():
    """2 Pods x 2 leaves, one 8-GPU server per leaf, tau 2. PP = 2 stages on server 1
    (leaf 1, Pod 0) and server 2 (leaf 2, Pod 1): psi = [1, 1], matrix [[0], [1]]; one
    cross-Pod PP pair {1, 2}, TP = 8 units."""
    p = Placement(Cluster(Fabric(2, 8, 4, 2), 8), Job(16, tp=8, pp=2), np.arange(8, 24))
    assert np.array_equal(job_requirement(p), sym(4, [(1, 2, 8)]))


def test_hand_dp_ring_tau1_one_server_per_leaf():
    """tau 1, 4 leaves per Pod, one server per leaf: both kinds add TP/4 = 2. DP = 4 on
    leaves 2, 3 (Pod 0) and 4, 5 (Pod 1): row [0, 0, 1, 1] on leaves [2, 3, 4, 5]; the
    eq. (42) ring 2 -> 4 -> 5 -> 3 -> 2 crosses Pods at {2, 4} and {3, 5}."""
    p = Placement(Cluster(Fabric(2, 8, 4, 1), 8), Job(32, tp=8, dp=4), np.arange(16, 48))
    assert np.array_equal(job_requirement(p), sym(8, [(2, 4, 2), (3, 5, 2)]))


def test_hand_dp_ring_three_uneven_pods():
    """3 Pods x 2 leaves, 2 servers of 4 GPUs per leaf, tau 2 (DP unit TP/2 = 2).
    TP groups: Pod 0 servers 0, 1 (leaf 0), 2 (leaf 1); Pod 1 server 5 (leaf 2); Pod 2
    servers 9 (leaf 4), 11 (leaf 5). psi = [3, 1, 2] -> Pod order 1, 2, 0 -> row
    [1, 2, 2, 0, 0, 0] on leaves [2, 4, 5, 0, 0, 1]. Ring: first halves c0, c1, c3, c4,
    then c5, c2 -> leaves 2 4 0 0 1 5 (wrap to 2): cross pairs {2,4} {0,4} {1,5} {2,5}."""
    gpus = np.concatenate([np.arange(0, 12), np.arange(20, 24), np.arange(36, 40),
                           np.arange(44, 48)])
    p = Placement(Cluster(Fabric(3, 8, 4, 2), 4), Job(24, tp=4, dp=6), gpus)
    assert np.array_equal(job_requirement(p),
                          sym(6, [(2, 4, 2), (0, 4, 2), (1, 5, 2), (2, 5, 2)]))


def test_hand_cap_scales_the_new_job_and_marks_sharing():
    """PP = 2 x DP = 2 over all 4 servers: matrix [[0, 0], [1, 1]] on leaves [[0, 1], [2, 3]],
    L1 = 8 on {0, 2} and {1, 3}. A running job holds 2 on {0, 3}: leaves 0 and 3 have room
    6 for L1's 8, so s = 3/4 there; both entries become 8 * 3/4 = 6."""
    fab = Fabric(2, 8, 4, 2)
    p = Placement(Cluster(fab, 8), Job(32, tp=8, pp=2, dp=2), np.arange(32))
    L2 = sym(4, [(0, 3, 2)])
    r = leaf_requirement(p, [L2])
    assert not r.fits and r.sharing
    assert np.array_equal(r.L1_estimate, sym(4, [(0, 2, 8), (1, 3, 8)]))
    assert np.array_equal(r.L, sym(4, [(0, 2, 6), (1, 3, 6), (0, 3, 2)]))
    refused = leaf_requirement(p, [L2], cap="refuse")
    assert refused.L is None and not refused.fits and not refused.sharing
    ok = leaf_requirement(p, [])
    assert ok.fits and not ok.sharing and np.array_equal(ok.L, ok.L1_estimate)


def test_single_pod_job_needs_nothing_and_running_placements_count():
    cl = Cluster(Fabric(2, 8, 4, 2), 8)
    inside = Placement(cl, Job(16, tp=8, pp=2), np.arange(16))
    assert not job_requirement(inside).any()
    cross = Placement(cl, Job(16, tp=8, pp=2), np.arange(8, 24))
    r = leaf_requirement(inside, [cross])
    assert np.array_equal(r.L2, job_requirement(cross)) and np.array_equal(r.L, r.L2)


def test_invalid_running_requirement_is_named():
    cl = Cluster(Fabric(2, 8, 4, 2), 8)
    p = Placement(cl, Job(8, tp=8), np.arange(8))
    with pytest.raises(InstanceError, match="running"):
        leaf_requirement(p, [sym(4, [(0, 1, 1)])])                 # same-Pod entry
    with pytest.raises(InstanceError, match="running"):
        leaf_requirement(p, [sym(4, [(0, 2, 5)]), sym(4, [(0, 3, 5)])])   # leaf 0 over cap


def test_cap_share_largest_remainder():
    """Leaf 0 has room 3 for 4 units over {0,2} (1) and {0,3} (3): s_0 = 3/4 -> 0.75 and
    2.25 -> floors 0 and 2, one unit of room left, given to the larger remainder (0.75)."""
    L1 = sym(4, [(0, 2, 1), (0, 3, 3)])
    L2 = sym(4, [(0, 1, 0)])
    out = cap_share(L1, L2, 3)
    assert np.array_equal(out, sym(4, [(0, 2, 1), (0, 3, 2)]))


# ---------------------------------------------------------------------------------------
# independent oracle: the spec's rules in plain loops
# ---------------------------------------------------------------------------------------
def oracle_L1(p: Placement) -> np.ndarray:
    cl, job = p.cluster, p.job
    groups = [list(p.gpus[k:k + job.tp]) for k in range(0, len(p.gpus), job.tp)]
    by_pod = {}
    for g in groups:
        by_pod.setdefault(int(g[0]) // cl.gpus_per_pod, []).append(int(g[0]) // cl.fabric.k_leaf)
    pods = sorted(by_pod, key=lambda i: (len(by_pod[i]), i))
    seq = [i for i in pods for _ in by_pod[i]]
    nxt = {i: 0 for i in pods}
    pod, leaf = [[None] * job.dp for _ in range(job.pp)], [[None] * job.dp for _ in range(job.pp)]
    for k, i in enumerate(seq):
        r, c = divmod(k, job.dp)
        pod[r][c], leaf[r][c] = i, by_pod[i][nxt[i]]
        nxt[i] += 1
    pp, dp = set(), set()
    for r in range(job.pp - 1):
        for c in range(job.dp):
            if pod[r][c] != pod[r + 1][c]:
                pp.add(frozenset((leaf[r][c], leaf[r + 1][c])))
    for r in range(job.pp):
        order = []
        for i in dict.fromkeys(pod[r]):
            members = [c for c in range(job.dp) if pod[r][c] == i]
            order.append(members)
        ring = [m for ms in order for m in ms[:(len(ms) + 1) // 2]]
        ring += [m for ms in reversed(order) for m in reversed(ms[(len(ms) + 1) // 2:])]
        for k in range(len(ring)) if job.dp > 1 else []:
            a, b = ring[k], ring[(k + 1) % len(ring)]
            if pod[r][a] != pod[r][b]:
                dp.add(frozenset((leaf[r][a], leaf[r][b])))
    one = cl.fabric.tau == 1 and cl.servers_per_leaf == 1
    u_pp, u_dp = (max(1, job.tp // 4),) * 2 if one else (job.tp, max(1, job.tp // 2))
    L = np.zeros((cl.fabric.n_leaves,) * 2, dtype=np.int64)
    for pairs, u in ((pp, u_pp), (dp, u_dp)):
        for s in pairs:
            a, b = sorted(s)
            L[a, b] += u
            L[b, a] += u
    return L


@hs.composite
def scenarios(draw):
    """A random cluster (2-4 Pods) and up to 4 jobs placed on disjoint random TP slots."""
    P = draw(hs.integers(2, 4))
    tau = draw(hs.sampled_from([1, 2]))
    k_leaf = draw(hs.sampled_from([8, 16]))
    k_spine = draw(hs.sampled_from([2, 4, 8]))
    T = draw(hs.sampled_from([2, 4, 8]))
    cl = Cluster(Fabric(P, k_leaf, k_spine, tau), T)
    rng = np.random.default_rng(draw(hs.integers(0, 2**32 - 1)))
    free = np.ones(cl.n_gpus, dtype=bool)
    placements = []
    for _ in range(draw(hs.integers(1, 4))):
        tp = int(rng.choice([d for d in (1, 2, 4, 8) if T % d == 0]))
        slots = np.flatnonzero(free.reshape(-1, tp).all(axis=1))
        if len(slots) == 0:
            break
        pp = int(rng.integers(1, 5))
        dp = int(rng.integers(1, max(2, len(slots) // pp + 1)))
        while pp * dp > len(slots):
            pp, dp = (pp - 1, dp) if pp > 1 else (pp, dp - 1)
        take = rng.choice(slots, pp * dp, replace=False)
        gpus = (take[:, None] * tp + np.arange(tp)).ravel()
        free[gpus] = False
        placements.append(Placement(cl, Job(len(gpus), tp=tp, pp=pp, dp=dp), gpus))
    return cl, placements


SCEN = settings(max_examples=60, deadline=None)
LOGICAL_CHECK = problem("lumos-logical").check


@SCEN
@given(scenarios())
def test_random_placements_match_oracle_and_feed_lumos_logical(scenario):
    """Jobs admitted in turn (each running job contributes its admitted L1): L1 estimate
    equals the oracle; L = L1 + L2 is a valid lumos-logical requirement; the cap holds,
    sharing iff the estimate did not fit, the scaled L1 never exceeds the estimate; the
    lumos-logical heuristic's split passes the checker (contention-free at tau = 2)."""
    cl, placements = scenario
    fab = cl.fabric
    running = []
    for p in placements:
        r = leaf_requirement(p, running)
        assert np.array_equal(r.L1_estimate, oracle_L1(p))
        assert np.array_equal(r.L, r.L1 + r.L2) and np.array_equal(r.L2, sum(running, 0 * r.L1))
        assert np.all(r.L.sum(axis=1) <= fab.k_leaf)
        assert np.all((0 <= r.L1) & (r.L1 <= r.L1_estimate))
        fits = bool(np.all((r.L1_estimate + r.L2).sum(axis=1) <= fab.k_leaf))
        assert r.fits == fits and r.sharing == (not fits)
        assert fits or r.L1.sum() < r.L1_estimate.sum()          # sharing really gave up paths
        on = np.isin(np.arange(fab.n_leaves), p.leaves())
        assert not r.L1_estimate[~on].any() and not r.L1_estimate[:, ~on].any()
        inst = LogicalInstance(fab, r.L)
        bad, m = LOGICAL_CHECK(inst, heuristic_decomposition(inst))
        assert bad == []
        if fab.tau == 2:
            assert m["contention_free"]
        refused = leaf_requirement(p, running, cap="refuse")
        assert (refused.L is None) == (not fits)
        running.append(r.L1)


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("k_leaf", [8, 16])
def test_pipeline_job_to_ocs_configuration(P, k_leaf):
    """Hand-made placements at 2-4 Pods (2 leaves per Pod, servers of 4 GPUs): a running
    job on server 0 of Pods 0 and 1 (PP pair on leaves 0, 2), a new job (PP = P, DP = 2)
    on the second server of both leaves of every Pod: PP pairs {2i, 2i+2}, {2i+1, 2i+3}.
    Leaf 2 then needs 4 (old) + 4 + 4 (P >= 3): over k_leaf = 8, so the new job shares.
    L -> logical topology (heuristic + checker) -> Cross-Wiring OCS configuration
    (ITV-MDMCF + checker)."""
    fab = Fabric(P, k_leaf, 4, 2)
    cl = Cluster(fab, 4)
    spl, S = cl.servers_per_leaf, cl.gpus_per_pod // 4
    server = lambda s: np.arange(4 * s, 4 * s + 4)
    old = Placement(cl, Job(8, tp=4, pp=2), np.concatenate([server(0), server(S)]))
    new_servers = [s for i in range(P) for s in (i * S + 1, i * S + spl + 1)]
    new = Placement(cl, Job(8 * P, tp=4, pp=P, dp=2),
                    np.concatenate([server(s) for s in new_servers]))
    r0 = leaf_requirement(old, [])
    assert np.array_equal(r0.L1, sym(fab.n_leaves, [(0, 2, 4)]))
    r = leaf_requirement(new, [r0.L1])
    want = sym(fab.n_leaves, [(a, a + 2, 4) for a in range(2 * P - 2)])
    assert np.array_equal(r.L1_estimate, want)
    assert r.fits == (k_leaf == 16 or P == 2) and r.sharing == (not r.fits)
    inst = LogicalInstance(fab, r.L)
    sol = heuristic_decomposition(inst)
    bad, m = LOGICAL_CHECK(inst, sol)
    assert bad == [] and m["contention_free"]
    rec = ReconfigInstance(fab, sol.topology(fab), "cross")
    bad, _ = check_config(rec, itv_configure(rec))
    assert bad == []


def test_bad_running_arrays_name_the_job():
    p = Placement(Cluster(Fabric(2, 8, 4, 2), 8), Job(8, tp=8), np.arange(8))
    with pytest.raises(InstanceError, match=r"running\[1\]"):
        leaf_requirement(p, [sym(4, [(0, 2, 1)]), np.zeros((3, 3), dtype=int)])
    with pytest.raises(InstanceError, match=r"running\[0\]\[0\]\[2\]"):
        leaf_requirement(p, [sym(4, [(0, 2, 1)]) * 0.5])
    with pytest.raises(ValueError, match="cap"):
        leaf_requirement(p, [], cap="scale")
