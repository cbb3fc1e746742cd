"""Weighted max-min fair rates by progressive filling, and an independent fairness checker.

Spec lumoscore.md 4.2 [DECISION]: the simulator rates the active flows max-min fair per
directed link (progressive filling), recomputed at every event (issue 16).

Model: ``A`` (links x flows, 0/1) says which directed links a flow crosses; link ``l`` carries
``sum_f A[l, f] * weight[f] * rate[f] <= cap[l]``. A flow of weight ``m`` stands for ``m``
identical unit flows, so ``rate`` is the per-unit rate; ``limit`` bounds it (the NIC share).
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

_log = logging.getLogger(__name__)

#: relative tolerance, times the link capacity, within which a link counts as saturated
SAT_RTOL = 1e-12


def _inputs(A, cap, weight, limit):
    """Validated (CSC pattern, cap, weight, limit); nonzero entries of ``A`` count as 1."""
    A = sp.csc_matrix(A)
    A.sum_duplicates()
    A.eliminate_zeros()
    n_links, n_flows = A.shape
    cap = np.asarray(cap, dtype=float).reshape(-1)
    if cap.shape != (n_links,):
        raise ValueError(f"cap has shape {cap.shape}, A has {n_links} links")
    if not np.all(np.isfinite(cap) & (cap > 0)):
        raise ValueError("capacities must be finite and > 0")
    w = np.ones(n_flows) if weight is None else np.asarray(weight, dtype=float).reshape(-1)
    if w.shape != (n_flows,):
        raise ValueError(f"weight has shape {w.shape}, A has {n_flows} flows")
    if not np.all(np.isfinite(w) & (w > 0)):
        raise ValueError("weights must be finite and > 0 (drop empty flows before rating)")
    lim = np.full(n_flows, np.inf) if limit is None else np.asarray(limit, dtype=float).reshape(-1)
    if lim.shape != (n_flows,):
        raise ValueError(f"limit has shape {lim.shape}, A has {n_flows} flows")
    if np.any(np.isnan(lim) | (lim < 0)):
        raise ValueError("limits must be >= 0 (use inf for none)")
    return A, cap, w, lim


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + n)`` for each start ``s`` and length ``n``."""
    ends = np.cumsum(lens)
    return np.repeat(starts - (ends - lens), lens) + np.arange(ends[-1] if ends.size else 0)


def maxmin_rates(A, cap, weight=None, limit=None) -> np.ndarray:
    """Per-unit weighted max-min fair rates with per-flow limits (progressive filling).

    ``A``: (n_links, n_flows) sparse 0/1, any format; ``cap``: (n_links,) > 0; ``weight``:
    (n_flows,) > 0, default 1 (zero weights raise ValueError); ``limit``: (n_flows,) per-unit
    upper bound, default inf. A flow on no link gets its limit, which must then be finite.

    Progressive filling, freezing in bulk. The level of link ``l`` is ``r_l / W_l`` (residual
    capacity over the weight of its unfrozen flows): the common rate at which it would
    saturate. Levels only rise as other flows freeze at lower rates, so a link whose level is
    the lowest among the links and limits of all its unfrozen flows saturates, in the
    one-link-at-a-time algorithm, exactly at its current level. Each round freezes all such
    links at once (the global minimum and its ties included, ties within ``SAT_RTOL * cap``),
    together with every flow whose limit is below all its links' levels; each frozen flow gets
    the lowest level among its links and its limit. [DECISION] This local-minimum rule gives the
    same allocation as the textbook algorithm (Bertsekas & Gallager, Data Networks, 6.5.2) in at
    most as many rounds as it has distinct levels, usually far fewer. Every round freezes at
    least one flow, so it terminates. A round is O(entries of unfrozen flows) numpy work
    (gathers, ``reduceat``, ``bincount``) on entry lists compacted as flows freeze.
    """
    A, cap, w, lim = _inputs(A, cap, weight, limit)
    n_links, n_flows = A.shape
    x = np.zeros(n_flows)
    fdeg = np.diff(A.indptr)
    if np.any(np.isinf(lim[fdeg == 0])):
        raise ValueError("a flow on no link needs a finite limit")
    x[fdeg == 0] = lim[fdeg == 0]  # flows on no link: exactly their limit
    # unfrozen flows (ids, degrees, link lists), and links (ids, degrees, flow lists)
    fids = np.flatnonzero(fdeg)
    fdeg = fdeg[fids]
    fl_link = A.indices.astype(np.intp)  # intp gathers are faster than int32
    R = A.tocsr()
    cnt = np.diff(R.indptr)  # unfrozen flows per link
    lk_flow = R.indices.astype(np.intp)
    W = np.bincount(fl_link, weights=np.repeat(w[fids], fdeg), minlength=n_links)
    load = np.zeros(n_links)
    level = np.full(n_links, np.inf)
    m_all = np.empty(n_flows)  # scratch: candidate rate per flow
    hit = np.zeros(n_flows, dtype=bool)  # scratch: flows frozen this round
    rounds = 0
    while fids.size:
        rounds += 1
        lids = np.flatnonzero(cnt)
        ldeg = cnt[lids]
        ls = np.cumsum(ldeg) - ldeg
        fs = np.cumsum(fdeg) - fdeg
        # link levels: residual capacity over unfrozen weight
        resid = np.maximum(cap[lids] - load[lids], 0.0)
        level[lids] = resid / W[lids]
        # per unfrozen flow: lowest level over its links, then its limit
        m_link = np.minimum.reduceat(level[fl_link], fs)
        at_limit = lim[fids] <= m_link
        m = np.minimum(m_link, lim[fids])
        m_all[fids] = m
        # a link saturates now if its level (less the tolerance) is <= all its flows' candidates
        lowest = np.minimum.reduceat(m_all[lk_flow], ls)
        sat = resid - SAT_RTOL * cap[lids] <= lowest * W[lids]
        hit[lk_flow[_ranges(ls[sat], ldeg[sat])]] = True
        hit[fids[at_limit]] = True
        freeze = hit[fids]
        new = fids[freeze]
        if not new.size:  # the lowest level always freezes; only NaN could get here
            raise RuntimeError("max-min progressive filling made no progress")
        x[new] = m[freeze]
        # account the frozen flows' load and drop their entries
        gone = np.repeat(freeze, fdeg)
        gl = fl_link[gone]
        nd = fdeg[freeze]
        load += np.bincount(gl, weights=np.repeat(w[new] * x[new], nd), minlength=n_links)
        W -= np.bincount(gl, weights=np.repeat(w[new], nd), minlength=n_links)
        cnt -= np.bincount(gl, minlength=n_links)
        fl_link = fl_link[~gone]
        fids, fdeg = fids[~freeze], fdeg[~freeze]
        lk_flow = lk_flow[~hit[lk_flow]]
        hit[new] = False
    _log.debug("maxmin_rates: %d links, %d flows, %d rounds", n_links, n_flows, rounds)
    return x


