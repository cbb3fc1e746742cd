"""DELTA instances (a training job's reduced inter-pod DAG), solutions and the checker.

Ye et al. 2026, Section III-B "Input Parameters": Pods P with port budgets U_p, inter-pod
communication tasks m = (i_m, j_m, F_m, V_m, G_m^src, G_m^dst), dependencies
(m_pre, m, delta). Two file forms are valid:

* job form: ``{"problem": "delta", "format": 1, "name": ..., "job": {...}}`` - a Table I
  style job description (instances.delta.models.Job); the DAG is generated on load;
* derived form: ``{"problem": "delta", "format": 1, "name": ..., "bandwidth": B,
  "pods": [{"name", "ports"}], "links": [{"name", "ends", "incidence"}], "tasks": [...],
  "deps": [[pre, succ, delay_ms], ...], "release": [...], "tail": [...], "q0": ...}`` -
  any trace (e.g. exported from SimAI). ``links`` may be omitted: then every unordered
  Pod pair with traffic is one link with incidence 1 at both ends.

A link is one topology variable x_e (symmetric circuit count); with replica isomorphism a
link is an orbit of Pod pairs and ``incidence[p]`` = a_{p,e} ports per circuit at Pod p
(spec 3.2). Units: ms, MB, MB/ms.
"""
from __future__ import annotations

from dataclasses import InitVar, dataclass, field

import numpy as np

from instances.dag import topological_order
from instances.errors import InstanceError, number, per_instance, tracing

REL_TOL = 1e-6
# Float noise of event times, relative to the horizon: volumes are checked up to what a
# task (or a link, a NIC) can send in that time (issue 18: a 3e-9 MB excess in a 1e-9 ms
# interval at t ~ 1e4 ms is rounding, not a violation; an absolute 1e-9 MB is not).
TIME_NOISE = 1e-10


