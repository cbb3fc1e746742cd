"""Spectra heuristics against the spec's unit tests (spec section 8) and the checker."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from heuristics.spectra.bounds import lb1, lower_bound, prob_degree, prob_line_degree
from heuristics.spectra.decompose import decompose, degree
from heuristics.spectra.schedule import equalize, lpt_schedule, spectra, to_schedule
from instances.spectra.instance import SpectraInstance, SpectraSchedule, check_schedule, makespan
from instances.spectra.workloads import benchmark_matrix, example_matrix, random_matrix, shifts_matrix


def loads(sched, delta):
    return [sum(delta + a for _, a in sw) for sw in sched]


def test_worked_example_figs_2_to_4():
    inst = SpectraInstance(example_matrix(), 2, 0.01)
    dec = decompose(inst.demand)
    assert np.allclose(dec.alphas, [0.61, 0.3, 0.1])
    sched = lpt_schedule(dec, 2, 0.01)
    assert np.allclose(loads(sched, 0.01), [0.62, 0.42])
    assert equalize(sched, 0.01) == 1
    assert np.allclose([a for _, a in sched[0]], [0.515])
    assert np.allclose([a for _, a in sched[1]], [0.3, 0.1, 0.095])
    assert np.allclose(loads(sched, 0.01), [0.525, 0.525])
    bad, m = check_schedule(inst, to_schedule(dec, sched))
    assert not bad and m["makespan"] == pytest.approx(0.525)


def test_disjoint_shifts_recovered_exactly():
    D = shifts_matrix(6, [0.5, 0.3, 0.2])
    dec = decompose(D)
    assert sorted(dec.alphas) == pytest.approx([0.2, 0.3, 0.5])
    inst = SpectraInstance(D, 1, 0.05)
    bad, m = check_schedule(inst, spectra(inst))
    assert not bad and m["makespan"] == pytest.approx(1.15)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("edge_mode", ["supp", "srem"])
def test_decompose_uses_exactly_degree_permutations(seed, edge_mode):
    rng = np.random.default_rng(seed)
    for D in (benchmark_matrix(60, 12, rng=rng), random_matrix(20, 0.3, rng)):
        dec = decompose(D, edge_mode=edge_mode)
        assert len(dec.perms) == degree(D)
        assert np.all(dec.coverage(D.shape[0]) >= D - 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_refine_lp_at_most_greedy_and_both_cover(seed):
    D = benchmark_matrix(30, 8, rng=np.random.default_rng(seed))
    g = decompose(D, refine="greedy")
    lp = decompose(D, refine="lp", backend="highs")
    assert lp.alphas.sum() <= g.alphas.sum() + 1e-9
    for dec in (g, lp):
        assert np.all(dec.coverage(30) >= D - 1e-9)


def test_srem_mode_greedy_equals_lp():
    """With edge_mode=srem each entry lies on one permutation: Refine LP = greedy (spec 2.2.2)."""
    D = benchmark_matrix(25, 6, rng=np.random.default_rng(4))
    g = decompose(D, edge_mode="srem", refine="greedy")
    lp = decompose(D, edge_mode="srem", refine="lp", backend="highs")
    assert g.alphas.sum() == pytest.approx(lp.alphas.sum(), rel=1e-7)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), s=st.integers(2, 8), delta=st.floats(0.0, 0.2),
       n=st.integers(2, 25), density=st.floats(0.1, 1.0))
def test_equalize_properties(seed, s, delta, n, density):
    D = random_matrix(n, density, np.random.default_rng(seed))
    dec = decompose(D)
    sched = lpt_schedule(dec, s, delta)
    before = loads(sched, delta)
    splits = equalize(sched, delta)
    after = loads(sched, delta)
    assert max(after) <= max(before) + 1e-12                   # makespan never increases
    assert sum(after) == pytest.approx(sum(before) + splits * delta)  # one delta per split
    gap = max(after) - min(after)
    hmax = int(np.argmax(after))
    tau = max(after) - (max(after) + min(after) + delta) / 2
    assert gap <= delta + 1e-9 or max(a for _, a in sched[hmax]) <= tau + 1e-9
    inst = SpectraInstance(D, s, delta)
    bad, m = check_schedule(inst, to_schedule(dec, sched))
    assert not bad
    assert m["makespan"] >= lower_bound(D, s, delta) - 1e-9     # heuristic >= LB


def test_lower_bound_unit_values():
    row = np.array([[0.5, 0.3, 0.2]])
    assert lb1(row, 3, 0.05) == pytest.approx(0.383333, abs=1e-6)
    assert lower_bound(row, 3, 0.05) == pytest.approx(0.40)
    assert lower_bound(np.full((1, 16), 1 / 16), 4, 0.01) == pytest.approx(0.29)
    assert prob_line_degree(100, 16) == pytest.approx(0.2816, abs=1e-4)
    assert prob_degree(50, 16) == pytest.approx(0.9991, abs=1e-4)
    assert prob_degree(100, 32) == pytest.approx(0.5295, abs=1e-4)


def test_s1_spectra_is_decompose():
    D = benchmark_matrix(20, 5, rng=np.random.default_rng(1))
    inst = SpectraInstance(D, 1, 0.03)
    dec = decompose(D)
    assert makespan(spectra(inst), 0.03) == pytest.approx(len(dec.perms) * 0.03 + dec.alphas.sum())


def test_empty_demand_has_zero_makespan():
    inst = SpectraInstance(np.zeros((4, 4)), 3, 0.1)
    sched = spectra(inst)
    bad, m = check_schedule(inst, sched)
    assert not bad and m["makespan"] == 0 and lower_bound(inst.demand, 3, 0.1) == 0


# --- the checker rejects corrupted schedules ---------------------------------------------
def _good():
    inst = SpectraInstance(example_matrix(), 2, 0.01)
    return inst, spectra(inst)


def test_checker_accepts_good_and_recomputes_makespan():
    inst, s = _good()
    bad, m = check_schedule(inst, s)
    assert not bad and m["makespan"] == pytest.approx(makespan(s, 0.01))


@pytest.mark.parametrize("corrupt, words", [
    (lambda sw: sw[0].__setitem__(0, (sw[0][0][0], sw[0][0][1] * 0.5)), "not covered"),
    (lambda sw: sw[1].pop(), "not covered"),
    (lambda sw: sw[0].__setitem__(0, (np.array([0, 0, 2]), sw[0][0][1])), "partial permutation"),
    (lambda sw: sw[0].__setitem__(0, (np.array([0, 1]), sw[0][0][1])), "perm must be 3 integers"),
    (lambda sw: sw[0].__setitem__(0, (np.array([0, 1, 5]), sw[0][0][1])), "out of range"),
    (lambda sw: sw[0].__setitem__(0, (sw[0][0][0], -0.1)), "finite number"),
    (lambda sw: sw.append([]), "uses 3 switches"),
])
def test_checker_rejects_corruption(corrupt, words):
    inst, s = _good()
    sw = [list(x) for x in s.switches]
    corrupt(sw)
    bad, _ = check_schedule(inst, SpectraSchedule(sw))
    assert bad and any(words in b for b in bad)
