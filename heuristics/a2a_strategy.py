"""Abstract strategies (candidates) and their realization on an instance (spec 1.3, 1.4, 3.7).

A :class:`Candidate` is a strategy on abstract positions 0..n-1 without sizes: phases of
(arcs, rounds), a round being a list of path arrays (m, h+1). :func:`realize` maps position p to
GPU ``label[p]`` (relabeling, spec 3.7), attaches the sizes A[s, t], drops flows with no traffic
and topologies left without rounds, and returns an :class:`instances.a2a.A2AStrategy`.
:class:`FlowTable` evaluates the spec 1.4 cost of a candidate under any labeling, vectorized.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from instances.a2a import A2AStrategy, Group, Phase


@dataclass
class Candidate:
    family: str
    phases: list                       # [(arcs (m, 2), [[paths (m, h+1)], ...]), ...]
    info: dict = field(default_factory=dict)

    @property
    def d(self) -> int:
        return sum(1 for _, rounds in self.phases if rounds)

    @property
    def hop_sum(self) -> int:
        """Sum of round hop counts (the power sum, units of T for uniform traffic)."""
        return sum(max(p.shape[1] - 1 for p in r) for _, rounds in self.phases for r in rounds)

    @property
    def n_rounds(self) -> int:
        return sum(len(rounds) for _, rounds in self.phases)


class FlowTable:
    """All (round, src, dst, hops) of a candidate, for fast cost evaluation under a labeling."""

    def __init__(self, cand: Candidate):
        src, dst, hop, rid = [], [], [], []
        r = 0
        for _, rounds in cand.phases:
            for rd in rounds:
                for P in rd:
                    src.append(P[:, 0]); dst.append(P[:, -1])
                    hop.append(np.full(len(P), P.shape[1] - 1)); rid.append(np.full(len(P), r))
                r += 1
        self.n_rounds = r
        src, dst, hop, rid = (np.concatenate(x) for x in (src, dst, hop, rid))
        self.H = int(hop.max())
        key = rid * (self.H + 1) + hop
        order = np.argsort(key, kind="stable")
        self.src, self.dst, key = src[order], dst[order], key[order]
        self.starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        self.cells = key[self.starts]                  # (round, hop) cells with flows

    def cost(self, A: np.ndarray, link, R: float, label: np.ndarray | None = None) -> float:
        """Spec 1.4 cost: R * (used topologies are accounted by the caller) + sum of round times."""
        S = A[self.src, self.dst] if label is None else A[label[self.src], label[self.dst]]
        t = np.where(S > 0, link.tau(S), 0.0)
        gmax = np.maximum.reduceat(t, self.starts)
        grid = np.zeros((self.n_rounds, self.H + 1))
        grid.flat[self.cells] = gmax
        return float(np.maximum.accumulate(grid[:, ::-1], axis=1)[:, ::-1][:, 1:].sum())


def realize(cand: Candidate, inst, label: np.ndarray | None = None) -> A2AStrategy:
    """The GPU-level strategy of a candidate under ``label`` (position -> GPU; identity if None)."""
    A = inst.A
    lab = np.arange(inst.n) if label is None else np.asarray(label)
    phases = []
    for arcs, rounds in cand.phases:
        out_rounds = []
        for rd in rounds:
            groups = []
            for P in rd:
                Q = lab[P]
                S = A[Q[:, 0], Q[:, -1]]
                keep = S > 0
                if keep.any():
                    groups.append(Group(Q[keep], S[keep]))
            if groups:
                out_rounds.append(groups)
        if out_rounds:
            phases.append(Phase(lab[np.asarray(arcs)], out_rounds))
    info = dict(cand.info, family=cand.family)
    if label is not None:
        info["relabeled"] = True
    return A2AStrategy(phases, info)


def direct_round_robin(n: int, k: int) -> Candidate:
    """d = ceil((n-1)/k) configurations, configuration j connects i -> i + delta for
    delta in {(j-1)k+1, ..., jk}; all flows 1-hop (Fig. 5's strategy for k = 1; spec 3.5)."""
    u = np.arange(n)
    phases = []
    for a in range(1, n, k):
        deltas = range(a, min(a + k, n))
        arcs = np.concatenate([np.stack([u, (u + dl) % n], 1) for dl in deltas])
        phases.append((arcs, [[arcs.copy()]]))
    return Candidate("direct", phases, {"deltas_per_config": k})
