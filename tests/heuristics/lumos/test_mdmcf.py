"""ITV-MDMCF against the ITV-ILP optimum (issue 6) and the ejection-chain assignment."""
from __future__ import annotations

import multiprocessing

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from heuristics.lumos.mdmcf.eject import Work, eject_connection
from heuristics.lumos.mdmcf.group_split import EXACT_VARS, group_bound, split_group
from heuristics.lumos.mdmcf.reconfig import itv_configure, old_even
from instances.lumos.fabric import Fabric
from instances.lumos.instance import OcsConfig, ReconfigInstance
from instances.lumos.check import check_config
from instances.lumos.workloads import job_sequence, random_topology, topology_sequence
from toolkit.registry import OptionError, RunConfig, problem

FACTOR = 1.04          # issue 6: MDMCF rewiring within 4% of ITV-ILP where the ILP solves


def _realizes(parts, C):
    S = sum(parts)
    return np.array_equal(S + S.T, C) and all(
        X.min() >= 0 and X.sum(0).max() <= 1 and X.sum(1).max() <= 1 and not np.diag(X).any()
        for X in parts)


def _steps(fab, kind, seed):
    """(instance, MDMCF configuration) along a 3-step sequence, MDMCF driving."""
    seq = job_sequence(fab, 3, seed=seed) if kind == "jobs" else \
        topology_sequence(fab, 3, "rings", churn=0.2, seed=seed)
    old, out = None, []
    for step, C in enumerate(seq):
        inst = ReconfigInstance(fab, C, "cross", old)
        conf = itv_configure(inst)
        if step:
            out.append((inst, conf))
        old = conf
    return out


CASES = [((8, 2, 16, 1), kind, seed) for kind in ("jobs", "rings") for seed in range(4)] + \
        [((8, 4, 8, 1), kind, seed) for kind in ("jobs", "rings") for seed in range(2)]


@pytest.fixture(scope="module")
def mdmcf_vs_ilp():
    """Per step: (MDMCF rewiring, ITV-ILP optimum, ITV-ILP status, sum of group_bound, kind)."""
    ilp = problem("lumos-reconfig").methods["itv-ilp"]
    rows = []
    for dims, kind, seed in CASES:
        for inst, conf in _steps(Fabric(*dims), kind, seed):
            bad, m = check_config(inst, conf)
            assert not bad, bad[:3]                         # independent checker
            res = ilp.run(inst, RunConfig(backend="highs")).solver
            floor = sum(group_bound(inst.C[h], old_even(inst, h), old_even(inst, h, 1))
                        for h in range(inst.fabric.H))
            lp = check_config(inst, itv_configure(inst, exact_vars=EXACT_VARS))
            assert not lp[0], lp[0][:3]
            LP_REWIRING.append(lp[1]["rewiring"])
            rows.append((m["rewiring"], res.objective, res.status, floor, kind))
    return rows


LP_REWIRING: list = []      # itv-mdmcf-lp on the same steps as the fixture's rows


def test_mdmcf_never_below_ilp_optimum(mdmcf_vs_ilp):
    assert all(status == "optimal" for _, _, status, _, _ in mdmcf_vs_ilp)
    assert all(r >= opt - 1e-6 for r, opt, _, _, _ in mdmcf_vs_ilp)


def test_group_bound_below_ilp_optimum(mdmcf_vs_ilp):
    """group_bound (MDMCF stops a group's candidates there) is a valid lower bound, and
    tight on some steps (where it saves the restarts)."""
    assert all(floor <= opt + 1e-6 for _, opt, _, floor, _ in mdmcf_vs_ilp)
    assert any(floor == r for r, _, _, floor, _ in mdmcf_vs_ilp)


def test_group_bound_by_hand():
    """P = 3, one OCS pair. Old link {0, 1} (0 -> 1 even, 1 -> 0 odd), new C = {1, 2}: the
    old link goes (2 circuits) and the new one comes (2): 4. Old one-way circuit 0 -> 1
    (even only), C = {0, 1}: 0 -> 1 reuses it and adds 1 -> 0 on the odd OCS: 1."""
    U = np.zeros((1, 3, 3), int)
    U[0, 0, 1] = 1
    V = np.transpose(U, (0, 2, 1)).copy()
    C = np.zeros((3, 3), int)
    C[1, 2] = C[2, 1] = 1
    assert group_bound(C, U, V) == 4
    C2 = np.zeros((3, 3), int)
    C2[0, 1] = C2[1, 0] = 1
    assert group_bound(C2, U, np.zeros_like(U)) == 1
    assert group_bound(C2, U, V) == 0


def test_mdmcf_within_factor_of_ilp(mdmcf_vs_ilp):
    total = sum(r for r, _, _, _, _ in mdmcf_vs_ilp)
    opt = sum(o for _, o, _, _, _ in mdmcf_vs_ilp)
    assert opt > 0
    assert total <= FACTOR * opt, f"MDMCF {total} vs ITV-ILP {opt}: {total / opt:.4f}x"


