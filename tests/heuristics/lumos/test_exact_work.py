"""itv-mdmcf-lp's work limits (issue 28): HiGHS MIP checkpoints end the LP-guided step's
MIPs deterministically; the LP stops at its iteration limit without claiming a bound."""
from __future__ import annotations

import numpy as np

import heuristics.lumos.mdmcf.exact as E
from benchmarks.lumos.reconfig_grid import instance
from heuristics.lumos.mdmcf.group_split import _realizes, _rewiring, split_group
from heuristics.lumos.mdmcf.reconfig import old_even


def _group():
    """Group 1 of a generated 16-Pod ring step, where the unfixed-LP MIP needs about 60
    HiGHS checkpoints (1.7 s) to reach the optimum."""
    inst = instance("rings", 16, 4, 32, 0.3, 1)
    U, V = old_even(inst, 1), old_even(inst, 1, 1)
    return inst.C[1], U, V, split_group(inst.C[1], 32, U, old_odd=V)


def test_the_checkpoint_limit_binds_and_is_deterministic():
    C, U, V, X = _group()
    start = _rewiring(X, U, V)
    runs = [E.lp_guided(C, U, V, X, 50, checks=10) for _ in range(2)]
    assert np.array_equal(np.array(runs[0][0]), np.array(runs[1][0]))    # same work, same result
    limited = _rewiring(runs[0][0], U, V)
    free, proven = E.lp_guided(C, U, V, X, 50)                          # nodes only
    assert _realizes(runs[0][0], C) and _realizes(free, C)
    assert start >= limited > _rewiring(free, U, V) and proven           # the limit cut it short
    assert _rewiring(free, U, V) == E.lp_bound(C, U, V)


def test_an_lp_stopped_by_its_iteration_limit_gives_no_bound(monkeypatch):
    C, U, V, X = _group()
    monkeypatch.setattr(E, "LP_ITERS", 0.01)          # far fewer iterations than it needs
    Y, proven = E.lp_guided(C, U, V, X, 50, checks=10)
    assert Y is X and not proven                      # the start, unproven
    assert E.lp_bound(C, U, V) > 0                    # the bound itself has no such limit


def test_the_models_rows_are_the_arrays_scipy_sparse_makes():
    """exact.Csr (numpy, no scipy.sparse import) holds a group's constraint matrix as
    scipy.sparse.csr_matrix does: HiGHS gets the same model, so the same results."""
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    for _ in range(60):
        P, M = int(rng.integers(2, 12)), int(rng.integers(1, 5))
        C = rng.integers(0, 3, (P, P)) * (rng.random((P, P)) < 0.5)
        C = np.triu(C, 1) + np.triu(C, 1).T
        U = (rng.random((M, P, P)) < 0.2).astype(np.int64)
        red = E._Reduced(C, U, U.transpose(0, 2, 1))
        A, cols = red.A, np.tile(np.arange(red.n), 3)
        o, m, oi, oj = red.o, red.m, red.oi, red.oj
        pair = np.minimum(oi, oj) * P + np.maximum(oi, oj)
        pid, e_of = np.unique(pair, return_inverse=True)
        want = sp.csr_matrix((np.ones(3 * red.n), (np.concatenate(
            [e_of[o], len(pid) + oi[o] * M + m, len(pid) + P * M + oj[o] * M + m]), cols)),
            shape=(len(pid) + 2 * P * M, red.n))
        assert A.shape == want.shape and A.nnz == want.nnz
        for k in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(A, k), getattr(want, k)), k
