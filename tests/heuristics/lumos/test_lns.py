"""The large-neighbourhood search after the ejection chains (heuristics.lumos.mdmcf.lns, option
``lns`` of itv-mdmcf): deterministic, always a valid assignment that passes the checker,
never keeping fewer old circuits than the chain run it starts from, and often more; its
ruin with the put-back extension keeps placed + pending units = C and undoes exactly."""
from __future__ import annotations

import time

import numpy as np

from heuristics.lumos.mdmcf import eject_steps as st
from heuristics.lumos.mdmcf import lns as ln
from heuristics.lumos.mdmcf.chain import move_buffer, new_group
from heuristics.lumos.mdmcf.eject import Work, _generator, eject_connection
from heuristics.lumos.mdmcf.group_split import _realizes, _rewiring, group_bound
from heuristics.lumos.mdmcf.reconfig import itv_configure, old_even
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.check import check_config
from instances.lumos.workloads import job_sequence, topology_sequence
from toolkit.registry import RunConfig, problem


def _instance(P, H, K, kind="rings", seed=0):
    """Step 1 of a sequence, old = ITV-MCF's realization of step 0."""
    fab = Fabric(P, H, K, 1)
    seq = job_sequence(fab, 2, seed=seed) if kind == "jobs" else \
        topology_sequence(fab, 2, "rings", churn=0.2, seed=seed)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"), aware=False)
    return ReconfigInstance(fab, seq[1], "cross", old)


def _groups():
    out = []
    for P, H, K, seed in [(8, 2, 16, 0), (12, 2, 16, 1), (16, 2, 32, 0), (16, 4, 16, 2)]:
        inst = _instance(P, H, K, seed=seed)
        out += [(inst.C[h], old_even(inst, h)) for h in range(H)]
    return out


def _kept(parts, old) -> int:
    return int((np.asarray(parts) * old).sum())


def test_never_worse_valid_and_deterministic():
    better = 0
    for C, old in _groups():
        base = eject_connection(C, old)
        for kw in ({}, {"seed": 3, "direct_first": True}):
            base = eject_connection(C, old, **kw)
            got = eject_connection(C, old, lns_work=3000, **kw)
            again = eject_connection(C, old, lns_work=3000, **kw)
            assert all(np.array_equal(a, b) for a, b in zip(got, again))
            assert _realizes(got, C)
            assert _kept(got, old) >= _kept(base, old)
            better += _kept(got, old) > _kept(base, old)
            odd = np.transpose(old, (0, 2, 1))
            # mirrored old: eq. (7) = 2 (R - kept) + 2 (units - kept), never below the bound
            rew = _rewiring(got, old, odd)
            assert rew == 2 * old.sum() + 2 * np.triu(C, 1).sum() - 4 * _kept(got, old)
            assert rew >= group_bound(C, old, odd)
    assert better >= 3                                  # it does find more kept circuits


def _chain_run(C, old):
    G = new_group(np.asarray(C, np.int64), old)
    ua, ub = st.keep(G, C)
    wk = np.array([0, st.NO_LIMIT, 0], np.int64)
    moves = move_buffer(len(C))
    st.run(G, ua, ub, np.array([0, len(ua), 0, 0, 0], np.int64), 4000, 0, False, False,
           _generator(None), 1000, 2, wk, st.NO_LIMIT, moves)
    return ln.with_journal(G), moves


def test_search_stats_budget_and_goal():
    C, old = _groups()[4]
    G, moves = _chain_run(C, old)
    kept0 = int(G[5][0])
    # goal already met: no iteration
    lw = np.array([0, 5000, 0], np.int64)
    assert ln.search(G, ln.RUIN, ln.EXTEND, ln.TEMP, ln.STATES, _generator(0), lw, moves,
                     kept0, ln.NPICK).sum() == 0
    assert lw[0] == 0
    lw = np.array([0, 5000, 0], np.int64)
    stats = ln.search(G, ln.RUIN, ln.EXTEND, ln.TEMP, ln.STATES, _generator(0), lw, moves,
                      1 << 62, ln.NPICK)
    assert stats[0] > 0 and stats[1] <= stats[0] and stats[2] <= stats[1]
    assert stats[3] <= lw[0]                            # work at the last new best
    M, n = old.shape[0], len(C)
    units = ln.NPICK * (ln.RUIN + ln.EXTEND + 2)        # one iteration at most
    over = units * (ln.STATES + 2) + (ln.NPICK * ln.EXTEND + 1) * (1 + M * n) + 2
    assert 5000 <= lw[0] < 5000 + over                  # stops at the budget
    out, inn, cnt = G[0], G[1], G[4]
    for m in range(M):                                  # out/inn/counts consistent
        for s in range(n):
            if out[m, s] >= 0:
                assert inn[m, out[m, s]] == s
    X = np.array([[[out[m, s] == t for t in range(n)] for s in range(n)] for m in range(M)])
    assert np.array_equal(cnt, X.sum(0) + X.sum(0).T)
    assert int(G[5][0]) == _kept(X, old) >= kept0       # the best state, restored
    assert _realizes(X.astype(np.int64), C)


