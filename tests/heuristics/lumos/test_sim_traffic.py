"""Flows of placed jobs for the LumosCore simulator (spec 4.2): hand-written flow lists for
tiny jobs, counts and loop-based oracles on random placements, the cross-Pod leaf pairs of
the class-0 flows equal to the requirement's (the shared A.6 arrangement), the hash key."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

from heuristics.lumos.requirement import job_pairs
from heuristics.lumos.sim.traffic import (ALLTOALL, COLLECTIVE, Flows, collective_pairs, job_flows,
                                         splitmix64)
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job, Placement

M64 = 2 ** 64 - 1


def rows_pairs(src, dst) -> list[tuple]:
    return sorted(zip(np.asarray(src).tolist(), np.asarray(dst).tolist()))


def rows(f: Flows, cls: int) -> list[tuple]:
    m = f.cls == cls
    return sorted(zip(f.src[m].tolist(), f.dst[m].tolist(), f.weight[m].tolist(),
                      f.fanout[m].tolist()))


def splitmix_oracle(x: int) -> int:
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def test_splitmix64_known_values():
    """First three outputs of SplitMix64 from state 0, and the big-int oracle elsewhere."""
    gamma = 0x9E3779B97F4A7C15
    got = splitmix64(np.array([0, gamma, 2 * gamma & M64], dtype=np.uint64)).view(np.uint64)
    assert got.tolist() == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    xs = [5 << 32, (2 ** 32 - 1 << 32) + 17, M64]
    assert splitmix64(np.array(xs, dtype=np.uint64)).view(np.uint64).tolist() == \
        [splitmix_oracle(x) for x in xs]


# ---------------------------------------------------------------------------------------
# hand-written flow lists
# ---------------------------------------------------------------------------------------
def test_hand_tp2_pp2_dp2_ep4():
    """2 Pods x 2 leaves of 8 GPUs, servers of 2. TP groups [6,7] (leaf 0), [8,9] (leaf 1)
    in Pod 0, [16,17] (leaf 2), [24,25] (leaf 3) in Pod 1: psi = [2, 2], matrix
    [[Pod 0, Pod 0], [Pod 1, Pod 1]]: stage 0 = groups [6,7], [8,9]; stage 1 = [16,17],
    [24,25]. DP rings of 2 per stage and lane; PP both ways per replica and lane; every GPU
    sends 1 DP + 1 PP flow (fanout 2). EP domains [6..9], [16,17,24,25]: per source one row
    to the other leaf (weight 2, lowest id); the own-leaf peer is on the source's server."""
    cl = Cluster(Fabric(2, 8, 4, 2), 2)
    p = Placement(cl, Job(8, tp=2, pp=2, dp=2, ep=4), np.array([6, 7, 8, 9, 16, 17, 24, 25]))
    f = job_flows(p, 3)
    dp = [(6, 8), (8, 6), (7, 9), (9, 7), (16, 24), (24, 16), (17, 25), (25, 17)]
    pp = [(6, 16), (16, 6), (7, 17), (17, 7), (8, 24), (24, 8), (9, 25), (25, 9)]
    assert rows(f, COLLECTIVE) == sorted((a, b, 1, 2) for a, b in dp + pp)
    # each source's own-leaf peer shares its server (NVLink): only the other leaf's two
    ep = [(6, 8, 2), (7, 8, 2), (8, 6, 2), (9, 6, 2), (16, 24, 2), (17, 24, 2), (24, 16, 2),
          (25, 16, 2)]
    assert rows(f, ALLTOALL) == sorted((a, b, w, 2) for a, b, w in ep)
    assert f.cls.tolist() == [0] * 16 + [1] * 8                # DP, PP, then EP


def test_hand_dp6_ring_three_uneven_pods():
    """The requirement test's layout (3 Pods, servers of 4, TP 4, DP 6): groups g0 = 0-3,
    g1 = 4-7, g2 = 8-11 (Pod 0), g3 = 20-23 (Pod 1), g4 = 36-39, g5 = 44-47 (Pod 2);
    psi = [3, 1, 2] -> row [1, 2, 2, 0, 0, 0] = groups [g3, g4, g5, g0, g1, g2]; eq. (42)
    ring c0 c1 c3 c4 c5 c2 = g3 -> g4 -> g0 -> g1 -> g2 -> g5 -> g3, lane by lane.
    No PP, no EP: fanout 1."""
    gpus = np.concatenate([np.arange(0, 12), np.arange(20, 24), np.arange(36, 40),
                           np.arange(44, 48)])
    p = Placement(Cluster(Fabric(3, 8, 4, 2), 4), Job(24, tp=4, dp=6), gpus)
    f = job_flows(p, 0)
    ring = [20, 36, 0, 4, 8, 44]
    want = [(ring[k] + lane, ring[(k + 1) % 6] + lane, 1, 1) for k in range(6) for lane in range(4)]
    assert rows(f, COLLECTIVE) == sorted(want) and len(f) == 24