def test_mdmcf_per_step_vs_ilp(mdmcf_vs_ilp):
    """Per step, not summed (issue 17): itv-mdmcf-lp (the LP-guided step of mdmcf/exact.py)
    within 1.03x of the optimum on every step and at it on every job-churn step; the
    polynomial itv-mdmcf at the optimum on every job-churn step and never below
    itv-mdmcf-lp's result by construction of neither, so only checked against the optimum
    (the wider study: results/lumos/lumos_reconfig_quality.md)."""
    jobs = [(rew, opt) for rew, opt, _, _, kind in mdmcf_vs_ilp if kind == "jobs"]
    assert len(jobs) == 18 and all(rew == round(opt) for rew, opt in jobs)
    assert len(LP_REWIRING) == len(mdmcf_vs_ilp)
    for lp, (rew, opt, _, _, kind) in zip(LP_REWIRING, mdmcf_vs_ilp):
        assert opt - 1e-6 <= lp <= 1.03 * opt
        if kind == "jobs":
            assert lp == round(opt)


def test_target_equal_to_old_gives_zero_rewiring():
    fab = Fabric(8, 2, 16, 1)
    for kind, seed in (("rings", 3), ("stubs", 4)):
        C = random_topology(fab, kind, seed)
        old = itv_configure(ReconfigInstance(fab, C, "cross"))
        inst = ReconfigInstance(fab, C, "cross", old)
        bad, m = check_config(inst, itv_configure(inst))
        assert not bad and m["rewiring"] == 0
        for h in range(fab.H):                              # the module on its own too
            U = old_even(inst, h)
            parts = eject_connection(C[h], U)
            assert all(np.array_equal(X, u) for X, u in zip(parts, U))


def test_eject_fallbacks_still_realize():
    """With no chain search at all (max_states=0) every unit goes through the Konig
    alternating-path swap, after a path reversal when its endpoints have free ports of
    one kind only: the result must still realize C."""
    fab = Fabric(12, 2, 8, 1)
    for seed in range(4):
        seq = topology_sequence(fab, 2, "rings", churn=0.5, seed=seed)
        old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
        inst = ReconfigInstance(fab, seq[1], "cross", old)
        for h in range(fab.H):
            parts = eject_connection(seq[1][h], old_even(inst, h), max_states=0)
            assert parts is not None and _realizes(parts, seq[1][h])


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(4, 10), st.sampled_from([4, 6, 8]), st.integers(0, 10_000),
       st.floats(0.1, 0.9), st.sampled_from(["rings", "stubs"]))
def test_mdmcf_never_worse_than_findconnection_kempe(P, K, seed, churn, kind):
    """Without the LNS (lns=0) the group keeps the best candidate, so adding ejection
    chains never rewires more than the rewiring-aware SIMD + FindConnection /
    keep-and-insert path alone. With it (the default) those are fallbacks only
    ([DECISION] FALLBACK of heuristics.lumos.mdmcf.reconfig): measured, not guaranteed, so on a
    fixed (derandomized) set; 0 of 6000 random groups of this kind rewired more."""
    fab = Fabric(P, 2, K, 1)
    if kind == "stubs":
        seq = [random_topology(fab, "stubs", seed), random_topology(fab, "stubs", seed + 1)]
    else:
        seq = topology_sequence(fab, 2, "rings", churn=churn, seed=seed, ring_max=4)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    inst = ReconfigInstance(fab, seq[1], "cross", old)
    for h in range(fab.H):
        U = old_even(inst, h)
        base = split_group(seq[1][h], K, U, eject=False, exact_vars=0)
        for lns in (0, None):               # the chains alone; the default (LNS)
            new = split_group(seq[1][h], K, U, exact_vars=0, lns=lns)
            assert _realizes(new, seq[1][h])
            rew = [sum(np.abs(X - u).sum() for X, u in zip(p, U)) for p in (new, base)]
            assert rew[0] <= rew[1]
    bad, _ = check_config(inst, itv_configure(inst))
    assert not bad


def test_mcf_baseline_does_not_use_ejection_chains():
    """ITV-MCF stays the rewiring-oblivious baseline: eject has no effect on it."""
    fab = Fabric(8, 2, 16, 1)
    seq = topology_sequence(fab, 2, "rings", churn=0.3, seed=5)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    inst = ReconfigInstance(fab, seq[1], "cross", old)
    a = itv_configure(inst, aware=False)
    b = itv_configure(inst, aware=False, eject=False)
    assert np.array_equal(a.perm, b.perm)


def test_parallel_groups_match_serial():
    fab = Fabric(8, 4, 8, 1)
    seq = topology_sequence(fab, 2, "rings", churn=0.3, seed=7)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    inst = ReconfigInstance(fab, seq[1], "cross", old)
    assert np.array_equal(itv_configure(inst, workers=1).perm,
                          itv_configure(inst, workers=2).perm)


def _random_old(fab, seed, fill=0.7):
    """An old configuration that is not mirrored: every OCS (even and odd) an independent
    random partial permutation without self-circuits."""
    rng = np.random.default_rng(seed)
    old = OcsConfig.empty(fab, ReconfigInstance(fab, np.zeros((fab.H, fab.pods, fab.pods),
                                                              int), "cross").wire)
    for h in range(fab.H):
        for k in range(fab.k_spine):
            q = rng.permutation(fab.pods)
            q[(q == np.arange(fab.pods)) | (rng.random(fab.pods) > fill)] = -1
            old.perm[h, k] = q
    return old


