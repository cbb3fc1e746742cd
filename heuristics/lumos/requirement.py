"""Leaf-level requirement L = L1 + L2 from placements ([002] 4.2.2, A.12; spec 2.10).

``job_requirement`` estimates a placed job's cross-Pod requirement L1 by the [REPO] rule
(spec 2.10 [DECISION]): arrange the job's TP groups in the PP x DP matrix (A.6,
``domain_fill``), each Pod's groups in GPU-id order over that Pod's elements in row-major
order; PP pairs are vertical neighbours (stage r and r + 1 of a replica), DP pairs are
neighbours in each stage's ring arranged by generalised eq. (42) (``ring_next``). Each
distinct unordered cross-Pod leaf pair {a, b} with a PP pair adds ``TP`` to L_ab, with a
DP pair ``TP / 2``; both add ``TP / 4`` when tau = 1 and a leaf holds one server
([DECISION] for tp < 4 or odd tp, where the rule gives fractions: units rounded down, at
least 1). Distinct pairs: flows of different stages and replicas between
the same two leaves time-share the same paths (Principle 3). EP (AlltoAll) traffic stays
inside a Pod and adds nothing ([002] 4.2.1 Principle 2; the rule counts PP and DP only).

Rail layout ([002] Fig. 24; ``instances.lumos.placement``): a TP group's lanes sit on T
different leaves, so the rule works on lanes, the GPU-level PP and DP pairs (TP lane i of
one group with lane i of the other). [DECISION] after the authors' rail rule
([REPO] ``generate_leaf_communication_rail_optimized``): every cross-Pod lane pair adds 1
unit to its leaf pair, PP and DP alike and without merging leaf pairs (one bidirectional
path per pair of GPUs that exchange PP or DP traffic, so a DP ring of two replicas counts
its pair once; their extra skip of DP Pod pairs already seen at the previous stage is not
taken); then the same K_leaf cap (their ``scaling_leaf_comm`` also scales rows down to the leaf's ports). In
the server layout the lanes of a group share its leaf, so the lane pairs collapse to the
group pairs above.

``rail_rule`` (issue 31) picks the rail layout's rule: ``lane-pairs`` (default, the authors'
rule above) or ``leaf-pairs``, Principle 3 applied as in the server layout: the lane pairs
of the PP traffic, and apart from them those of the DP traffic, merged by their cross-Pod
leaf pair, each distinct leaf pair adding 1 unit for PP and 1 for DP (a leaf pair with both
adds 2, as the server rule adds TP + TP / 2). [DECISION] 1 unit: in the rail layout a lane
pair is one GPU's flow at the NIC rate, one port. The server rule gives TP units to a PP
leaf pair whose TP lanes share the leaf, one link per lane; its DP TP / 2 (TP / 4 when
tau = 1 and a leaf holds one server) is half (a quarter) of a link per lane, rounded up to
the rule's minimum of 1. The flows of different stages and replicas between the same two
rail leaves time-share their paths (Principle 3), as the server rule has them do between two
server leaves; so ``leaf-pairs`` never exceeds ``lane-pairs`` entry by entry. The papers and
spec 2.10 say nothing of the rail layout's rule beyond [002] A.10's "lower leaf-level
network requirement". The server layout ignores ``rail_rule`` (a ``lumos-sim`` file refuses
it there: ``instances.lumos.sim``).

``leaf_requirement`` adds the running jobs' requirements L2 (each running job contributes
its own L, as recorded when it was admitted) and enforces sum_b L_ab <= K_leaf by the
spec 2.10 [DECISION] (option 2 of [002] 4.2.2): scale the new job's rows down
proportionally and mark the job as sharing paths; ``cap="refuse"`` instead returns no L,
so that the caller re-places the job (option 1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from heuristics.lumos.domains import domain_fill, ring_next
from instances.lumos.logical import validate_requirement
from instances.lumos.placement import Placement

RAIL_RULES = ("lane-pairs", "leaf-pairs")      # the rail layout's rule (module docstring)


def requirement_units(placement: Placement) -> tuple[int, int]:
    """(PP units, DP units) per distinct cross-Pod leaf pair ([REPO] rule, spec 2.10); in
    the rail layout per cross-Pod lane pair, (1, 1) (module docstring)."""
    tp, cl = placement.job.tp, placement.cluster
    if cl.layout == "rail":
        return 1, 1
    if cl.fabric.tau == 1 and cl.servers_per_leaf == 1:
        return max(1, tp // 4), max(1, tp // 4)
    return tp, max(1, tp // 2)


def domain_groups(placement: Placement) -> np.ndarray:
    """(pp, dp) index into ``placement.tp_groups()`` of each element of the PP x DP matrix
    (row = pipeline stage, column = replica): the A.6 fill (``domain_fill``), then each
    Pod's TP groups, in GPU-id order, over that Pod's elements in row-major order. The
    one arrangement shared by the requirement and the simulator's flows."""
    job, cl = placement.job, placement.cluster
    g_pod = cl.pod_of(placement.tp_groups()[:, 0])            # groups sorted by Pod already
    pod = domain_fill(np.bincount(g_pod, minlength=cl.fabric.pods), job.pp, job.dp)
    group_of = np.empty(pod.size, dtype=np.int64)
    group_of[np.argsort(pod.ravel(), kind="stable")] = np.arange(pod.size)
    return group_of.reshape(pod.shape)


