"""Keep-and-insert by ejection chains with orientation freedom (an addition to MDMCF).

The exact problem of one Cross-Wiring group (spec 2.4, reduced model): the undirected
multigraph C_h (Pod degree <= K) is split over the K/2 even OCSes, each carrying a
directed partial permutation (one circuit out of and one into every Pod per OCS); a unit
of C_ij may be realized as i -> j or j -> i in any of them (the odd OCS mirrors it).
Since the circuit counts are fixed, minimal rewiring (eq. 7) = keeping the most old
circuits (i -> j in the same even OCS). FindConnection and the Kempe insertion of
heuristics.lumos.mdmcf.kempe first fix the orientation A (SIMD) and then colour it; the ILP
optimum typically keeps all old circuits but a handful, and most of their loss is in
that order of decisions. This module decides orientation and OCS together:

1. keep every old circuit whose Pod pair C still needs; a pair with more old copies
   than C_ij keeps them all for now, as *excess* copies (decision: which copies to drop
   is left to the insertions below, which drop an excess copy whose ports they need);
2. insert each missing unit {i, j}, most constrained first (fewest places where both
   ports are free; ``direct_first``: the fewest among units that have such a place,
   a faster order), by an *ejection chain*: place it as s -> t in some OCS m where
   the Tx port of s or the Rx port of t is free; an excess copy on the other port is
   dropped; any other circuit there is ejected and becomes the next unit to place, in
   any OCS and orientation. Chains are searched best-first on their cost (+1 per old
   circuit ejected from its old place, -1 per circuit placed at an old place), with
   bounds on depth and states; among places where both ports are free, the one that
   blocks the fewest free places of the other units. If the search finds nothing, the
   excess copies at the unit's Pods are dropped and the alpha/beta alternating-path
   swap of Konig's theorem places the unit (after reversing one directed path of one
   OCS when both endpoints have free ports of one kind only), which always succeeds;
3. drop the excess copies left (pairs back to C_ij copies);
4. improvement: each old circuit not kept while its pair is realized elsewhere by a
   circuit that is not kept is moved back to its old place, and what it ejects is
   re-inserted by chains; the move stays only if more old circuits are kept;
5. optionally (``lns_work``) the large-neighbourhood search of heuristics.lumos.mdmcf.lns.

Each search expands at most ``max_states`` states of O(K) moves each (bounded local
search), so the whole is polynomial. Steps 1-4 run compiled (numba, issue 17 item 2:
heuristics.lumos.mdmcf.eject_steps, chain and konig, imported on the first call; the
machine code is cached on disk); they give the same assignments as the former Python
code (tests/heuristics/lumos/ref_eject.py, the test reference), seeds included; the
first call of a fresh checkout compiles them (about 26 s on 2 cores, the LNS 6 s more),
later processes load them (about 0.1-0.3 s); methods warm them before their clock starts
(toolkit.kernels: :func:`warm_up_chains`, :func:`warm_up_lns`).

Work budget (``work``, a :class:`Work` shared by the runs of a group; it replaces a
wall-clock guard whose results depended on the machine's load): it counts work units
(chain states, selections, re-keep attempts), never the clock, with the same units and
weights as the Python code had, so a budget cuts at the same place. The compiled code
checks it before each unit and each re-keep attempt; once it is spent, the remaining
units are placed in list order (no most-constrained selection, whose cost grows with the
square of the number of units) by chains of at most ``GUARD_STATES`` states, 0 = the
Konig fallback alone (short chains in list order rewired more in a trial at P = 128),
and step 4 is skipped or stopped. Only under a user time limit (``Work.deadline``) do
the compiled steps return after every unit or attempt, so that the clock is read
between them, as before. If a unit cannot be placed (not expected) the function returns
None and MDMCF uses its other assignments.
"""
from __future__ import annotations

import functools
import threading
import time

import numpy as np

LNS_SEED = 0                # the large-neighbourhood search's seed of a deterministic run
LNS_CHUNK = 4096            # its work between reads of the clock (a user time limit only)
NO_GOAL = 1 << 62
GUARD_STATES = 0            # chain search bound once the budget is spent (Konig only)


class Work:
    """The deterministic work budget of the ejection chains of one group, shared by its
    runs (restarts), in chain-search states expanded (each O(K) moves): one per state,
    one per re-keep attempt, and per most-constrained selection of U units 4 + M (U + n)
    / 256 (eject_steps.SELECT_WORK). Decision: a unit that costs nothing to count
    and does not depend on the machine; the weights were measured on the former Python
    code (about 12 us each at P = 128) and kept with the compiled code, so that a budget
    gives the same result as before. ``spent`` once ``used`` reaches ``limit`` (None:
    unlimited) or, only when a user time limit set ``deadline`` (a time.monotonic()
    value), once that has passed (read between units and re-keep attempts)."""

    __slots__ = ("limit", "used", "deadline")

    def __init__(self, limit: int | None = None, deadline: float | None = None):
        self.limit, self.used, self.deadline = limit, 0, deadline

    def charge(self, n: int) -> None:
        self.used += n

    @property
    def spent(self) -> bool:
        return (self.limit is not None and self.used >= self.limit) or \
            (self.deadline is not None and time.monotonic() > self.deadline)


