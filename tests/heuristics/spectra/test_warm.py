"""Warm-started Decompose rounds (heuristics.spectra.warm) against an independent replay.

The replay rebuilds every round's MWM-Node-Coverage problem from (D_rem, S_rem) as spec
2.2.1 writes it and checks the warm round's matching: real edges only, every critical
line covered by an S_rem edge, weight equal to the assignment optimum (so ties may pick
another matching, never a lighter one), alpha the minimum, degree down by exactly one.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import linear_sum_assignment

from heuristics.spectra.decompose import _eps, decompose, degree
from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraInstance, check_schedule
from instances.spectra.workloads import generate, random_matrix


def replay(D: np.ndarray, dec, edge_mode: str) -> None:
    """Assert that ``dec`` (refine="none") is a valid max-weight Decompose of D, round by round."""
    eps = _eps(D)
    S = D > eps
    D_rem = np.where(S, D, 0.0)
    assert len(dec.perms) == degree(D)
    for perm, alpha in zip(dec.perms, dec.alphas):
        rdeg, cdeg = S.sum(axis=1), S.sum(axis=0)
        top = max(rdeg.max(), cdeg.max())
        crit_r, crit_c = rdeg == top, cdeg == top
        allowed = S | (D_rem > eps) if edge_mode == "supp" else S.copy()
        cost = np.where(allowed, -D_rem, 0.0)
        cost[(crit_r[:, None] | crit_c[None, :]) & ~S] = np.inf
        r, c = linear_sum_assignment(cost)
        best = -cost[r, c].sum()
        rows = np.flatnonzero(perm >= 0)
        cols = perm[rows]
        assert len(set(cols.tolist())) == cols.size                   # a partial permutation
        assert allowed[rows, cols].all()                               # real edges only
        on_S = S[rows, cols]
        assert set(np.flatnonzero(crit_r)) <= set(rows[on_S].tolist())  # coverage (Koenig)
        assert set(np.flatnonzero(crit_c)) <= set(cols[on_S].tolist())
        assert D_rem[rows, cols].sum() == pytest.approx(best, rel=1e-9, abs=1e-9 * D.max())
        vals = D_rem[rows, cols]
        assert alpha == (vals[vals > eps].min() if (vals > eps).any() else 0.0)
        vals = vals - alpha
        vals[vals < eps] = 0.0
        D_rem[rows, cols] = vals
        S[rows, cols] = False
        if S.any():
            assert max(S.sum(axis=1).max(), S.sum(axis=0).max()) == top - 1
    assert not S.any()


@pytest.mark.parametrize("matching", ["scipy", "jit"])
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), density=st.floats(0.05, 1.0),
       levels=st.sampled_from([0, 2, 5]), edge_mode=st.sampled_from(["supp", "srem"]))
def test_warm_rounds_are_max_weight_coverings(matching, seed, n, density, levels, edge_mode):
    """Random matrices; levels > 0 draws integer weights 1..levels (many tied matchings);
    both warm paths: scipy's solver and the compiled one (heuristics.spectra.jit)."""
    rng = np.random.default_rng(seed)
    D = random_matrix(n, density, rng)
    if levels:
        D = np.ceil(D * levels)
    dec = decompose(D, edge_mode=edge_mode, refine="none", matching=matching)
    replay(D, dec, edge_mode)
    full = decompose(D, edge_mode=edge_mode, matching=matching)        # with Refine
    assert np.all(full.coverage(n) >= D - 1e-9)


@pytest.mark.parametrize("workload, kw", [("moe", dict(n=40)), ("gpt", dict(tp=2, pp=4, dp=4)),
                                          ("benchmark", dict(n=40, m=8))])
def test_warm_rounds_on_workloads(workload, kw):
    """The AI workloads: MoE (integer token counts: ties), GPT and the benchmark."""
    D = generate(workload, seed=3, **kw).demand
    replay(D, decompose(D, refine="none"), "supp")
    inst = SpectraInstance(D, 4, 0.04)
    bad, _ = check_schedule(inst, spectra(inst))
    assert not bad


def test_warm_rounds_edge_cases():
    assert decompose(np.zeros((3, 3))).perms == []
    dec = decompose(np.array([[2.0]]))
    assert [p.tolist() for p in dec.perms] == [[0]] and dec.alphas.tolist() == [2.0]
    # one full row: 3 rounds, each a single edge; idle rows stay -1
    D = np.zeros((3, 3))
    D[1] = [0.5, 0.3, 0.2]
    dec = decompose(D, refine="none")
    assert sorted(int(p[1]) for p in dec.perms) == [0, 1, 2]
    assert all(p[0] == -1 and p[2] == -1 for p in dec.perms)
    assert sorted(dec.alphas) == pytest.approx([0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="matching"):
        decompose(D, matching="hot")