def test_single_gpu_and_pure_tp_jobs_have_no_flows():
    cl = Cluster(Fabric(2, 8, 4, 2), 8)
    for job, g in ((Job(1), [5]), (Job(8, tp=8), range(8, 16))):
        f = job_flows(Placement(cl, job, np.array(list(g))), 1)
        assert len(f) == 0 and all(len(getattr(f, k)) == 0 for k in
                                   ("dst", "weight", "fanout", "cls", "key"))


def test_concat_and_job_id_range():
    cl = Cluster(Fabric(2, 8, 4, 2), 2)
    p = Placement(cl, Job(8, tp=2, pp=2, dp=2, ep=4), np.arange(8, 16))
    a, b = job_flows(p, 0), job_flows(p, 1)
    c = Flows.concat([a, b])
    assert len(c) == len(a) + len(b)
    assert np.array_equal(c.src, np.concatenate([a.src, b.src]))
    assert np.array_equal(c.key[len(a):], b.key) and c.cls.dtype == a.cls.dtype
    assert len(Flows.concat([])) == 0
    assert not np.intersect1d(a.key, b.key).size               # keys differ between jobs
    for bad in (-1, 2 ** 32):
        try:
            job_flows(p, bad)
        except ValueError:
            continue
        raise AssertionError(f"job_id {bad} accepted")


