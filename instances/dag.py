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
