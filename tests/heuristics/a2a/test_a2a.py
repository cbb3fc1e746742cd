"""a2a construction, bounds, baselines and simulator against the spec's test vectors (spec 7)."""
from __future__ import annotations

import numpy as np
import pytest

from heuristics.a2a import circulant as circ
from heuristics.a2a.baselines import BASELINES, fast, topoopt_shifts
from heuristics.a2a.bounds import fluid_lower_bound, lb_T, lower_bound, lower_bound_curve, thm1_lb_T
from heuristics.a2a.general import genkautz
from heuristics.a2a.k1 import greedy_order, prefix_costs, seq_order, shift_cost
from heuristics.a2a.rdc import family_candidates, k1_candidate, rdc
from heuristics.a2a.sim import simulate
from heuristics.a2a.strategy import direct_round_robin, realize
from instances.a2a.instance import A2AInstance, A2AStrategy, Group, Link, Phase, check_strategy
from instances.a2a.workloads import generate


def unit(n, k=1, R=0.0):
    return A2AInstance(n, k, R, Link.from_dict({"T": 1.0}), uniform_size=1.0)


def cost(inst, st):
    bad, m = check_strategy(inst, st)
    assert bad == [], bad[:3]
    return m["total_cost"]


def test_motivating_example_30_35_56():
    inst = generate("example")
    ours = cost(inst, realize(rdc(inst).best, inst))
    static = cost(inst, realize(k1_candidate(8, [1]), inst))
    always = cost(inst, realize(direct_round_robin(8, 1), inst))
    assert (ours, static, always) == (30.0, 35.0, 56.0)
    assert static / ours == pytest.approx(1.1667, abs=1e-4) and always / ours == pytest.approx(1.8667, abs=1e-4)
    assert lower_bound(inst) == 30.0                       # Theorem 1 at d = 2: 2R + 16T
    assert cost(inst, realize(k1_candidate(8, [1, 7]), inst)) == 30.0   # Fig. 3: shifts {1, 7}


def test_theorem1_and_general_bound_vectors():
    assert [thm1_lb_T(8, d) for d in range(1, 8)] == [28, 16, 12, 10, 9, 8, 7]
    for n in range(2, 65):
        assert thm1_lb_T(n, 1) == n * (n - 1) // 2 and thm1_lb_T(n, n - 1) == n - 1
        assert thm1_lb_T(n, 2) == n * n // 4
    assert [lb_T(8, 2, d) for d in range(1, 5)] == [8, 6, 5, 4]
    assert [lb_T(16, 2, d) for d in range(1, 9)] == [21, 16, 13, 12, 11, 10, 9, 8]
    from heuristics.a2a.bounds import dp_bound
    for n in range(2, 65):          # the generalized bound reduces to Theorem 1 for k = 1
        assert dp_bound(n - 1, 1, n - 1) == tuple(thm1_lb_T(n, d) for d in range(1, n))


def test_k1_shift_costs_and_greedy():
    assert (shift_cost(8, [1, 7]), shift_cost(8, [1, 3]), shift_cost(8, [1, 2, 7]), shift_cost(8, [1])) \
        == (16, 20, 13, 28)                                # {1,3} is 20, not the paper's 19 (A18)
    assert greedy_order(8) == [1, 7, 2, 3, 5, 4, 6]
    assert list(prefix_costs(8, greedy_order(8))) == [28, 16, 13, 11, 9, 8, 7]
    assert greedy_order(16) == [1, 15, 2, 5, 11, 12, 3, 7, 9, 13, 4, 6, 8, 10, 14]
    assert list(prefix_costs(16, greedy_order(16))) == [120, 64, 53, 44, 37, 32, 28, 24, 22, 20, 19,
                                                        18, 17, 16, 15]


