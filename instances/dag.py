"""Directed-acyclic-graph helpers shared by the DELTA modules."""
from __future__ import annotations

import numpy as np


def topological_order(n: int, pre, suc) -> np.ndarray:
    """Kahn's algorithm over edges pre[i] -> suc[i]; ValueError if there is a cycle. O(n + |E|)."""
    pre = np.asarray(pre, dtype=np.int64)
    suc = np.asarray(suc, dtype=np.int64)
    indeg = np.bincount(suc, minlength=n)
    order = np.argsort(pre, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(np.bincount(pre, minlength=n))
    targets = suc[order].tolist()
    ptr = ptr.tolist()
    indeg = indeg.tolist()
    stack = [v for v in range(n) if indeg[v] == 0]
    out = []
    while stack:
        v = stack.pop()
        out.append(v)
        for w in targets[ptr[v]:ptr[v + 1]]:
            indeg[w] -= 1
            if indeg[w] == 0:
                stack.append(w)
    if len(out) != n:
        raise ValueError("the graph has a cycle")
    return np.asarray(out, dtype=np.int64)


def longest_depth(n: int, pre, suc) -> int:
    """The largest number of edges on any path."""
    depth = np.zeros(n, dtype=np.int64)
    succ = [[] for _ in range(n)]
    for a, b in zip(np.asarray(pre).tolist(), np.asarray(suc).tolist()):
        succ[a].append(b)
    for v in topological_order(n, pre, suc):
        for w in succ[v]:
            depth[w] = max(depth[w], depth[v] + 1)
    return int(depth.max(initial=0))


def max_weight_antichain(weights, less) -> float:
    """The largest total weight of pairwise incomparable elements of a partial order:
    ``less[a, b]`` is True when a precedes b (the relation transitively closed, as a DAG's
    reachability is), ``weights`` integers >= 0.

    Weighted Dilworth (Fulkerson's reduction): the most weight of an antichain equals the
    fewest chains that cover every element a ``weights[a]`` times, which is the total
    weight less a maximum flow of s -> a_out (capacity w_a), a_out -> b_in (a before b,
    unbounded), b_in -> t (w_b) (each unit of flow links a to a later b in one chain).
    [DECISION] A flow, not the MILP ``max sum w z, z_a + z_b <= 1`` (HiGHS via
    scipy.optimize, which cost a process 0.2-0.3 CPU seconds to import): both are exact,
    and on integer weights their values are the same integer. Dinic's algorithm,
    O(n^2 |pairs|)."""
    w = [int(x) for x in np.asarray(weights).tolist()]
    if any(x != v or x < 0 for x, v in zip(w, np.asarray(weights).tolist())):
        raise ValueError("max_weight_antichain needs integer weights >= 0")
    n = len(w)
    a_idx, b_idx = np.nonzero(np.asarray(less, dtype=bool))
    if not len(a_idx):
        return float(sum(w))
    s, t = 2 * n, 2 * n + 1         # a_out = a, b_in = n + b
    head: list[list[int]] = [[] for _ in range(2 * n + 2)]
    to: list[int] = []
    cap: list[int] = []

    def arc(u: int, v: int, c: int) -> None:          # an arc and its residual twin (id ^ 1)
        head[u].append(len(to))
        to.append(v)
        cap.append(c)
        head[v].append(len(to))
        to.append(u)
        cap.append(0)
    for a in range(n):
        arc(s, a, w[a])
        arc(n + a, t, w[a])
    unbounded = sum(w) + 1
    for a, b in zip(a_idx.tolist(), b_idx.tolist()):
        arc(a, n + b, unbounded)
    flow = 0
    while True:
        level = _levels(head, to, cap, s)
        if level[t] < 0:
            return float(sum(w) - flow)
        nxt = [0] * len(head)
        while True:
            pushed = _augment(head, to, cap, level, nxt, s, t)
            if not pushed:
                break
            flow += pushed


def _levels(head, to, cap, s) -> list[int]:
    """BFS distances from ``s`` over arcs with residual capacity (-1: unreached)."""
    level = [-1] * len(head)
    level[s] = 0
    queue = [s]
    for u in queue:
        for e in head[u]:
            v = to[e]
            if cap[e] > 0 and level[v] < 0:
                level[v] = level[u] + 1
                queue.append(v)
    return level


def _augment(head, to, cap, level, nxt, s, t) -> int:
    """One s-t path along increasing levels (Dinic's blocking-flow step, iterative); its
    bottleneck is pushed and returned (0: none left in this level graph)."""
    path: list[int] = []            # arc ids from s
    u = s
    while True:
        if u == t:
            push = min(cap[e] for e in path)
            for e in path:
                cap[e] -= push
                cap[e ^ 1] += push
            return push
        arcs = head[u]
        while nxt[u] < len(arcs):
            e = arcs[nxt[u]]
            if cap[e] > 0 and level[to[e]] == level[u] + 1:
                break
            nxt[u] += 1
        if nxt[u] < len(arcs):
            path.append(arcs[nxt[u]])
            u = to[path[-1]]
            continue
        if u == s:
            return 0
        level[u] = -1               # a dead end: never entered again in this phase
        e = path.pop()
        u = to[e ^ 1]
        nxt[u] += 1
