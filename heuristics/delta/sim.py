"""DELTA discrete-event simulator (fluid, event-driven) and the critical-path bound.

Ye et al. 2026, Section IV-B; delta spec 3.5 (the critical chain and NCT, spec 4.4, are in
heuristics.delta.nct). Tasks start as soon as
all predecessors finished plus their delays (ASAP, work-conserving). Between events the
per-flow rate of every active task is constant:

* ``maxmin`` (default): max-min fair progressive filling over directed Pod links
  (capacity x_e B, one share per flow) and GPU NICs (capacity B, one flow per GPU);
* ``link_equal``: phi_m = min(B, x_e B / sum of active flows on the link), the exact
  semantics of the fair-sharing constraint (17); defined only while no GPU NIC carries two
  active tasks (else it breaks Eq. 10): spec 3.5's assertion raises SimulationError;
* ``ideal=True``: links unlimited, only NICs limit (the ideal non-blocking network).

Cost: O(events x active tasks), at most 2 |M| events (see ``simulate``); the NIC-free
fast path is vectorized.
"""
from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from instances.delta.instance import DeltaInstance, DeltaSolution, nic_groups

REL_TIME = 1e-12       # event-time tolerance, relative to t + SimGraph.t_scale (issue 18)


@dataclass
class SimGraph:
    """A compiled task graph: comm tasks (volume, flows, link, NICs) and fixed-duration tasks."""

    n: int
    comm: np.ndarray          # bool
    dur: np.ndarray           # fixed durations (non-comm)
    volume: np.ndarray
    flows: np.ndarray
    res: np.ndarray           # directed link resource 2e + dir (-1 for fixed tasks)
    nics: list                # per task: array of NIC class ids (tx and rx)
    n_nic: int
    succ: list                # per task: list of (succ, delay)
    preds: list               # per task: list of (pred, delay)
    release: np.ndarray
    tail: np.ndarray
    q0: float
    bandwidth: float
    succ_ptr: np.ndarray = None   # CSR of successors (vectorized release of successors)
    succ_idx: np.ndarray = None
    succ_del: np.ndarray = None

    def __post_init__(self):
        if self.succ_ptr is None:
            uniq = []
            for lst in self.succ:        # duplicate edges: keep the longest delay
                best: dict[int, float] = {}
                for v, d in lst:
                    best[v] = max(best.get(v, -np.inf), d)
                uniq.append(sorted(best.items()))
            self.succ_ptr = np.zeros(self.n + 1, dtype=np.int64)
            self.succ_ptr[1:] = np.cumsum([len(s) for s in uniq])
            flat = [p for s in uniq for p in s]
            self.succ_idx = np.array([a for a, _ in flat], dtype=np.int64)
            self.succ_del = np.array([d for _, d in flat], dtype=float)
        self.nic_lists = [list(map(int, c)) for c in self.nics]
        # the instance's time scale (ms): its largest release, tail, delay, fixed duration
        # or full-rate comm duration; the simulator's time tolerance is relative to it
        full = self.volume[self.comm] / (self.flows[self.comm] * self.bandwidth)
        self.t_scale = float(max([self.q0, *(np.max(a, initial=0.0) for a in (
            self.release, self.tail, self.succ_del, self.dur, full))]))


def compile_graph(inst: DeltaInstance) -> SimGraph:
    """Compile the reduced DAG of an instance (cached on the instance)."""
    cached = getattr(inst, "_sim_graph", None)
    if cached is not None:
        return cached
    M = inst.n_tasks
    succ = [[] for _ in range(M)]
    preds = [[] for _ in range(M)]
    for a, b, d in inst.deps:
        succ[int(a)].append((int(b), float(d)))
        preds[int(b)].append((int(a), float(d)))
    nics, n_nic = _nic_classes(inst.tasks)
    g = SimGraph(M, np.ones(M, bool), np.zeros(M), inst.volume.copy(), inst.flows.copy(),
                 inst.res_of, nics, n_nic, succ, preds, inst.release.copy(),
                 inst.tail.copy(), float(inst.q0), inst.bandwidth)
    inst._sim_graph = g
    return g


