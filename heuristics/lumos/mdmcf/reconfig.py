"""Polynomial OCS reconfiguration under Cross Wiring (and the dual-link wiring); with
``exact_vars`` (method ``itv-mdmcf-lp``) an LP-guided MIP step on small groups.

Per OCS group h, independently (spec 2.3, 2.5):

1. A_old = sum of the even OCSes' old matrices;
2. C_h = A + A^T by SIMD, rewiring-aware against A_old (ITV-MDMCF; row/column sums only
   capped at K/2, which is all Theorem 4.1 needs) or oblivious (ITV-MCF, balanced sums);
3. A over the K/2 even OCSes by FindConnection (bisection min-cost flows against the old
   circuits), or by IMD when there is no old configuration to respect; MDMCF also runs
   the keep-and-insert assignment (heuristics.lumos.mdmcf.kempe, an addition) and keeps the
   one that rewires less, per group;
4. MDMCF (additions): the ejection-chain assignment of heuristics.lumos.mdmcf.eject, which
   chooses orientation and OCS of each unit together instead of fixing A first (steps
   2-3 in one), then (``lns`` > 0; default ``group_split.LNS`` = 30 work units per OCS port) the
   compiled large-neighbourhood search of heuristics.lumos.mdmcf.lns (ruin around old circuits
   that are not kept, put them back, recreate by the same chains, annealing acceptance;
   its own deterministic work budget; it stops at the group's bound). Without the LNS
   (``lns=0``) the chains run once plus ``restarts`` times with other insertion orders
   (``eject_runs``; default 5 at P <= 16, 1 at 17 <= P <= 32, none above; with the LNS
   none). The group keeps whichever candidate rewires least on eq. (7) (even and odd
   OCSes, so also for an old configuration that is not mirrored). [DECISION] FALLBACK
   (issue 17): the chains run first, and after an LNS run on a mirrored old
   configuration (where the LNS optimizes eq. (7) itself) steps 2-3 are only fallbacks,
   computed when a chain run fails or the chains' work budget is spent: on the 632
   groups of the quality and speed sets (P 8-32) they never rewired less than the chain
   runs, while with restarts 0 they and the relaxed SIMD were about 80 % of MDMCF's time
   at P = 16; on 6000 random small groups with heavy churn (P 4-10) the default never
   rewired more than they did (6 chain runs without the LNS did on 14 of 3000). So with
   ``lns=0`` MDMCF never rewires more than steps 2-3 alone; with the LNS that is
   measured, not guaranteed. Why the LNS by default: on issue 17's 32 proven ring-churn
   steps it brought the worst step from 1.12x (5 restarts, the former default) to 1.039x
   at about the same time; on the wider generated set of results/lumos/lumos_reconfig_quality.md
   (720 steps, 8-32 Pods, 532 proven) its worst is 1.094x the optimum (1.074x up to 16
   Pods, where 5 restarts without it reach 1.146x at about the same time), and at P = 32, 64, 128
   on the benchmark's ring churn (K = 16) it rewired 16 %, 19 %, 8 % less than the
   former default at 2.1-2.4x ITV-MCF's time (1.3-1.5x before). For speed at P >= 64
   units with a free place go first (``direct_first``) and the final re-keep pass of
   eject runs only at P < 64 (its cost grows with the number of lost circuits).
   A group stops trying candidates once one meets ``group_split.group_bound``, a lower bound
   on its eq. (7). Work budget: the
   ejection chains of a group may do ``eject_work`` units of work (heuristics.lumos.mdmcf.eject
   .Work: chain states, selections, re-keep attempts; the chains are numba-compiled, the
   units and their weights are those of the former Python code, so a budget cuts at the
   same place) per OCS port (P K) and run, default 4; once spent, the group's eject run places the
   remaining units by the Konig swap only (no chain search, no re-keep) and no further
   restart starts, so the group keeps the best of its runs and (fallbacks)
   FindConnection / keep-and-insert. The budget is the same for every group, so the result does not depend on the
   machine, its load, the number of workers or their order of completion (decision: it
   replaces the earlier 2 s wall-clock guard, whose results changed with the load,
   issue 17). On the benchmark's churn at P = 128 (32k GPUs) the budget is not reached
   (the result is the unlimited one, under 2 s per reconfiguration on 2 cores); on full
   ring churn it cuts the chains to about a third. A user's --time-limit
   (``time_limit``) still ends the chains the same way, shared by the groups in order;
   only then does the result depend on the clock;
5. only in ``itv-mdmcf-lp`` (``exact_vars`` > 0; an addition, issue 17): on a group of
   at most 16 Pods whose reduced ITV-ILP has at most ``exact_vars`` binaries (4000 there:
   every group at P <= 16 with K <= 32 or P <= 8 with K <= 64; at P = 32, K = 16 the step
   took 0.1-5 s per group) and whose best candidate is above group_bound, the LP-guided
   step of heuristics.lumos.mdmcf.exact: the LP relaxation (a lower bound that often proves the
   candidate optimal), then the ILP with the old circuits the LP keeps fixed, from the
   candidate, within a node limit (deterministic), and at P <= 12 the unfixed ILP when
   that misses the LP bound; kept if it rewires less. [DECISION] (issue 17) it is a
   separate method, not MDMCF's default: it solves LPs and MIPs, so it is no longer the
   polynomial heuristic that [001] proposes to replace the ILP, which heuristic-vs-solver
   studies need (results/lumos/lumos_reconfig_quality.md, 532 proven steps: the step reaches the
   optimum on 157 of 229 ring steps against itv-mdmcf's 63, the same worst step; CPU time
   on ring churn a median 6.4x / 12x ITV-MCF's at 8 / 16 Pods and up to 90x on one step,
   with ``exact_work`` HiGHS MIP checkpoints per MIP; up to 448x without);
6. odd OCS 2m+1 = transpose of even OCS 2m (the mirror of Cross Wiring);
7. optionally (``refine``, an addition) pairwise re-optimization (heuristics.lumos.mdmcf.refine):
   its work is bounded by 3 rounds of M (M - 1) pair moves, so it needs no work budget;
   its clock (``time_budget``) comes only from user settings (option ``refine_budget``,
   --time-limit), none by default.

Groups are independent (spec 2.4); with ``workers`` > 1 and a large fabric they are
solved in that many processes, forked from a forkserver (toolkit.pools; serially inside a
daemonic process such as a Dask worker, for an initial configuration, or when no pool can
be started).

ITV-MDMCF and ITV-MCF are reconstructions: [001]'s MDMCF section is missing from the
paper (spec 7.5); see spec 2.5 for the decisions.
"""
from __future__ import annotations

