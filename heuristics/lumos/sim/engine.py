"""Flow-level, event-driven cluster simulator for the LumosCore papers' end-to-end results
([002] §6.3, [001] §6.3; spec 4.2).

Events: job arrival, job start (after the OCS algorithm's measured time, [001]), job
completion. Between events every running job's flows hold max-min fair rates per directed
link (``maxmin.maxmin_rates``, progressive filling); a job's flows are persistent while it
runs (the fluid view of its repeating collectives). Its speed follows spec 4.2
[DECISION]: a job with trace running time T progresses at 1 / s trace seconds per second,

    s = (1 - z_ar - z_a2a) + z_ar * CL_ar + z_a2a * CL_a2a,

where CL_c = sum_f w_f / r_f / sum_f w_f / r*_f is the contention level ([002] eq. 10) of
its class-c flows (c = collective: DP ring and PP, z_ar; c = all-to-all: EP, z_a2a), r*
the rate on Best (an ideal switch with 1.6 Tb/s ports: the NIC share 1600 / fanout), so
JRT = T on Best and JRT = T * [(1 - z) + z * CL] under a constant CL (spec 4.2).
[DECISION] The two classes are rated as separate phases (one max-min problem each, all
jobs' flows of the class together): a job's all-to-all runs inside its layers' compute and
its DP/PP transfers between them, and pooling them would let the all-to-all's many small
per-peer flows (NIC share 1600 / (ep - 1)) squeeze a ring flow down to their rate.

Scheduler: strict FIFO ([002] A.11): the queue's head is placed by ``placement`` (greedy
best fit by default) or waits until GPUs free up; jobs behind it wait too. On an OCS
fabric the admission runs the controller (requirement, logical topology, OCS
reconfiguration); the controller is one server and every admission passes it in FIFO
order: a job starts when the algorithm time of its own admission and of those ahead of
it has passed (a job inside one Pod adds none but does not overtake), so JWT includes
it and queues behind a slow algorithm grow as in [001]'s Kingman argument (spec 3);
``alg_time`` "none" charges nothing, for runs whose output must not depend on the clock.

Routing (``routing``, issue 31): ``probing`` ([002] §6.2's default; each flow keeps the
widest of up to 5 rehashed paths when its job starts, all running jobs re-probed after a
reconfiguration), ``ecmp`` (one hashed path; every result before issue 31) or ``optimal``
(the contention-free optimum: every flow at its NIC share); ``routing`` module. GPU
failures (``failures``, a ``failures.FailureModel``): failed GPUs leave the placement pool
until they recover ([002] Fig. 8(d)); ``failures`` module.
The charged time is the algorithm's alone, never numba's compilation or cache loading
(issue 28; the controller warms its kernels when built, and a reconfiguration row's
``compile_s`` is what its admission still spent compiling, not charged): so the
objective of a fresh process with an empty numba cache differs from a warm one's only by
the clock's run-to-run noise (milliseconds per reconfiguration).
"""
from __future__ import annotations

import heapq
import time
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from heuristics.lumos.placement import NoPlacement, greedy_placement
from heuristics.lumos.sim.failures import FailureProcess
from heuristics.lumos.sim.maxmin import maxmin_rates, maxmin_violations
from heuristics.lumos.sim.routing import Router
from heuristics.lumos.sim.traffic import Flows, job_flows
from instances.lumos.placement import PlacementInstance

BEST_GBPS = 1600.0          # Best: ideal switch, 1.6 Tb/s per port (spec 2.12)


@dataclass
class _Running:
    sim: object               # the SimJob
    placement: object
    flows: Flows
    start: float
    rem: float                # trace seconds of work left
    slow: float = 1.0         # current s (wall seconds per trace second)
    cl: tuple = (1.0, 1.0)    # current (CL_ar, CL_a2a)
    cl_int: np.ndarray = field(default_factory=lambda: np.zeros(2))   # integral of CL dt
    last: float = 0.0         # time of the last progress update
    admitted: float = 0.0     # time its GPUs were allocated (start - OCS algorithm delay)