@dataclass
class DeltaInstance:
    name: str
    bandwidth: float                 # B, MB/ms per NIC = per OCS port
    pods: list[str]
    ports: np.ndarray                # U_p
    links: list[dict]                # {"name", "ends": [a, b], "incidence": {pod: a_pe}}
    tasks: list[dict]                # {"name", "link", "dir", "flows", "volume", "src_gpus", "dst_gpus", ...}
    deps: np.ndarray                 # (|D|, 3): pre, succ, delay (ms)
    release: np.ndarray              # r_m
    tail: np.ndarray                 # q_m
    q0: float = 0.0
    job: dict | None = None
    meta: dict = field(default_factory=dict)
    # a topological order of the tasks the caller knows (the reduction's): checked, not sought
    task_order: InitVar[np.ndarray | None] = None

    problem = "delta"

    # ---- derived arrays -------------------------------------------------------------------
    def __post_init__(self, task_order=None):
        self.ports = np.asarray(self.ports, dtype=float)
        self.deps = np.asarray(self.deps, dtype=float).reshape(-1, 3)
        self.release = np.asarray(self.release, dtype=float)
        self.tail = np.asarray(self.tail, dtype=float)
        self._validate(task_order)
        self.link_of = np.array([t["link"] for t in self.tasks], dtype=np.int64)
        self.dir_of = np.array([t["dir"] for t in self.tasks], dtype=np.int64)
        self.flows = np.array([t["flows"] for t in self.tasks], dtype=float)
        self.volume = np.array([t["volume"] for t in self.tasks], dtype=float)
        self.res_of = self.link_of * 2 + self.dir_of       # directed link (resource) per task
        pod_idx = {p: i for i, p in enumerate(self.pods)}
        self.incidence = np.zeros((len(self.pods), len(self.links)))   # a_{p,e}
        for e, l in enumerate(self.links):
            for p, a in l["incidence"].items():
                self.incidence[pod_idx[p], e] = a

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)

    def _validate(self, task_order=None):
        """Array-level checks of a constructed instance (files are checked field by field
        before, in instances.delta.input; this also guards programmatic construction)."""
        number("bandwidth", self.bandwidth, lo=0.0, strict_lo=True)
        if len(set(self.pods)) != len(self.pods):
            raise InstanceError("pods", "pod names must be unique")
        if self.ports.shape != (len(self.pods),) or not np.all(np.isfinite(self.ports)) or \
                np.any(self.ports < 0) or np.any(self.ports != np.round(self.ports)):
            raise InstanceError("pods", "every pod needs an integer port budget >= 0")
        pods = set(self.pods)
        for e, l in enumerate(self.links):
            inc = l.get("incidence")
            if not isinstance(inc, dict) or not inc or any(p not in pods for p in inc):
                raise InstanceError(f"links[{e}].incidence", "must map known pods to ports per circuit")
            for p, a in inc.items():
                number(f"links[{e}].incidence.{p}", a, integer=True, lo=1)
        M = len(self.tasks)
        if not _plain_tasks(self.tasks, len(self.links)):    # the walk names the first offender
            for m, t in enumerate(self.tasks):
                for key in ("link", "dir", "flows", "volume", "src_gpus", "dst_gpus"):
                    if key not in t:
                        raise InstanceError(f"tasks[{m}].{key}", "missing")
                number(f"tasks[{m}].link", t["link"], integer=True, lo=0, hi=per_instance(len(self.links) - 1))
                number(f"tasks[{m}].dir", t["dir"], integer=True, lo=0, hi=1)
                number(f"tasks[{m}].flows", t["flows"], integer=True, lo=1)
                number(f"tasks[{m}].volume", t["volume"], lo=0.0, strict_lo=True)
                if len(t["src_gpus"]) != t["flows"] or len(t["dst_gpus"]) != t["flows"]:
                    raise InstanceError(f"tasks[{m}].src_gpus",
                                        "needs one source and one destination GPU per flow")
        if self.release.shape != (M,) or self.tail.shape != (M,):
            raise InstanceError("release", f"release and tail need one value per task ({M})")
        for key, arr in (("release", self.release), ("tail", self.tail)):
            if not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise InstanceError(key, "must be finite and >= 0")
        number("q0", self.q0, lo=0.0)
        if len(self.deps):
            if not np.all(np.isfinite(self.deps)):
                raise InstanceError("deps", "must be finite")
            ij = self.deps[:, :2]
            if np.any(ij < 0) or np.any(ij >= M) or np.any(ij != np.round(ij)):
                raise InstanceError("deps", "task indices out of range")
            if np.any(self.deps[:, 2] < 0):
                raise InstanceError("deps", "delays must be >= 0")
            # kept for the critical path (instances.delta.input), which needs the same order
            self._task_order = _check_acyclic(M, self.deps[:, :2].astype(np.int64), task_order)

    # ---- I/O ------------------------------------------------------------------------------
    FIELDS = ('job', 'bandwidth', 'pods', 'links', 'tasks', 'deps', 'release', 'tail', 'q0')   # besides problem, format, name, meta

    @classmethod
    def from_dict(cls, d: dict) -> "DeltaInstance":
        """Either form of a file (module docstring); every field checked (instances.delta.input)."""
        from instances.delta.input import check_horizon, parse_derived

        name = d.get("name", "delta")
        if "job" in d:
            if "tasks" in d:
                raise InstanceError("job", "give either a job description or the derived form "
                                           "(tasks, deps, ...), not both")
            return from_job(d["job"], name=name)
        if "tasks" not in d:
            raise InstanceError("tasks", "missing (give the derived form's tasks or a job)")
        inst = cls(name=name, **parse_derived(d), meta=dict(d.get("meta", {})))
        check_horizon(inst, "deps")
        return inst

    def to_dict(self, derived: bool = False) -> dict:
        out = {"problem": "delta", "format": 1, "name": self.name}
        if self.job is not None and not derived:
            out["job"] = self.job
            return out
        out.update(bandwidth=self.bandwidth,
                   pods=[{"name": p, "ports": int(u)} for p, u in zip(self.pods, self.ports)],
                   links=self.links, tasks=self.tasks,
                   deps=[[int(a), int(b), float(c)] for a, b, c in self.deps],
                   release=self.release.tolist(), tail=self.tail.tolist(), q0=self.q0)
        if self.meta:
            out["meta"] = self.meta
        return out


