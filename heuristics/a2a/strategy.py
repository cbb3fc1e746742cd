"""Abstract strategies (candidates) and their realization on an instance (spec 1.3, 1.4, 3.7).

A :class:`Candidate` is a strategy on abstract positions 0..n-1 without sizes: phases of
(arcs, rounds), a round being a list of path arrays (m, h+1). :func:`realize` maps position p to
GPU ``label[p]`` (relabeling, spec 3.7), attaches the sizes A[s, t], drops flows with no traffic
and topologies left without rounds, and returns an :class:`instances.a2a.instance.A2AStrategy`.
:class:`FlowTable` evaluates the spec 1.4 cost of a candidate under any labeling, vectorized.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from instances.a2a.instance import A2AStrategy, Group, Phase


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
    """All (phase, round, src, dst, hops) of a candidate, for fast cost evaluation under a labeling.

    The cost is the checker's (spec 1.4, A10): R times the number of phases that carry at least
    one flow with traffic under the labeling (d_eff; realize drops the others) plus the sum of
    round times, where a flow with no traffic takes no time.
    """

    def __init__(self, cand: Candidate):
        src, dst, hop, rid, pid = [], [], [], [], []
        r = 0
        for i, (_, rounds) in enumerate(cand.phases):
            for rd in rounds:
                for P in rd:
                    src.append(P[:, 0]); dst.append(P[:, -1]); pid.append(np.full(len(P), i))
                    hop.append(np.full(len(P), P.shape[1] - 1)); rid.append(np.full(len(P), r))
                r += 1
        self.n_rounds, self.n_phases = r, len(cand.phases)
        src, dst, hop, rid, pid = (np.concatenate(x) for x in (src, dst, hop, rid, pid))
        self.H = int(hop.max())
        key = rid * (self.H + 1) + hop
        order = np.argsort(key, kind="stable")
        self.src, self.dst, self.pid, key = src[order], dst[order], pid[order], key[order]
        self.starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        self.cells = key[self.starts]                  # (round, hop) cells with flows

    def evaluate(self, A: np.ndarray, link, label: np.ndarray | None = None) -> tuple[int, float]:
        """(d_eff, transmission time) under ``label`` (position -> GPU; identity if None)."""
        S = A[self.src, self.dst] if label is None else A[label[self.src], label[self.dst]]
        live = S > 0
        t = np.where(live, link.tau(S), 0.0)
        gmax = np.maximum.reduceat(t, self.starts)
        grid = np.zeros((self.n_rounds, self.H + 1))
        grid.flat[self.cells] = gmax
        d_eff = int(np.count_nonzero(np.bincount(self.pid[live], minlength=self.n_phases)))
        return d_eff, float(np.maximum.accumulate(grid[:, ::-1], axis=1)[:, ::-1][:, 1:].sum())

    def cost(self, A: np.ndarray, link, R: float, label: np.ndarray | None = None) -> float:
        """Spec 1.4 total cost R * d_eff + sum of round times (what the checker recomputes)."""
        d_eff, t = self.evaluate(A, link, label)
        return R * d_eff + t


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
