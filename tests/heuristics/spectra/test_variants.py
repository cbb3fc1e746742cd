"""Spectra's comparators (spec 2.6): Eclipse variant and the LESS-style Baseline.

Hand computations (spec 8.9, 8.10) on the worked example and a 2x2 case, the checker on
every method, and the lower bound below every method.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import linear_sum_assignment

from heuristics.spectra.baseline import BALANCE_TOL, baseline, greedy_split, line_cap, split_nnz
from heuristics.spectra.bounds import lower_bound
from heuristics.spectra.eclipse import best_configuration, eclipse_decompose
from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraInstance, check_schedule
from instances.spectra.workloads import benchmark_matrix, example_matrix, random_matrix


def verified_makespan(inst, sched):
    bad, m = check_schedule(inst, sched)
    assert not bad, bad
    return m["makespan"]


# --- Eclipse (spec 2.6.2) --------------------------------------------------------------
def test_eclipse_on_worked_example_matches_hand_computation():
    """U(0.61) = 1.83/0.62 = 2.95 > U(0.3) = 0.9/0.31 > U(0.1) = 0.3/0.11: identity first,
    then 0.3 on shift 1 (2.90 > 2.73), then 0.1: the same three permutations as Spectra,
    so Schedule + Equalize give 0.62 -> 0.525 (Figs. 2-4)."""
    inst = SpectraInstance(example_matrix(), 2, 0.01)
    for search in ("exhaustive", "quantile"):
        dec = eclipse_decompose(inst.demand, 0.01, alpha_search=search)
        assert dec.alphas.tolist() == pytest.approx([0.61, 0.3, 0.1])
        assert [p.tolist() for p in dec.perms] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
        assert verified_makespan(inst, spectra(inst, dec=dec)) == pytest.approx(0.525)


def test_eclipse_splits_where_decompose_does_not():
    """D = diag(0.5, 0.1), delta = 0.01: U(0.1) = 0.2/0.11 = 1.82 > U(0.5) = 0.6/0.51 = 1.18,
    so Eclipse serves 0.1 on the identity, then 0.4 on (0,0) alone: 2 configurations where
    Decompose uses one (alpha 0.5). s=1: 0.5 + 2 delta = 0.52 (Spectra 0.51). s=2: LPT
    0.41 | 0.11, Equalize mu = 0.265 (Spectra: 0.51 | 0 -> 0.26)."""
    D = np.diag([0.5, 0.1])
    dec = eclipse_decompose(D, 0.01)
    assert dec.alphas.tolist() == pytest.approx([0.1, 0.4])
    assert [p.tolist() for p in dec.perms] == [[0, 1], [0, -1]]
    one, two = SpectraInstance(D, 1, 0.01), SpectraInstance(D, 2, 0.01)
    assert verified_makespan(one, spectra(one, dec=dec)) == pytest.approx(0.52)
    assert verified_makespan(one, spectra(one)) == pytest.approx(0.51)
    assert verified_makespan(two, spectra(two, dec=dec)) == pytest.approx(0.265)
    assert verified_makespan(two, spectra(two)) == pytest.approx(0.26)


def test_eclipse_progress_rule_raises_alpha_to_the_smallest_matched_entry():
    """D = [[0.1, 0.5, 0], [0.5, 0, 0], [0, 0, 0.9]], delta = 0.01, quantiles = 2: the
    candidates are 0.1 and 0.9 only. U(0.1) = 0.3/0.11 = 2.73 > U(0.9) = 1.9/0.91 = 2.09, and
    the matching at 0.1 is (0,1), (1,0), (2,2), all above 0.1: no entry would be used up, so the
    progress rule raises alpha to 0.5 (U = 1.5/0.51 = 2.94, the exhaustive search's choice;
    0.5 is not a quantile candidate). Then 0.1 on (0,0), (2,2) and 0.3 on (2,2)."""
    D = np.array([[0.1, 0.5, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.9]])
    _, alpha, u = best_configuration(D, 0.01, 0.0, "quantile", quantiles=2)
    assert alpha == 0.1 and u == pytest.approx(0.3 / 0.11)
    for search in ("quantile", "exhaustive"):
        dec = eclipse_decompose(D, 0.01, search, quantiles=2)
        assert dec.alphas.tolist() == pytest.approx([0.5, 0.1, 0.3])
        assert [p.tolist() for p in dec.perms] == [[1, 0, 2], [0, -1, 2], [-1, -1, 2]]
    inst = SpectraInstance(D, 2, 0.01)
    verified_makespan(inst, spectra(inst, dec=dec))


@pytest.mark.parametrize("kw", [dict(quantiles=0), dict(quantiles=1), dict(quantiles=2.5),
                                dict(alpha_search="bogus")])
def test_eclipse_rejects_bad_search_options(kw):
    with pytest.raises(ValueError, match="quantiles|alpha_search"):
        eclipse_decompose(example_matrix(), 0.01, **kw)
    with pytest.raises(ValueError, match="quantiles|alpha_search"):
        best_configuration(example_matrix(), 0.01, 0.0, **kw)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 9), delta=st.floats(0.0, 0.2),
       search=st.sampled_from(["exhaustive", "quantile"]))
def test_eclipse_pruned_search_is_exact(seed, n, delta, search):
    """The bound-pruned alpha search returns the best U over all candidates (brute force)."""
    D = random_matrix(n, 0.7, np.random.default_rng(seed))
    if not (D > 0).any():
        return
    vals = np.unique(D[D > 0])
    cand = vals if search == "exhaustive" or len(vals) <= 4 else \
        vals[np.unique(np.round(np.linspace(0, len(vals) - 1, 4)).astype(int))]
    best = 0.0
    for a in cand:
        W = np.minimum(D, a)
        r, c = linear_sum_assignment(W, maximize=True)
        best = max(best, W[r, c].sum() / (a + delta))
    _, _, u = best_configuration(D, delta, 0.0, search, quantiles=4)
    assert u == pytest.approx(best, rel=1e-9)


# --- Baseline (spec 2.6.3) -------------------------------------------------------------
def test_baseline_on_worked_example_matches_hand_computation():
    """rho = 1.01, T = 0.505. Each 0.61 entry fits nowhere: 0.505 on switch 1, 0.105 on
    switch 2. Every 0.3 then fits only on switch 2 (0.105 + 0.3 <= T) and so does every 0.1
    (0.405 + 0.1 = T). D_1 = 0.505 I (1 perm, L = 0.515); D_2 = 0.105 I + 0.3 shift1 + 0.1 shift2
    (3 perms, L = 0.505 + 0.03 = 0.535). Makespan 0.535 (Spectra: 0.525)."""
    inst = SpectraInstance(example_matrix(), 2, 0.01)
    parts = greedy_split(inst.demand, 2)
    assert line_cap(inst.demand, 2) == pytest.approx(0.505)
    assert np.allclose(parts[0], 0.505 * np.eye(3))
    assert np.allclose(parts[1], example_matrix() - 0.505 * np.eye(3))
    assert split_nnz(parts) == 12
    sched = baseline(inst, parts=parts)
    assert [len(sw) for sw in sched.switches] == [1, 3]
    assert verified_makespan(inst, sched) == pytest.approx(0.535)


def test_baseline_two_by_two_hand_computation():
    """diag(0.5, 0.1), s=2: T = 0.25; 0.5 is water-filled 0.25 | 0.25, 0.1 goes whole to switch 1
    (tie on load and nonzeros -> lowest index). D_1 = diag(0.25, 0.1): one perm, Refine lifts
    alpha 0.1 -> 0.25, L = 0.26; D_2: L = 0.26."""
    inst = SpectraInstance(np.diag([0.5, 0.1]), 2, 0.01)
    parts = greedy_split(inst.demand, 2)
    assert np.allclose(parts[0], np.diag([0.25, 0.1])) and np.allclose(parts[1], np.diag([0.25, 0]))
    assert verified_makespan(inst, baseline(inst, parts=parts)) == pytest.approx(0.26)


def replay_split(D, parts, s):
    """Independent replay of the greedy's decisions (spec 2.6.3): entries in non-increasing
    order (stable, row-major); the loads an entry saw are the shares of the entries before it.
    Returns, per entry, (was split, fitted whole somewhere, total room < value)."""
    T = line_cap(D, s)
    cap = T * (1 + BALANCE_TOL)
    rows, cols = np.nonzero(D)
    R, C = np.zeros((s, D.shape[0])), np.zeros((s, D.shape[0]))
    out = []
    for e in np.argsort(-D[rows, cols], kind="stable"):
        i, j, v = rows[e], cols[e], D[rows[e], cols[e]]
        load = np.maximum(R[:, i], C[:, j])
        share = parts[:, i, j]
        out.append(((share > 0).sum() > 1, bool((load + v <= cap).any()),
                    np.clip(T - load, 0, None).sum() < v * (1 - 1e-9)))
        R[:, i] += share
        C[:, j] += share
    return out


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 20), s=st.integers(1, 6),
       density=st.floats(0.05, 1.0), bench=st.booleans())
def test_greedy_split_properties(seed, n, s, density, bench):
    rng = np.random.default_rng(seed)
    D = benchmark_matrix(n, min(n, 4), noise=0.01, rng=rng) if bench else random_matrix(n, density, rng)
    parts = greedy_split(D, s)
    assert parts.shape == (s, n, n) and (parts >= 0).all()
    assert np.allclose(parts.sum(axis=0), D, atol=1e-12)
    decisions = replay_split(D, parts, s)
    for split, fitted, _ in decisions:
        assert not (split and fitted)            # an entry is split only when it fits nowhere
    if not any(short for _, _, short in decisions):   # no remainder forced: the cap T holds
        cap = line_cap(D, s) * (1 + 1e-12)
        assert parts.sum(axis=2).max(initial=0) <= cap and parts.sum(axis=1).max(initial=0) <= cap
    if s == 1:
        assert np.array_equal(parts[0], D) and split_nnz(parts) == int((D > 0).sum())


@pytest.mark.parametrize("n", [2, 5, 8])
def test_greedy_split_keeps_entries_whole_when_they_fit(n):
    """D = 0.5 I + 0.5 shift1, s = 2: T = 0.5 and one permutation fits on each switch, so
    no entry is split (split_nnz = nnz(D)) and every line of every part carries exactly T."""
    D = 0.5 * np.eye(n) + 0.5 * np.roll(np.eye(n), 1, axis=1)
    parts = greedy_split(D, 2)
    assert split_nnz(parts) == int((D > 0).sum()) == 2 * n
    assert np.allclose(parts.sum(axis=1), 0.5) and np.allclose(parts.sum(axis=2), 0.5)


def test_greedy_split_exceeds_the_cap_only_when_forced():
    """On 60 random matrices both cases occur, and a line of a part exceeds T only on the
    matrices where the replay finds an entry whose total room was short of its value."""
    seen = set()
    for seed in range(60):
        n, s = 2 + seed % 5, 2 + seed % 3
        D = random_matrix(n, 0.8, np.random.default_rng(seed))
        parts = greedy_split(D, s)
        forced = any(short for _, _, short in replay_split(D, parts, s))
        over = max(parts.sum(axis=2).max(), parts.sum(axis=1).max()) > line_cap(D, s) * (1 + 1e-12)
        assert forced or not over, seed
        seen.add(over)
    assert seen == {True, False}


# --- every method: verified, and never below the lower bound (spec 8.9, 8.10) ------------
def all_schedules(inst):
    yield "spectra", spectra(inst)
    yield "spectra-noeq", spectra(inst, equalize_loads=False)
    yield "spectra-eclipse", spectra(inst, dec=eclipse_decompose(inst.demand, inst.delay))
    yield "spectra-eclipse-exh", spectra(inst, dec=eclipse_decompose(inst.demand, inst.delay,
                                                                      "exhaustive"))
    yield "baseline", baseline(inst)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 14), s=st.integers(1, 6),
       delta=st.floats(0.0, 0.2), density=st.floats(0.05, 1.0))
def test_every_method_verified_and_above_lower_bound(seed, n, s, delta, density):
    inst = SpectraInstance(random_matrix(n, density, np.random.default_rng(seed)), s, delta)
    lb = lower_bound(inst.demand, s, delta)
    for name, sched in all_schedules(inst):
        assert verified_makespan(inst, sched) >= lb - 1e-9, name


@pytest.mark.parametrize("s, delta", [(2, 0.01), (4, 0.04), (8, 0.1)])
def test_methods_on_benchmark_matrices(s, delta):
    inst = SpectraInstance(benchmark_matrix(40, 8, rng=np.random.default_rng(s)), s, delta)
    lb = lower_bound(inst.demand, s, delta)
    got = {name: verified_makespan(inst, sched) for name, sched in all_schedules(inst)}
    assert min(got.values()) >= lb - 1e-9
    assert got["spectra"] <= got["spectra-noeq"] + 1e-12      # Equalize never hurts