def test_fig13_calibration_seq_and_greedy_n64():
    lb = np.array([thm1_lb_T(64, d) for d in range(1, 64)])
    seq = prefix_costs(64, seq_order(64)) / lb
    gr = prefix_costs(64, greedy_order(64)) / lb
    assert seq.max() == pytest.approx(2.227, abs=1e-3) and int(seq.argmax()) + 1 == 13
    assert gr.max() == pytest.approx(1.422, abs=1e-3)
    assert np.all(gr >= 1 - 1e-12)


def test_lb_achievable_n8_d4_with_non_circulant_permutations():
    """Spec 2.3: A = P1 + P1^2 + P2 + P2^2 + P3 + P3^2 + P4 reaches the LB 10 for n = 8, d = 4."""
    n = 8
    perms = [np.roll(np.arange(n), -1), (np.arange(n) + 3) % n,
             np.array([5, 0, 7, 2, 1, 4, 3, 6]), np.array([7, 6, 1, 0, 3, 2, 5, 4])]
    phases = []
    for P, hmax in zip(perms, (2, 2, 2, 1)):
        arcs = np.stack([np.arange(n), P], 1)
        rounds = []
        for h in range(1, hmax + 1):
            walk = [np.arange(n)]
            for _ in range(h):
                walk.append(P[walk[-1]])
            rounds.append([Group(np.stack(walk, 1), np.ones(n))])
        phases.append(Phase(arcs, rounds))
    inst = unit(8, R=0.0)
    bad, m = check_strategy(inst, A2AStrategy(phases))
    assert bad == [] and m["hop_sum"] == 10 == thm1_lb_T(8, 4)


def test_circulant_base_vectors():
    for n, G, c in ((8, (1, 3), 9), (16, (1, 7), 27), (32, (1, 15), 87)):
        rounds = circ.pack(n, G, range(1, n), 2)
        assert circ.rounds_cost(rounds) == c >= lb_T(n, 2, 1)
        assert circ.rounds_cost(circ.pack(n, (1, n - 1), range(1, n), 2)) == {8: 10, 16: 36, 32: 136}[n]
    assert circ.best_base(8, 2) == ((1, 3), 9) and circ.best_base(16, 2) == ((1, 7), 27)


def test_genkautz_repair_keeps_k_regular_without_loops():
    for n in range(5, 41):
        for k in (2, 3):
            a = genkautz(n, k)
            assert not np.any(a[:, 0] == a[:, 1])
            assert np.all(np.bincount(a[:, 0], minlength=n) == k)
            assert np.all(np.bincount(a[:, 1], minlength=n) == k)
            assert len({tuple(x) for x in a.tolist()}) == len(a)


@pytest.mark.parametrize("n,k", [(8, 1), (8, 2), (16, 2), (9, 3)])
def test_every_candidate_verifies_and_respects_the_bound(n, k):
    """Spec 7.9 invariants for every (family, d) candidate, and heuristic >= LB per d."""
    inst = unit(n, k)
    if k == 1:
        from heuristics.a2a.rdc import k1_curve
        shifts, _ = k1_curve(n)
        cands = [k1_candidate(n, shifts[:d]) for d in range(1, n)]
    else:
        cands = [c for f in ("circulant", "genkautz", "direct") for c in family_candidates(n, k, f)]
    for c in cands:
        st = realize(c, inst)
        bad, m = check_strategy(inst, st)
        assert bad == [], (c.family, c.d, bad[:2])
        assert m["hop_sum"] == c.hop_sum >= lb_T(n, k, m["d"])


def test_small_k2_chains_reach_spec_values():
    assert [c.hop_sum for c in family_candidates(8, 2, "circulant")] == [9, 7, 5, 4]
    assert [c.hop_sum for c in family_candidates(16, 2, "circulant")] == [27, 23, 19, 16, 13, 11, 9, 8]
    assert [c.hop_sum for c in family_candidates(8, 2, "genkautz")][1:] == [6, 5, 4]   # = LB