def domain_gpus(placement: Placement) -> np.ndarray:
    """GPU id of each element of the PP x DP matrix and TP lane, (pp, dp, tp)
    (``domain_groups``); a group's lanes share its server, and in the server layout its leaf."""
    return placement.tp_groups()[domain_groups(placement)]


def job_pairs(placement: Placement, lanes: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Unordered cross-Pod leaf pairs (a < b) of the job's PP and of its DP traffic, as two
    (k, 2) arrays: the distinct ones, or with ``lanes`` one row per distinct GPU pair (TP lane
    i of one group with lane i of the other; the rail rule, module docstring). DP: each
    stage's ring by generalised eq. (42) (``ring_next``)."""
    cl = placement.cluster
    G = domain_gpus(placement)
    pod = cl.pod_of(G)
    rows = np.arange(G.shape[0])[:, None]
    nxt = ring_next(pod[:, :, 0])
    pp_cross = pod[:-1] != pod[1:]
    dp_cross = pod != pod[rows, nxt]
    pp_gpus = np.stack([G[:-1][pp_cross], G[1:][pp_cross]], axis=1)
    dp_gpus = np.stack([G[dp_cross], G[rows, nxt][dp_cross]], axis=1)

    def pairs(x):
        if not len(x):
            return np.zeros((0, 2), np.int64)
        if lanes:
            x = np.unique(np.sort(x, axis=1), axis=0)
        x = np.sort(cl.leaf_of(x), axis=1)
        return x if lanes else np.unique(x, axis=0)
    return pairs(pp_gpus), pairs(dp_gpus)


def job_requirement(placement: Placement, units: tuple[int, int] | None = None,
                    rail_rule: str = "lane-pairs") -> np.ndarray:
    """L1 of one placed job (n_leaves x n_leaves, symmetric, int64), before the K_leaf cap.
    ``units`` = (per PP pair, per DP pair), default ``requirement_units``; per distinct leaf
    pair, or in the rail layout per lane pair (``rail_rule`` ``lane-pairs``) or per distinct
    leaf pair of lanes (``leaf-pairs``; module docstring)."""
    if rail_rule not in RAIL_RULES:
        raise ValueError(f"rail_rule must be one of {', '.join(RAIL_RULES)}, got {rail_rule!r}")
    u_pp, u_dp = units or requirement_units(placement)
    n = placement.cluster.fabric.n_leaves
    L = np.zeros((n, n), dtype=np.int64)
    lanes = placement.cluster.layout == "rail" and rail_rule == "lane-pairs"
    pp_pairs, dp_pairs = job_pairs(placement, lanes=lanes)
    for pairs, u in ((pp_pairs, u_pp), (dp_pairs, u_dp)):
        if len(pairs):
            np.add.at(L, (pairs[:, 0], pairs[:, 1]), u)
            np.add.at(L, (pairs[:, 1], pairs[:, 0]), u)
    return L


def cap_share(L1: np.ndarray, L2: np.ndarray, k_leaf: int) -> np.ndarray:
    """Scale L1 so that rows of L1 + L2 stay within k_leaf (spec 2.10 [DECISION]): leaf a
    keeps the fraction s_a = min(1, (k_leaf - sum_b L2_ab) / sum_b L1_ab) of its rows, an
    entry the smaller fraction of its two leaves, rounded down; then units are given back
    by largest remainder while both leaves have room (never above ceil of the scaled
    value). Symmetric, integer, <= L1. Needs L2 within the cap. O(n^2 + m log m)."""
    n = len(L1)
    room = k_leaf - L2.sum(axis=1)
    d = L1.sum(axis=1)
    s = np.where(d > room, room / np.maximum(d, 1), 1.0)
    a, b = np.nonzero(np.triu(L1, 1))                     # work on the m nonzero pairs
    f = L1[a, b] * np.minimum(s[a], s[b])
    base = np.floor(f + 1e-9).astype(np.int64)
    used = np.bincount(a, base, n) + np.bincount(b, base, n)
    slack = room - used.astype(np.int64)
    rem = f - base
    for k in np.lexsort((b, a, -rem)):
        if rem[k] <= 1e-9:
            break
        if slack[a[k]] > 0 and slack[b[k]] > 0:
            base[k] += 1
            slack[a[k]] -= 1
            slack[b[k]] -= 1
    out = np.zeros_like(L1)
    out[a, b] = base
    out[b, a] = base
    return out


@dataclass
class Requirement:
    """Result of ``leaf_requirement``. ``L`` is None when the cap refused the job."""

    L: np.ndarray | None          # L1 + L2, a valid lumos-logical requirement
    L1: np.ndarray                # the new job's requirement as admitted (scaled if sharing)
    L1_estimate: np.ndarray       # the new job's requirement before the cap
    L2: np.ndarray                # sum of the running jobs' requirements
    fits: bool                    # L1_estimate + L2 within K_leaf at every leaf
    sharing: bool                 # the new job shares paths (its L1 was scaled down)


def leaf_requirement(new: Placement, running=(), cap: str = "share",
                     units: tuple[int, int] | None = None,
                     rail_rule: str = "lane-pairs") -> Requirement:
    """L = L1 + L2 ([002] 4.2.2). L1 = ``job_requirement(new, units, rail_rule)``; L2 = the
    sum over ``running`` of each job's own L: an array (e.g. its ``Requirement.L1`` when
    admitted; pass one summed array when many jobs run) or a ``Placement`` (estimated by
    ``job_requirement`` with its default units and ``rail_rule``). L is valid for
    ``LogicalInstance`` by construction. The K_leaf cap: ``cap="share"`` (spec 2.10
    [DECISION]) scales L1 by ``cap_share`` and marks the job sharing; ``cap="refuse"``
    returns L = None when L1 + L2 exceeds it (the caller re-places the job). InstanceError
    naming ``running[k]`` or ``running`` when a running job's L or their sum is invalid."""
    if cap not in ("share", "refuse"):
        raise ValueError(f"cap must be 'share' or 'refuse', got {cap!r}")
    fab = new.cluster.fabric
    n = fab.n_leaves
    L2 = np.zeros((n, n), dtype=np.int64)
    for k, job in enumerate(running):
        if isinstance(job, Placement):
            L2 += job_requirement(job, rail_rule=rail_rule)
            continue
        M = np.asarray(job)
        L2 += M if _valid_int(M, fab) else validate_requirement(M, fab, f"running[{k}]")
    if not _valid_int(L2, fab):
        L2 = validate_requirement(L2, fab, "running")      # names the bad entry
    L1 = job_requirement(new, units, rail_rule)
    fits = bool(np.all((L1 + L2).sum(axis=1) <= fab.k_leaf))
    if fits:
        return Requirement(L1 + L2, L1, L1, L2, True, False)
    if cap == "refuse":
        return Requirement(None, np.zeros_like(L1), L1, L2, False, False)
    shared = cap_share(L1, L2, fab.k_leaf)
    return Requirement(shared + L2, shared, L1, L2, False, True)


def _valid_int(L: np.ndarray, fab) -> bool:
    """The checks of ``validate_requirement`` on an int array, fast (O(n^2) integer ops)."""
    n, m = fab.n_leaves, fab.leaves_per_pod
    if L.shape != (n, n) or not np.issubdtype(L.dtype, np.integer) or (L < 0).any():
        return False
    blocks = L.reshape(fab.pods, m, fab.pods, m)
    same_pod = blocks[np.arange(fab.pods), :, np.arange(fab.pods), :]
    return (not same_pod.any() and np.array_equal(L, L.T)
            and bool(np.all(L.sum(axis=1) <= fab.k_leaf)))