def _listed(kind: str, items: list[str], most: int = 10) -> list[str]:
    """The first ``most`` messages of one kind, then a count of the rest."""
    extra = [f"... and {len(items) - most} more {kind}"] if len(items) > most else []
    return items[:most] + extra


def maxmin_violations(A, cap, rates, weight=None, limit=None, rtol: float = 1e-6) -> list[str]:
    """Why ``rates`` is not the weighted max-min fair allocation; ``[]`` if it is.

    Checks the definition, independently of ``maxmin_rates`` (Bertsekas & Gallager 6.5.2):
    (a) feasible: rates >= 0, each <= its limit, each link's load <= its capacity;
    (b) fair: every flow below its limit has a bottleneck, a saturated link (load >=
    cap * (1 - rtol)) on which its per-unit rate is >= that of every flow on the link.
    Comparisons are relative to ``rtol``. At most 10 messages per kind, then a count.
    """
    A, cap, w, lim = _inputs(A, cap, weight, limit)
    x = np.asarray(rates, dtype=float).reshape(-1)
    if x.shape != (A.shape[1],):
        return [f"rates has shape {x.shape}, A has {A.shape[1]} flows"]
    if not np.all(np.isfinite(x)):
        return [f"flow {f} rate {x[f]} is not finite" for f in np.flatnonzero(~np.isfinite(x))[:10]]
    out = []
    out += _listed("negative rates", [f"flow {f} negative rate {x[f]:.6g} < 0" for f in np.flatnonzero(x < 0)])
    over_lim = np.flatnonzero(x > lim * (1 + rtol))
    out += _listed("rates over limit",
                   [f"flow {f} over its limit: rate {x[f]:.6g} > {lim[f]:.6g}" for f in over_lim])
    links, flows = A.nonzero()
    load = np.bincount(links, weights=w[flows] * x[flows], minlength=A.shape[0])
    over = np.flatnonzero(load > cap * (1 + rtol))
    out += _listed("links over capacity",
                   [f"link {l} over capacity: load {load[l]:.6g} > {cap[l]:.6g}" for l in over])
    top = np.zeros(A.shape[0])
    np.maximum.at(top, links, x[flows])
    saturated = load >= cap * (1 - rtol)
    ok = saturated[links] & (x[flows] >= top[links] * (1 - rtol))
    has_bottleneck = np.zeros(A.shape[1], dtype=bool)
    has_bottleneck[flows[ok]] = True
    at_limit = x >= lim * (1 - rtol)
    lacking = np.flatnonzero(~has_bottleneck & ~at_limit)
    out += _listed("flows without a bottleneck",
                   [f"flow {f} has no bottleneck: rate {x[f]:.6g} is below its bound "
                    f"{lim[f]:.6g} and the largest on no saturated link" for f in lacking])
    return out