def eject_connection(C, old, improve: bool = True, max_states: int = 4000,
                     rounds: int = 2, seed: int | None = None, direct_first: bool = False,
                     rekeep_states: int = 1000, work: Work | None = None,
                     lns_work: int = 0, lns_goal: int = NO_GOAL,
                     lns_seed: int | None = None) -> list[np.ndarray] | None:
    """Split the undirected C (P x P, degree <= 2 * len(old)) over the even OCSes whose old
    0/1 matrices are ``old`` (M, P, P), choosing orientation and OCS per unit; returns M
    directed partial permutations with sum X + X^T = C, or None if a unit found no place
    (then use another assignment). ``max_states``/``rekeep_states``: bound of each chain
    search in steps 2/4; ``rounds``: passes of step 4 (``improve``); ``seed``/
    ``direct_first``: the insertion order; ``work``: the work budget of the module
    docstring (None: unlimited; share one Work between the runs of a group);
    ``lns_work``: then the large-neighbourhood search of heuristics.lumos.mdmcf.lns with that
    many work units of its own (0: none), seeded by ``lns_seed`` (None: ``seed``, or
    LNS_SEED when that is None too), ending
    once ``lns_goal`` old circuits are kept (an upper bound) or, under a user time limit
    (``work.deadline``), once that has passed (read every LNS_CHUNK units)."""
    from heuristics.lumos.mdmcf import eject_steps as st
    from heuristics.lumos.mdmcf.chain import matrices, move_buffer, new_group
    C = np.asarray(C, dtype=np.int64)
    G = new_group(C, np.asarray(old, dtype=np.int64))
    n = len(C)
    work = Work() if work is None else work
    wk = np.array([work.used, st.NO_LIMIT if work.limit is None else work.limit, 0], np.int64)
    chunk = st.NO_LIMIT if work.deadline is None else 1    # read the clock between units
    moves = move_buffer(n)
    ua, ub = st.keep(G, C)                              # 1. keep (excess copies too)
    rng = _generator(seed)
    if seed is not None:
        perm = rng.permutation(len(ua))
        ua, ub = ua[perm], ub[perm]
    pos, status = np.array([0, len(ua), 0, 0, 0], np.int64), st.PAUSED
    while status == st.PAUSED:                          # 2.-4.
        wk[2] = work.deadline is not None and time.monotonic() > work.deadline
        status = st.run(G, ua, ub, pos, max_states, GUARD_STATES, direct_first,
                        seed is not None, rng, rekeep_states, rounds if improve else 0, wk,
                        chunk, moves)
    work.used = int(wk[0])
    if status == st.FAILED:
        return None
    if lns_work > 0:                                    # 5. large-neighbourhood search
        from heuristics.lumos.mdmcf import lns as ln
        G, rng = ln.with_journal(G), _generator(
            lns_seed if lns_seed is not None else LNS_SEED if seed is None else seed)
        step = lns_work if work.deadline is None else LNS_CHUNK  # chunks: time limit only
        lw = np.zeros(3, np.int64)                      # [used, limit, stopped]
        while True:
            lw[1] = min(lns_work, lw[1] + step)
            ln.search(G, ln.RUIN, ln.EXTEND, ln.TEMP, ln.STATES, rng, lw, moves, lns_goal,
                      ln.NPICK)
            if lw[0] < lw[1] or lw[1] >= lns_work or time.monotonic() > work.deadline:
                break                                   # goal met, budget or time spent
    return list(matrices(G))


def warm_up_chains() -> None:
    """Compile or load steps 1-4, unseeded and seeded (toolkit.kernels "lumos-chains"), on
    a 2-Pod group: the argument types of every real run."""
    eject_connection(*_TINY)
    eject_connection(*_TINY, seed=0)


def warm_up_lns() -> None:
    """Compile or load the LNS of heuristics.lumos.mdmcf.lns (toolkit.kernels "lumos-lns")."""
    C, _ = _TINY
    eject_connection(C, np.ones((1, 2, 2), np.int64) - np.eye(2, dtype=np.int64)[None],
                     lns_work=1)


def preload(lns: bool = False) -> None:
    """Warm the compiled steps (and with ``lns`` the LNS) in this process, once: worker
    processes forked afterwards inherit the machine code, where each would otherwise load
    it again on every call of a fresh pool (lumos_reconfig at P >= 32)."""
    from toolkit.kernels import warm

    warm(("lumos-chains", "lumos-lns") if lns else ("lumos-chains",))


_TINY = (np.array([[0, 1], [1, 0]]), np.zeros((1, 2, 2), np.int64))
_LOCAL = threading.local()


def _generator(seed: int | None) -> np.random.Generator:
    """np.random.default_rng(seed), as the same Generator object of this thread re-seeded
    (its stream is the same): numba types and unboxes a new Generator object slowly, and
    seeding takes a while (together about 60 us, a fifth of a run at P = 16). Seed None:
    that Generator as it is (the compiled code takes one, and draws nothing from it)."""
    gen = getattr(_LOCAL, "gen", None)
    if gen is None:
        gen = _LOCAL.gen = np.random.default_rng(seed)
    elif seed is not None:
        gen.bit_generator.state = _seeded_state(seed)
    return gen


@functools.lru_cache(maxsize=64)
def _seeded_state(seed: int) -> dict:
    return np.random.PCG64(seed).state            # the setter copies it