def _plain_tasks(tasks: list, n_links: int) -> bool:
    """True when every task passes :meth:`DeltaInstance._validate`'s field checks, checked
    column by column with numpy (issue 29 item 3: 0.1 ms for 200 tasks, not 0.5): Python
    ints for link, dir and flows, floats for volume, in range, one GPU per flow on each
    side. False (any other type, a missing key, a value out of range) sends the tasks
    through the exact walk, which names the first offender."""
    if not tasks:
        return True
    if tracing():                           # toolkit.schema: the exact walk records each check
        return False
    try:
        cols = [[t[k] for t in tasks] for k in ("link", "dir", "flows", "volume")]
        sides = [[len(t[k]) for t in tasks] for k in ("src_gpus", "dst_gpus")]
    except (KeyError, TypeError):
        return False
    if any(set(map(type, c)) != {int} for c in cols[:3]) or \
            not set(map(type, cols[3])) <= {float, np.float64}:
        return False
    try:
        link, d, flows = (np.array(c, dtype=np.int64) for c in cols[:3])
    except OverflowError:                   # beyond 64 bits
        return False
    vol = np.array(cols[3], dtype=float)
    return bool(link.min() >= 0 and link.max() <= n_links - 1 and d.min() >= 0 and d.max() <= 1
                and flows.min() >= 1 and np.all(np.isfinite(vol)) and np.all(vol > 0)
                and np.array_equal(sides[0], flows) and np.array_equal(sides[1], flows))


def nic_groups(tasks, side: str) -> dict[tuple[int, ...], int]:
    """GPUs grouped by the set of tasks they serve on one side (``"src_gpus"`` or
    ``"dst_gpus"``): {sorted task tuple: a representative GPU}. All GPUs of a group carry
    identical NIC loads, so one capacity row (Eq. 10 / 23) or one resource serves them."""
    member: dict[int, list[int]] = {}
    for m, t in enumerate(tasks):
        for g in t[side]:
            member.setdefault(g, []).append(m)
    groups: dict[tuple[int, ...], int] = {}
    # Iterate the GPUs as a set and let the last one name the group: this keeps the order
    # (and names) of the MILPs' NIC rows as they were. The order matters in practice: an
    # equivalent model with reordered rows can return another optimal schedule, and the
    # NCT of a slack-bearing DELTA-Joint schedule depends on where the slack sits.
    for g in {g for t in tasks for g in t[side]}:
        groups[tuple(sorted(set(member[g])))] = g
    return groups


def x_max(inst: DeltaInstance) -> np.ndarray:
    """Largest feasible circuit count per link: min over its pods of floor(U_p / a_pe)."""
    A = inst.incidence
    with np.errstate(divide="ignore"):
        cap = np.where(A > 0, np.floor(inst.ports[:, None] / np.where(A > 0, A, 1)), np.inf)
    return cap.min(axis=0)


def from_job(job_dict: dict, name: str = "delta") -> DeltaInstance:
    """Generate the reduced inter-pod DAG of a job description (spec 1.2.5). The job is
    checked field by field, and its DAG size and compute time are estimated and guarded
    before anything is built (instances.delta.input)."""
    from instances.delta.dag import build_full_dag
    from instances.delta.reduce import reduce_dag
    from instances.delta.input import check_horizon, guard_job
    from instances.delta.models import Job

    job = Job.from_dict(job_dict)
    guard_job(job)
    g, layout = build_full_dag(job)
    red = reduce_dag(g)
    inst = DeltaInstance(name=name, bandwidth=job.bandwidth, pods=layout.pods, ports=layout.ports,
                         links=layout.links, tasks=g.tasks, deps=red["deps"], release=red["release"],
                         tail=red["tail"], q0=red["q0"], job=dict(job_dict),
                         meta={"replicas": layout.R, "canonical": layout.canonical,
                               "stages_per_pod": layout.sp, "n_s": layout.ns},
                         task_order=red["order"])
    check_horizon(inst, "job")
    return inst


def _check_acyclic(M: int, edges: np.ndarray, order=None) -> np.ndarray:
    """A topological order of the tasks under ``edges``: ``order`` where it is one, else
    Kahn's; InstanceError on a cycle. (Any such order gives the critical path's numbers.)"""
    if order is not None and len(order) == M and sorted(order) == list(range(M)):
        pos = np.empty(M, dtype=np.int64)
        pos[np.asarray(order, dtype=np.int64)] = np.arange(M)
        if (pos[edges[:, 0]] < pos[edges[:, 1]]).all():
            return np.asarray(order, dtype=np.int64)
    try:
        return topological_order(M, edges[:, 0], edges[:, 1])
    except ValueError:
        raise InstanceError("deps", "dependencies contain a cycle")


