"""The paper's own Generalized Kautz schedule, "GK-literal" (Sec. 4.2, Fig. 9; spec 3.4, A8).

Paper: "we instead list out all h-hop paths from all sources for h=1,2,... (in an ascending
order). For hop-1 paths, there can be no contention and all flows can be packed into the same
round. For each subsequent h>1, we allocate k^{h-1} rounds. [...] we pack paths greedily into
rounds, considering a next round only when all previous rounds are full or contend with the
current path. We then enumerate over each round, select the shortest paths to each destination
for each source, break ties randomly, and remove all other paths [...]. At the end of this
process, we iterate over the schedule and opportunistically combine rounds that do not contend
with each other."

Steps (spec 3.4 rules 1-5):

1. for h = 1, 2, ...: every h-hop walk from every source (self-loop arcs skipped), sources in
   order, each walk's successors in ascending node order (lexicographic walks);
2. first-fit packing of the h-hop walks into the k^{h-1} rounds allocated for h: a walk goes to
   the first of them where none of its link-steps ((v_{t-1}, v_t), t) is used up (capacity =
   the arc's multiplicity); [DECISION] a walk that fits none opens an extra round for h (the
   paper is silent; on a k-regular graph every link-step carries exactly k^{h-1} h-walks, so
   the allocation is the minimum and first-fit may overflow it);
3. stop after the first h at which every (s, t), s != t, is reached;
4. prune: rounds in order (ascending h, then creation), walks in packing order; a walk is kept
   iff s != t and (s, t) is not yet kept, so each pair keeps its first (shortest) walk;
   [DECISION] ties go to the first walk in this order instead of the paper's random pick
   (A22: deterministic by default); empty rounds are dropped;
5. merge: each round in order joins the first earlier merged round whose link-steps it does
   not exceed (same capacity rule), else starts a new merged round; a merged round costs its
   longest walk.

Every round is contention-free in the time-expanded graph (no link-step above its
multiplicity), so a source starts <= k flows per round. Complexity: sum_h n k^h walks (about
n^2 k / (k-1) up to the diameter), each tried against O(k^{h-1}) rounds, O(h) per try.
"""
from __future__ import annotations

import numpy as np

from instances.a2a.instance import arc_multiplicity


def extend(out: list[list[int]], W: np.ndarray) -> np.ndarray:
    """The walks one hop longer than the rows of ``W``, in lexicographic order."""
    rows = [np.append(w, v) for w in W for v in out[int(w[-1])]]
    return np.asarray(rows, dtype=np.int64).reshape(-1, W.shape[1] + 1)


def _fits(steps, used: dict, mult: dict) -> bool:
    return all(used.get(st, 0) < mult[st[0]] for st in steps)


def _take(steps, used: dict) -> None:
    for st in steps:
        used[st] = used.get(st, 0) + 1


def _steps(w) -> list[tuple]:
    return [((int(w[t]), int(w[t + 1])), t) for t in range(len(w) - 1)]


def packed_walk_rounds(n: int, k: int, arcs) -> list[tuple[int, list[np.ndarray]]]:
    """Steps 1-3: [(h, [walks of one round])] in order (the k^{h-1} allocated rounds of each h
    first, then its overflow rounds). Raises ValueError when some pair is unreachable."""
    mult = arc_multiplicity(arcs)
    out = [sorted({v for (u, v) in mult if u == x and v != x}) for x in range(n)]
    reached = np.eye(n, dtype=bool)
    rounds: list[tuple[int, list]] = []
    W = np.arange(n, dtype=np.int64)[:, None]
    for h in range(1, n):
        W = extend(out, W)
        if len(W) == 0:
            break
        alloc = k ** (h - 1)
        mine: list[list] = [[] for _ in range(alloc)]
        used: list[dict] = [{} for _ in range(alloc)]
        for w in W:
            st = _steps(w)
            r = next((i for i, u in enumerate(used) if _fits(st, u, mult)), None)
            if r is None:
                mine.append([])
                used.append({})
                r = len(mine) - 1
            mine[r].append(w)
            _take(st, used[r])
        rounds += [(h, m) for m in mine if m]
        reached[W[:, 0], W[:, -1]] = True
        if reached.all():
            return rounds
    raise ValueError("topology does not connect every pair")


def prune(rounds) -> list[list[np.ndarray]]:
    """Step 4: each (s, t), s != t, keeps its first walk in round order; empty rounds go."""
    kept: set = set()
    out = []
    for _, ws in rounds:
        keep = []
        for w in ws:
            pair = (int(w[0]), int(w[-1]))
            if pair[0] != pair[1] and pair not in kept:
                kept.add(pair)
                keep.append(w)
        if keep:
            out.append(keep)
    return out


def merge(rounds, arcs) -> list[list[np.ndarray]]:
    """Step 5: first-fit merge of whole rounds whose link-steps fit together."""
    mult = arc_multiplicity(arcs)
    merged: list[list] = []
    used: list[dict] = []
    for ws in rounds:
        st = [s for w in ws for s in _steps(w)]
        cnt: dict = {}
        _take(st, cnt)
        j = next((i for i, u in enumerate(used)
                  if all(u.get(s, 0) + c <= mult[s[0]] for s, c in cnt.items())), None)
        if j is None:
            merged.append(list(ws))
            used.append(cnt)
        else:
            merged[j] += ws
            for s, c in cnt.items():
                used[j][s] = used[j].get(s, 0) + c
    return merged


def gk_literal_schedule(n: int, k: int, arcs) -> list[list[tuple]]:
    """The GK-literal rounds on a topology (module docstring): rounds as lists of node tuples."""
    rounds = merge(prune(packed_walk_rounds(n, k, arcs)), arcs)
    return [[tuple(int(v) for v in w) for w in r] for r in rounds]