@pytest.mark.parametrize("wl,n,k", [("random", 8, 1), ("zipf", 8, 2), ("random", 12, 2), ("zipf", 16, 1)])
def test_rdc_and_baselines_verify_on_skewed_traffic(wl, n, k):
    inst = generate(wl, n=n, k=k, R=2e-5, size_mb=16, seed=7)
    lb = lower_bound(inst)
    res = rdc(inst)
    st = realize(res.best, inst, res.label)
    assert cost(inst, st) == pytest.approx(res.cost) and res.cost >= lb
    for name, fn in BASELINES.items():
        st = fn(inst)
        # FAST and DirectConnect may split flows (A23): only the fluid bound holds for them
        assert st.info.get("splittable", False) == (name in ("fast", "directconnect-gk",
                                                             "directconnect-circulant")), name
        bound = fluid_lower_bound(inst) if st.info.get("splittable") else lb
        assert cost(inst, st) >= bound - 1e-12, name


def test_relabel_reports_the_checker_cost_and_stops_at_a_swap_local_optimum():
    """The reported cost is what the checker recomputes for the relabeled strategy, and the
    search converged: no pairwise swap of the returned labeling improves it."""
    from heuristics.a2a.relabel import relabel
    from heuristics.a2a.strategy import FlowTable

    n = 6
    pi = np.random.default_rng(0).permutation(n)
    A = np.ones((n, n)) - np.eye(n)
    A[pi, np.roll(pi, -1)] = 10.0                 # planted: heavy flows on one hidden ring
    inst = A2AInstance(n, 1, 0.0, Link.from_dict({"T": 1.0}), traffic=A)
    for shifts in ([1], [1, 5], [1, 5, 2]):
        cand = k1_candidate(n, shifts)
        lab, c, base = relabel(cand, inst, passes=50, restarts=2, max_evals=10 ** 6)
        assert sorted(lab) == list(range(n))
        assert c == pytest.approx(cost(inst, realize(cand, inst, lab)))
        assert base == pytest.approx(cost(inst, realize(cand, inst)))
        table = FlowTable(cand)
        for a in range(n):
            for b in range(a + 1, n):
                sw = lab.copy()
                sw[[a, b]] = sw[[b, a]]
                assert table.cost(A, inst.link, 0.0, sw) >= c - 1e-12
    # d = 1 ring: the planted labeling (heavy flows in the 1-hop round) is the optimum, 24
    lab, c, base = relabel(k1_candidate(n, [1]), inst, passes=50, restarts=4)
    assert c == 24.0 < base == 114.0


def test_relabel_pays_only_topologies_that_carry_traffic():
    """Review D2: at large R the best labeling empties topologies (d_eff 1, cost 110) although
    another labeling has less transmission (7 on 2 topologies, cost 207)."""
    from heuristics.a2a.relabel import relabel
    from heuristics.a2a.strategy import FlowTable

    inst = A2AInstance(6, 1, 100.0, Link.from_dict({"T": 1.0}), traffic=SPARSE_6)
    cand = k1_candidate(6, [1, 5, 3, 2])
    lab, c, base = relabel(cand, inst, passes=50, restarts=2)
    assert FlowTable(cand).evaluate(inst.A, inst.link, lab) == (1, 10.0) and c == 110.0
    lab0, t0, _ = relabel(cand, inst, passes=50, restarts=2, R=0.0)
    assert t0 == 7.0 and FlowTable(cand).evaluate(inst.A, inst.link, lab0)[0] == 2
    assert cost(inst, realize(cand, inst, lab)) == 110.0 == base - 204.0


@pytest.mark.parametrize("make", [lambda R: unit(16, 2, R), lambda R: unit(9, 1, R),
                                  lambda R: generate("zipf", n=8, k=2, R=R, size_mb=8, T=1.0, seed=1)])
