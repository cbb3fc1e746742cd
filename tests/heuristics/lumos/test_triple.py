"""The exact re-split of three OCSes (heuristics.lumos.mdmcf.triple): the compiled search finds
the sub-group's ITV-ILP optimum (HiGHS) and proves nothing better exists; with three even
OCSes its local optimum is the group's ITV-ILP optimum (models.lumos.ilp)."""
from __future__ import annotations

import numpy as np
import pytest

import benchmarks.lumos.reconfig_quality as Q
from heuristics.lumos.mdmcf.exact import lp_guided
from heuristics.lumos.mdmcf.group_split import _rewiring, split_group
from heuristics.lumos.mdmcf.reconfig import old_even
from heuristics.lumos.mdmcf.triple import matrices_of, resplit_triples, rows, search


def _pairs(Xs):
    """Pairs (a < b) and their copies among the circuits of Xs (3, n, n)."""
    S = np.triu((Xs + Xs.transpose(0, 2, 1)).sum(axis=0), 1)
    a, b = np.nonzero(S)
    return a.astype(np.int64), b.astype(np.int64), S[a, b].astype(np.int64)


@pytest.mark.parametrize("seed", [0, 1])
def test_search_matches_the_sub_ilp_optimum(seed):
    """For random triples of ring-churn groups: a placement keeping the HiGHS optimum's
    old circuits is found, one keeping more is not (the search is exhaustive)."""
    rng = np.random.default_rng(seed)
    _, inst = Q._instances("rings", 10, 2, 12, 0.5, 1, seed)[0]
    checked = 0
    for h in range(2):
        U, V = old_even(inst, h), old_even(inst, h, 1)
        X = np.array(split_group(inst.C[h], 12, U, old_odd=V, lns=0, restarts=0))
        for _ in range(6):
            S = sorted(rng.choice(6, 3, replace=False))
            Xs = X[S]
            Cs = (Xs + Xs.transpose(0, 2, 1)).sum(axis=0)
            alt, _ = lp_guided(Cs, U[S], V[S], list(Xs), 10 ** 6, full=True)
            best = int((np.array(alt) * U[S]).sum())
            pa, pb, cnt = _pairs(Xs)
            res = np.empty((3, 10), np.int64)
            old3 = rows(U[S])
            assert search(pa, pb, cnt, old3, 10, best, 10 ** 8, res) > 0
            Y = matrices_of(res)
            assert np.array_equal((Y + Y.transpose(0, 2, 1)).sum(axis=0), Cs)
            assert int((Y * U[S]).sum()) >= best
            assert search(pa, pb, cnt, old3, 10, best + 1, 10 ** 8, res) <= 0
            checked += 1
    assert checked == 12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_three_ocs_local_optimum_is_the_ilp_optimum(seed, tmp_path):
    K = 6                                                    # 3 even OCSes: one triple
    for _, inst in Q._instances("rings", 6, 2, K, 0.6, 2, seed):
        before = after = 0
        for h in range(2):
            U, V = old_even(inst, h), old_even(inst, h, 1)
            X = np.array(split_group(inst.C[h], K, U, old_odd=V, lns=1))
            Y, stats = resplit_triples(X, U, 1 << 30, 10 ** 7)
            Y = np.array(Y)
            S = Y.sum(axis=0)
            assert np.array_equal(S + S.T, inst.C[h]) and Y.sum(axis=1).max() <= 1
            assert Y.sum(axis=2).max() <= 1 and not np.einsum("mii->", Y)
            assert stats[2] == 0                              # no search hit its limit
            before, after = before + _rewiring(X, U, V), after + _rewiring(Y, U, V)
        ilp = Q.ilp_optimum(inst, inst.old, tmp_path)      # gurobipy builder, HiGHS
        assert ilp["ilp_status"] == "optimal"
        assert after == ilp["ilp_rewiring"] <= before


def test_work_budget_and_node_limit_are_respected():
    _, inst = Q._instances("rings", 16, 2, 32, 0.3, 1, 3)[0]
    U, V = old_even(inst, 0), old_even(inst, 0, 1)
    X = np.array(split_group(inst.C[0], 32, U, old_odd=V, lns=1))
    Y0, s0 = resplit_triples(X, U, 1 << 30, 5, work=1)      # one pass at most
    assert s0[2] == s0[1] - s0[0] or s0[1] <= 1
    Y1, s1 = resplit_triples(X, U, 1 << 30, 10 ** 6)
    Y2, s2 = resplit_triples(X, U, 1 << 30, 10 ** 6)
    assert np.array_equal(np.array(Y1), np.array(Y2)) and list(s1) == list(s2)
    assert _rewiring(np.array(Y1), U, V) <= _rewiring(X, U, V)
