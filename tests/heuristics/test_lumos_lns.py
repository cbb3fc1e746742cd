"""The large-neighbourhood search after the ejection chains (heuristics.lumos_lns, option
``lns`` of itv-mdmcf): deterministic, always a valid assignment that passes the checker,
never keeping fewer old circuits than the chain run it starts from, and often more."""
from __future__ import annotations

import time

import numpy as np

from heuristics import lumos_eject_steps as st
from heuristics import lumos_lns as ln
from heuristics.lumos_chain import move_buffer, new_group
from heuristics.lumos_eject import Work, _generator, eject_connection
from heuristics.lumos_reconfig import _realizes, _rewiring, group_bound, itv_configure, old_even
from instances.lumos import Fabric, ReconfigInstance
from instances.lumos_check import check_config
from instances.lumos_workloads import job_sequence, topology_sequence


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


def test_search_stats_budget_and_goal():
    C, old = _groups()[4]
    G = new_group(np.asarray(C, np.int64), old)
    ua, ub = st.keep(G, C)
    wk = np.array([0, st.NO_LIMIT, 0], np.int64)
    moves = move_buffer(len(C))
    st.run(G, ua, ub, np.array([0, len(ua), 0, 0, 0], np.int64), 4000, 0, False, False,
           _generator(None), 1000, 2, wk, st.NO_LIMIT, moves)
    G = ln.with_journal(G)
    kept0 = int(G[5][0])
    # goal already met: no iteration
    lw = np.array([0, 5000, 0], np.int64)
    assert ln.search(G, ln.RUIN, ln.TEMP, ln.STATES, _generator(0), lw, moves, kept0).sum() == 0
    assert lw[0] == 0
    lw = np.array([0, 5000, 0], np.int64)
    stats = ln.search(G, ln.RUIN, ln.TEMP, ln.STATES, _generator(0), lw, moves, 1 << 62)
    assert stats[0] > 0 and stats[1] <= stats[0] and stats[2] <= stats[1]
    over = (ln.RUIN + 2) * (ln.STATES + 2) + 2 + len(old) * len(C)   # one iteration at most
    assert 5000 <= lw[0] < 5000 + over                  # stops at the budget
    out, inn, cnt = G[0], G[1], G[4]
    M, n = out.shape
    for m in range(M):                                  # out/inn/counts consistent
        for s in range(n):
            if out[m, s] >= 0:
                assert inn[m, out[m, s]] == s
    X = np.array([[[out[m, s] == t for t in range(n)] for s in range(n)] for m in range(M)])
    assert np.array_equal(cnt, X.sum(0) + X.sum(0).T)
    assert int(G[5][0]) == _kept(X, old) >= kept0       # the best state, restored
    assert _realizes(X.astype(np.int64), C)


def test_itv_configure_option_checker_and_time_limit():
    inst = _instance(16, 4, 16, seed=1)
    plain = itv_configure(inst, restarts=0)
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