def test_rdc_chosen_d_non_increasing_in_R(make):
    """Spec 7.11 on rdc itself: the d it picks (and the checker confirms) never grows with R."""
    ds = []
    for R in (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 1e3):
        inst = make(R)
        res = rdc(inst, do_relabel=False)
        bad, m = check_strategy(inst, realize(res.best, inst, res.label))
        assert bad == [] and m["d"] == res.d and m["total_cost"] == pytest.approx(res.cost)
        ds.append(res.d)
    assert all(a >= b for a, b in zip(ds, ds[1:])) and ds[-1] == 1 and ds[0] > 1, ds


def test_fast_on_uniform_is_direct_round_robin():
    for n, k in ((8, 1), (8, 2), (13, 3)):
        inst = generate("uniform", n=n, k=k, R=3e-6, size_mb=8)
        tau = float(inst.link.tau(8e6))
        assert cost(inst, fast(inst)) == pytest.approx(-(-(n - 1) // k) * (3e-6 + tau))


def test_k1_static_baselines_coincide_with_our_ring():
    inst = generate("uniform", n=8, k=1, R=1e-6, size_mb=4)
    ring = cost(inst, realize(k1_candidate(8, [1]), inst))
    for name in ("directconnect-gk", "directconnect-circulant", "topoopt"):
        assert cost(inst, BASELINES[name](inst)) == pytest.approx(ring), name
    assert topoopt_shifts(64, 2) == [1, 7] and topoopt_shifts(16, 2) == [1, 3]


def test_simulator_matches_analytic_for_one_chunk_flows():
    inst = generate("uniform", n=8, k=2, R=1e-6, size_mb=4)       # one 4 MB chunk per flow
    for c in family_candidates(8, 2, "circulant") + family_candidates(8, 2, "genkautz"):
        st = realize(c, inst)
        assert simulate(inst, st)["total"] == pytest.approx(cost(inst, st), rel=1e-12)
    # a contention-free 1-chunk round of h hops takes h (alpha + beta c)
    h = 5
    path = np.arange(h + 1)[None, :]
    st = A2AStrategy([Phase(np.stack([np.arange(h), np.arange(1, h + 1)], 1), [[Group(path, np.array([4e6]))]])])
    sim = simulate(inst, st)
    assert sim["transmission"] == pytest.approx(h * (500e-9 + 4e6 * 8 / 800e9))


def test_lower_bound_curve_is_per_d_valid_on_skewed_relabeled_strategies():
    """The per-d bound (tau_min per source, max'ed with the fluid bound) against every
    candidate of our families realized under relabelings on skewed traffic."""
    from heuristics.a2a.relabel import relabel

    for wl, n, k in (("zipf", 8, 2), ("random", 9, 3), ("zipf", 7, 1)):
        inst = generate(wl, n=n, k=k, R=3.0, size_mb=4, T=1.0, seed=5)
        curve = lower_bound_curve(inst)
        if k == 1:
            from heuristics.a2a.rdc import k1_curve
            cands = [k1_candidate(n, k1_curve(n)[0][:d]) for d in range(1, n)]
        else:
            cands = [c for f in ("circulant", "genkautz", "direct") for c in family_candidates(n, k, f)]
        for c in cands:
            lab, _, _ = relabel(c, inst, max_evals=300)
            for label in (None, lab):
                bad, m = check_strategy(inst, realize(c, inst, label))
                assert bad == [] and m["total_cost"] >= curve[m["d"] - 1] - 1e-9


SPARSE_6 = [[0, 0, 3, 4, 0, 0], [0, 0, 0, 0, 0, 2], [0, 3, 0, 0, 0, 0], [0, 0, 2, 0, 0, 0],
            [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]


def sparse_instance(n, k, p, seed, R=2.0):
    rng = np.random.default_rng(seed)
    A = (rng.random((n, n)) < p) * rng.integers(1, 5, (n, n)).astype(float)
    np.fill_diagonal(A, 0)
    A[0, 1] = max(A[0, 1], 1.0)                      # at least one flow
    return A2AInstance(n, k, R, Link.from_dict({"T": 1.0}), traffic=A)


def test_sparse_traffic_rdc_pays_only_topologies_that_carry_traffic():
    """Review D2: with sparse traffic a labeling can empty topologies; rdc must choose d on the
    cost the checker recomputes (R d_eff + transmission), and report exactly that cost."""
    inst = A2AInstance(6, 1, 2.0, Link.from_dict({"T": 1.0}), traffic=SPARSE_6)
    res = rdc(inst)
    bad, m = check_strategy(inst, realize(res.best, inst, res.label))
    assert bad == [] and res.cost == m["total_cost"] == 11.0 and res.d == m["d"] == 2
    for n, k, p, seed in ((6, 1, 0.1, 0), (8, 2, 0.1, 1), (8, 2, 0.3, 2), (9, 3, 0.2, 3), (7, 1, 0.4, 4)):
        inst = sparse_instance(n, k, p, seed)
        res = rdc(inst)
        bad, m = check_strategy(inst, realize(res.best, inst, res.label))
        assert bad == [] and res.cost == pytest.approx(m["total_cost"]) and res.d == m["d"]
        assert res.cost >= lower_bound(inst) - 1e-12
        curve = lower_bound_curve(inst)        # per d_eff (constant in transmission beyond its end)
        for row in res.table:
            d = row["d"]
            tx_lb = curve[min(d, len(curve)) - 1] - inst.R * min(d, len(curve))
            assert row["total_cost"] >= inst.R * d + tx_lb - 1e-12


def test_figure_pipeline_on_sparse_traffic_matches_the_checker():
    import benchmarks.a2a.figs as figs

    inst = A2AInstance(6, 1, 0.0, Link.from_dict({"T": 1.0}), traffic=SPARSE_6)
    ev = figs.evaluate(inst)
    assert any(d < ev["cands"][c].d for d, c in zip(ev["d"], ev["line_cand"]))   # emptied topologies
    for i in range(len(ev["d"])):
        figs.our_strategy(inst, ev, i)      # asserts checker d_eff and transmission == the line's
    rows = figs.setting_rows(inst, ev, 2.0, sim=False)
    assert rows[0]["cost"] == 11.0 and rows[0]["d"] == 2


def test_topoopt_declines_when_too_few_coprime_shifts():
    from heuristics.a2a.baselines import topoopt, topoopt_declines

    for n, k in ((4, 3), (6, 3), (6, 4), (6, 5), (8, 5), (8, 7), (9, 7), (10, 5), (10, 9)):
        reason = topoopt_declines(n, k)
        assert reason and "coprime" in reason
        with pytest.raises(ValueError, match="coprime"):
            topoopt(unit(n, k))
    for n in range(3, 13):                 # wherever it is built, it verifies
        for k in range(1, n):
            if topoopt_declines(n, k) is None:
                shifts = topoopt_shifts(n, k)
                assert len(set(shifts)) == k and all(np.gcd(s, n) == 1 for s in shifts)
                cost(unit(n, k), topoopt(unit(n, k)))


def test_k2_size_cap_declines_large_base_searches():
    from toolkit.methods.a2a import rdc_applicable, static_applicable
    from toolkit.registry import RunConfig, problem

    methods = problem("a2a").methods
    cfg = methods["rdc"].configure(RunConfig())          # the method's declared options

    def rdc_cfg(**options):
        return methods["rdc"].configure(RunConfig(options=options))

    assert rdc_applicable(unit(64, 2), cfg) is None
    assert static_applicable(unit(33, 3), methods["static"].configure(RunConfig())) is None
    assert "n <= 64" in rdc_applicable(unit(65, 2), cfg)
    assert "C(23, 4)" in rdc_applicable(unit(24, 4), cfg)          # 8855 base sets
    assert rdc_applicable(unit(24, 4), rdc_cfg(max_base_sets="10000")) is None
    assert "C(127, 2)" in rdc_applicable(unit(128, 2), rdc_cfg(max_n="128"))
    assert rdc_applicable(unit(128, 1), cfg) is None                 # k = 1 is not capped here