def test_ruin_with_extension_invariants_and_undo():
    """Steps 2-4 on chain runs: placed circuits + units to re-insert = C per pair, the
    picked circuit and every extension put-back sit at their old place, the work of the
    extension scans is charged, and the journal undoes it all exactly."""
    from heuristics.lumos.mdmcf.chain import mark, undo
    fired = 0
    for C, old in _groups():
        G, _ = _chain_run(C, old)
        out, inn, oldo, cnt = G[0], G[1], G[2], G[4]
        M, n = out.shape
        rng = _generator(7)
        for trial in range(30):
            lost = [(m, s) for m in range(M) for s in range(n) if oldo[m, s] >= 0
                    and out[m, s] != oldo[m, s] and any(
                        out[k, a] == b and oldo[k, a] != b for k in range(M)
                        for a, b in ((s, oldo[m, s]), (oldo[m, s], s)))]
            if not lost:
                break
            m, s = lost[trial % len(lost)]
            t = int(oldo[m, s])
            before = [a.copy() for a in G[:5]]
            kept_before = {(k, x) for k in range(M) for x in range(n)
                           if out[k, x] >= 0 and out[k, x] == oldo[k, x]}
            ua = np.empty(ln.RUIN + ln.EXTEND + 4, np.int64)
            ub = np.empty_like(ua)
            wk = np.zeros(3, np.int64)
            mark(G)
            U = ln._ruin(G, m, s, t, 2 + trial % (ln.RUIN + 1), rng, ua, ub,
                         np.zeros(n, np.bool_), np.empty(M * n, np.int64), ln.EXTEND,
                         np.zeros((n, n), np.int64), wk, 0)
            assert U >= 0 and out[m, s] == t
            pend = np.zeros((n, n), np.int64)
            for a, b in zip(ua[:U], ub[:U]):
                pend[a, b] += 1
                pend[b, a] += 1
            assert np.array_equal(cnt + pend, C)        # placed + pending = C
            kept_now = {(k, x) for k in range(M) for x in range(n)
                        if out[k, x] >= 0 and out[k, x] == oldo[k, x]}
            fired += len(kept_now - kept_before) > 1    # put-backs beyond the picked one
            assert wk[0] >= 1 + M * n // ln.SCAN_WORK      # the extension's scans charged
            undo(G)
            for a, b in zip(G[:5], before):
                assert np.array_equal(a, b)
    assert fired >= 10                                  # the extension does put back


def test_itv_configure_option_checker_and_time_limit():
    inst = _instance(16, 4, 16, seed=1)
    plain = itv_configure(inst, restarts=0, lns=0)
    got = itv_configure(inst, restarts=0, lns=20)
    assert not check_config(inst, got)[0]
    assert check_config(inst, got)[1]["rewiring"] <= check_config(inst, plain)[1]["rewiring"]
    assert np.array_equal(got.perm, itv_configure(inst, restarts=0, lns=20).perm)
    # a user time limit already passed: the chains and the search stop early, still valid
    C, old = inst.C[0], old_even(inst, 0)
    w = Work(deadline=time.monotonic() - 1.0)
    assert _realizes(eject_connection(C, old, work=w, lns_work=10 ** 9), C)
    jobs = _instance(16, 4, 16, kind="jobs")            # job churn: at the bound, no search
    assert not check_config(jobs, itv_configure(jobs, restarts=0, lns=20))[0]


def test_default_is_the_search_and_its_seed_is_an_option():
    """itv-mdmcf's default runs the LNS (LNS units per port, no restarts); lns_seed picks
    its stream: the same seed gives the same configuration, and each is checked and keeps
    at least as much as the chains alone; the CLI's defaults are the library's."""
    import heuristics.lumos.mdmcf.group_split as R
    import toolkit.methods.lumos_reconfig as M
    assert (M.LNS, M.EJECT_WORK, M.EXACT_VARS, M.EXACT_WORK) == \
        (R.LNS, R.EJECT_WORK, R.EXACT_VARS, R.EXACT_WORK)
    inst = _instance(16, 4, 16, seed=1)
    default = itv_configure(inst)
    assert np.array_equal(default.perm, itv_configure(inst, restarts=0, lns=R.LNS).perm)
    assert np.array_equal(default.perm, itv_configure(inst, lns_seed=0).perm)
    chains = check_config(inst, itv_configure(inst, restarts=0, lns=0))[1]["rewiring"]
    confs = [itv_configure(inst, lns_seed=s) for s in (1, 2, 3)]
    for s, conf in zip((1, 2, 3), confs):
        bad, m = check_config(inst, conf)
        assert not bad and m["rewiring"] <= chains
        assert np.array_equal(conf.perm, itv_configure(inst, lns_seed=s).perm)
    assert any(not np.array_equal(c.perm, default.perm) for c in confs)   # seeds matter
    run = problem("lumos-reconfig").methods["itv-mdmcf"].run
    out = run(inst, RunConfig(options={"lns_seed": 2}))
    assert np.array_equal(out.solution.perm, confs[1].perm)