@settings(max_examples=20, deadline=None)
@given(st.integers(4, 8), st.sampled_from([4, 6, 8]), st.integers(0, 10_000),
       st.sampled_from(["rings", "stubs"]))
def test_mdmcf_never_worse_on_eq7_with_non_mirrored_old(P, K, seed, kind):
    """Candidates are compared on eq. (7) with the odd OCSes, so the guarantee also holds
    when the old odd OCSes are not the mirror of the even ones (checker's rewiring)."""
    fab = Fabric(P, 2, K, 1)
    C = random_topology(fab, kind, seed)
    inst = ReconfigInstance(fab, C, "cross", _random_old(fab, seed))
    (bad, new), (bad0, base) = (check_config(inst, itv_configure(inst, eject=e, exact_vars=0))
                                for e in (True, False))
    assert not bad and not bad0
    assert new["rewiring"] <= base["rewiring"]
    assert sum(group_bound(C[h], old_even(inst, h), old_even(inst, h, 1))
               for h in range(fab.H)) <= new["rewiring"]        # a lower bound, any old


def test_spent_budget_still_realizes():
    """With the work budget spent from the start, eject places every unit by the Konig
    fallback and MDMCF still returns a checked configuration, never worse than without
    ejection chains."""
    fab = Fabric(12, 2, 8, 1)
    seq = topology_sequence(fab, 2, "rings", churn=0.5, seed=2)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    inst = ReconfigInstance(fab, seq[1], "cross", old)
    for h in range(fab.H):
        parts = eject_connection(seq[1][h], old_even(inst, h), work=Work(0))
        assert parts is not None and _realizes(parts, seq[1][h])
    (bad, m), (_, m0) = (check_config(inst, itv_configure(inst, eject_work=1e-9, eject=e,
                                                          exact_vars=0))
                         for e in (True, False))
    assert not bad and m["rewiring"] <= m0["rewiring"]


def _in_daemon(q, inst):
    q.put(itv_configure(inst, workers=2).perm)


def test_mdmcf_inside_daemonic_worker():
    """Dask and multiprocessing workers are daemonic (no children): MDMCF runs serially
    there instead of failing to start its pool."""
    fab = Fabric(8, 4, 8, 1)
    seq = topology_sequence(fab, 2, "rings", churn=0.3, seed=3)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    inst = ReconfigInstance(fab, seq[1], "cross", old)
    ctx = multiprocessing.get_context("spawn")     # no fork from pytest's threads
    q = ctx.Queue()
    proc = ctx.Process(target=_in_daemon, args=(q, inst), daemon=True)
    proc.start()
    perm = q.get(timeout=600)             # hang guards, not targets
    proc.join(timeout=600)
    assert proc.exitcode == 0
    assert np.array_equal(perm, itv_configure(inst, workers=1).perm)


def test_workers_option_and_pool_fallback(monkeypatch):
    """workers < 0 is an option error; the run's thread budget (batch --workers sets
    threads=1) and an initial configuration mean no pool; a pool that cannot start
    falls back to serial."""
    import heuristics.lumos.mdmcf.reconfig as rc
    fab = Fabric(6, 2, 4, 1)
    seq = topology_sequence(fab, 2, "rings", churn=0.5, seed=4)
    first = ReconfigInstance(fab, seq[0], "cross")
    inst = ReconfigInstance(fab, seq[1], "cross", itv_configure(first))
    run = problem("lumos-reconfig").methods["itv-mdmcf"].run
    with pytest.raises(OptionError, match="workers"):
        run(inst, RunConfig(options={"workers": -3}))
    serial = itv_configure(inst, workers=1).perm

    def no_pool(*a, **k):
        raise OSError("no semaphores here")
    monkeypatch.setattr(rc, "shared_pool", no_pool)
    out = run(inst, RunConfig(threads=1, options={"workers": 2}))
    assert np.array_equal(out.solution.perm, serial)
    assert not check_config(first, itv_configure(first, workers=2))[0]

    def failing_pool(*a, **k):
        raise AssertionError("pool creation attempted")
    assert np.array_equal(itv_configure(inst, workers=2).perm, serial)
    monkeypatch.setattr(rc, "shared_pool", failing_pool)
    assert np.array_equal(itv_configure(inst, workers=2).perm, serial)


def test_large_fabric_path_checks():
    """P >= 64: direct-first order, no re-keep, no restarts, groups on 2 processes."""
    fab = Fabric(64, 2, 4, 1)
    seq = topology_sequence(fab, 2, "rings", churn=0.3, seed=1)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    inst = ReconfigInstance(fab, seq[1], "cross", old)
    conf = itv_configure(inst, workers=2)
    bad, m = check_config(inst, conf)
    assert not bad
    assert np.array_equal(conf.perm, itv_configure(inst, workers=1).perm)
