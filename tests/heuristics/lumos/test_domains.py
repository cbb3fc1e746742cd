"""Rank arrangement and communication domains (spec 2.9; [002] A.5-A.7): the verified
properties of eqs. (42)-(44) and of the A.6 PP/DP domain fill."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from heuristics.lumos.domains import (alltoall_op, alltoall_pod_clash, bidirectional_links, c_link,
                                      domain_fill, hierarchical_ring_pod_flows,
                                      hierarchical_ring_rank, ring_allreduce_rank, ring_next,
                                      ring_order, ring_pod_flows)

FAST = settings(max_examples=60, deadline=None)


def ring_flows(G, P, N):
    """Pod flows of one ring step for the rank mapping G (rank -> ring position)."""
    order = np.empty_like(G)
    order[G] = np.arange(len(G))
    return ring_pod_flows(order // N, P)


@pytest.mark.parametrize("P", range(2, 9))
@pytest.mark.parametrize("N", [2, 4, 6, 8, 16])
def test_eq42_one_flow_each_way_between_adjacent_pods(P, N):
    G = ring_allreduce_rank(P, N)
    assert sorted(G.tolist()) == list(range(N * P))              # a permutation
    F = ring_flows(G, P, N)
    want = np.zeros((P, P), dtype=int)
    for p in range(P - 1):
        want[p, p + 1] = want[p + 1, p] = 1
    assert np.array_equal(F, want)
    assert c_link(F) <= 1 and bidirectional_links(F) == P - 1


@pytest.mark.parametrize("P", range(3, 9))
def test_unarranged_ring_wastes_half_of_each_link(P):
    """Identity ranks: P one-way flows, each needing its own bidirectional link."""
    N = 4
    F = ring_flows(np.arange(N * P), P, N)
    assert not np.array_equal(F, F.T) and bidirectional_links(F) == P


def test_eq42_rejects_odd_N():
    with pytest.raises(ValueError):
        ring_allreduce_rank(3, 3)


@pytest.mark.parametrize("P,N", [(P, N) for P in range(1, 7) for N in (2, 4, 8)])
def test_ring_order_equals_eq42_on_equal_even_pods(P, N):
    order = ring_order(np.repeat(np.arange(P), N))
    G = np.empty_like(order)
    G[order] = np.arange(len(order))
    assert np.array_equal(G, ring_allreduce_rank(P, N))


def test_ring_order_by_hand():
    # Pods in first-appearance order 5, 3, 7; first halves [0], [2, 3], [5]; then the rest
    # [1] of Pod 5 and [4] of Pod 3, reversed Pod order: 4, 1
    assert ring_order([5, 5, 3, 3, 3, 7]).tolist() == [0, 2, 3, 5, 4, 1]


@FAST
@given(sizes=hs.lists(hs.integers(1, 7), min_size=1, max_size=7), seed=hs.integers(0, 2**31))
def test_ring_order_uneven_pods(sizes, seed):
    """Any Pod sizes: a permutation, C_link <= 1, forward crossings only between Pods
    adjacent in first-appearance order; with every Pod >= 2 members, exactly one flow each
    way between adjacent Pods and nothing else."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(50)[:len(sizes)]
    pod = np.repeat(labels, sizes)
    order = ring_order(pod)
    assert sorted(order.tolist()) == list(range(len(pod)))
    rank = {lab: k for k, lab in enumerate(labels)}
    r = np.array([rank[x] for x in pod[order]])
    P = len(sizes)
    F = ring_pod_flows(r, P)
    assert c_link(F) <= 1
    up = np.triu(F, 1)
    assert all(j == i + 1 for i, j in zip(*np.nonzero(up)))      # low -> high only to the next
    if min(sizes) >= 2:
        want = np.zeros((P, P), dtype=int)
        for p in range(P - 1):
            want[p, p + 1] = want[p + 1, p] = 1
        assert np.array_equal(F, want)


def test_ring_next_by_hand():
    # row 0 is the ring_order case above: ring 0 2 3 5 4 1 (-> 0); row 1 one Pod of 6:
    # fronts 0 1 2, then backs reversed 5 4 3 (-> 0)
    nxt = ring_next([[5, 5, 3, 3, 3, 7], [1, 1, 1, 1, 1, 1]])
    assert nxt.tolist() == [[2, 0, 3, 5, 1, 4], [1, 2, 5, 0, 3, 4]]
    assert ring_next([[4], [9]]).tolist() == [[0], [0]]


@FAST
@given(rows=hs.integers(1, 5), n=hs.integers(1, 9), seed=hs.integers(0, 2**31))
def test_ring_next_is_ring_order_per_row(rows, n, seed):
    """Every row's successors are those of ``ring_order`` of that row, any labels, any
    interleaving (sorted rows and shuffled ones)."""
    rng = np.random.default_rng(seed)
    pod = rng.integers(0, 4, (rows, n)) * 7 - 3
    if seed % 2:
        pod = np.sort(pod, axis=1)
    nxt = ring_next(pod)
    for r in range(rows):
        o = ring_order(pod[r])
        want = np.empty(n, dtype=np.int64)
        want[o] = np.roll(o, -1)
        assert np.array_equal(nxt[r], want)


