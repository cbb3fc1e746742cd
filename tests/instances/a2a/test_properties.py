"""a2a property tests (hypothesis): generators, and the independent checker against our
constructions and against mutations of valid strategies (spec 1.3, 7.9)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import instances
from heuristics.a2a.bounds import fluid_lower_bound, lower_bound
from heuristics.a2a.rdc import rdc
from heuristics.a2a.strategy import realize
from instances.a2a.instance import A2AInstance, A2AStrategy, Group, Link, check_strategy
from instances.a2a.workloads import MB, generate

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(wl=hs.sampled_from(["uniform", "random", "zipf"]), n=hs.integers(2, 12),
       kf=hs.floats(0, 1), seed=hs.integers(0, 2 ** 32 - 1), size=hs.floats(0.01, 100),
       T=hs.sampled_from([0.0, 0.5, 2.0]), R=hs.floats(0, 10))
def test_generated_instances_are_valid_and_round_trip(wl, n, kf, seed, size, T, R):
    k = 1 + int(kf * (n - 2))
    inst = generate(wl, n=n, k=k, R=R, size_mb=size, T=T, seed=seed)
    A = inst.A
    off = ~np.eye(n, dtype=bool)
    assert A.shape == (n, n) and np.all(np.diag(A) == 0) and np.all(A[off] > 0)
    mean = size * (1.0 if T > 0 else MB)
    if wl != "random":                       # uniform and rank-Zipf have the exact mean
        assert A[off].mean() == pytest.approx(mean, rel=1e-9)
    else:
        assert A[off].max() <= 2 * mean
    back = instances.from_dict(inst.to_dict())
    assert np.array_equal(back.A, A) and (back.n, back.k, back.R) == (n, k, inst.R)
    assert back.link.tau(7.0) == pytest.approx(inst.link.tau(7.0))
    assert generate(wl, n=n, k=k, R=R, size_mb=size, T=T, seed=seed).A.tobytes() == A.tobytes()


traffic = hs.tuples(hs.integers(3, 8), hs.floats(0, 1), hs.floats(0.15, 1.0),
                    hs.integers(0, 2 ** 32 - 1), hs.sampled_from([0.0, 1.0, 5.0]))


def make_instance(params) -> A2AInstance:
    n, kf, p, seed, R = params
    k = 1 + int(kf * min(2, n - 2))
    rng = np.random.default_rng(seed)
    A = (rng.random((n, n)) < p) * rng.integers(1, 6, (n, n)).astype(float)
    np.fill_diagonal(A, 0)
    A[0, 1] = max(A[0, 1], 1.0)
    return A2AInstance(n, k, R, Link.from_dict({"T": 1.0}), traffic=A)


@FAST
@given(params=traffic)
def test_rdc_strategies_verify_at_the_reported_cost(params):
    inst = make_instance(params)
    res = rdc(inst, relabel_opts={"max_evals": 300})
    st = realize(res.best, inst, res.label)
    bad, m = check_strategy(inst, st)
    assert bad == [] and m["total_cost"] == pytest.approx(res.cost) and m["d"] == res.d
    assert lower_bound(inst) - 1e-9 <= m["total_cost"]
    assert fluid_lower_bound(inst) <= lower_bound(inst) + 1e-12
    assert check_strategy(inst, A2AStrategy.from_dict(st.to_dict())) == (bad, m)


def _flows(st):
    """(phase, round, group, row) of every flow of a strategy."""
    return [(i, j, g, r) for i, ph in enumerate(st.phases) for j, rd in enumerate(ph.rounds)
            for g, grp in enumerate(rd) for r in range(len(grp.paths))]


def _copy(st):
    return A2AStrategy.from_dict(st.to_dict())


@FAST
@given(params=traffic, pick=hs.integers(0, 10 ** 6),
       mutation=hs.sampled_from(["drop", "split", "duplicate", "reroute", "extra_arc", "loop"]))
def test_checker_rejects_mutated_strategies(params, pick, mutation):
    inst = make_instance(params)
    res = rdc(inst, do_relabel=False)
    st = realize(res.best, inst, res.label)
    assert check_strategy(inst, st)[0] == []
    i, j, g, r = _flows(st)[pick % len(_flows(st))]
    bad_st = _copy(st)
    grp = bad_st.phases[i].rounds[j][g]
    path, size = grp.paths[r].copy(), float(grp.size[r])
    n = inst.n
    if mutation == "drop":                      # a flow is never delivered
        bad_st.phases[i].rounds[j][g] = Group(np.delete(grp.paths, r, 0), np.delete(grp.size, r))
        expect = "delivered"
    elif mutation in ("split", "duplicate"):    # half (or all) of it again in a round of its own
        extra = size / 2 if mutation == "split" else size
        if mutation == "split":
            grp.size[r] = size / 2
        bad_st.phases[i].rounds.append([Group(path[None, :], np.array([extra]))])
        expect = "unsplittable" if mutation == "split" else "delivered"
    elif mutation == "reroute":                 # the path ends at a GPU it was not meant for
        grp.paths[r, -1] = (path[-1] + 1 + pick % (n - 1)) % n
        expect = ""
    elif mutation == "extra_arc":               # one more circuit out of the source: out-degree
        arcs = bad_st.phases[i].arcs
        u = int(path[0])
        add = [[u, (u + 1 + q) % n] for q in range(inst.k + 1 - int((arcs[:, 0] == u).sum()))]
        bad_st.phases[i].arcs = np.vstack([arcs, add])
        expect = "degree"
    else:                                       # a path back to its own source
        bad_st.phases[i].rounds.append([Group(np.array([[path[0], path[-1], path[0]]]),
                                              np.array([1.0]))])
        expect = ""
    bad, _ = check_strategy(inst, bad_st)
    assert bad and any(expect in b for b in bad), bad
    if mutation == "split":                     # the same split is fine when marked splittable
        bad_st.info["splittable"] = True
        assert check_strategy(inst, bad_st)[0] == []