# ------------------------------------------------------------------------------------------
# Solutions and the independent checker
# ------------------------------------------------------------------------------------------
@dataclass
class DeltaSolution:
    """A topology (circuits per link) and a piecewise-constant schedule.

    ``times``: interval boundaries t_0 = 0 < ... < t_K; ``vol``: (m, k, MB) triples, the
    volume task m sends in [t_k, t_{k+1}]; ``start``/``finish``: S_m, C_m.
    """

    x: np.ndarray
    times: np.ndarray
    vol: np.ndarray          # (nnz, 3)
    start: np.ndarray
    finish: np.ndarray

    def to_dict(self) -> dict:
        vol = np.asarray(self.vol, dtype=float).reshape(-1, 3)
        m, k = (vol[:, i].astype(np.int64).tolist() for i in (0, 1))   # as int(m), int(k)
        return {"x": self.x.astype(int).tolist(), "times": self.times.tolist(),
                "start": self.start.tolist(), "finish": self.finish.tolist(),
                "volumes": [list(r) for r in zip(m, k, vol[:, 2].tolist())]}


def pod_matrix(inst: DeltaInstance, x: np.ndarray, full: bool = True) -> tuple[list[str], np.ndarray]:
    """The symmetric pod x pod circuit matrix of a topology (orbits expanded over replicas)."""
    names = sorted({p for l in inst.links for p in l["ends"]} | set(inst.pods))
    idx = {p: i for i, p in enumerate(names)}
    X = np.zeros((len(names), len(names)), dtype=np.int64)
    for e, l in enumerate(inst.links):
        a, b = l["ends"]
        X[idx[a], idx[b]] = X[idx[b], idx[a]] = int(x[e])
    return names, X


def makespan_of(inst: DeltaInstance, finish: np.ndarray) -> float:
    """C = max(Q_0, max_m C_m + q_m) (Eq. 18 with tails, spec 1.2.3)."""
    return float(max(inst.q0, np.max(finish + inst.tail, initial=0.0)))


