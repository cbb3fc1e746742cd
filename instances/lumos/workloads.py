"""Generators: random valid logical topologies, their sequences, leaf-level requirements.

A group's logical topology C_h is built from *components*, each a set of links that
uses the same number of ports at each of its Pods:

* ``matching``: one random (near-)perfect matching of the Pods (spec 5.2 decision: C_h =
  sum of K_spine of them is a full-utilization topology, always Uniform-realizable since
  the matchings are the colour classes);
* ``ring``: a job's ring over r Pods with multiplicity m (r = 2: 2m parallel links), the
  DP/PP ring of a job spanning r Pods; odd rings with m > 1 are what Uniform wiring
  cannot realize (a triangle with m links per side needs 3m OCSes, spec 1.4).

``rings`` topologies pack random rings (sizes 2..ring_max) until the ports are full and
fill the last free ports with single links, so nearly every port is used (the [001] 6.2
"heavy workload"). Sequences replace a fraction of the components per step (job
departures and arrivals); ``job_sequence`` is the one-event-at-a-time version for [002]
Table 6, with each job's ring in every group.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from instances.lumos.fabric import Fabric

KINDS = ("rings", "matchings", "stubs")


@dataclass
class Component:
    """Links that use ``ports()`` ports at each of ``pods``: a ring with ``mult`` links per
    side (two Pods: 2 * mult parallel links), or a bundle of ``mult`` links (``is_pair``)."""

    pods: tuple[int, ...]
    mult: int
    is_pair: bool = False

    def add_to(self, C: np.ndarray, sign: int = 1) -> None:
        p = self.pods
        edges = [(p[0], p[1])] if len(p) == 2 else list(zip(p, p[1:] + p[:1]))
        per = self.mult if (self.is_pair or len(p) > 2) else 2 * self.mult
        for a, b in edges:
            C[a, b] += sign * per
            C[b, a] += sign * per

    def ports(self) -> int:
        return self.mult if self.is_pair else 2 * self.mult


@dataclass
class GroupState:
    comps: list[Component] = field(default_factory=list)

    def topology(self, P: int) -> np.ndarray:
        C = np.zeros((P, P), dtype=np.int64)
        for c in self.comps:
            c.add_to(C)
        return C

    def free(self, P: int, K: int) -> np.ndarray:
        return K - self.topology(P).sum(axis=1)


def _matching(rng, pods: np.ndarray) -> list[Component]:
    p = rng.permutation(pods)
    return [Component((int(a), int(b)), 1, is_pair=True) for a, b in zip(p[0::2], p[1::2])]


def pack_rings(state: GroupState, P: int, K: int, rng, ring_max: int = 8,
               mult_max: int | None = None, fill: bool = True) -> None:
    """Add random rings until no two Pods have 2 free ports, then (``fill``) single links."""
    free = state.free(P, K)
    mult_max = mult_max or max(1, K // 4)
    while True:
        cand = np.flatnonzero(free >= 2)
        if len(cand) < 2:
            break
        r = int(rng.integers(2, min(ring_max, len(cand)) + 1))
        S = rng.choice(cand, r, replace=False)
        m = int(rng.integers(1, min(mult_max, free[S].min() // 2) + 1))
        state.comps.append(Component(tuple(int(x) for x in S), m))
        free[S] -= 2 * m
    while fill:
        cand = np.flatnonzero(free >= 1)
        if len(cand) < 2:
            break
        a, b = rng.choice(cand, 2, replace=False)
        state.comps.append(Component((int(a), int(b)), 1, is_pair=True))
        free[[a, b]] -= 1


def _stubs(P: int, K: int, rng) -> np.ndarray:
    """Configuration model: K stubs per Pod paired at random, self-pairs dropped."""
    stubs = rng.permutation(np.repeat(np.arange(P), K))
    C = np.zeros((P, P), dtype=np.int64)
    a, b = stubs[0::2], stubs[1::2]
    keep = a != b
    np.add.at(C, (a[keep], b[keep]), 1)
    np.add.at(C, (b[keep], a[keep]), 1)
    return C


def new_group(kind: str, P: int, K: int, rng, ring_max: int = 8,
              mult_max: int | None = None) -> GroupState:
    st = GroupState()
    if kind == "matchings":
        for _ in range(K):
            st.comps += _matching(rng, np.arange(P))
    elif kind == "rings":
        pack_rings(st, P, K, rng, ring_max, mult_max)
    else:
        raise ValueError(f"unknown topology kind {kind!r} (known: {', '.join(KINDS)})")
    return st


def random_topology(fabric: Fabric, kind: str = "rings", seed=0, ring_max: int = 8,
                    mult_max: int | None = None) -> np.ndarray:
    """One random admissible C (H, P, P) (eqs. 11-12, zero diagonal). ``mult_max``: largest
    ring multiplicity (default K/4; K/2 lets a job fill its Pods' spine ports)."""
    rng = np.random.default_rng(seed)
    P, K = fabric.pods, fabric.k_spine
    if kind == "stubs":
        return np.stack([_stubs(P, K, rng) for _ in range(fabric.H)])
    return np.stack([new_group(kind, P, K, rng, ring_max, mult_max).topology(P)
                     for _ in range(fabric.H)])


def topology_sequence(fabric: Fabric, length: int, kind: str = "rings", churn: float = 0.2,
                      seed=0, ring_max: int = 8, mult_max: int | None = None) -> list[np.ndarray]:
    """``length`` temporally consecutive topologies: each step removes a ``churn`` fraction
    of every group's components (departures) and refills the freed ports (arrivals)."""
    if kind not in ("rings", "matchings"):
        raise ValueError("sequences need kind rings or matchings")
    rng = np.random.default_rng(seed)
    P, K = fabric.pods, fabric.k_spine
    states = [new_group(kind, P, K, rng, ring_max, mult_max) for _ in range(fabric.H)]
    seq = [np.stack([s.topology(P) for s in states])]
    for _ in range(length - 1):
        for st in states:
            if kind == "matchings":              # drop whole matchings (P // 2 pairs each)
                k_drop = max(1, int(round(churn * K)))
                half = max(1, P // 2)
                groups = [st.comps[i:i + half] for i in range(0, len(st.comps), half)]
                keep = sorted(rng.choice(len(groups), len(groups) - k_drop, replace=False))
                st.comps = [c for g in keep for c in groups[g]]
                for _ in range(k_drop):
                    st.comps += _matching(rng, np.arange(P))
            else:
                n = len(st.comps)
                drop = set(rng.choice(n, max(1, int(round(churn * n))), replace=False).tolist())
                st.comps = [c for i, c in enumerate(st.comps) if i not in drop]
                pack_rings(st, P, K, rng, ring_max, mult_max)
        seq.append(np.stack([s.topology(P) for s in states]))
    return seq


def job_sequence(fabric: Fabric, events: int, seed=0, load: float = 0.8, ring_max: int = 8,
                 mult_max: int = 2, spread: str = "all", warmup: int | None = None) -> list[np.ndarray]:
    """One topology per job event ([002] Table 6 setting): a job is a ring over r random
    Pods with multiplicity m, in every group (``spread="all"``) or in a random subset of
    1..H groups (``spread="random"``, smaller jobs); arrivals while the port load is below
    ``load`` and the ring fits, else a random departure. Returns the topology after a
    warm-up that fills the fabric to ``load``, then after each of ``events`` events."""
    rng = np.random.default_rng(seed)
    P, K, H = fabric.pods, fabric.k_spine, fabric.H
    jobs: list[tuple[Component, np.ndarray]] = []
    C = np.zeros((H, P, P), dtype=np.int64)

    def try_arrival() -> bool:
        groups = np.arange(H) if spread == "all" else \
            np.sort(rng.choice(H, int(rng.integers(1, H + 1)), replace=False))
        free = K - C[groups].sum(axis=2).max(axis=0)
        cand = np.flatnonzero(free >= 2)
        if len(cand) < 2:
            return False
        r = int(rng.integers(2, min(ring_max, len(cand)) + 1))
        S = rng.choice(cand, r, replace=False)
        m = int(rng.integers(1, min(mult_max, free[S].min() // 2) + 1))
        job = Component(tuple(int(x) for x in S), m)
        for h in groups:
            job.add_to(C[h])
        jobs.append((job, groups))
        return True

    def departure():
        job, groups = jobs.pop(int(rng.integers(len(jobs))))
        for h in groups:
            job.add_to(C[h], -1)

    target = load * H * P * K
    for _ in range(warmup if warmup is not None else 10 * P * (1 if spread == "all" else H)):
        if C.sum() >= target:
            break
        try_arrival()
    seq = [C.copy()]
    for _ in range(events):
        if jobs and (C.sum() >= target or rng.random() < 0.5):
            departure()
        elif not try_arrival() and jobs:
            departure()
        seq.append(C.copy())
    return seq


def random_requirement(fabric: Fabric, seed=0, per_leaf: int | None = None,
                       fill: float = 1.0) -> np.ndarray:
    """A random valid leaf-level requirement L ([002] 4.1): ``per_leaf`` (default K_leaf)
    stubs per leaf, a ``fill`` fraction of them paired at random across Pods (same-Pod
    pairs dropped); symmetric, row sums <= per_leaf. ``per_leaf = H/2`` (tau = 1) gives
    the Theorem 4.2 condition."""
    rng = np.random.default_rng(seed)
    n = fabric.n_leaves
    cap = fabric.k_leaf if per_leaf is None else per_leaf
    stubs = rng.permutation(np.repeat(np.arange(n), cap))
    stubs = stubs[: 2 * int(len(stubs) * fill / 2)]
    a, b = stubs[0::2], stubs[1::2]
    keep = fabric.pod_of_leaf(a) != fabric.pod_of_leaf(b)
    L = np.zeros((n, n), dtype=np.int64)
    np.add.at(L, (a[keep], b[keep]), 1)
    np.add.at(L, (b[keep], a[keep]), 1)
    return L


def churn_requirement(fabric: Fabric, L: np.ndarray, churn: float, seed=0) -> np.ndarray:
    """L after jobs come and go: a ``churn`` fraction of its units {a, b} (chosen at random)
    is removed and the freed stubs are paired again at random across Pods (same-Pod pairs
    dropped). Symmetric, and no leaf needs more paths than before."""
    rng = np.random.default_rng(seed)
    a, b = np.nonzero(np.triu(L, 1))
    units = np.repeat(np.arange(len(a)), L[a, b])
    drop = rng.choice(len(units), size=int(round(churn * len(units))), replace=False)
    out = L.copy()
    ua, ub = a[units[drop]], b[units[drop]]
    np.add.at(out, (ua, ub), -1)
    np.add.at(out, (ub, ua), -1)
    stubs = rng.permutation(np.concatenate([ua, ub]))
    sa, sb = stubs[0::2], stubs[1::2]
    keep = fabric.pod_of_leaf(sa) != fabric.pod_of_leaf(sb)
    np.add.at(out, (sa[keep], sb[keep]), 1)
    np.add.at(out, (sb[keep], sa[keep]), 1)
    return out
