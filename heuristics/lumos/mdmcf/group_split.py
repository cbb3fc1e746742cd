"""One OCS group of ITV-MDMCF / ITV-MCF (steps 2-5 of heuristics.lumos.mdmcf.reconfig's
docstring): the K/2 directed partial permutations of the group's even OCSes
(:func:`split_group`), the candidates MDMCF compares on eq. (7) and its lower bound there
(:func:`group_bound`), the ejection chains' runs and work budget (:func:`eject_runs`,
:func:`group_work`). Spec 2.3, 2.5 (reconstructions: [001]'s MDMCF section is missing).
"""
from __future__ import annotations

import numpy as np

from heuristics.lumos.mdmcf.decompose import (find_connection, int_decompose, sym_decompose,
                                              sym_decompose_flow, sym_decompose_rewiring)
from heuristics.lumos.mdmcf.eject import NO_GOAL, Work, eject_connection
from heuristics.lumos.mdmcf.exact import lp_guided, model_size
from heuristics.lumos.mdmcf.kempe import kempe_connection
from heuristics.lumos.mdmcf.refine import pair_refine

SIMD = {"euler": sym_decompose, "flow": sym_decompose_flow}


def default_restarts(P: int, lns: float = 0.0) -> int:
    """Extra runs of the ejection-chain assignment per group (step 4): none when the
    large-neighbourhood search runs (``lns`` > 0, the default; it uses the time better),
    else by fabric size (the trade-off: heuristics.lumos.mdmcf.reconfig's docstring; with
    lns 0, on the proven ITV-ILP optima of results/lumos/lumos_reconfig_quality.md, ring
    churn: 5 restarts -> worst 1.12x at about 2.6x ITV-MCF's median time at 16 Pods, 8 ->
    1.094x at 3.3x)."""
    if lns:
        return 0
    return 5 if P <= 16 else 1 if P <= 32 else 0


def eject_runs(P: int, restarts: int) -> list[dict]:
    """Options of the 1 + ``restarts`` runs of eject: the deterministic order
    (at P >= 64 units with a free place first, which is faster), then units with a free
    place first, then seeded random tie-breaking alternating between the two orders."""
    runs = [dict(direct_first=P >= 64)]
    if restarts >= 1:
        runs.append(dict(direct_first=not runs[0]["direct_first"]))
    runs += [dict(seed=k, direct_first=bool(k % 2)) for k in range(restarts - 1)]
    return runs


EJECT_WORK = 4.0              # ejection-chain work per OCS port and run (the work budget)
LNS = 30.0                    # large-neighbourhood search work per OCS port (default, step 4)
EXACT_VARS = 4000             # itv-mdmcf-lp: the LP-guided step on groups up to this many binaries
EXACT_NODES = 50              # its branch-and-bound node limit (deterministic)
EXACT_WORK = 10               # and each MIP's HiGHS checkpoints (heuristics.lumos.mdmcf.exact)
EXACT_PODS = 16               # and only up to this many Pods (P = 32: seconds per group)
EXACT_FULL_PODS = 12          # its unfixed ILP (step 3 of exact) up to this many Pods
NO_COST = 1 << 62             # rewiring of no candidate yet


def group_work(P: int, K: int, runs: int, eject_work: float | None = EJECT_WORK) -> int | None:
    """Work budget of the ``runs`` ejection-chain runs of one group, in the units of
    heuristics.lumos.mdmcf.eject.Work: ``eject_work`` per OCS port of the group (P K) and run
    (None or 0: unlimited). Decision: the default 4 is about 2.5 times the most the
    benchmark's churn needs per run at P = 128 (1.5) and above what ring churn 0.3 needs
    there (3.1), so those results are the unlimited ones; full ring churn needs about 12
    and is cut to a third (results/lumos/lumos_reconfig.md)."""
    return max(1, round(eject_work * P * K * runs)) if eject_work else None