def compile_full_dag(dag, bandwidth: float) -> SimGraph:
    """Compile an unreduced DAG (instances.delta.dag.FullDag): intra-pod nodes become
    fixed-duration tasks, inter-pod nodes comm tasks, every edge a zero-delay dependency."""
    n = len(dag.names)
    comm_idx = np.asarray(dag.comm)
    is_comm = comm_idx >= 0
    succ = [[] for _ in range(n)]
    preds = [[] for _ in range(n)]
    for a, b in dag.edges:
        succ[a].append((b, 0.0))
        preds[b].append((a, 0.0))
    vol, flows, res = np.zeros(n), np.ones(n), np.full(n, -1, dtype=np.int64)
    for v in np.flatnonzero(is_comm):
        t = dag.tasks[comm_idx[v]]
        vol[v], flows[v], res[v] = t["volume"], t["flows"], 2 * t["link"] + t["dir"]
    task_nics, n_nic = _nic_classes(dag.tasks)
    nics = [task_nics[c] if c >= 0 else np.zeros(0, dtype=np.int64) for c in comm_idx]
    return SimGraph(n, is_comm, np.asarray(dag.dur, dtype=float), vol, flows, res, nics, n_nic,
                    succ, preds, np.zeros(n), np.zeros(n), 0.0, bandwidth)


def _nic_classes(tasks) -> tuple[list, int]:
    """NIC resources: one per group of GPUs serving the same tasks (tx and rx separately);
    per task, the resources it loads."""
    per_task = [set() for _ in tasks]
    n = 0
    for side in ("src_gpus", "dst_gpus"):
        for ms in nic_groups(tasks, side):
            for m in ms:
                per_task[m].add(n)
            n += 1
    return [np.array(sorted(s), dtype=np.int64) for s in per_task], n


@dataclass
class SimResult:
    makespan: float
    start: np.ndarray
    finish: np.ndarray
    times: np.ndarray
    vol: np.ndarray           # (entries, 3): task, interval, MB
    events: int

    def solution(self, x) -> DeltaSolution:
        return DeltaSolution(np.asarray(x), self.times, self.vol, self.start, self.finish)


class SimulationError(RuntimeError):
    """A violated simulator invariant (a step that neither advances time nor starts or
    completes a task, or a stall): names the time and the active tasks."""


class SimulationInterrupted(RuntimeError):
    """The caller's deadline passed during a simulation (only with ``deadline`` set)."""