import multiprocessing
import time
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from heuristics.lumos.mdmcf.decompose import int_decompose, sym_decompose
from heuristics.lumos.mdmcf.group_split import EJECT_WORK, EXACT_WORK, split_group
from instances.lumos.fabric import Fabric, make_wiring
from instances.lumos.instance import OcsConfig, ReconfigInstance, perm_from_matrix
from toolkit.budget import waiting_on_workers
from toolkit.pools import drop_shared, shared_pool
from toolkit.threads import share


def old_even(inst: ReconfigInstance, h: int, parity: int = 0) -> np.ndarray:
    """(K/2, P, P) old 0/1 matrices of the even OCSes 2m of group h (Cross Wiring); with
    ``parity=1`` those of the odd OCSes 2m + 1."""
    P, K = inst.fabric.pods, inst.fabric.k_spine
    out = np.zeros((K // 2, P, P), dtype=np.int64)
    for m in range(K // 2):
        row = inst.old.perm[h, 2 * m + parity]
        on = row >= 0
        out[m, np.flatnonzero(on), row[on]] = 1
    return out


PARALLEL_MIN_PODS = 32        # below this, process start-up costs more than it saves
def itv_configure(inst: ReconfigInstance, aware: bool = True, simd: str = "euler",
                  refine: bool = False, time_budget: float | None = None, eject: bool = True,
                  restarts: int | None = None, workers: int | None = None,
                  eject_work: float | None = EJECT_WORK, time_limit: float | None = None,
                  exact_vars: int | None = None, lns: float | None = None,
                  lns_seed: int | None = None, exact_work: int | None = EXACT_WORK) -> OcsConfig:
    """ITV-MDMCF (``aware=True``) or ITV-MCF (``aware=False``) for a Cross-wired instance;
    ``eject``/``restarts``/``eject_work`` (per OCS port and run, see ``group_split.group_work``;
    None or 0: unlimited): step 4 of the module docstring (MDMCF only); ``exact_vars``: step
    5 (the LP-guided step on groups up to that many binaries; None or 0: off) and
    ``exact_work`` its MIPs' work limit (HiGHS checkpoints); ``time_limit``: a user's
    wall-clock limit for the ejection chains, s (None, the default: no clock, the result
    is deterministic); ``refine`` adds the pairwise local search of
    heuristics.lumos.mdmcf.refine (within ``time_budget`` seconds overall, the groups sharing
    it); ``workers`` processes for the groups (default: 2 at P >= 32 when this process's
    share of the cores is 2 or more (toolkit.threads: a batch worker's share is
    cores // workers), else 1; serial inside a daemonic process, for an initial
    configuration, or if the pool cannot start); the result does not depend on
    ``workers``."""
    if inst.wiring != "cross":
        raise ValueError(f"ITV methods need cross wiring, the instance has {inst.wiring}")
    if workers is not None and workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    fab = inst.fabric
    t0, m0 = time.perf_counter(), time.monotonic()
    workers = default_workers(fab, workers)
    has_old = inst.old is not None and bool((inst.old.perm >= 0).any())
    if not has_old or fab.H == 1 or multiprocessing.current_process().daemon:
        workers = 1
    # a user time limit: group h is the (h // workers + 1)-th on its process (pool.map order)
    slots = -(-fab.H // workers)
    jobs = [(inst.C[h], fab.k_spine, old_even(inst, h) if has_old else None, aware, simd,
             refine, None if time_budget is None else t0 + time_budget * (h + 1) / fab.H,
             eject, restarts, old_even(inst, h, 1) if has_old else None, eject_work,
             None if time_limit is None else m0 + time_limit * (h // workers + 1) / slots,
             exact_vars, lns, lns_seed, exact_work)
            for h in range(fab.H)]
    results = None
    if workers > 1:
        results = _in_pool(workers, jobs)
    if results is None:
        results = [_split_job(j) for j in jobs]
    return cross_config(inst, results)


def default_workers(fab: Fabric, workers: int | None = None) -> int:
    """``workers``, or (None, 0) the default: 2 at P >= PARALLEL_MIN_PODS when this
    process's share of the cores is 2 or more, else 1."""
    if workers:
        return workers
    return min(2, share()) if fab.pods >= PARALLEL_MIN_PODS else 1


WORKER_CPU_S = 0.0      # CPU seconds the group workers spent on this process's calls


def group_pool(workers: int):
    """The pool of ``workers`` processes for the OCS groups: one per process, kept for its
    life (toolkit.pools: from the forkserver, this process's share of the cores split,
    the MDMCF kernels warm in each worker once). Started by the first call that needs it;
    a caller may start it before its clock (the lumos-sim controller)."""
    return shared_pool(workers, modules=("heuristics.lumos.mdmcf.reconfig",),
                       kernels=("lumos-chains", "lumos-lns"), share=share() // workers)


def _in_pool(workers: int, jobs):
    """The jobs' results from :func:`group_pool` (None when no pool can run them here: the
    caller runs them serially); a Ctrl-C or the run's time limit (the wait is
    ``waiting_on_workers``: stopped at the limit) kills the pool (the next call starts
    another)."""
    global WORKER_CPU_S
    ex = None
    try:
        with waiting_on_workers():
            ex = group_pool(workers)
            # not ex.map: its clean-up cancels the futures while the pool's manager thread
            # may still fail them (InvalidStateError printed by that thread after a kill)
            futures = [ex.submit(_timed_split_job, job) for job in jobs]
            out = [f.result() for f in futures]
    except TimeoutError:        # the time limit (an OSError, but no reason to run serially)
        if ex is not None:
            drop_shared(ex)
        raise
    except (OSError, NotImplementedError, AssertionError, BrokenProcessPool):
        if ex is not None:
            drop_shared(ex)
        return None
    except BaseException:
        if ex is not None:
            drop_shared(ex)
        raise
    WORKER_CPU_S += sum(cpu for _, cpu in out)
    return [r for r, _ in out]


def _timed_split_job(args):
    """:func:`_split_job` in a worker, with the CPU seconds it took there."""
    c0 = time.process_time()
    out = _split_job(args)
    return out, time.process_time() - c0


def cross_config(inst: ReconfigInstance, splits) -> OcsConfig:
    """The Cross-Wiring configuration whose group h has the even OCSes ``splits[h]`` (K/2
    directed 0/1 matrices) and their mirrors on the odd OCSes (step 6)."""
    cfg = OcsConfig.empty(inst.fabric, inst.wire)
    for h, parts in enumerate(splits):
        for m, X in enumerate(parts):
            cfg.perm[h, 2 * m] = perm_from_matrix(X)
            cfg.perm[h, 2 * m + 1] = perm_from_matrix(X.T)
    return cfg


def _split_job(args) -> list[np.ndarray]:
    return split_group(*args)


def cross_realize(fabric: Fabric, C: np.ndarray) -> OcsConfig:
    """Theorem 4.1's constructive proof: SIMD (Euler) then IMD into K/2 parts, mirrored."""
    inst = ReconfigInstance(fabric, C, "cross")
    return itv_configure(inst, aware=False)


def dual_realize(fabric: Fabric, C: np.ndarray) -> OcsConfig:
    """Dual-link wiring (spec 1.3 W3): OCS m realizes A^(m) and its mirror internally:
    in-port (i, slot 0) -> out-port (j, slot 1) and (j, slot 1) -> (i, slot 0)."""
    w = make_wiring(fabric, "dual")
    cfg = OcsConfig.empty(fabric, w)
    for h in range(fabric.H):
        for m, X in enumerate(int_decompose(sym_decompose(C[h]), fabric.k_spine // 2)):
            i, j = np.nonzero(X)
            cfg.perm[h, m, 2 * i] = 2 * j + 1
            cfg.perm[h, m, 2 * j + 1] = 2 * i
    return cfg
