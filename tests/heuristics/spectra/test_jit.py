"""Compiled Decompose rounds (heuristics.spectra.jit) against fresh assignments and scipy.

Every round is replayed against a from-scratch MWM-Node-Coverage assignment (max weight,
coverage, alpha, degree down by one: ``test_spectra_warm.replay``, which also runs the
hypothesis covering test on both warm paths); without ties the
compiled, scipy and cold rounds return the same decomposition; the compiled assignment
solver alone matches scipy's optimum, forbidden (+inf) cells included.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import linear_sum_assignment

from heuristics.spectra.decompose import JIT_MIN_N, _eps, decompose
from heuristics.spectra.jit import assign, jit_rounds
from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraInstance, check_schedule
from instances.spectra.workloads import generate, random_matrix
from tests.heuristics.spectra.test_warm import replay


def _solve(R):
    n = R.shape[0]
    x, y, pred, cols = (np.empty(n, dtype=np.int64) for _ in range(4))
    ok = assign(R, x, y, np.empty(n), np.empty(n), pred, cols)
    return ok, x


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 25), levels=st.sampled_from([0, 2, 4]),
       forbid=st.floats(0.0, 0.6))
def test_assign_is_an_optimal_assignment(seed, n, levels, forbid):
    """Optimal cost = scipy's; +inf cells never used; None feasible <=> scipy feasible."""
    rng = np.random.default_rng(seed)
    R = rng.random((n, n))
    if levels:
        R = np.ceil(R * levels)                          # ties
    R[rng.random((n, n)) < forbid] = np.inf
    ok, x = _solve(R.copy())
    try:
        r, c = linear_sum_assignment(R)
        best = R[r, c].sum()
    except ValueError:                                   # no finite assignment
        assert not ok
        return
    assert ok and sorted(x.tolist()) == list(range(n))
    assert np.isfinite(R[np.arange(n), x]).all()
    assert R[np.arange(n), x].sum() == pytest.approx(best, rel=1e-12, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), density=st.floats(0.05, 1.0),
       edge_mode=st.sampled_from(["supp", "srem"]))
def test_jit_equals_scipy_and_cold_without_ties(seed, n, density, edge_mode):
    """Continuous weights: one max-weight matching per round, so one decomposition."""
    D = random_matrix(n, density, np.random.default_rng(seed))
    decs = [decompose(D, edge_mode=edge_mode, matching=m) for m in ("jit", "scipy", "cold")]
    for other in decs[1:]:
        assert len(other.perms) == len(decs[0].perms)
        assert all(np.array_equal(a, b) for a, b in zip(decs[0].perms, other.perms))
        assert np.array_equal(decs[0].alphas, other.alphas)


@pytest.mark.parametrize("workload, kw", [("moe", dict(n=64)), ("gpt", dict(tp=4, pp=4, dp=4)),
                                          ("benchmark", dict(n=64, m=8))])
def test_jit_rounds_on_workloads(workload, kw):
    """The default from JIT_MIN_N lines on is the compiled path; schedules pass the checker."""
    D = generate(workload, seed=5, **kw).demand
    assert D.shape[0] >= JIT_MIN_N
    dec = decompose(D, refine="none")
    replay(D, dec, "supp")
    jit = decompose(D, refine="none", matching="jit")
    assert all(np.array_equal(a, b) for a, b in zip(dec.perms, jit.perms))
    inst = SpectraInstance(D, 4, 0.04)
    bad, _ = check_schedule(inst, spectra(inst, matching="jit"))
    assert not bad


def test_jit_rounds_all_tied_and_degenerate():
    """All-equal weights (every matching ties; the row reduction's step cap is hit), one
    line, empty and 1 x 1 matrices."""
    D = np.ones((JIT_MIN_N, JIT_MIN_N))
    replay(D, decompose(D, refine="none", matching="jit"), "supp")
    D = np.zeros((40, 40))
    D[7] = np.linspace(1, 2, 40)
    dec = decompose(D, refine="none", matching="jit")
    replay(D, dec, "supp")
    assert all((p >= 0).sum() == 1 for p in dec.perms)
    assert jit_rounds(np.zeros((3, 3)), 0.0) == ([], [])
    perms, alphas = jit_rounds(np.array([[2.0]]), _eps(np.array([[2.0]])))
    assert [p.tolist() for p in perms] == [[0]] and alphas == [2.0]