def simulate(inst_or_graph, x=None, policy: str = "maxmin", ideal: bool = False,
             zero_comm: bool = False, trace: bool = True, deadline: float | None = None) -> SimResult:
    """Simulate one iteration on topology ``x`` (circuits per link).

    Returns start/finish per task, the makespan C = max(Q_0, max_m C_m + q_m) and, with
    ``trace``, the piecewise-constant schedule (interval times and volumes). A topology
    with x_e = 0 on a link with traffic gives makespan = inf.

    [DECISION] issue 18 (termination): spec 3.5 step 3 completes a task when its remaining
    volume is <= 1e-9 V_m; on long iterations at high bandwidth the rounding of event times
    (ulp(t) x rate) leaves more than that, the next event then falls within ulp(t) of t
    and time stops. Here completion is decided on times: at each event the next time
    t' is the earliest pending start, fixed-task end or comm finish t + v_m / rate_m, and
    every comm task whose finish is <= t' + tol completes (sending its remainder), with
    tol = 1e-12 (t' + the instance's time scale, ``SimGraph.t_scale``). The task attaining
    t' always completes, so every step starts or completes a task or advances time, and a
    run takes at most 2 |M| steps; a step that does neither raises SimulationError.
    ``deadline`` (a ``time.monotonic()`` value; None = never look at the clock) raises
    SimulationInterrupted once passed, checked every 64 steps.
    """
    g = inst_or_graph if isinstance(inst_or_graph, SimGraph) else compile_graph(inst_or_graph)
    if policy not in ("maxmin", "link_equal"):
        raise ValueError(f"policy must be maxmin or link_equal, got {policy!r}")
    B = g.bandwidth
    n_res = int(g.res.max(initial=-1)) + 1
    if ideal:
        cap = np.full(n_res, np.inf)
    else:
        x = np.asarray(x, dtype=float)
        cap = np.repeat(x, 2)[:n_res] * B
        used = np.unique(g.res[g.comm & (g.res >= 0)])
        if np.any(cap[used] <= 0):
            nan = np.full(g.n, np.nan)
            return SimResult(np.inf, nan, nan, np.zeros(1), np.zeros((0, 3)), 0)
    start = np.full(g.n, np.nan)
    finish = np.full(g.n, np.nan)
    ready = g.release.astype(float).copy()
    left = np.array([len(p) for p in g.preds])
    pending = [(ready[m], m) for m in range(g.n) if left[m] == 0]
    heapq.heapify(pending)
    fixed_heap: list = []
    # the active set is small: plain Python floats beat numpy calls on tiny arrays
    is_comm, dur = g.comm.tolist(), g.dur.tolist()
    res_l, F_l, vol_l, cap_l = g.res.tolist(), g.flows.tolist(), g.volume.tolist(), cap.tolist()
    nic_lists = g.nic_lists
    rem: dict[int, float] = {}           # active comm task -> remaining MB
    last: dict[int, int] = {}            # active comm task -> its last trace entry
    nic_count = [0] * g.n_nic
    shared = 0                           # NIC classes used by >= 2 active tasks
    times = [0.0]
    vol_m, vol_k, vol_v = [], [], []
    t = 0.0
    done = 0
    events = 0
    max_events = 2 * g.n + 1
    t_scale = g.t_scale
    sp, si, sd = g.succ_ptr, g.succ_idx, g.succ_del
    use_maxmin = policy == "maxmin"

    def complete(m, when):
        nonlocal done
        finish[m] = when
        done += 1
        a, b = sp[m], sp[m + 1]
        if a == b:
            return
        s = si[a:b]                       # unique successors (compiled CSR)
        ready[s] = np.maximum(ready[s], when + sd[a:b])
        left[s] -= 1
        for v in s[left[s] == 0].tolist():
            heapq.heappush(pending, (float(ready[v]), v))

    while done < g.n:
        before = done
        tol = REL_TIME * (t + t_scale)
        started = bool(pending) and pending[0][0] <= t + tol
        while pending and pending[0][0] <= t + tol:   # start everything that is ready now
            _, m = heapq.heappop(pending)
            start[m] = t
            if not is_comm[m]:
                heapq.heappush(fixed_heap, (t + dur[m], m))
            elif zero_comm or vol_l[m] <= 0:
                complete(m, t)
            else:
                rem[m] = vol_l[m]
                for c in nic_lists[m]:
                    nic_count[c] += 1
                    if nic_count[c] == 2:
                        shared += 1
        if done >= g.n:
            break
        events += 1
        if events > max_events:
            raise SimulationError(f"{events} steps for {g.n} tasks at t = {t!r} ms (bound 2|M|+1); "
                                  f"active tasks {sorted(rem)[:10]}")
        if deadline is not None and events % 64 == 0 and time.monotonic() > deadline:
            raise SimulationInterrupted(f"deadline passed at simulated t = {t:.6g} ms")
        rate: dict[int, float] = {}
        if rem:
            if shared and not use_maxmin:
                m2 = [m for m in rem if any(nic_count[c] > 1 for c in nic_lists[m])]
                raise SimulationError(
                    f"policy link_equal (Eq. 17) is defined only when no GPU NIC carries two "
                    f"active tasks (spec 3.5); tasks {sorted(m2)[:4]} share a NIC at t = {t:.6g} "
                    "ms: use maxmin")
            if shared and use_maxmin:
                act = list(rem)
                rate = dict(zip(act, (g.flows[act] * _maxmin(g, np.asarray(act), cap, B)).tolist()))
            else:
                load: dict[int, float] = {}
                for m in rem:
                    load[res_l[m]] = load.get(res_l[m], 0.0) + F_l[m]
                for m in rem:
                    r = res_l[m]
                    rate[m] = F_l[m] * min(B, cap_l[r] / load[r])
        t_next = pending[0][0] if pending else np.inf
        if fixed_heap and fixed_heap[0][0] < t_next:
            t_next = fixed_heap[0][0]
        tf = {m: t + v / rate[m] for m, v in rem.items()}
        if tf:
            t_next = min(t_next, min(tf.values()))
        if t_next == np.inf:
            raise SimulationError(f"simulation stalled at t = {t!r} ms: {g.n - done} tasks never "
                                  "become ready (a dependency cycle or a zero rate)")
        dt = t_next - t
        t_done = t_next + REL_TIME * (t_next + t_scale)
        finished = []
        k = len(times) - 1
        for m, v in rem.items():
            if tf[m] <= t_done:
                sent = v
                finished.append(m)
            else:
                sent = rate[m] * dt
            if trace and dt > 0:
                last[m] = len(vol_v)
                vol_m.append(m)
                vol_k.append(k)
                vol_v.append(sent)
            elif trace and sent > 0 and m in last:   # a remainder below the time resolution
                vol_v[last[m]] += sent
            rem[m] = v - sent
        if dt > 0:
            times.append(t_next)
        t = t_next
        for m in finished:
            del rem[m]
            last.pop(m, None)
            for c in nic_lists[m]:
                if nic_count[c] == 2:
                    shared -= 1
                nic_count[c] -= 1
            complete(m, t)
        t_done = t + REL_TIME * (t + t_scale)
        while fixed_heap and fixed_heap[0][0] <= t_done:
            _, m = heapq.heappop(fixed_heap)
            complete(m, t)
        if not (started or dt > 0 or done > before):
            raise SimulationError(f"no progress at t = {t!r} ms: active tasks "
                                  f"{sorted(rem)[:10]}, next start {pending[:1]}")
    C = float(max(g.q0, np.max(finish + g.tail, initial=0.0)))
    vol = np.column_stack([vol_m, vol_k, vol_v]) if vol_m else np.zeros((0, 3))
    return SimResult(C, start, finish, np.asarray(times), vol, events)