# ---------------------------------------------------------------------------------------
# random placements: counts, oracles, the requirement's pairs
# ---------------------------------------------------------------------------------------
@hs.composite
def placements(draw):
    """A random cluster (2-4 Pods) and one job on random free TP slots, with EP."""
    P = draw(hs.integers(2, 4))
    tau = draw(hs.sampled_from([1, 2]))
    k_leaf = draw(hs.sampled_from([8, 16]))
    k_spine = draw(hs.sampled_from([2, 4, 8]))
    T = draw(hs.sampled_from([2, 4, 8]))
    cl = Cluster(Fabric(P, k_leaf, k_spine, tau), T)
    rng = np.random.default_rng(draw(hs.integers(0, 2 ** 32 - 1)))
    tp = int(rng.choice([d for d in (1, 2, 4, 8) if T % d == 0]))
    slots = cl.n_gpus // tp
    pp = int(rng.integers(1, 5))
    dp = int(rng.integers(1, max(2, slots // pp + 1)))
    while pp * dp > slots:
        pp, dp = (pp - 1, dp) if pp > 1 else (pp, dp - 1)
    n = tp * pp * dp
    ep = int(rng.choice([e for e in (1, 2, 4, 8, 16) if n % e == 0]))
    take = rng.choice(slots, pp * dp, replace=False)
    gpus = (take[:, None] * tp + np.arange(tp)).ravel()
    return Placement(cl, Job(n, tp=tp, pp=pp, dp=dp, ep=ep), gpus), int(rng.integers(2 ** 32))


def ep_oracle(p: Placement) -> list[tuple]:
    """EP rows by plain loops: per source and destination leaf, weight and lowest GPU."""
    out = []
    if p.job.ep == 1:
        return out
    srv = p.cluster.server_of
    for dom in p.ep_domains().tolist():
        for s in dom:
            by_leaf = {}
            for d in dom:
                if srv(d) != srv(s):                  # same server: NVLink, no row
                    by_leaf.setdefault(int(p.cluster.leaf_of(d)), []).append(d)
            fan = sum(len(ds) for ds in by_leaf.values())
            out += [(s, min(ds), len(ds), fan) for ds in by_leaf.values()]
    return sorted(out)


@settings(max_examples=80, deadline=None)
@given(placements())
def test_random_placements(case):
    p, job_id = case
    job, cl = p.job, p.cluster
    f = job_flows(p, job_id)
    n = len(f)
    assert all(len(getattr(f, k)) == n for k in ("dst", "weight", "fanout", "cls", "key"))
    c = f.cls == COLLECTIVE
    # all class-0 pairs: DP pp * tp * dp (dp > 1), PP 2 * dp * tp * (pp - 1); the rows are
    # those off the source's server (NVLink carries the rest), class 0 first
    n_dp = job.pp * job.tp * job.dp if job.dp > 1 else 0
    ps, pd_ = collective_pairs(p)
    assert len(ps) == n_dp + 2 * job.dp * job.tp * (job.pp - 1)
    off = cl.server_of(ps) != cl.server_of(pd_)
    assert rows_pairs(f.src[c], f.dst[c]) == rows_pairs(ps[off], pd_[off])
    assert np.all(cl.server_of(f.src) != cl.server_of(f.dst))
    assert np.all(np.diff(f.cls) >= 0)
    # members of the job, no self flows, class-0 rows weight 1 and fanout = rows sent
    assert np.isin(f.src, p.gpus).all() and np.isin(f.dst, p.gpus).all()
    assert np.all(f.src != f.dst)
    assert np.all(f.weight[c] == 1)
    sent = {g: 0 for g in p.gpus.tolist()}
    for s in f.src[c].tolist():
        sent[s] += 1
    assert f.fanout[c].tolist() == [sent[s] for s in f.src[c].tolist()]
    # DP pairs: every GPU sends and receives exactly one; each (stage, lane) ring is a cycle
    if n_dp:
        s, d = ps[:n_dp], pd_[:n_dp]
        assert np.array_equal(np.sort(s), p.gpus) and np.array_equal(np.sort(d), p.gpus)
        nxt = dict(zip(s.tolist(), d.tolist()))
        start = int(s[0])
        g, steps = nxt[start], 1
        while g != start:
            g, steps = nxt[g], steps + 1
        assert steps == job.dp
    # EP rows equal the loop oracle; weights per source sum to its fanout (off-server peers)
    assert rows(f, ALLTOALL) == ep_oracle(p)
    if job.ep > 1 and (~c).any():
        tot = np.bincount(np.searchsorted(p.gpus, f.src[~c]), f.weight[~c], len(p.gpus))
        assert np.all(tot[np.searchsorted(p.gpus, f.src[~c])] == f.fanout[~c])
    # cross-Pod leaf pairs of class-0 flows = the requirement's PP and DP pairs (unordered)
    a, b = cl.leaf_of(f.src[c]), cl.leaf_of(f.dst[c])
    cross = cl.pod_of(f.src[c]) != cl.pod_of(f.dst[c])
    got = {tuple(sorted(x)) for x in zip(a[cross].tolist(), b[cross].tolist())}
    pp_pairs, dp_pairs = job_pairs(p)
    assert got == {tuple(x) for x in np.concatenate([pp_pairs, dp_pairs]).tolist()}
    # keys: distinct, the splitmix64 of job_id * 2^32 + row, deterministic
    assert len(np.unique(f.key)) == n
    if n:
        k = n - 1
        assert int(f.key[k].view(np.uint64)) == splitmix_oracle((job_id << 32) + k)
    assert np.array_equal(job_flows(p, job_id).key, f.key)


def test_large_job_counts():
    """The 2048-GPU job of the brief (tp 8, pp 16, dp 16, ep 64) over 16 Pods of 256."""
    cl = Cluster(Fabric(16, 32, 32, 2), 8)
    p = Placement(cl, Job(2048, tp=8, pp=16, dp=16, ep=64), np.arange(1024, 3072))
    f = job_flows(p, 7)
    c = f.cls == COLLECTIVE
    assert c.sum() == 16 * 8 * 16 + 2 * 16 * 8 * 15
    assert set(f.fanout[c].tolist()) == {2, 3}                 # end stages 1 DP + 1 PP
    w = np.bincount(f.src[~c] - 1024, f.weight[~c], 2048)
    assert np.all(w == 56) and np.all(f.fanout[~c] == 56)     # 63 peers, 7 on the server
    assert (~c).sum() == 2048 * 2                              # 64 GPUs = 2 leaves of 32


def test_alltoall_weights_of_a_source_are_its_off_server_domain_peers():
    """tp = 8, ep = 16 over two servers per domain: each source's rows carry the 8 peers on
    the other server, not ep - 1 = 15 (its 7 server-mates ride NVLink)."""
    from heuristics.lumos.sim.traffic import alltoall_rows

    cl = Cluster(Fabric(2, 16, 16, 2), 8)
    p = Placement(cl, Job(32, tp=8, pp=1, dp=4, ep=16), np.r_[0:16, 128:144])
    src, _, w = alltoall_rows(p)
    per_src = np.bincount(src, w, cl.n_gpus)[p.gpus]
    assert np.array_equal(per_src, np.full(32, 8.0))