@pytest.mark.parametrize("P", range(2, 8))
@pytest.mark.parametrize("N", [2, 4, 8])
def test_eq43_hierarchical_ring_balanced(P, N):
    G = hierarchical_ring_rank(P, N)
    F = hierarchical_ring_pod_flows(G, P, N)
    assert np.array_equal(F, F.T)                                  # both directions used
    ring = np.zeros((P, P), dtype=bool)
    for p in range(P):
        ring[p, (p + 1) % P] = ring[(p + 1) % P, p] = True
    assert np.all(F[~ring] == 0)                                   # only ring neighbours
    per_pair = N if P == 2 else N // 2
    assert np.all(F[ring] == per_pair)
    # all lanes forwards (no arrangement): one-way flows, twice the bidirectional links
    Ffwd = hierarchical_ring_pod_flows(np.tile(np.arange(P)[:, None], (1, N)).ravel(), P, N)
    if P > 2:
        assert not np.array_equal(Ffwd, Ffwd.T)
        assert bidirectional_links(Ffwd) == 2 * bidirectional_links(F)


def test_eq43_reads_P_minus_p0_mod_P():
    assert hierarchical_ring_rank(4, 2).tolist() == [0, 0, 1, 3, 2, 2, 3, 1]


@FAST
@given(P=hs.integers(1, 24), N=hs.integers(1, 24))
def test_eq44_clash_iff_more_gpus_than_pods(P, N):
    assert alltoall_pod_clash(P, N) == (N > P)


@pytest.mark.parametrize("P,N", [(P, N) for P in range(1, 9) for N in range(1, 9)])
def test_eq44_visits_every_destination_once_and_clash_iff(P, N):
    op = alltoall_op(P, N)
    assert op.shape == (N * P, N * P)
    assert np.all(np.sort(op, axis=1) == np.arange(N * P))         # each destination once
    # clash computed independently: per phase, per Pod, destination Pods with repeats
    clash = False
    for t in range(N * P):
        for p0 in range(P):
            dests = [op[p0 * N + n0, t] // N for n0 in range(N)]
            clash |= len(set(dests)) < N
    assert clash == (N > P) == alltoall_pod_clash(P, N)


def test_eq44_by_hand():
    # P = 2, N = 2: Op(p0*2 + n0, t) = (3 p0 + 2 n0 + t - 1) % 4
    assert alltoall_op(2, 2).tolist() == [[0, 1, 2, 3], [2, 3, 0, 1], [3, 0, 1, 2], [1, 2, 3, 0]]


def test_domain_fill_by_hand():
    # Pods sorted ascending by psi: Pod 1 (6) then Pod 2 (10); filled row by row
    M = domain_fill([0, 6, 10, 0], 4, 4)
    assert M.tolist() == [[1, 1, 1, 1], [1, 1, 2, 2], [2, 2, 2, 2], [2, 2, 2, 2]]
    assert domain_fill([3, 0, 3], 2, 3).tolist() == [[0, 0, 0], [2, 2, 2]]   # tie: Pod id


def test_domain_fill_rejects_wrong_total():
    with pytest.raises(ValueError):
        domain_fill([1, 2], 2, 2)


@FAST
@given(psi=hs.lists(hs.integers(0, 12), min_size=1, max_size=6), dp=hs.integers(1, 8))
def test_domain_fill_properties(psi, dp):
    """Counts per Pod; one row-major run per Pod in ascending-psi order; each PP domain
    (column) meets the Pods in that order, so it crosses at most k - 1 Pod boundaries
    (at most DP cross-Pod PP pairs for a job in two Pods); at most k - 1 split rows."""
    total = sum(psi)
    pp = -(-total // dp) if total else 1
    psi = list(psi) + [pp * dp - total]                     # pad a last Pod to fill the matrix
    M = domain_fill(psi, pp, dp)
    assert M.shape == (pp, dp)
    assert np.array_equal(np.bincount(M.ravel(), minlength=len(psi)), psi)
    used = [i for i in range(len(psi)) if psi[i]]
    k = len(used)
    order = sorted(used, key=lambda i: (psi[i], i))
    flat = M.ravel()
    runs = [flat[0]] + [b for a, b in zip(flat[:-1], flat[1:]) if a != b]
    assert runs == order
    rank = {p: r for r, p in enumerate(order)}
    R = np.vectorize(rank.get)(M)
    assert np.all(np.diff(R, axis=0) >= 0)                  # columns follow the order
    cross_pp = int(np.count_nonzero(M[1:] != M[:-1]))
    assert cross_pp <= (k - 1) * dp
    if k == 2:
        assert cross_pp <= dp
    assert int(np.count_nonzero(M.min(axis=1) != M.max(axis=1))) <= k - 1