def _maxmin(g: SimGraph, act, cap, B) -> np.ndarray:
    """Progressive filling over links (F flows each) and NIC classes (one flow per task)."""
    n = len(act)
    phi = np.zeros(n)
    frozen = np.zeros(n, bool)
    link_rem = cap.astype(float).copy()
    nic_rem = {}
    users: dict[tuple, list[int]] = {}
    for i, m in enumerate(act):
        users.setdefault(("l", int(g.res[m])), []).append(i)
        for c in g.nics[m]:
            users.setdefault(("n", int(c)), []).append(i)
            nic_rem[int(c)] = B
    while not frozen.all():
        best, best_key = np.inf, None
        for key, us in users.items():
            live = [i for i in us if not frozen[i]]
            if not live:
                continue
            if key[0] == "l":
                w = sum(g.flows[act[i]] for i in live)
                level = link_rem[key[1]] / w
            else:
                level = nic_rem[key[1]] / len(live)
            if level < best:
                best, best_key = level, key
        for i in users[best_key]:
            if frozen[i]:
                continue
            phi[i] = best
            frozen[i] = True
            m = act[i]
            link_rem[g.res[m]] -= g.flows[m] * best
            for c in g.nics[m]:
                nic_rem[int(c)] -= best
    return phi


# ------------------------------------------------------------------------------------------
# Bound; the critical chain and NCT live in heuristics.delta.nct
# ------------------------------------------------------------------------------------------
def critical_path_bound(inst: DeltaInstance) -> float:
    """Longest path with every task at its full NIC rate V/(F B): a lower bound on C for
    any topology and any rate policy (a task never exceeds F_m B); the horizon check's
    critical path (instances.delta.input.critical_path_ms)."""
    from instances.delta.input import critical_path_ms

    return critical_path_ms(inst)
