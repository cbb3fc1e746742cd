"""DELTA's DAG reduction (Ye et al. 2026, Section III-A; delta spec 1.2.3): the full
computation-communication DAG (:mod:`instances.delta.dag`) to edges between inter-pod tasks
weighted by the longest intra-only path, release times, tails and Q_0, with the redundant
edges pruned."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from instances.dag import topological_order

if TYPE_CHECKING:
    from instances.delta.dag import FullDag


def reduce_dag(g: FullDag, prune: bool = True) -> dict:
    """Reduction of spec 1.2.3: edges between inter-pod tasks weighted by the longest
    intra-only path, release times r_m (from the virtual source), tails q_m and Q_0.

    One reverse-topological pass carries, for every node, the vector of longest
    intra-only distances to every inter-pod task (freed once its last predecessor used
    it; the order, successors and last readers come from :func:`reduce_plan`, once per shape).
    With ``prune`` an edge a->c is dropped when a chain a -> e -> ... -> c through other
    inter-pod tasks is at least as long (within 1e-9, relative): then S_c >= C_a + delta_ac
    already follows (durations are >= 0). This is the valid strengthening of the spec's
    optional rule and keeps the DAG's ASAP semantics exactly. The same pass carries a
    second vector per node, the longest distances to every task through at least one task
    on the way (tasks count 0), so the pruning costs no pass of its own: the chain test
    of a task's row reads its two vectors (issue 29 item 3: 8.5 -> 3.8 ms on Megatron-177B's
    204 tasks; the edges kept are those of the row-by-row test of
    tests/instances/test_fast_paths.py).
    """
    plan = g.plan if g.plan is not None else reduce_plan(g)
    M, comm, dur = len(g.tasks), plan["comm"], g.dur
    NEG = -np.inf
    R = 2 if prune else 1             # rows: 0 intra-only paths, 1 paths through tasks
    vec: list = [None] * len(comm)    # intra node -> distances to tasks (from its start)
    tail_of = [0.0] * len(comm)       # intra node -> longest intra-only path to the sink
    first = np.full((M, M), NEG)      # first[a, c] = delta_{a->c} (intra-only paths)
    longest = np.full((M, M), NEG) if prune else None     # any path a -> c, tasks count 0
    keep = np.zeros((M, M), bool) if prune else None
    tail = np.zeros(M)
    none = np.full((R, M), NEG)
    with np.errstate(invalid="ignore"):         # -inf + inf in a row's tolerance: no edge
        for v, ws, hits, free in plan["steps"]:
            # the successors' distance vectors (their maximum: one numpy call per join, most
            # nodes have one intra-pod successor) and the tasks that follow v directly
            if not ws:
                bt, acc = NEG, none.copy() if hits or comm[v] >= 0 else none
            elif len(ws) == 1:
                bt, acc = tail_of[ws[0]], vec[ws[0]].copy() if hits else vec[ws[0]]
            else:
                bt = max([tail_of[w] for w in ws])
                acc = np.maximum(vec[ws[0]], vec[ws[1]])
                for w in ws[2:]:
                    np.maximum(acc, vec[w], out=acc)
            for c in hits:
                if not acc[0, c] >= 0.0:                # max(acc[c], 0.0)
                    acc[0, c] = 0.0
                if prune:                               # on through task c
                    np.maximum(acc[1], longest[c], out=acc[1])
            for w in free:
                vec[w] = None
            m = comm[v]
            if m >= 0:
                f = first[m] = acc[0]
                tail[m] = max(bt, 0.0)
                if prune:
                    np.maximum(f, acc[1], out=longest[m])
                    keep[m] = f > acc[1] + 1e-9 * np.maximum(1.0, np.abs(f))
            else:   # x + 0.0 == x: a zero-time node (POST, DONE) shares its vector
                d = float(dur[v])
                vec[v] = acc + d if d else acc
                tail_of[v] = (bt if ws or hits else 0.0) + d
    release = np.full(M, NEG)
    q0 = 0.0
    for v in plan["sources"]:
        if comm[v] >= 0:
            release[comm[v]] = max(release[comm[v]], 0.0)
        else:
            np.maximum(release, vec[v][0], out=release)
            q0 = max(q0, tail_of[v])
    release = np.maximum(release, 0.0)
    q0 = max(q0, 0.0)   # only all-intra source -> sink paths; tails of tasks carry the rest
    ai, ci = np.nonzero(keep if prune else first > NEG)
    deps = np.column_stack([ai, ci, first[ai, ci]]).astype(float)    # rows (pre, succ, delay)
    return dict(deps=deps, release=release, tail=tail, q0=q0,
                order=np.array(plan["topo"], dtype=np.int64))    # the tasks, topologically


def reduce_plan(g: FullDag, zero: list[bool] | None = None) -> dict:
    """What :func:`reduce_dag` needs of a DAG's shape: per node in reverse topological
    order, (node, intra-pod successors, tasks that follow it directly, intra-pod nodes
    whose vector it reads last); the sources; the tasks in topological order.

    ``zero``: the intra-pod nodes of no duration in every DAG of the shape (POST and DONE:
    :func:`build_full_dag`'s duration code 0; default: those of ``g``'s durations now).
    Such a node with one intra-pod successor and no task after it has its successor's
    vector and tail (x + 0.0 == x, and the pass shares the vector): it gets no step, and
    whoever reads it reads that successor (transitively) instead, so a quarter of a
    pipeline's nodes cost nothing (issue 29 item 3; the same numbers)."""
    n, comm = len(g.comm), list(g.comm)
    if zero is None:
        zero = [float(d) == 0.0 for d in g.dur]
    order = topological_order(n, [a for a, _ in g.edges], [b for _, b in g.edges]).tolist()
    succ: list[list[int]] = [[] for _ in range(n)]
    hits: list[list[int]] = [[] for _ in range(n)]
    for a, b in g.edges:
        if comm[b] >= 0:
            hits[a].append(comm[b])
        else:
            succ[a].append(b)
    rep = list(range(n))            # the node whose vector and tail a node has
    steps = []
    for v in reversed(order):
        ws = list(dict.fromkeys(rep[w] for w in succ[v]))   # max(x, x) == x
        if comm[v] < 0 and zero[v] and len(ws) == 1 and not hits[v]:
            rep[v] = ws[0]
        else:
            steps.append((v, ws, hits[v]))
    sources = list(dict.fromkeys(rep[v] for v in sorted(set(range(n)) - {b for _, b in g.edges})))
    keep = set(sources)             # read after the pass (release times, Q_0)
    last = {}                       # intra node -> the step that reads its vector last
    for i, (v, ws, _) in enumerate(steps):
        for w in ws:
            last[w] = i
    free: list[list[int]] = [[] for _ in steps]
    for w, i in last.items():
        if w not in keep:
            free[i].append(w)
    return dict(comm=comm, steps=[(v, ws, h, f) for (v, ws, h), f in zip(steps, free)],
                sources=sources, topo=[comm[v] for v in order if comm[v] >= 0])
