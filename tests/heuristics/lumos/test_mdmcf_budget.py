"""ITV-MDMCF's work budget (issue 17): the same instance gives the same configuration
whatever the clock, the load and the number of worker processes."""
from __future__ import annotations

import time

import numpy as np
import pytest

from heuristics.lumos.mdmcf.eject import Work, eject_connection
from heuristics.lumos.mdmcf.group_split import group_work
from heuristics.lumos.mdmcf.reconfig import itv_configure, old_even
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.check import check_config
from instances.lumos.workloads import topology_sequence
from toolkit.registry import OptionError, RunConfig, problem

BINDING = 1.0          # eject_work at which the budget cuts the chains of INST (checked below)


@pytest.fixture(scope="module")
def inst():
    """Fabric(16, 4, 8, 1), ring churn 0.5: 4 groups, budget-bound at eject_work=1."""
    fab = Fabric(16, 4, 8, 1)
    seq = topology_sequence(fab, 2, "rings", churn=0.5, seed=0)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    return ReconfigInstance(fab, seq[1], "cross", old)


def _rewiring(inst, conf) -> int:
    bad, m = check_config(inst, conf)
    assert not bad, bad[:3]
    return m["rewiring"]


# the chains' budget is tested without the large-neighbourhood search (lns=0), which
# recovers what the cut loses on this instance


@pytest.fixture(scope="module")
def unlimited(inst):
    return itv_configure(inst, eject_work=None, workers=1, exact_vars=0, lns=0)


@pytest.fixture(scope="module")
def bound(inst):
    return itv_configure(inst, eject_work=BINDING, workers=1, exact_vars=0, lns=0)


def test_budget_binds_on_this_instance(inst, unlimited, bound):
    """Otherwise the determinism tests below would not exercise the cut."""
    assert _rewiring(inst, bound) > _rewiring(inst, unlimited)


def test_same_result_twice_and_with_two_workers(inst, bound):
    for workers in (1, 2):
        assert np.array_equal(itv_configure(inst, eject_work=BINDING, workers=workers,
                                            exact_vars=0, lns=0).perm, bound.perm)


def test_same_result_on_a_slow_clock(inst, bound, monkeypatch):
    """A "slow machine": every clock read advances 10 s. The old 2 s guard fired at once
    there; the work budget does not read the clock, nor does the default method run."""
    now = [0.0]

    def slow():
        now[0] += 10.0
        return now[0]
    monkeypatch.setattr(time, "monotonic", slow)
    monkeypatch.setattr(time, "perf_counter", slow)
    for workers in (1, 2):
        assert np.array_equal(itv_configure(inst, eject_work=BINDING, workers=workers,
                                            exact_vars=0, lns=0).perm, bound.perm)
    default = itv_configure(inst, workers=1)            # the defaults (LNS too), slow clock
    monkeypatch.undo()
    assert np.array_equal(default.perm, itv_configure(inst, workers=1).perm)
    monkeypatch.setattr(time, "monotonic", slow)
    monkeypatch.setattr(time, "perf_counter", slow)
    run = problem("lumos-reconfig").methods["itv-mdmcf"].run
    out = run(inst, RunConfig(options={"eject_work": BINDING, "workers": 2, "exact_vars": 0,
                                      "lns": 0}))
    assert np.array_equal(out.solution.perm, bound.perm)
    assert slow() > 100                                 # the fake clock was read


def test_tiny_budget_valid_and_never_better_here(inst, unlimited):
    """Budget 1: every unit placed by the Konig swap, one run. Still checked; never worse
    than without the ejection chains (the group keeps its best candidate), and on this
    instance no better than the unlimited search."""
    tiny = itv_configure(inst, eject_work=1e-9, exact_vars=0, lns=0)
    no_eject = itv_configure(inst, eject=False, exact_vars=0)
    r = _rewiring(inst, tiny)
    assert _rewiring(inst, unlimited) <= r <= _rewiring(inst, no_eject)


def test_spent_work_places_by_konig_and_is_counted(inst):
    """eject_connection with a spent budget still realizes C_h; with an unlimited one it
    counts its work (chain states, selections) and keeps at least as many old circuits."""
    for h in range(inst.fabric.H):
        C, U = inst.C[h], old_even(inst, h)
        spent, free = Work(0), Work()
        a, b = eject_connection(C, U, work=spent), eject_connection(C, U, work=free)
        for parts in (a, b):
            S = sum(parts)
            assert np.array_equal(S + S.T, C)
            assert all(X.sum(0).max() <= 1 and X.sum(1).max() <= 1 for X in parts)
        assert free.used > 0 and not free.spent
        assert sum((X * u).sum() for X, u in zip(b, U)) >= sum((X * u).sum() for X, u in zip(a, U))


def test_group_work_scales_with_fabric():
    assert group_work(128, 16, 1, 4.0) == 4 * 128 * 16
    assert group_work(16, 8, 6, 4.0) == 4 * 16 * 8 * 6
    assert group_work(16, 8, 6, 1e-9) == 1
    assert group_work(16, 8, 6, None) is None and group_work(16, 8, 6, 0) is None
    w = Work(3)
    w.charge(2)
    assert not w.spent
    w.charge(1)
    assert w.spent


def test_user_time_limit_still_stops_and_old_option_is_gone(inst):
    """--time-limit is a user setting: with it passed, the chains fall back at once (like
    a spent budget); the removed clock option is refused."""
    spent_clock = itv_configure(inst, time_limit=1e-9, exact_vars=0)
    assert _rewiring(inst, spent_clock) <= _rewiring(inst, itv_configure(inst, eject=False,
                                                                        exact_vars=0))
    run = problem("lumos-reconfig").methods["itv-mdmcf"].run
    with pytest.raises(OptionError, match="eject_time"):
        run(inst, RunConfig(options={"eject_time": 2.0}))
