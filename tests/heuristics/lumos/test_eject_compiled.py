"""The compiled ejection chains (heuristics.lumos.mdmcf.eject on numba, issue 17 item 2) give the
same assignments and charge the same work as the former Python code
(tests/heuristics/lumos/ref_eject.py), seeds and budgets included."""
from __future__ import annotations

import time

import numpy as np
import pytest

from heuristics.lumos.mdmcf.eject import Work, eject_connection
from heuristics.lumos.mdmcf.reconfig import itv_configure, old_even
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.workloads import job_sequence, topology_sequence
from tests.heuristics.lumos import ref_eject as ref

# (P, H, K): groups of 6-16 Pods over 2-16 even OCSes
DIMS = [(6, 2, 4), (8, 2, 8), (8, 2, 16), (12, 2, 16), (16, 2, 16), (16, 2, 32)]
RUNS = [{}, {"direct_first": True}, {"seed": 0}, {"seed": 3, "direct_first": True},
        {"max_states": 0}, {"max_states": 30, "rekeep_states": 5}, {"improve": False}]


def _groups(kind: str, seed: int):
    """(C_h, old even matrices) of every group of one step, old = ITV-MCF's previous one."""
    out = []
    for P, H, K in DIMS:
        fab = Fabric(P, H, K, 1)
        seq = job_sequence(fab, 2, seed=seed) if kind == "jobs" else \
            topology_sequence(fab, 2, "rings", churn=0.3, seed=seed)
        old = itv_configure(ReconfigInstance(fab, seq[0], "cross"), aware=False)
        inst = ReconfigInstance(fab, seq[1], "cross", old)
        out += [(seq[1][h], old_even(inst, h)) for h in range(H)]
    return out


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and all(
        np.array_equal(x, y) for x, y in zip(a, b)))


@pytest.mark.parametrize("kind", ["rings", "jobs"])
@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_equals_python_reference(kind, seed):
    n_changed = 0
    for C, old in _groups(kind, seed):
        for kw in RUNS:
            for limit in (None, 40, 300):           # unlimited, and budgets that bind
                w, rw = Work(limit), ref.Work(limit)
                got = eject_connection(C, old, work=w, **kw)
                want = ref.eject_connection(C, old, work=rw, **kw)
                assert _same(got, want), (kind, seed, len(C), len(old), kw, limit)
                assert w.used == rw.used
                n_changed += got is not None and any((g != o).any() for g, o in zip(got, old))
    assert n_changed > 100                          # the cases do rewire


def test_budget_shared_by_runs_as_before():
    """One Work across the runs of a group (as lumos_reconfig does): the same runs cut."""
    for C, old in _groups("rings", 2)[-4:]:
        w, rw = Work(500), ref.Work(500)
        for kw in RUNS[:4]:
            assert _same(eject_connection(C, old, work=w, **kw),
                         ref.eject_connection(C, old, work=rw, **kw))
            assert w.used == rw.used
        assert w.spent


def test_deadline_paths():
    """A user deadline: read between units and re-keep attempts (the resumable calls); one
    far away changes nothing, one passed places every unit by the Konig fallback, as the
    reference does."""
    groups = _groups("rings", 3)[-6:]
    for C, old in groups:
        far = time.monotonic() + 3600
        assert _same(eject_connection(C, old, work=Work(None, far), seed=1),
                     eject_connection(C, old, seed=1))
        past = time.monotonic() - 1
        assert _same(eject_connection(C, old, work=Work(None, past)),
                     ref.eject_connection(C, old, work=ref.Work(None, past)))
        assert _same(eject_connection(C, old, work=Work(None, past)),
                     eject_connection(C, old, work=Work(0)))


def test_deterministic_and_seeds_independent_of_call_order():
    """The re-seeded per-thread Generator: a seed gives the same result whatever ran before."""
    C, old = _groups("rings", 4)[-1]
    first = {s: eject_connection(C, old, seed=s) for s in (5, 6, None)}
    for s in (6, None, 5, 5):
        assert _same(eject_connection(C, old, seed=s), first[s])
    assert not _same(first[5], first[6]) or not _same(first[5], first[None])
