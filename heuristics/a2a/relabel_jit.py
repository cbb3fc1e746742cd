"""The relabeling local search compiled with numba, with incremental swap evaluation (spec 3.7:
"a swap touches only the rounds containing the two nodes' flows").

State of a labeling (position -> GPU) over a candidate's flows (``FlowTable``: flows sorted by
(round, hop) cell, cells by round): each flow's per-hop time t_f = tau(A[lab[src], lab[dst]])
(0 for a flow with no traffic), each cell's maximum, each round's time
sum_{tau=1..H} max{cell max : cell hop >= tau}, and each phase's number of flows with traffic
(d_eff, A10). Swapping positions a and b changes only the flows with an end at a or b
(<= 4(n-1)); the kernel recomputes their cells' maxima (a full rescan of a cell only where its
maximum flow shrank) and their rounds' times, so a swap costs O(n k + cells touched) instead of
the O(n^2) of a full evaluation. An accepted swap is committed; a rejected one leaves no trace.
The cost compared is R d_eff + sum of round times, exactly ``FlowTable.cost`` (tests compare).
"""
from __future__ import annotations

import numpy as np

from toolkit.kernel_cache import njit


@njit
def _round_time(r, rstart, chop, g):
    """Time of round r from its cells' maxima g (cells rstart[r]..rstart[r+1]-1, hop ascending)."""
    tot, m, hi = 0.0, 0.0, 0
    for c in range(rstart[r + 1] - 1, rstart[r] - 1, -1):
        if hi > 0:
            tot += (hi - chop[c]) * m
        if g[c] > m:
            m = g[c]
        hi = chop[c]
    return tot + hi * m


@njit
def _time(A, alpha, beta, x, y):
    S = A[x, y]
    return alpha + beta * S if S > 0 else 0.0


@njit
def init_state(lab, A, alpha, beta, src, dst, fcell, cstart, chop, rstart, pid, nphase):
    """(t per flow, cell maxima, round times, live flows per phase)."""
    F, C, Rn = len(src), len(chop), len(rstart) - 1
    t = np.empty(F)
    g = np.zeros(C)
    live = np.zeros(nphase, dtype=np.int64)
    for f in range(F):
        t[f] = _time(A, alpha, beta, lab[src[f]], lab[dst[f]])
        if t[f] > 0:
            live[pid[f]] += 1
        if t[f] > g[fcell[f]]:
            g[fcell[f]] = t[f]
    rt = np.empty(Rn)
    for r in range(Rn):
        rt[r] = _round_time(r, rstart, chop, g)
    return t, g, rt, live


@njit
def search_pass(lab, order, pa, pb, R, A, alpha, beta, src, dst, fcell, cstart, chop, rstart,
                cround, pid, pstart, pflows, t, g, rt, live, cur, evals, max_evals):
    """One first-improvement pass over the swaps ``(pa[j], pb[j]) for j in order``; updates
    the state in place. Returns (cost, improved, evaluations)."""
    F, C, Rn = len(src), len(chop), len(rt)
    nt = np.empty(F)
    fstamp = np.zeros(F, dtype=np.int64)
    ng = np.empty(C)
    cstamp = np.zeros(C, dtype=np.int64)
    crescan = np.zeros(C, dtype=np.int64)
    nrt = np.empty(Rn)
    rstamp = np.zeros(Rn, dtype=np.int64)
    dlive = np.zeros(len(live), dtype=np.int64)
    pstamp = np.zeros(len(live), dtype=np.int64)
    tps = np.empty(len(live), dtype=np.int64)
    ch = np.empty(F, dtype=np.int64)
    cells = np.empty(F, dtype=np.int64)
    rounds = np.empty(F, dtype=np.int64)
    stamp = 0
    improved = False
    for j in order:
        if evals >= max_evals:
            break
        a, b = pa[j], pb[j]
        stamp += 1
        lab[a], lab[b] = lab[b], lab[a]
        # changed flows: an end at a or b (pflows lists each position's flows, both ends)
        nch = 0
        for p in (a, b):
            for q in range(pstart[p], pstart[p + 1]):
                f = pflows[q]
                if fstamp[f] != stamp:
                    fstamp[f] = stamp
                    nt[f] = _time(A, alpha, beta, lab[src[f]], lab[dst[f]])
                    ch[nch] = f
                    nch += 1
        # their cells: new maxima (rescan where the maximum flow shrank)
        ncell = 0
        for i in range(nch):
            f = ch[i]
            c = fcell[f]
            if cstamp[c] != stamp:
                cstamp[c] = stamp
                ng[c] = g[c]
                crescan[c] = 0
                cells[ncell] = c
                ncell += 1
            if t[f] == g[c] and nt[f] < t[f]:
                crescan[c] = 1
            elif nt[f] > ng[c]:
                ng[c] = nt[f]
        nround = 0
        for i in range(ncell):
            c = cells[i]
            if crescan[c]:
                m = 0.0
                for f in range(cstart[c], cstart[c + 1]):
                    v = nt[f] if fstamp[f] == stamp else t[f]
                    if v > m:
                        m = v
                ng[c] = m
            r = cround[c]
            if rstamp[r] != stamp:
                rstamp[r] = stamp
                rounds[nround] = r
                nround += 1
        # affected rounds' times, with the new maxima of the touched cells
        delta = 0.0
        for i in range(nround):
            r = rounds[i]
            for c in range(rstart[r], rstart[r + 1]):
                if cstamp[c] != stamp:
                    ng[c] = g[c]
            nrt[r] = _round_time(r, rstart, chop, ng)
            delta += nrt[r] - rt[r]
        ntp = 0                     # phases whose count of flows with traffic changes
        for i in range(nch):
            f = ch[i]
            dl = (nt[f] > 0) - (t[f] > 0)
            if dl != 0:
                p = pid[f]
                if pstamp[p] != stamp:
                    pstamp[p] = stamp
                    dlive[p] = 0
                    tps[ntp] = p
                    ntp += 1
                dlive[p] += dl
        dd = 0
        for i in range(ntp):
            p = tps[i]
            dd += (live[p] + dlive[p] > 0) - (live[p] > 0)
        c_new = cur + delta + R * dd
        evals += 1
        accept = c_new < cur - 1e-12
        if accept:
            cur = c_new
            improved = True
            for i in range(nch):
                t[ch[i]] = nt[ch[i]]
            for i in range(ncell):
                g[cells[i]] = ng[cells[i]]
            for i in range(nround):
                rt[rounds[i]] = nrt[rounds[i]]
            for i in range(ntp):
                live[tps[i]] += dlive[tps[i]]
        else:
            lab[a], lab[b] = lab[b], lab[a]
    return cur, improved, evals