def check_solution(inst: DeltaInstance, sol: DeltaSolution) -> tuple[list[str], dict]:
    """Verify a topology and schedule using only the instance data.

    Every number must be finite. Topology: integer, >= 0, port budgets
    sum_e a_{p,e} x_e <= U_p (x is one value per link, so symmetric). Schedule: every dependency and delay and release time holds,
    every task's volume is delivered inside [S_m, C_m], and in every interval no directed
    link carries more than B x_e and no NIC more than B (per flow, one flow per GPU).
    Tolerances ([DECISION] issue 18): times REL_TOL x max(1, horizon); volumes REL_TOL
    relative plus what the task, link or NIC carries in TIME_NOISE x horizon (float noise
    of event times scales with the horizon, so no absolute MB tolerance fits every instance).
    """
    bad: list[str] = []
    B, M, K = inst.bandwidth, inst.n_tasks, len(sol.times) - 1
    x = np.asarray(sol.x, dtype=float)
    if x.shape != (len(inst.links),):
        return [f"topology has {x.shape} entries, instance has {len(inst.links)} links"], {}
    if not np.all(np.isfinite(x)) or np.any(x < 0) or np.any(x != np.round(x)):
        bad.append("topology must be finite non-negative integers")
    used = inst.incidence @ x
    over = np.flatnonzero(used > inst.ports + 1e-9)
    for p in over[:3]:
        bad.append(f"pod {inst.pods[p]} uses {used[p]:g} ports > U_p = {inst.ports[p]:g}")
    S, C = np.asarray(sol.start, float), np.asarray(sol.finish, float)
    t = np.asarray(sol.times, float)
    tol = REL_TOL * max(1.0, float(t[-1]) if K >= 0 else 1.0)
    if S.shape != (M,) or C.shape != (M,) or K < 0 or np.any(np.diff(t) < -1e-12):
        return bad + ["schedule arrays have the wrong shape or times decrease"], {}
    vol = np.asarray(sol.vol, float).reshape(-1, 3)
    if not all(np.all(np.isfinite(a)) for a in (S, C, t, vol)):
        # NaN compares False with everything: it would pass every check below
        return bad + ["schedule times, starts, finishes and volumes must be finite"], {}
    if np.any(S < inst.release - tol):
        m = int(np.argmax(inst.release - S))
        bad.append(f"task {m} starts at {S[m]:.6g} before its release {inst.release[m]:.6g}")
    if len(inst.deps):
        pre, suc, delay = inst.deps[:, 0].astype(np.int64), inst.deps[:, 1].astype(np.int64), \
            inst.deps[:, 2]
        late = np.flatnonzero(S[suc] < C[pre] + delay - tol)
        if late.size:                   # the first in the file's order
            a, b, d = int(pre[late[0]]), int(suc[late[0]]), delay[late[0]]
            bad.append(f"dependency {a}->{b}: start {S[b]:.6g} < finish {C[a]:.6g} + delay {d:.6g}")
    m_i, k_i, w = vol[:, 0].astype(np.int64), vol[:, 1].astype(np.int64), vol[:, 2]
    eps_t = TIME_NOISE * (float(t[-1]) if K >= 1 else 0.0)     # time noise, ms
    v_eps = inst.flows * B * eps_t + 1e-12 * inst.volume        # per task: MB sent in eps_t
    if len(w) and (np.any(m_i < 0) or np.any(m_i >= M) or np.any(k_i < 0) or np.any(k_i >= K)):
        return bad + ["volume entries out of range"], {}
    if len(w) and np.any(w < -v_eps[m_i]):
        return bad + ["volume entries out of range (negative)"], {}
    sent = np.bincount(m_i, weights=w, minlength=M)
    short = np.flatnonzero(np.abs(sent - inst.volume) > REL_TOL * inst.volume + v_eps)
    for m in short[:3]:
        bad.append(f"task {m} delivers {sent[m]:.6g} MB of {inst.volume[m]:.6g}")
    if len(w):
        outside = (t[k_i] < S[m_i] - tol) | (t[k_i + 1] > C[m_i] + tol)
        if np.any(outside & (w > v_eps[m_i])):
            m = int(m_i[np.argmax(outside & (w > v_eps[m_i]))])
            bad.append(f"task {m} sends outside its [start, finish] window")
    dt = np.diff(t)
    # Loads are summed only where something is sent (sparse (resource, interval) keys):
    # a dense resources x intervals matrix would grow with tasks x GPUs.
    # link capacity per directed link and interval
    over = _over_capacity(inst.res_of[m_i], k_i, w, K, lambda r, k: x[r // 2] * B * dt[k],
                          lambda r: x[r // 2] * B * eps_t)
    if over is not None:
        r, k, load, cap = over
        bad.append(f"link {inst.links[r // 2]['name']} dir {r % 2} over capacity in interval {k}: "
                   f"{load:.6g} MB > {cap:.6g}")
    # NIC capacity: per GPU, sum of per-flow volumes <= B * dt
    per_flow = w / inst.flows[m_i] if len(w) else w
    for side in ("src_gpus", "dst_gpus"):
        ptr = np.zeros(M + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(tk[side]) for tk in inst.tasks])
        gpu_ids, flat = np.unique(np.array([g for tk in inst.tasks for g in tk[side]]),
                                  return_inverse=True)      # the GPUs sorted; each one's index
        n_g = ptr[m_i + 1] - ptr[m_i]                      # GPUs of each volume entry
        entry = np.repeat(np.arange(len(w)), n_g)
        pos = np.arange(len(entry)) - np.repeat(np.cumsum(n_g) - n_g, n_g)
        over = _over_capacity(flat[ptr[m_i][entry] + pos], k_i[entry], per_flow[entry], K,
                              lambda g, k: B * dt[k], lambda g: B * eps_t)
        if over is not None:
            g, k, _, _ = over
            bad.append(f"{side[:3]} NIC of GPU {gpu_ids[g]} over capacity in interval {k}")
    metrics = {"iteration_time": makespan_of(inst, C),
               "ports_used": _count(used.sum()),
               "port_ratio": float(used.sum() / inst.ports.sum()) if inst.ports.sum() else 0.0,
               "pod_ports_used": [_count(v) for v in used]}   # per Pod, in pods order
    return bad, metrics


def _count(v) -> int | float:
    """A port count: an int (a float only when a bad topology made it fractional)."""
    v = float(v)
    return int(v) if v.is_integer() else v


def _over_capacity(row, k, w, K, cap_of, noise_of):
    """The first (row, interval) whose summed load exceeds its capacity (row-major order,
    as a dense scan would find it), as (row, interval, load, capacity); None if none does.
    Tolerance: REL_TOL of the capacity plus ``noise_of(row)``, what the row can carry in
    the time noise of the horizon."""
    if not len(w):
        return None
    keys, inv = np.unique(np.asarray(row, np.int64) * K + k, return_inverse=True)
    load = np.bincount(inv.ravel(), weights=w)
    r, kk = keys // K, keys % K
    cap = cap_of(r, kk)
    over = np.flatnonzero(load > cap * (1 + REL_TOL) + noise_of(r) + 1e-12 * np.abs(load))
    if not over.size:
        return None
    i = over[0]
    return int(r[i]), int(kk[i]), float(load[i]), float(cap[i])