@dataclass
class SimResult:
    """The rows of the simulation's two tables, and its statistics; ``jobs`` and
    ``reconfigs`` are the tables as DataFrames, ``records`` their rows as
    ``DataFrame.to_dict("records")`` gives them. [DECISION] pandas is imported only where a
    table is asked for (0.2-0.4 s on 2 cores, a third of a ``simulate`` process's start-up;
    issue 29 item 1): the ``simulate`` method takes the records."""

    job_rows: list            # one dict per finished job
    reconfig_rows: list       # one dict per OCS reconfiguration
    stats: dict               # wall time split, event counts, unroutable flows

    @cached_property
    def jobs(self):
        import pandas as pd

        return pd.DataFrame(self.job_rows)

    @cached_property
    def reconfigs(self):
        import pandas as pd

        return pd.DataFrame(self.reconfig_rows)

    def records(self) -> tuple[list[dict], list[dict]]:
        """(jobs, reconfigs) as ``DataFrame.to_dict("records")`` would give them."""
        return records(self.job_rows), records(self.reconfig_rows)


def records(rows: list[dict]) -> list[dict]:
    """``pd.DataFrame(rows).to_dict("records")`` without pandas (tests check they agree):
    every row gets every column, NaN where it has none; numpy scalars become Python ones; a
    numeric column holds floats (None and gaps as NaN) if any value is a float or missing,
    else ints; a column of None and gaps only holds NaN; any other keeps its values."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    nan = float("nan")
    conv = {}
    for c in cols:
        present = [r[c] for r in rows if c in r]
        given = [v for v in present if v is not None]
        gaps = len(present) < len(rows) or len(given) < len(present)
        if given and all(isinstance(v, (int, float, np.integer, np.floating))
                         and not isinstance(v, (bool, np.bool_)) for v in given):
            if gaps or any(isinstance(v, (float, np.floating)) for v in given):
                conv[c] = lambda v: nan if v is None else float(v)
            else:
                conv[c] = int
        elif not given and len(present) < len(rows):    # None and gaps only: NaN
            conv[c] = lambda v: nan
        else:
            conv[c] = lambda v: v.item() if isinstance(v, np.generic) else v
    return [{c: conv[c](r[c]) if c in r else nan for c in cols} for r in rows]


class Simulator:
    """One architecture (``arch``: a ``architectures.Arch``) running a job list."""

    def __init__(self, arch, alg_time: str = "measured", placement=greedy_placement,
                 flows=job_flows, check_rates: bool = False, routing: str = "probing",
                 failures=None):
        """``check_rates``: verify every rate vector by the definition of max-min fairness
        (``maxmin.maxmin_violations``, independent of the algorithm); for tests.
        ``routing``: probing (default, [002] §6.2), ecmp or optimal; ``failures``: a
        ``failures.FailureModel`` or None (module docstring)."""
        if alg_time not in ("measured", "none"):
            raise ValueError(f"alg_time must be 'measured' or 'none', got {alg_time!r}")
        Router(routing)                      # validates the mode
        self.arch, self.alg_time, self.place, self.flows = arch, alg_time, placement, flows
        self.check_rates, self.routing, self.failures = check_rates, routing, failures
        self.cluster = arch.cluster

    # ------------------------------------------------------------------------------------
    def run(self, jobs, check=None) -> SimResult:
        """Simulate ``jobs`` to the last completion. ``check`` (e.g. a run's ``Budget.check``)
        is called at every event; it may raise to stop the simulation (a time limit)."""
        cl = self.cluster
        busy = np.zeros(cl.n_gpus, dtype=bool)
        arrivals = sorted(jobs, key=lambda j: (j.arrival_s, j.id))
        too_big = [j.id for j in arrivals if j.job.gpus > cl.n_gpus]
        arrivals = deque(j for j in arrivals if j.job.gpus <= cl.n_gpus)
        queue: deque = deque()
        starting: list = []       # heap of (start time, id, _Running)
        running: dict[int, _Running] = {}
        done, reconfigs = [], []
        ctrl_free = 0.0
        stats = dict(rate_s=0.0, route_s=0.0, admit_s=0.0, events=0, rate_solves=0,
                     unroutable_max=0, dropped_too_big=len(too_big), failures=0)
        router = Router(self.routing)
        down = np.zeros(cl.n_gpus, dtype=bool)      # failed GPUs (out of the placement pool)
        recover: list = []                          # heap of (recovery time, gpu)
        fails = FailureProcess(self.failures, cl.n_gpus) if self.failures else None
        t = 0.0
        dirty = True

        def start(jid: int, r: _Running) -> None:
            r.flows = router.start(self.arch.network, jid, r.flows)
            running[jid] = r

        while arrivals or queue or starting or running:
            if check is not None:
                check()
            if dirty:
                self._rates(running, t, stats)
                dirty = False
            t_arr = arrivals[0].arrival_s if arrivals else np.inf
            t_start = starting[0][0] if starting else np.inf
            t_fin, fin_id = np.inf, None
            for jid, r in running.items():
                tf = r.last + r.rem * r.slow
                if tf < t_fin:
                    t_fin, fin_id = tf, jid
            t_new = min(t_arr, t_start, t_fin)
            t_fail = fails.next_t if fails else np.inf
            t_rec = recover[0][0] if recover else np.inf
            if min(t_fail, t_rec) < t_new:                   # a GPU fails or recovers
                t = max(t, float(min(t_fail, t_rec)))
                stats["events"] += 1
                if t_rec <= t_fail:
                    down[heapq.heappop(recover)[1]] = False
                else:
                    g, t_back = fails.fail(down)
                    if g >= 0:
                        down[g] = True
                        heapq.heappush(recover, (t_back, g))
                        stats["failures"] += 1
                    continue
                t_new = np.inf
            elif not np.isfinite(t_new):
                raise RuntimeError(f"simulation stuck at t = {t:.1f} s: {len(queue)} jobs wait "
                                   f"for GPUs that never free up (head needs "
                                   f"{queue[0].job.gpus} GPUs)")
            if not np.isfinite(t_new):
                pass                                          # a recovery: admission only
            elif t_fin <= t_start and t_fin <= t_arr:        # a completion
                t = max(t, float(t_new))
                stats["events"] += 1
                r = running.pop(fin_id)
                self._advance(r, t)
                router.end(self.arch.network, fin_id, r.flows)
                busy[r.placement.gpus] = False
                if self.arch.controller is not None:
                    self.arch.controller.release(fin_id)
                jrt = t - r.start
                done.append(dict(job=fin_id, gpus=r.sim.job.gpus, model=r.sim.job.model,
                                 arrival_s=r.sim.arrival_s, admitted_s=r.admitted,
                                 start_s=r.start, finish_s=t,
                                 trace_s=r.sim.duration_s, jrt_s=jrt,
                                 jwt_s=r.start - r.sim.arrival_s, jct_s=t - r.sim.arrival_s,
                                 cl_ar=r.cl_int[0] / jrt if jrt > 0 else 1.0,
                                 cl_a2a=r.cl_int[1] / jrt if jrt > 0 else 1.0,
                                 pods=len(r.placement.pods()),
                                 alg_s=r.placement.meta.get("alg_s", 0.0),
                                 sharing=r.placement.meta.get("sharing", False)))
                dirty = True
            elif t_start <= t_arr:                            # a start after the algorithm
                t = max(t, float(t_new))
                stats["events"] += 1
                _, jid, r = heapq.heappop(starting)
                r.start = r.last = t
                start(jid, r)
                dirty = True
            else:
                t = max(t, float(t_new))
                stats["events"] += 1
                queue.append(arrivals.popleft())
            # FIFO admission of the queue's head while it fits
            while queue:
                sim = queue[0]
                try:
                    p = self.place(PlacementInstance(cl, busy | down if fails else busy,
                                                     sim.job))
                except NoPlacement:
                    break
                queue.popleft()
                busy[p.gpus] = True
                begin = t
                if self.arch.controller is not None:
                    begin = max(t, ctrl_free)    # admissions pass the controller in order
                    t0 = time.perf_counter()
                    rec = self.arch.controller.admit(p, sim.id, t)
                    stats["admit_s"] += time.perf_counter() - t0
                    if rec is not None:
                        reconfigs.append(dict(t=rec.t, wall_s=rec.wall_s, sharing=rec.sharing,
                                              method=rec.method, job=sim.id,
                                              compile_s=rec.compile_s, **rec.metrics))
                        p.meta["sharing"] = rec.sharing
                        if self.alg_time == "measured":
                            begin += rec.wall_s
                            ctrl_free = begin
                            p.meta["alg_s"] = rec.wall_s
                        self.arch.network_changed()
                        for jid, f in router.reroute(self.arch.network).items():
                            running[jid].flows = f
                        dirty = True
                run = _Running(sim, p, self.flows(p, sim.id), begin, float(sim.duration_s),
                               last=begin, admitted=t)
                if begin > t:
                    heapq.heappush(starting, (begin, sim.id, run))
                else:
                    start(sim.id, run)
                    dirty = True
        # every unit flow probing put on a link was taken off again (conservation; tests)
        stats["probe_load_left"] = float(np.abs(router.load).sum()) if router.load is not None else 0.0
        return SimResult(done, reconfigs, stats)

    # ------------------------------------------------------------------------------------
    @staticmethod
    def _advance(r: _Running, t: float) -> None:
        """Progress of ``r`` up to ``t`` at its current speed."""
        dt = t - r.last
        if dt > 0:
            r.rem = max(0.0, r.rem - dt / r.slow)
            r.cl_int += dt * np.asarray(r.cl)
            r.last = t

    def _rates(self, running: dict, t: float, stats: dict) -> None:
        """Max-min rates of all running flows, then every job's CL and speed."""
        if not running:
            return
        for r in running.values():
            self._advance(r, t)
        ids = list(running)
        fl = Flows.concat([running[j].flows for j in ids])
        owner = np.repeat(np.arange(len(ids)), [len(running[j].flows.src) for j in ids])
        net = self.arch.network
        limit = net.nic_gbps / fl.fanout
        t0 = time.perf_counter()
        if self.routing == "optimal":        # contention-free: every flow at its NIC share
            A, unroutable = None, np.zeros(len(limit), dtype=bool)
        else:
            A, unroutable = net.route_mask(fl.src, fl.dst, fl.key)
        t1 = time.perf_counter()
        A = A.tocsc() if A is not None else None
        rates = limit.astype(float) if A is None else np.empty(len(limit))
        for c in (0, 1) if A is not None else ():   # each class in its own phase
            m = np.flatnonzero(fl.cls == c)
            if len(m):
                rates[m] = _merged_rates(A[:, m], net.capacity, fl.weight[m].astype(float),
                                         limit[m])
                if self.check_rates:
                    bad = maxmin_violations(A[:, m], net.capacity, rates[m],
                                            fl.weight[m].astype(float), limit[m])
                    if bad:
                        raise AssertionError(f"t = {t:.1f} s, class {c}: {bad[0]}")
        if unroutable.any():
            # [DECISION] a flow without a path (Uniform wiring with unmet demand and no
            # two-hop detour) is relayed at a quarter of its NIC share
            rates[unroutable] = limit[unroutable] / 4
        stats["route_s"] += t1 - t0
        stats["rate_s"] += time.perf_counter() - t1
        stats["rate_solves"] += 1
        stats["unroutable_max"] = max(stats["unroutable_max"], int(unroutable.sum()))
        ideal = BEST_GBPS / fl.fanout
        w = fl.weight.astype(float)
        key = owner * 2 + fl.cls
        n = 2 * len(ids)
        num = np.bincount(key, w / rates, n)
        den = np.bincount(key, w / ideal, n)
        cl = np.where(den > 0, num / np.where(den > 0, den, 1), 1.0).reshape(-1, 2)
        for k, j in enumerate(ids):
            r = running[j]
            s = r.sim
            r.cl = (float(cl[k, 0]), float(cl[k, 1]))
            r.slow = (1 - s.z_ar - s.z_a2a) + s.z_ar * cl[k, 0] + s.z_a2a * cl[k, 1]


def _merged_rates(A: sp.csc_matrix, cap: np.ndarray, w: np.ndarray, limit: np.ndarray
                  ) -> np.ndarray:
    """``maxmin_rates`` with identical flows (same links, same limit) merged into one
    weighted flow: max-min gives identical flows identical rates, so this is exact."""
    n = A.shape[1]
    if n == 0:
        return np.zeros(0)
    rng = np.random.default_rng(12345)
    tag = A.T @ rng.random(A.shape[0]) if A.shape[0] else np.zeros(n)
    order = np.lexsort((limit, tag))          # stable: a group's first flow leads it
    ts, ls = tag[order], limit[order]
    lead = np.ones(n, dtype=bool)
    lead[1:] = (ts[1:] != ts[:-1]) | (ls[1:] != ls[:-1])
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.cumsum(lead) - 1
    first = order[lead]
    wm = np.bincount(inv, w, len(first))
    r = maxmin_rates(A[:, first], cap, wm, limit[first])
    return r[inv]
