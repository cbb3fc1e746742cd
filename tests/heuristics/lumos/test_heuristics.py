"""LumosCore decompositions, realization, reconfiguration and logical-topology heuristics."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from heuristics.lumos.baselines import helios, uniform_greedy
from heuristics.lumos.mdmcf.decompose import (find_connection, int_bounds_hold, int_decompose,
                                        sym_bounds_hold, sym_decompose, sym_decompose_flow,
                                        sym_decompose_rewiring)
from heuristics.lumos.mdmcf.kempe import kempe_connection
from heuristics.lumos.logical import greedy_assign, heuristic_decomposition
from heuristics.lumos.realize import odd_set_certificate, realize
from heuristics.lumos.mdmcf.reconfig import itv_configure
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.logical import LogicalInstance, LogicalSolution
from instances.lumos.check import check_config, check_logical
from toolkit.methods.lumos_reconfig import rewiring_bound
from instances.lumos.workloads import job_sequence, random_requirement, random_topology, \
    topology_sequence

TRIANGLE = np.array([[[0, 1, 1], [1, 0, 1], [1, 1, 0]]])


@st.composite
def sym_matrices(draw, max_n=9, max_v=5):
    n = draw(st.integers(1, max_n))
    vals = draw(st.lists(st.integers(0, max_v), min_size=n * n, max_size=n * n))
    M = np.array(vals).reshape(n, n)
    C = np.triu(M, 1)
    C = C + C.T
    C[np.diag_indices(n)] = 2 * (np.diag(M) % 3)           # even diagonal
    return C


def partial_perms(parts):
    return all(X.min() >= 0 and X.sum(0).max(initial=0) <= 1 and X.sum(1).max(initial=0) <= 1
               for X in parts)


# ----------------------------------------------------------------------------------------
# decomposition theorems
# ----------------------------------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(C=sym_matrices())
def test_simd_bounds_hold_for_every_algorithm(C):
    for A in (sym_decompose(C), sym_decompose_flow(C)):
        assert sym_bounds_hold(C, A)


@settings(max_examples=60, deadline=None)
@given(C=sym_matrices(), seed=st.integers(0, 10 ** 6))
def test_rewiring_aware_simd_is_optimal_and_within_bounds(C, seed):
    rng = np.random.default_rng(seed)
    A_old = rng.integers(0, 4, size=C.shape)
    A = sym_decompose_rewiring(C, A_old)
    assert sym_bounds_hold(C, A)
    off = ~np.eye(len(C), dtype=bool)
    # no other valid decomposition is closer: compare with the oblivious ones
    for B in (sym_decompose(C), sym_decompose_flow(C)):
        assert np.abs(A - A_old)[off].sum() <= np.abs(B - A_old)[off].sum()
    assert np.array_equal(sym_decompose_rewiring(C, A), A)        # already optimal: unchanged
    cap = int(-(-C.sum(1).max(initial=0) // 2)) + 1
    Ar = sym_decompose_rewiring(C, A_old, cap)                    # relaxed (MDMCF) bounds
    assert np.array_equal(Ar + Ar.T, C) and Ar.sum(1).max(initial=0) <= cap
    assert np.abs(Ar - A_old)[off].sum() <= np.abs(A - A_old)[off].sum()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 7), m=st.integers(1, 7), H=st.integers(1, 6), seed=st.integers(0, 10 ** 6))
def test_imd_bounds_hold_on_random_matrices(n, m, H, seed):
    M = np.random.default_rng(seed).integers(0, 9, size=(n, m))
    assert int_bounds_hold(M, int_decompose(M, H))


@settings(max_examples=40, deadline=None)
@given(P=st.integers(2, 10), K=st.sampled_from([2, 4, 8]), seed=st.integers(0, 10 ** 6))
def test_find_connection_and_kempe_split_into_partial_permutations(P, K, seed):
    fab = Fabric(P, 2, K, 1)
    seq = topology_sequence(fab, 2, "rings", 0.5, seed)
    A_old = sym_decompose(seq[0][0])
    old = np.array(int_decompose(A_old, K // 2))
    A = sym_decompose_rewiring(seq[1][0], A_old, K // 2)
    for fn in (find_connection, kempe_connection):
        parts = fn(A, old)
        assert np.array_equal(sum(parts), A) and partial_perms(parts)
        # target = old sum: the old configuration comes back unchanged (zero rewiring)
        same = fn(old.sum(0), old)
        assert all(np.array_equal(x, o) for x, o in zip(same, old))


# ----------------------------------------------------------------------------------------
# realization under each wiring
# ----------------------------------------------------------------------------------------
def test_three_pod_full_mesh_uniform_fails_cross_succeeds():
    """[001] Fig. 1 / [002] Fig. 4: a triangle needs 3 matchings, Uniform has 2 OCSes."""
    fab = Fabric(3, 2, 2, tau=2)
    uni = realize(fab, TRIANGLE, "uniform")
    assert uni.realizable is False and uni.config is None
    assert uni.certificates[0]["odd_set"] == [0, 1, 2]
    for w in ("cross", "dual"):
        r = realize(fab, TRIANGLE, w)
        assert r.realizable and r.config is not None
        bad, m = check_config(ReconfigInstance(fab, TRIANGLE, w), r.config)
        assert not bad and m["realized"] and m["links"] == 3
    # the Uniform baselines realize only 2 of the 3 links
    for fn in (uniform_greedy, helios):
        _, m = check_config(ReconfigInstance(fab, TRIANGLE, "uniform"), fn(ReconfigInstance(
            fab, TRIANGLE, "uniform")))
        assert m["realized_links"] == 2 and m["shortfall"] == 1


@settings(max_examples=25, deadline=None)
@given(P=st.integers(2, 12), K=st.sampled_from([2, 4, 6, 8]), seed=st.integers(0, 10 ** 6),
       kind=st.sampled_from(["rings", "matchings", "stubs"]))
def test_cross_and_dual_realize_every_admissible_topology(P, K, seed, kind):
    """Theorem 4.1, checked at port level by the independent checker (bidirectionality)."""
    fab = Fabric(P, 4, K, 2)
    C = random_topology(fab, kind, seed, mult_max=K // 2)
    for w in ("cross", "dual"):
        r = realize(fab, C, w)
        assert r.realizable
        bad, m = check_config(ReconfigInstance(fab, C, w), r.config)
        assert not bad and m["realized"]


def test_odd_set_certificate_is_a_valid_proof():
    rng = np.random.default_rng(0)
    for _ in range(20):
        fab = Fabric(7, 2, 4, 1)
        C = random_topology(fab, "rings", int(rng.integers(1e6)), mult_max=2)[0]
        cert = odd_set_certificate(C, 4)
        if cert:
            S = cert["odd_set"]
            assert len(S) % 2 == 1 and C[np.ix_(S, S)].sum() // 2 > 4 * (len(S) - 1) // 2


# ----------------------------------------------------------------------------------------
# reconfiguration
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("aware", [True, False])
def test_itv_methods_realize_every_step_of_a_sequence(aware):
    fab = Fabric(12, 4, 8, 1)
    old = None
    for C in topology_sequence(fab, 4, "rings", 0.3, seed=5):
        inst = ReconfigInstance(fab, C, "cross", old)
        cfg = itv_configure(inst, aware=aware)
        bad, m = check_config(inst, cfg)
        assert not bad and m["realized"] and m["rewiring"] >= rewiring_bound(inst)
        old = cfg


def test_unchanged_topology_needs_no_rewiring():
    fab = Fabric(16, 16, 16, 2)
    seq = job_sequence(fab, 3, seed=2)
    inst = ReconfigInstance(fab, seq[0], "cross")
    cfg = itv_configure(inst)
    again = ReconfigInstance(fab, seq[0], "cross", cfg)
    for aware in (True, False):
        assert check_config(again, itv_configure(again, aware=aware))[1]["rewiring"] == 0


def test_mdmcf_meets_the_lower_bound_on_departures():
    """Removing links must never move the others (relaxed SIMD keeps the old orientation)."""
    fab = Fabric(16, 16, 16, 2)
    seq = job_sequence(fab, 12, seed=7)
    cfg = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    for prev, C in zip(seq, seq[1:]):
        inst = ReconfigInstance(fab, C, "cross", cfg)
        cfg = itv_configure(inst)
        if (C <= prev).all():
            assert check_config(inst, cfg)[1]["rewiring"] == (prev - C).sum()   # 2 circuits per link


def test_refine_never_increases_rewiring():
    fab = Fabric(10, 8, 8, 1)
    seq = topology_sequence(fab, 2, "rings", 0.3, seed=11)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    inst = ReconfigInstance(fab, seq[1], "cross", old)
    base = check_config(inst, itv_configure(inst))[1]["rewiring"]
    ref = check_config(inst, itv_configure(inst, refine=True))[1]["rewiring"]
    assert ref <= base


# ----------------------------------------------------------------------------------------
# logical topology ([002] 4.1)
# ----------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(P=st.integers(2, 5), seed=st.integers(0, 10 ** 6), fill=st.floats(0.2, 1.0))
def test_heuristic_decomposition_theorem_4_1_tau2_is_contention_free(P, seed, fill):
    fab = Fabric(P, 8, 8, 2)
    inst = LogicalInstance(fab, random_requirement(fab, seed, fill=fill))
    bad, m = check_logical(inst, heuristic_decomposition(inst))
    assert not bad and m["contention_free"] and m["port_budget_ok"]


@settings(max_examples=25, deadline=None)
@given(P=st.integers(2, 5), seed=st.integers(0, 10 ** 6))
def test_heuristic_decomposition_tau1_contention_at_most_2(P, seed):
    fab = Fabric(P, 8, 8, 1)
    inst = LogicalInstance(fab, random_requirement(fab, seed))
    bad, m = check_logical(inst, heuristic_decomposition(inst))
    assert not bad and m["max_leaf_spine_load"] <= 2


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("simd", ["euler", "flow"])
def test_heuristic_decomposition_tau1_respects_spine_port_budget_eq12(P, simd):
    """Review item 1: per-leaf balance alone gave spines up to 2 * K_spine links at tau = 1
    (90/90 of these cases); per-Pod balancing keeps every spine within K_spine, and the
    resulting C is accepted as a lumos-reconfig topology (which enforces eq. 12)."""
    fab = Fabric(P, 8, 8, 1)
    for seed in range(10):
        inst = LogicalInstance(fab, random_requirement(fab, seed))
        sol = heuristic_decomposition(inst, simd)
        bad, m = check_logical(inst, sol)
        assert not bad and m["port_budget_ok"] and m["max_spine_ports"] <= fab.k_spine
        assert m["max_leaf_spine_load"] <= 2
        ReconfigInstance(fab, sol.topology(fab), "cross")       # raises on an eq. 12 violation


@settings(max_examples=40, deadline=None)
@given(C=sym_matrices(max_n=10), groups=st.lists(st.integers(0, 3), min_size=10, max_size=10),
       H=st.integers(1, 5))
def test_grouped_simd_and_imd_balance_every_group(C, groups, H):
    """Per-group SIMD: group row and column sums of A differ by <= 1 (and all Theorem 3.1
    bounds hold); per-group IMD: group row/column sums of each part within floor/ceil(1/H)."""
    C[np.diag_indices(len(C))] = 0
    g = np.array(groups[:len(C)])
    for A in (sym_decompose(C, groups=g), sym_decompose_flow(C, groups=g)):
        assert sym_bounds_hold(C, A)
        for k in np.unique(g):
            assert abs(int(A[g == k].sum()) - int(A[:, g == k].sum())) <= 1
        parts = int_decompose(A, H, groups=g)
        assert int_bounds_hold(A, parts)
        for k in np.unique(g):
            rs, cs = int(A[g == k].sum()), int(A[:, g == k].sum())
            for X in parts:
                assert rs // H <= X[g == k].sum() <= -(-rs // H)
                assert cs // H <= X[:, g == k].sum() <= -(-cs // H)


@settings(max_examples=25, deadline=None)
@given(P=st.integers(2, 5), seed=st.integers(0, 10 ** 6))
def test_theorem_4_2_greedy_is_contention_free_under_its_condition(P, seed):
    fab = Fabric(P, 8, 8, 1)
    inst = LogicalInstance(fab, random_requirement(fab, seed, per_leaf=fab.H // 2))
    bad, m = check_logical(inst, greedy_assign(inst))
    assert not bad and m["contention_free"]


def test_check_logical_rejects_each_violation():
    """Negative cases: eq. (5), eq. (8), eq. (12), same-Pod pairs, out-of-range rows."""
    fab = Fabric(2, 2, 2, 1)                       # 2 leaves per Pod, H = 2, K_spine = 2
    L = np.zeros((4, 4), dtype=int)
    L[0, 2] = L[2, 0] = 1
    inst = LogicalInstance(fab, L)
    good = LogicalSolution(np.array([[0, 2, 0, 1], [2, 0, 0, 1]]))
    assert check_logical(inst, good)[0] == []
    cases = {
        "eq. (5)": [[0, 2, 0, 1]],                               # 2 -> 0 missing
        "eq. (8)": [[0, 2, 0, 1], [2, 0, 1, 1]],                 # reverse on another spine
        "same Pod": [[0, 2, 0, 1], [2, 0, 0, 1], [0, 1, 1, 1]],
        "out of range": [[0, 2, 5, 1], [2, 0, 0, 1]],
    }
    for what, rows in cases.items():
        bad, _ = check_logical(inst, LogicalSolution(np.array(rows)))
        assert bad, what
    # eq. (12): both leaves of Pod 0 to Pod 1 on spine 0, twice each: 4 links > K_spine = 2
    L = np.zeros((4, 4), dtype=int)
    L[0, 2] = L[2, 0] = L[1, 3] = L[3, 1] = 2
    inst = LogicalInstance(fab, L)
    sol = LogicalSolution(np.array([[0, 2, 0, 2], [2, 0, 0, 2], [1, 3, 0, 2], [3, 1, 0, 2]]))
    bad, m = check_logical(inst, sol)
    assert any("eq. (12)" in b for b in bad) and not m["port_budget_ok"]


def test_refine_reaches_the_components_scipy_finds():
    """refine._joined (breadth first, no scipy.sparse import) picks the nodes of the
    components that hold a changed Pod, as scipy's connected components did."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from heuristics.lumos.mdmcf.refine import _joined

    rng = np.random.default_rng(8)
    for _ in range(300):
        P = int(rng.integers(1, 40))
        X = (rng.random((P, P)) < rng.choice([0.02, 0.05, 0.2])).astype(np.int64)
        G = X + X.T
        dirty = rng.random(P) < rng.choice([0.0, 0.05, 0.3])
        _, lab = connected_components(csr_matrix(G > 0), directed=False)
        want = np.isin(lab, np.unique(lab[dirty]))
        assert np.array_equal(_joined(G > 0, dirty), want)