def split_group(C_h: np.ndarray, K: int, old: np.ndarray | None = None, aware: bool = True,
                simd: str = "euler", refine: bool = False, deadline: float | None = None,
                eject: bool = True, restarts: int | None = None, old_odd: np.ndarray | None = None,
                eject_work: float | None = EJECT_WORK, eject_deadline: float | None = None,
                exact_vars: int | None = None, lns: float | None = None,
                lns_seed: int | None = None, exact_work: int | None = EXACT_WORK
                ) -> list[np.ndarray]:
    """The K/2 directed partial permutations A^(m) for the even OCSes of one group;
    ``old_odd``: the odd OCSes' old matrices (default: the mirror, old^T), used to
    compare the candidates on eq. (7); ``eject_work``: work budget of the ejection chains
    per OCS port and run (:func:`group_work`; None or 0: unlimited); ``eject_deadline``:
    a time.monotonic() value that also ends them (a user time limit only);
    ``exact_vars``: the LP-guided step (step 5 of heuristics.lumos.mdmcf.reconfig's docstring) on groups whose
    reduced ILP has at most this many binaries (None or 0: off), ``exact_work`` its MIPs'
    work limit (HiGHS checkpoints, None or 0: the node limit only); ``lns``: the LNS's work
    per OCS port (None: LNS, 0: off), ``lns_seed`` its seed (None: eject.LNS_SEED)."""
    if old is None or not old.any():
        return int_decompose(SIMD[simd](C_h), K // 2)
    parts = find_connection(SIMD[simd](C_h), old) if not aware else _mdmcf_group(
        C_h, K, old, eject, restarts, old_odd, eject_work, eject_deadline, exact_vars, lns,
        lns_seed, exact_work)
    return pair_refine(parts, old, deadline=deadline) if refine else parts


def _mdmcf_group(C_h, K, old, eject, restarts, old_odd, eject_work, eject_deadline,
                 exact_vars, lns, lns_seed, exact_work=EXACT_WORK) -> list[np.ndarray]:
    """Steps 2-5 of heuristics.lumos.mdmcf.reconfig's docstring for one group (MDMCF): the cheapest candidate."""
    P = len(C_h)
    odd = np.transpose(old, (0, 2, 1)) if old_odd is None else old_odd
    floor = group_bound(C_h, old, odd)
    small = bool(exact_vars) and P <= EXACT_PODS and model_size(C_h, K // 2) <= exact_vars
    lns = LNS if lns is None else lns
    if restarts is None:                # the LP-guided step replaces the restarts
        restarts = 0 if small else default_restarts(P, lns)
    runs = eject_runs(P, restarts) if eject else []
    work = Work(group_work(P, K, len(runs), eject_work), eject_deadline)  # shared by the runs
    mirrored = np.array_equal(odd, np.transpose(old, (0, 2, 1)))
    if lns and runs:                    # the large-neighbourhood search after the first run
        runs[0] = dict(runs[0], lns_work=max(1, round(lns * P * K)), lns_seed=lns_seed,
                       lns_goal=_kept_goal(C_h, old, floor) if mirrored else NO_GOAL)
    parts, best = None, NO_COST
    for k, kw in enumerate(runs):       # 4. the ejection chains first
        if best <= floor or (k >= 1 and work.spent):
            break                       # optimal, or restarts only within the budget
        parts, best = _cheaper(eject_connection(C_h, old, improve=P < 64, work=work, **kw),
                               parts, best, C_h, old, odd)
    searched = bool(lns) and bool(runs) and mirrored
    if best > floor and (parts is None or not searched or work.spent):
        # 2.-3. (only fallbacks after an LNS run on a mirrored old configuration, where
        # the LNS optimizes eq. (7) itself: [DECISION] FALLBACK): relaxed SIMD (row/column
        # sums <= K/2, what Theorem 4.1 needs) against the old A, FindConnection, then
        # keep-and-insert
        A = sym_decompose_rewiring(C_h, old.sum(axis=0), K // 2)
        for make in (lambda: find_connection(A, old), lambda: kempe_connection(A, old)):
            parts, best = _cheaper(make(), parts, best, C_h, old, odd)
            if best <= floor:
                break
    if small and best > floor:          # 5.
        alt, _ = lp_guided(C_h, old, odd, parts, EXACT_NODES, full=P <= EXACT_FULL_PODS,
                           checks=exact_work)
        parts, best = _cheaper(alt, parts, best, C_h, old, odd)
    return parts


def _cheaper(alt, parts, best: int, C_h, old, odd):
    """(alt, its eq. (7)) if ``alt`` is a valid split rewiring less than ``best``, else
    (parts, best)."""
    if alt is None or not _realizes(alt, C_h):
        return parts, best
    cost = _rewiring(alt, old, odd)
    return (alt, cost) if cost < best else (parts, best)


def group_bound(C_h: np.ndarray, old: np.ndarray, old_odd: np.ndarray) -> int:
    """A lower bound on eq. (7) for one group. Entry (m, i, j) costs |x - u| + |x - v|
    with x = X_m[i, j], u = old[m, i, j], v = old_odd[m, j, i]: 2 (1 - x) on an old link
    (u = v = 1), 1 whatever x on an old one-way circuit (u != v), 2 x on an empty entry;
    the pair {i, j} has C_ij links over its entries, so at least R_ij - C_ij old links
    are lost and C_ij - R_ij - W_ij links go on empty entries (R, W: old links and
    one-way circuits of the pair)."""
    v = np.transpose(old_odd, (0, 2, 1))
    link, oneway = (old * v).sum(axis=0), (old != v).sum(axis=0)
    R, W = link + link.T, oneway + oneway.T
    lost = np.maximum(R - C_h, 0) + np.maximum(C_h - R - W, 0)
    return int(oneway.sum() + np.triu(lost, 1).sum() * 2)


def _kept_goal(C_h, old, floor: int) -> int:
    """The most old circuits an assignment can keep if eq. (7) >= ``floor``, for a mirrored
    old configuration: eq. (7) = 2 (R - kept) + 2 (units - kept) (R old circuits of the
    even OCSes)."""
    return (2 * int(old.sum()) + int(np.triu(C_h, 1).sum()) * 2 - floor) // 4


def _rewiring(parts, old, old_odd) -> int:
    """Eq. (7) for one group: even OCS m carries X, odd OCS m carries X^T."""
    X = np.asarray(parts)
    return int(np.abs(X - old).sum() + np.abs(np.transpose(X, (0, 2, 1)) - old_odd).sum())


def _realizes(parts, C_h) -> bool:
    """Defensive check of an assignment: partial permutations, no self-circuit, sum
    X + X^T = C_h."""
    X = np.asarray(parts)
    S = X.sum(axis=0)
    d = np.arange(X.shape[1])
    return bool(np.array_equal(S + S.T, C_h) and X.min(initial=0) >= 0
                and X.sum(axis=1).max(initial=0) <= 1 and X.sum(axis=2).max(initial=0) <= 1
                and not X[:, d, d].any())
