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
    inter-pod tasks is at least as long: then S_c >= C_a + delta_ac already follows
    (durations are >= 0). This is the valid strengthening of the spec's optional rule and
    keeps the DAG's ASAP semantics exactly.
    """
    plan = g.plan if g.plan is not None else reduce_plan(g)
    M, comm, dur = len(g.tasks), plan["comm"], g.dur
    NEG = -np.inf
    vec: list = [None] * len(comm)    # intra node -> distances to tasks (from its start)
    tail_of = [0.0] * len(comm)       # intra node -> longest intra-only path to the sink
    first = np.full((M, M), NEG)      # first[a, c] = delta_{a->c} (intra-only paths)
    tail = np.zeros(M)
    none = np.full(M, NEG)
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
            if not acc[c] >= 0.0:                   # max(acc[c], 0.0)
                acc[c] = 0.0
        for w in free:
            vec[w] = None
        m = comm[v]
        if m >= 0:
            first[m] = acc
            tail[m] = max(bt, 0.0)
        else:       # x + 0.0 == x: a zero-time node (POST, DONE) shares its vector
            d = float(dur[v])
            vec[v] = acc + d if d else acc
            tail_of[v] = (bt if ws or hits else 0.0) + d
    release = np.full(M, NEG)
    q0 = 0.0
    for v in plan["sources"]:
        if comm[v] >= 0:
            release[comm[v]] = max(release[comm[v]], 0.0)
        else:
            np.maximum(release, vec[v], out=release)
            q0 = max(q0, tail_of[v])
    release = np.maximum(release, 0.0)
    q0 = max(q0, 0.0)   # only all-intra source -> sink paths; tails of tasks carry the rest
    keep = _pruned(first, plan["topo"]) if prune and M else first > NEG
    ai, ci = np.nonzero(keep)
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


def _pruned(first: np.ndarray, topo: list[int]) -> np.ndarray:
    """The edges a -> c (``first[a, c]`` finite) that no chain a -> e -> ... -> c through
    other tasks makes redundant: one whose longest chain is within 1e-9 (relative) of the
    edge is dropped. ``topo``: the tasks in topological order.

    The rows are taken from the last task to the first, each from the longest chains of
    the tasks it precedes. Indexed in ``topo``'s order, a task reaches only later ones, so
    a row's chains are summed from its first successor's column on (the work shrinks to
    the upper triangle), the same sums and maxima as over the whole row."""
    NEG = -np.inf
    M = len(topo)
    ix = np.ix_(topo, topo)
    F = first[ix]                          # F[i, j] finite only for j > i
    keep = F > NEG
    longest = np.full((M, M), NEG)         # longest path i -> j via any tasks (durations 0)
    via = np.empty(M)
    for i in range(M - 1, -1, -1):
        hits = np.flatnonzero(keep[i])
        if not hits.size:
            longest[i] = F[i]
            continue
        lo = hits[0] + 1                   # no chain from row i ends at or before hits[0]
        f = F[i, hits]
        via[:lo] = NEG
        via[lo:] = (f[:, None] + longest[hits, lo:]).max(axis=0)
        keep[i, hits] = f > via[hits] + 1e-9 * np.maximum(1.0, np.abs(f))
        np.maximum(F[i], via, out=longest[i])
    out = np.empty_like(keep)
    out[ix] = keep
    return out
