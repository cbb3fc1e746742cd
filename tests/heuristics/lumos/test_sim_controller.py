"""The simulator's OCS controller: the incremental logical topology (extend_split) and the
release of a job's units, on hand cases and random requirements."""
from __future__ import annotations

import numpy as np
import pytest

from heuristics.lumos.logical import extend_split, heuristic_decomposition
from heuristics.lumos.sim.controller import OcsController, _merge, _remove_units
from heuristics.lumos.placement import greedy_placement
from instances.lumos.fabric import Fabric
from instances.lumos.logical import LogicalInstance, LogicalSolution
from instances.lumos.placement import Cluster, Job, PlacementInstance
from instances.lumos.workloads import random_requirement


def _loads(fab, entries):
    load = np.zeros((fab.n_leaves, fab.H), dtype=np.int64)
    np.add.at(load, (entries[:, 0], entries[:, 2]), entries[:, 3])
    return load


def _dense(fab, entries):
    L = np.zeros((fab.n_leaves, fab.n_leaves), dtype=np.int64)
    np.add.at(L, (entries[:, 0], entries[:, 1]), entries[:, 3])
    return L


@pytest.mark.parametrize("seed", range(8))
def test_extend_split_keeps_the_old_split_and_respects_eq6(seed):
    fab = Fabric(4, 8, 8, 2)
    L_old = random_requirement(fab, seed, None, 0.4)
    old = heuristic_decomposition(LogicalInstance(fab, L_old)).entries
    L1 = random_requirement(fab, seed + 100, None, 0.3)
    room = fab.k_leaf - L_old.sum(axis=1)
    L1 = np.minimum(L1, np.minimum.outer(room, room) // 2)     # within the caps, roughly
    new = extend_split(fab, old, L1)
    if new is None:
        return                                                  # no spine: caller re-splits
    both = _merge(old, new)
    assert np.array_equal(_dense(fab, both), L_old + L1)        # (5): every unit placed
    assert np.array_equal(_dense(fab, new), _dense(fab, new).T)
    assert _loads(fab, both).max() <= fab.tau                   # (6)
    C = LogicalSolution(both).topology(fab)
    assert C.sum(axis=2).max() <= fab.k_spine                   # (12)


def test_extend_split_keeps_eq12_over_a_contended_old_split():
    """tau = 1: an old split loading some leaves twice on a spine (Heuristic-Decomposition's
    contention 2) may fill a Pod's spine ports; new units must not push it over k_spine."""
    fab = Fabric(2, 4, 4, 1)                                    # 4 leaves per Pod, H = 4
    old = []
    for h in range(4):                                          # leaves 0, 1 twice on every spine
        for a in (0, 1):
            old += [[a, 4 + a, h, 2], [4 + a, a, h, 2]]
    old = np.array(old)                                         # Pod spines: 4 links = k_spine
    L1 = np.zeros((8, 8), dtype=np.int64)
    L1[2, 6] = L1[6, 2] = 1                                     # leaves 2, 6 have room (load 0)
    assert extend_split(fab, old, L1) is None                   # but their Pods' spines do not


def test_extend_split_prefers_existing_circuits_and_refuses_when_full():
    fab = Fabric(2, 4, 4, 1)                                    # H = 4, 4 leaves per Pod
    L1 = np.zeros((8, 8), dtype=np.int64)
    L1[0, 4] = L1[4, 0] = 1
    R = np.zeros((4, 2, 2), dtype=np.int64)
    R[2, 0, 1] = R[2, 1, 0] = 1                                 # a spare link in group 2
    new = extend_split(fab, np.zeros((0, 4), np.int64), L1, R)
    assert sorted(map(tuple, new.tolist())) == [(0, 4, 2, 1), (4, 0, 2, 1)]
    full = np.array([[0, 5, h, 1] for h in range(4)] + [[5, 0, h, 1] for h in range(4)])
    assert extend_split(fab, full, L1, R) is None               # leaf 0 has no spine left


def test_remove_units_undoes_a_job():
    fab = Fabric(4, 8, 8, 2)
    old = heuristic_decomposition(LogicalInstance(fab, random_requirement(fab, 1, None, 0.4))).entries
    L1 = np.zeros((fab.n_leaves,) * 2, dtype=np.int64)
    L1[0, 9] = L1[9, 0] = 2
    L1[1, 13] = L1[13, 1] = 1
    new = extend_split(fab, old, L1)
    assert new is not None
    back = _remove_units(_merge(old, new), np.array([0, 1]), np.array([9, 13]), np.array([2, 1]))
    assert np.array_equal(_dense(fab, back), _dense(fab, old))


def test_controller_admit_and_release_keep_L_and_routes_consistent():
    cl = Cluster(Fabric(4, 8, 8, 2), 8)                         # 32 GPUs per Pod
    ctrl = OcsController(cl, check=True)
    busy = np.zeros(cl.n_gpus, dtype=bool)
    placed = []
    for j, job in enumerate([Job(48, tp=8, pp=2, dp=3), Job(40, tp=8, pp=5),
                             Job(24, tp=8, pp=3)]):
        p = greedy_placement(PlacementInstance(cl, busy, job))
        busy[p.gpus] = True
        ctrl.admit(p, j, 0.0)
        placed.append(p)
        assert np.array_equal(_dense(cl.fabric, ctrl.routes), ctrl.L)
        C = LogicalSolution(ctrl.routes).topology(cl.fabric)
        assert (ctrl.R >= C).all()                              # Cross Wiring realizes C
    for j in range(3):
        ctrl.release(j)
        assert np.array_equal(_dense(cl.fabric, ctrl.routes), ctrl.L)
    assert not ctrl.L.any() and len(ctrl.routes) == 0


def _remove_units_reference(entries, a, b, v):
    """Direct transcription of the rule: per pair, its forward rows (a < b) in spine order
    give up units; each forward row's reverse rows (b, a, h) lose the same."""
    e = entries.copy()
    for x, y, k in zip(a.tolist(), b.tolist(), np.asarray(v).tolist()):
        lo, hi = min(x, y), max(x, y)
        rows = sorted(np.flatnonzero((e[:, 0] == lo) & (e[:, 1] == hi)).tolist(),
                      key=lambda r: (e[r, 2], r))
        for r in rows:
            take = min(k, int(e[r, 3]))
            if take <= 0:
                continue
            k -= take
            e[r, 3] -= take
            e[(e[:, 0] == hi) & (e[:, 1] == lo) & (e[:, 2] == e[r, 2]), 3] -= take
    return e[e[:, 3] > 0]


def _random_split(rng, n_leaves, n_rows, H):
    a = rng.integers(0, n_leaves // 2, n_rows)
    b = a + n_leaves // 2
    h = rng.integers(0, H, n_rows)
    a, b, h = np.unique(np.stack([a, b, h], axis=1), axis=0).T
    c = rng.integers(1, 4, len(a))
    return np.concatenate([np.stack([a, b, h, c], 1), np.stack([b, a, h, c], 1)]), a, b


@pytest.mark.parametrize("seed", range(6))
def test_remove_units_matches_the_rule_on_random_splits(seed):
    rng = np.random.default_rng(seed)
    e, a, b = _random_split(rng, 24, 60, 4)
    pick = rng.choice(len(a), 10, replace=False)
    pa, pb = a[pick], b[pick]
    _, first = np.unique(np.minimum(pa, pb) * 100 + np.maximum(pa, pb), return_index=True)
    pa, pb = pa[first], pb[first]
    swap = rng.random(len(pa)) < 0.5                       # either orientation names a pair
    pa, pb = np.where(swap, pb, pa), np.where(swap, pa, pb)
    v = rng.integers(1, 6, len(pa))
    got = _remove_units(e, pa, pb, v)
    want = _remove_units_reference(e, pa, pb, v)
    assert np.array_equal(got[np.lexsort(got.T[::-1])], want[np.lexsort(want.T[::-1])])


def test_verification_time_is_not_charged_as_algorithm_time(monkeypatch):
    """``check=True`` verifies each configuration; Reconfiguration.wall_s (the time JWT is
    charged, [001]) is the requirement + topology + reconfiguration only: a check that takes
    an hour on the controller's clock (moved by the test, no sleep) is not in it."""
    import time
    from dataclasses import replace

    from heuristics.lumos.sim import controller

    hour, moved = 3600.0, [0.0]

    class Clock:                      # the controller's time: frozen but for what the check took
        def __getattr__(self, name):
            return getattr(time, name)

        def perf_counter(self):
            return moved[0]

    monkeypatch.setattr(controller, "time", Clock())
    cl = Cluster(Fabric(4, 8, 8, 2), 8)
    ctrl = OcsController(cl, check=True)
    real = ctrl._prob.check

    def slow_check(inst, sol):
        moved[0] += hour
        return real(inst, sol)

    ctrl._prob = replace(ctrl._prob, check=slow_check)
    p = greedy_placement(PlacementInstance(cl, np.zeros(cl.n_gpus, dtype=bool),
                                           Job(48, tp=8, pp=2, dp=3)))
    rec = ctrl.admit(p, 0, 0.0)
    assert moved[0] == hour                       # the check ran, inside admit
    assert rec is not None and rec.wall_s == 0.0   # none of the check's hour
