"""Staged reconfiguration without a solver ([002] A.8, spec 2.11): a lower bound and a
first-fit-decreasing greedy.

Stages are bins, leaves are dimensions: a stage of two or more groups may take at most
``budget_a`` of leaf a's load (instances.lumos.staging), so the problem is
multi-dimensional bin packing; groups that alone exceed a budget are staged alone.
"""
from __future__ import annotations

import numpy as np

from instances.lumos.staging import Staging, StagingInstance


def conflicts(inst: StagingInstance) -> np.ndarray:
    """(G, G) bool over the packable groups: True if the two together exceed some leaf's
    budget (so they need different stages). O(G^2 n)."""
    pk = inst.packable
    W = inst.load[:, pk]
    rows = np.flatnonzero(W.sum(axis=1) > inst.leaf_budget)      # leaves a pair could overload
    W, cap = W[rows], inst.leaf_budget[rows, None]
    conf = np.array([((W[:, [i]] + W) > cap).any(axis=0) for i in range(len(pk))],
                    dtype=bool).reshape(len(pk), len(pk))
    np.fill_diagonal(conf, False)
    return conf


def clique_size(conf: np.ndarray) -> int:
    """A large clique of the conflict graph, greedily from every start vertex (highest
    degree first among the candidates left); its groups need one stage each. O(G^3)."""
    deg = conf.sum(axis=1)
    best = 0
    for v in range(len(conf)):
        size, cand = 1, conf[v].copy()
        while cand.any():
            u = int(np.flatnonzero(cand)[np.argmax(deg[cand])])
            size, cand = size + 1, cand & conf[u]
        best = max(best, size)
    return best


def stage_lower_bound(inst: StagingInstance) -> int:
    """Stages any staging needs: one per group staged alone, plus for the others the
    largest of (a) what some leaf needs, ceil(its load in those groups / its budget), and
    (b) the size of a clique of pairwise conflicting groups (at least 1 if any)."""
    pk = inst.packable
    if not len(pk):
        return len(inst.alone)
    w = inst.load[:, pk].sum(axis=1)
    cap = inst.leaf_budget
    on = w > 0                                 # then cap >= 1 (every packable group fits alone)
    need = int((-(-w[on] // cap[on])).max(initial=1))
    return len(inst.alone) + max(1, need, clique_size(conflicts(inst)))


def _orders(inst: StagingInstance) -> list[np.ndarray]:
    """Three decreasing orders of the packable groups (ties by index, deterministic): by
    the largest share of a leaf budget they take; by the sum of their shares; by their
    number of conflicts (:func:`conflicts`), then the largest share."""
    pk = inst.packable
    W = inst.load[:, pk].astype(float)
    cap = inst.leaf_budget.astype(float)[:, None]
    rel = np.divide(W, cap, out=np.zeros_like(W), where=cap > 0)
    big, total = rel.max(axis=0, initial=0.0), rel.sum(axis=0)
    deg = conflicts(inst).sum(axis=1)
    return [pk[np.lexsort((pk, -total, -big))], pk[np.lexsort((pk, -big, -total))],
            pk[np.lexsort((pk, -big, -deg))]]


def first_fit(inst: StagingInstance, groups: np.ndarray) -> list[list[int]]:
    """Each group in turn joins the first stage where every leaf stays within its budget,
    else opens a stage. O(G * stages * n)."""
    rows = np.flatnonzero(inst.load[:, groups].sum(axis=1) > 0) if len(groups) else np.zeros(0, int)
    W = inst.load[np.ix_(rows, groups)]
    cap = inst.leaf_budget[rows]
    used = np.zeros((0, len(rows)), dtype=np.int64)     # per stage: load taken per leaf
    stages: list[list[int]] = []
    for c, h in enumerate(groups):
        fits = np.flatnonzero(np.all(used + W[:, c] <= cap, axis=1))
        if len(fits):
            s = int(fits[0])
            used[s] += W[:, c]
            stages[s].append(int(h))
        else:
            used = np.vstack([used, W[:, c][None]])
            stages.append([int(h)])
    return [sorted(s) for s in stages]


def staging_greedy(inst: StagingInstance) -> Staging:
    """First-fit decreasing under three orders (:func:`_orders`), the fewest stages kept
    (the first on ties); then one stage per group that must be alone. Polynomial:
    O(G^2 n) for the conflicts plus 3 first fits; never worse than one group per stage."""
    if not len(inst.packable):
        return Staging([[int(h)] for h in inst.alone], {"method": "first-fit decreasing"})
    best = min((first_fit(inst, o) for o in _orders(inst)), key=len)
    return Staging(best + [[int(h)] for h in inst.alone], {"method": "first-fit decreasing"})
