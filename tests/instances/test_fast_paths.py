"""The per-task overhead's fast paths (issue 29 item 3) decide as the exact code does: they
accept what it accepts, name the same first offender, and compute the same numbers."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import instances
from heuristics.delta.sim import simulate
from instances.delta.instance import DeltaInstance, DeltaSolution, _plain_tasks, check_solution
from instances.delta.dag import build_full_dag
from instances.delta.reduce import reduce_dag
from instances.delta.models import TABLE_I, Job
from instances.errors import InstanceError
from instances.lumos.instance import _first_repeat
from instances.lumos.check import fibre_paths

DERIVED = json.loads(open("instances/delta/gpt-7b-derived.json").read())


def _rebuild(inst: DeltaInstance, tasks: list) -> DeltaInstance:
    return DeltaInstance(inst.name, inst.bandwidth, inst.pods, inst.ports, inst.links, tasks,
                         inst.deps, inst.release, inst.tail, inst.q0)


@pytest.mark.parametrize("m, key, value, field", [
    (0, "link", True, "tasks[0].link"),              # a boolean is no integer
    (1, "link", 99, "tasks[1].link"),                # out of range
    (2, "dir", 2, "tasks[2].dir"),
    (1, "flows", 1.5, "tasks[1].flows"),
    (3, "volume", float("nan"), "tasks[3].volume"),
    (0, "volume", "1", "tasks[0].volume"),
    (2, "volume", 0.0, "tasks[2].volume"),
    (1, "src_gpus", [0], "tasks[1].src_gpus"),        # one GPU per flow
    (2, "link", None, "tasks[2].link"),
])
def test_the_tasks_fast_check_names_the_walks_first_offender(m, key, value, field):
    inst = instances.from_dict(copy.deepcopy(DERIVED))
    assert _plain_tasks(inst.tasks, len(inst.links))
    tasks = copy.deepcopy(inst.tasks)
    tasks[m][key] = value
    tasks[m + 1]["dir"] = 7                          # a later offender is not the one named
    assert not _plain_tasks(tasks, len(inst.links))
    with pytest.raises(InstanceError) as exc:
        _rebuild(inst, tasks)
    assert exc.value.field == field


def test_numpy_integers_still_pass_through_the_walk():
    inst = instances.from_dict(copy.deepcopy(DERIVED))
    tasks = [dict(t, link=np.int64(t["link"])) for t in inst.tasks]
    assert not _plain_tasks(tasks, len(inst.links))
    assert _rebuild(inst, tasks).n_tasks == inst.n_tasks


def _row_by_row(first: np.ndarray, topo: list[int]) -> np.ndarray:
    """The pruning as a test of its own: each task's row, from the last task to the
    first, against the longest chains through the tasks it reaches."""
    keep = first > -np.inf
    longest = np.full(first.shape, -np.inf)
    for a in topo[::-1]:
        hits = np.flatnonzero(keep[a])
        if hits.size:
            via = (first[a, hits][:, None] + longest[hits]).max(axis=0)
            keep[a, hits] = first[a, hits] > via[hits] + 1e-9 * np.maximum(1.0, np.abs(first[a, hits]))
            longest[a] = np.maximum(first[a], via)
        else:
            longest[a] = first[a]
    return keep


@pytest.mark.parametrize("name, mode, replicas, N", [
    ("gpt-7b", "async", "full", 6), ("megatron-177b", "megatron_blocking", "canonical", 6),
    ("megatron-177b", "async", "full", 3), ("mixtral-8x22b", "megatron_blocking", "full", 5)])
def test_the_one_pass_pruning_keeps_the_row_by_row_tests_edges(name, mode, replicas, N):
    """reduce_dag prunes in its reverse pass (a second vector per node); it keeps exactly
    the edges, with the same delays, that the row-by-row test keeps of the unpruned DAG."""
    job = Job(**dict(TABLE_I[name], micro_batches=N, p2p_mode=mode, replicas=replicas))
    g = build_full_dag(job)[0]
    red, full = reduce_dag(g), reduce_dag(g, prune=False)
    M = len(g.tasks)
    first = np.full((M, M), -np.inf)
    a, c = full["deps"][:, 0].astype(int), full["deps"][:, 1].astype(int)
    first[a, c] = full["deps"][:, 2]
    keep = _row_by_row(first, full["order"].tolist())
    ka, kc = np.nonzero(keep)
    assert np.array_equal(red["deps"], np.column_stack([ka, kc, first[ka, kc]]))
    assert 0 < len(red["deps"]) < len(full["deps"])                 # it does prune
    for k in ("release", "tail", "order"):
        assert np.array_equal(red[k], full[k])
    assert red["q0"] == full["q0"]


def test_the_first_late_dependency_in_file_order_is_named():
    inst = instances.from_dict(copy.deepcopy(DERIVED))
    x = np.full(len(inst.links), 2.0)
    sol = simulate(inst, x).solution(x)
    a, b = (int(v) for v in inst.deps[len(inst.deps) // 2, :2])
    late = DeltaSolution(sol.x, sol.times, sol.vol, sol.start.copy(), sol.finish)
    late.start[b] = 0.0                             # b now starts before a finishes
    late.start[int(inst.deps[-1, 1])] = 0.0         # and so does a later dependency's task
    bad, _ = check_solution(inst, late)
    first = next(i for i, (p, s, d) in enumerate(inst.deps)
                 if late.start[int(s)] < sol.finish[int(p)] + d - 1e-6 * sol.times[-1])
    p, s = (int(v) for v in inst.deps[first, :2])
    assert any(m.startswith(f"dependency {p}->{s}:") for m in bad), bad


def test_first_repeat_is_the_first_entry_equal_to_an_earlier_one():
    rng = np.random.default_rng(3)
    for _ in range(300):
        keys = rng.integers(0, 12, size=rng.integers(0, 16))
        seen, want = set(), None
        for i, k in enumerate(keys.tolist()):
            if k in seen:
                want = i
                break
            seen.add(k)
        assert _first_repeat(keys) == want


def test_fibre_paths_find_the_reverse_path_as_a_set_lookup_does():
    """Under every wiring, on configurations that break every rule (outputs used twice,
    unwired ports, Pods joined to themselves)."""
    from toolkit.registry import problem

    gen = problem("lumos-reconfig").generator
    base = {k: v[1] for k, v in gen.params.items()}
    rng = np.random.default_rng(5)
    for wiring, pods in (("cross", 8), ("uniform", 8), ("dual", 6)):
        inst = gen.run(**{**base, "pods": pods, "k_leaf": 4, "k_spine": 4, "wiring": wiring})
        fab, w = inst.fabric, inst.wire
        PK = fab.pods * fab.k_spine
        for _ in range(20):
            perm = inst.old.perm.copy()
            perm[rng.random(perm.shape) < 0.3] = -1
            hit = rng.random(perm.shape) < 0.3
            perm[hit] = rng.integers(0, perm.shape[2], size=int(hit.sum()))
            p = fibre_paths(fab, w, perm)
            key = (p["h"] * PK + p["src"]) * PK + p["dst"]
            rev = (p["h"] * PK + p["dst"]) * PK + p["src"]
            assert np.array_equal(p["bidir"], p["wired"] & np.isin(rev, key[p["wired"]]))


@pytest.mark.parametrize("rows, kept", [
    ([[0, 1, 2, 3], [4, 5, 6, -7]], True),
    ([[0, 1, 2, 3], [4, 5, 6]], False),              # ragged: the exact path
    ([[0, 1, 2, 3], [4, 5, True, 7]], False),         # a boolean is no integer
    ([[0, 1, 2, 3], [4, 5, 6.0, 7]], False),
    ([[0, 1, 2, 3], [4, 5, 6, 2**63]], False),        # beyond int64: check_tree names it
    ([[0, 1, 2, 3], [4, 5, 6, -2**63]], False),       # fits int64, not the file limit
])
def test_the_rows_check_tree_keeps_are_the_rows_int_rows_makes(rows, kept):
    """A file's integer table, typed once by check_tree and handed to int_rows, is the
    array int_rows makes itself; anything else takes the exact paths, as before."""
    from instances.errors import check_tree, int_rows_kept, int_rows_of
    from instances.lumos.instance import int_rows

    data = {"links": copy.deepcopy(rows)}
    with int_rows_kept():
        try:
            check_tree(data)
        except InstanceError:
            assert not kept
        got = int_rows_of(data["links"])
        assert (got is not None) == kept
        assert int_rows_of(data["links"]) is None            # handed out once
    if kept:
        assert got.dtype == np.int64 and np.array_equal(got, int_rows(rows, "links", 4, ""))
    assert int_rows_of(data["links"]) is None                 # nothing kept outside a block


def test_a_reconfiguration_loads_the_same_arrays_through_the_kept_rows():
    from instances.errors import int_rows_kept

    data = instances.read_json("instances/lumos/cross-rings-P8.json")
    fast = instances.from_dict(copy.deepcopy(data))
    cls = type(fast)
    with int_rows_kept():                    # an empty block: int_rows converts on its own
        slow = cls.from_dict(copy.deepcopy(data))
    assert np.array_equal(fast.C, slow.C) and np.array_equal(fast.old.perm, slow.old.perm)


def test_a_job_shapes_dag_is_built_once_and_filled_with_each_jobs_numbers(monkeypatch):
    """A sweep of bandwidths reuses one DAG shape (delta_dag._skeleton): each job's DAG,
    layout and reduction equal those built afresh, and what a caller changes in one DAG or
    instance never reaches the next."""
    import instances.delta.dag as dd

    base = dict(TABLE_I["megatron-177b"], micro_batches=6)
    jobs = [dict(base, bandwidth_gbps=bw) for bw in (200.0, 375.0)] + \
        [dict(base, bandwidth_gbps=200.0, intra_bandwidth_gbps=900.0, gpu_tflops=250.0)]
    built = []
    for job in jobs:
        monkeypatch.setattr(dd, "_SKELETONS", {})                  # afresh
        built.append((dd.build_full_dag(Job.from_dict(job)), instances.delta.instance.from_job(job)))
    monkeypatch.setattr(dd, "_SKELETONS", {})
    first = dd.build_full_dag(Job.from_dict(jobs[0]))[0]
    first.tasks[0]["src_gpus"].append(999)                          # a caller's changes
    first.names.append("X")
    first.edges.append((0, 1))
    for job, ((g0, lay0), inst0) in zip(jobs, built):
        g, lay = dd.build_full_dag(Job.from_dict(job))             # the shape reused
        assert len(dd._SKELETONS) == 1 and g.plan is not None
        assert (g.names, g.dur, g.comm, g.edges, g.tasks) == \
            (g0.names, g0.dur, g0.comm, g0.edges, g0.tasks)
        assert (lay.pods, lay.ports, lay.links) == (lay0.pods, lay0.ports, lay0.links)
        red = reduce_dag(g)                                      # its shape's plan
        red0 = reduce_dag(dd.FullDag(g0.names, g0.dur, g0.comm, g0.edges, g0.tasks))
        for k in ("deps", "release", "tail"):
            assert np.array_equal(red[k], red0[k])
        assert red["q0"] == red0["q0"]
        inst = instances.delta.instance.from_job(job)
        assert np.array_equal(inst.deps, inst0.deps) and inst.tasks == inst0.tasks
    assert jobs[0] != jobs[1] and not np.array_equal(built[0][1].deps, built[1][1].deps)


def test_a_dag_changed_after_it_was_built_is_reduced_as_it_is_now():
    import instances.delta.dag as dd

    g, _ = dd.build_full_dag(Job.from_dict(dict(TABLE_I["gpt-7b"])))
    plan = g.plan
    a = g.add("F(extra)", 5.0)
    g.edge(a, next(v for v, c in enumerate(g.comm) if c >= 0))    # a new source before a task
    assert g.plan is None and plan is not None
    red = reduce_dag(g)
    fresh = reduce_dag(dd.FullDag(list(g.names), list(g.dur), list(g.comm), list(g.edges),
                                     g.tasks))
    assert np.array_equal(red["deps"], fresh["deps"]) and red["release"].max() >= 5.0


def test_the_checkers_counts_are_the_set_counts_of_circuits_and_links():
    """Kept circuits (by the old configuration's port map), kept links (by sorted look-up)
    and realized links (by bincount) count what sets of keys and np.add.at count."""
    from instances.lumos.instance import OcsConfig
    from instances.lumos.check import check_config, old_paths, realized_topology

    inst = instances.load_instance("instances/lumos/cross-rings-P8.json")
    rng = np.random.default_rng(11)
    for t in range(25):
        perm = inst.old.perm.copy()
        m = int(rng.integers(0, 30))
        perm[tuple(rng.integers(0, s, m) for s in perm.shape)] = rng.integers(-1, perm.shape[2], m)
        if t % 4 == 0:
            perm = np.where(rng.random(perm.shape) < .6, rng.permuted(
                np.broadcast_to(np.arange(perm.shape[2]), perm.shape), axis=2), -1)
        paths, old = fibre_paths(inst.fabric, inst.wire, perm), old_paths(inst)
        _, m = check_config(inst, OcsConfig(perm))
        kept = len(set(paths["circuit"].tolist()) & set(old["circuit"].tolist()))
        assert m["circuits_added"] == len(paths["circuit"]) - kept
        assert m["circuits_removed"] == len(old["circuit"]) - kept
        new_l, old_l = ({x for x in p["link"].tolist() if x >= 0} for p in (paths, old))
        assert m["links_added"] == len(new_l - old_l) and m["links_removed"] == len(old_l - new_l)
        R = np.zeros((inst.fabric.H, inst.fabric.pods, inst.fabric.pods), dtype=np.int64)
        b = paths["bidir"] & (paths["src_pod"] != paths["dst_pod"])
        np.add.at(R, (paths["h"][b], paths["src_pod"][b], paths["dst_pod"][b]), 1)
        assert np.array_equal(realized_topology(inst.fabric, paths), R)


@pytest.mark.parametrize("twice", [False, True])
def test_the_critical_path_is_the_longest_path_with_repeated_dependencies_or_not(twice):
    """The horizon check's longest path (one topological pass, the order the instance's
    acyclicity check found) is the one a pass with np.maximum.at finds, also when a file
    lists a dependency twice."""
    from instances.dag import topological_order
    from instances.delta.input import _critical_path

    data = copy.deepcopy(DERIVED)
    if twice:
        data["deps"] = data["deps"] + data["deps"][:5]
    inst = instances.from_dict(data)
    M, pre, suc = inst.n_tasks, inst.deps[:, 0].astype(int), inst.deps[:, 1].astype(int)
    dur = inst.volume / (inst.flows * inst.bandwidth)
    es = inst.release.astype(float).copy()
    for m in topological_order(M, pre, suc):
        out = pre == m
        np.maximum.at(es, suc[out], es[m] + dur[m] + inst.deps[out, 2])
    assert _critical_path(inst) == max(inst.q0, float(np.max(es + dur + inst.tail)))


@pytest.mark.parametrize("name, mode, replicas, ring", [
    ("gpt-7b", "megatron_blocking", "canonical", "bidirectional"),
    ("gpt-7b", "async", "full", "unidirectional"),
    ("megatron-177b", "megatron_blocking", "full", "bidirectional"),
    ("mixtral-8x22b", "async", "canonical", "bidirectional")])
def test_the_reduction_skips_zero_time_nodes_with_the_same_numbers(name, mode, replicas, ring):
    """instances.delta.reduce.reduce_plan: a zero-time node with one intra-pod successor and
    no task after it gets no step (it has its successor's vector): the reduction's arrays
    are bit for bit those of the pass over every node."""
    import instances.delta.dag as dd
    from instances.delta.reduce import reduce_plan

    for mb in (1, 3, 8):
        job = Job(**dict(TABLE_I[name], micro_batches=mb, p2p_mode=mode, replicas=replicas,
                         dp_ring=ring, opt_ms=1.5))
        g, _ = build_full_dag(job)
        every = dd.FullDag(g.names, g.dur, g.comm, g.edges, g.tasks,
                           reduce_plan(g, [False] * len(g.comm)))       # a step per node
        assert len(g.plan["steps"]) < len(every.plan["steps"]) == len(g.comm)
        for prune in (True, False):
            fast, slow = reduce_dag(g, prune), reduce_dag(every, prune)
            for k in ("deps", "release", "tail"):
                assert fast[k].tobytes() == slow[k].tobytes(), k
            assert fast["q0"] == slow["q0"]


def test_a_task_order_given_is_checked_and_gives_the_same_critical_path():
    """DeltaInstance(task_order=...): the reduction's order is kept (no search) and the
    critical path is the number a searched order gives; an order that is no topological
    one is not taken (searched instead, a cycle still refused)."""
    from instances.delta.input import critical_path_ms
    from instances.delta.instance import _check_acyclic

    built = instances.from_dict(copy.deepcopy(DERIVED))
    for job in (dict(TABLE_I["gpt-7b"], micro_batches=4),
                dict(TABLE_I["megatron-177b"], micro_batches=6, replicas="full")):
        inst = instances.delta.instance.from_job(job)
        fields = {k: getattr(inst, k) for k in ("name", "bandwidth", "pods", "ports", "links",
                                                 "tasks", "deps", "release", "tail", "q0")}
        searched = DeltaInstance(**fields)
        red = reduce_dag(build_full_dag(Job.from_dict(job))[0])
        assert inst._task_order.tolist() == red["order"].tolist()           # kept
        assert critical_path_ms(inst) == critical_path_ms(searched)
        assert inst.release.tolist() == searched.release.tolist()
    edges = built.deps[:, :2].astype(np.int64)
    M = built.n_tasks
    good = _check_acyclic(M, edges)
    assert _check_acyclic(M, edges, good[::-1].copy()).tolist() == good.tolist()  # not taken
    assert _check_acyclic(M, edges, list(range(M - 1))).tolist() == good.tolist()
    with pytest.raises(InstanceError, match="cycle"):
        _check_acyclic(M, np.vstack([edges, edges[:1, ::-1]]), good)
