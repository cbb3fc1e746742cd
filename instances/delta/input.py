"""DELTA instance files: strict checks of both file forms, size and horizon guards.

Every wrong field is an InstanceError naming its JSON path (``tasks[3].volume``,
``pods[1].ports``, ``job.micro_batches``): types are never converted (``"1"``, ``true``,
``null`` and ``0.5`` where an integer is needed are refused), nested objects reject unknown
keys, indices are range-checked. Two guards run before anything large is built or run:

* size: the job form's DAG (tasks, nodes and the reduction's task x task matrices) is
  estimated from the job's numbers and refused over the memory limit (instances.limits);
  the derived form's link and NIC bookkeeping likewise;
* horizon: times are capped at MAX_HORIZON_MS (about 17 minutes per training iteration,
  some 30 times the longest Table I iteration), checked per value and on the critical path
  at full NIC rate. Beyond it the event simulator's double-precision clock no longer
  resolves the transfers (issue 18 makes it robust; until then this is the input's bound).
"""
from __future__ import annotations

import numpy as np

from instances.errors import InstanceError, known_fields, number, obj, seq, text, tracing
from instances.limits import guard

MAX_HORIZON_MS = 1e6        # any time, and the iteration's critical path at full rate
MAX_BANDWIDTH = 1e4         # MB/ms per port (80 Tb/s); the job form caps bandwidth_gbps alike
MIN_BANDWIDTH = 1e-6        # MB/ms (8 kb/s)
MAX_PORTS = 2**20           # OCS ports of one Pod
POD_KEYS = ("name", "ports")
LINK_KEYS = ("name", "ends", "incidence")
TASK_KEYS = ("name", "kind", "src_pod", "dst_pod", "link", "dir", "flows", "volume",
             "src_gpus", "dst_gpus")


def _get(d: dict, key: str, where: str):
    if key not in d:
        raise InstanceError(f"{where}.{key}" if where else key, "missing")
    return d[key]


def _ms(field: str, v) -> float:
    return number(field, v, lo=0.0, hi=MAX_HORIZON_MS)


def _numbers(field: str, v, n: int | None, lo=0.0, hi=MAX_HORIZON_MS) -> list[float]:
    """A list of finite numbers in [lo, hi], of length ``n`` when given."""
    seq(field, v)
    if n is not None and len(v) != n:
        raise InstanceError(field, f"needs one value per task ({n}), got {len(v)}")
    return [number(f"{field}[{i}]", x, lo=lo, hi=hi) for i, x in enumerate(v)]


def parse_derived(d: dict) -> dict:
    """The derived form's fields, checked and normalized: keyword arguments of DeltaInstance."""
    bandwidth = number("bandwidth", _get(d, "bandwidth", ""), lo=MIN_BANDWIDTH, hi=MAX_BANDWIDTH)
    pods, ports = _pods(seq("pods", _get(d, "pods", "")))
    tasks_raw = seq("tasks", _get(d, "tasks", ""))
    tasks = [_task(f"tasks[{m}]", t) for m, t in enumerate(tasks_raw)]
    links_raw = seq("links", d["links"]) if "links" in d else []
    links = [_link(f"links[{e}]", l, set(pods)) for e, l in enumerate(links_raw)]
    _unique_names(links)
    if not links:
        links = _links_from_tasks(tasks, set(pods))
    L, P = len(links), len(pods)
    # the Pod x link incidence matrix and the baselines' working copies of it
    guard("links", 8.0 * P * L * 4, f"the incidence of {P} Pods and {L} links")
    for m, t in enumerate(tasks):
        if "link" not in t:
            t["link"], t["dir"] = _find_link(f"tasks[{m}]", links, t)
        elif t["link"] >= L:
            raise InstanceError(f"tasks[{m}].link", f"link index {t['link']} out of range "
                                                    f"(the instance has {L} links)")
        if t["volume"] / (t["flows"] * bandwidth) > MAX_HORIZON_MS:
            raise InstanceError(f"tasks[{m}].volume", f"{t['volume']:g} MB take "
                                f"{t['volume'] / (t['flows'] * bandwidth):.3g} ms even at full NIC rate, "
                                f"over the {MAX_HORIZON_MS:g} ms horizon")
    _check_ports(pods, ports, links, {t["link"] for t in tasks})
    M = len(tasks)
    deps = _deps(d.get("deps", []), M)
    release = _numbers("release", d["release"], M) if "release" in d else [0.0] * M
    tail = _numbers("tail", d["tail"], M) if "tail" in d else [0.0] * M
    q0 = _ms("q0", d["q0"]) if "q0" in d else 0.0
    return dict(bandwidth=bandwidth, pods=pods, ports=ports, links=links, tasks=tasks, deps=deps,
                release=release, tail=tail, q0=q0)


def _check_ports(pods: list[str], ports: list[int], links: list[dict], active: set) -> None:
    """Every link with traffic needs one circuit at least: a Pod whose budget cannot give
    each of its links with traffic one makes every topology infeasible."""
    need = dict.fromkeys(pods, 0)
    for e in active:
        for p, a in links[e]["incidence"].items():
            need[p] += a
    for i, p in enumerate(pods):
        if need[p] > ports[i]:
            raise InstanceError(f"pods[{i}].ports", f"{ports[i]} ports cannot give each link with "
                                f"traffic at {p} one circuit ({need[p]} ports needed)")


def _pods(raw: list) -> tuple[list[str], list[int]]:
    if not raw:
        raise InstanceError("pods", "must list at least one Pod")
    names, ports, seen = [], [], set()
    for i, p in enumerate(raw):
        where = f"pods[{i}]"
        obj(where, p)
        known_fields(where, p, POD_KEYS)
        name = text(f"{where}.name", _get(p, "name", where))
        if name in seen:
            raise InstanceError(f"{where}.name", f"duplicate Pod name {name!r}")
        seen.add(name)
        names.append(name)
        ports.append(number(f"{where}.ports", _get(p, "ports", where), integer=True, lo=0, hi=MAX_PORTS))
    return names, ports


def _gpus(field: str, v, flows: int) -> list[int]:
    seq(field, v)
    if len(v) != flows:
        raise InstanceError(field, f"needs one GPU per flow ({flows}), got {len(v)}")
    out = [number(f"{field}[{i}]", g, integer=True, lo=0) for i, g in enumerate(v)]
    if len(set(out)) != len(out):
        raise InstanceError(field, "lists a GPU twice (one flow per GPU)")
    return out


def _task(where: str, t) -> dict:
    obj(where, t)
    known_fields(where, t, TASK_KEYS)
    out = {k: text(f"{where}.{k}", t[k]) for k in ("name", "kind", "src_pod", "dst_pod") if k in t}
    if "link" in t:
        out["link"] = number(f"{where}.link", t["link"], integer=True, lo=0)
        out["dir"] = number(f"{where}.dir", _get(t, "dir", where), integer=True, lo=0, hi=1)
    else:
        for k in ("src_pod", "dst_pod"):
            if k not in out:
                raise InstanceError(f"{where}.{k}", "missing (needed when the task has no link)")
        if out["src_pod"] == out["dst_pod"]:
            raise InstanceError(f"{where}.dst_pod", f"task is not inter-pod ({out['src_pod']} to itself)")
    flows = out["flows"] = number(f"{where}.flows", _get(t, "flows", where), integer=True, lo=1)
    out["volume"] = number(f"{where}.volume", _get(t, "volume", where), lo=0.0, strict_lo=True)
    out["src_gpus"] = _gpus(f"{where}.src_gpus", _get(t, "src_gpus", where), flows)
    out["dst_gpus"] = _gpus(f"{where}.dst_gpus", _get(t, "dst_gpus", where), flows)
    # keep the file's key order (the solution files and round trips list tasks as given)
    return {k: out[k] for k in list(t) + ["link", "dir"] if k in out}


def _link(where: str, l, pods: set) -> dict:
    obj(where, l)
    known_fields(where, l, LINK_KEYS)
    ends = seq(f"{where}.ends", _get(l, "ends", where))
    if len(ends) != 2:
        raise InstanceError(f"{where}.ends", f"must name 2 Pods, got {len(ends)}")
    a, b = (text(f"{where}.ends[{i}]", p) for i, p in enumerate(ends))
    if a == b:
        raise InstanceError(f"{where}.ends", f"a link joins two different Pods, got {a} twice")
    inc = obj(f"{where}.incidence", _get(l, "incidence", where))
    if not inc:
        raise InstanceError(f"{where}.incidence", "must give the ports per circuit of at least one Pod")
    for p, v in inc.items():
        if p not in pods:
            raise InstanceError(f"{where}.incidence.{p}", "unknown Pod")
        if p not in (a, b):
            raise InstanceError(f"{where}.incidence.{p}", f"is not an end of the link ({a}, {b})")
        number(f"{where}.incidence.{p}", v, integer=True, lo=1, hi=MAX_PORTS)
    name = text(f"{where}.name", l["name"]) if "name" in l else f"{a}-{b}"
    return {"name": name, "ends": [a, b], "incidence": {p: int(v) for p, v in inc.items()}}


def _unique_names(links: list[dict]) -> None:
    """Two links of one name would be one in every output that names links (topologies,
    reports): refused, naming the second (an unnamed link is named "a-b" by its ends)."""
    seen: set = set()
    for e, l in enumerate(links):
        if l["name"] in seen:
            raise InstanceError(f"links[{e}].name", f"duplicate link name {l['name']!r}")
        seen.add(l["name"])


def _links_from_tasks(tasks: list[dict], pods: set) -> list[dict]:
    """One link per unordered Pod pair with traffic, incidence 1 at both ends."""
    links, seen = [], set()
    for m, t in enumerate(tasks):
        if "link" in t:
            raise InstanceError(f"tasks[{m}].link", "refers to a link but the instance has no links")
        for k in ("src_pod", "dst_pod"):
            if t[k] not in pods:
                raise InstanceError(f"tasks[{m}].{k}", f"unknown Pod {t[k]!r}")
        key = tuple(sorted((t["src_pod"], t["dst_pod"])))
        if key not in seen:
            seen.add(key)
            links.append({"name": f"{key[0]}-{key[1]}", "ends": list(key),
                          "incidence": {key[0]: 1, key[1]: 1}})
    return links


def _find_link(where: str, links: list[dict], t: dict) -> tuple[int, int]:
    for e, l in enumerate(links):
        a, b = l["ends"]
        if (t["src_pod"], t["dst_pod"]) == (a, b):
            return e, 0
        if (t["src_pod"], t["dst_pod"]) == (b, a):
            return e, 1
    raise InstanceError(f"{where}.src_pod", f"no link joins {t['src_pod']} and {t['dst_pod']}")


def _deps(raw, M: int) -> np.ndarray:
    """(|D|, 3) array of [pre, succ, delay] rows. A fast path checks well-formed lists in
    bulk; the first bad row is then found and named by the per-entry checks."""
    seq("deps", raw)
    ok_types = all(type(r) is list and len(r) == 3 and type(r[0]) is int and type(r[1]) is int
                   and type(r[2]) in (int, float) for r in raw)
    if ok_types and not tracing():
        arr = np.array(raw, dtype=float).reshape(-1, 3)
        ij = arr[:, :2]
        if not len(arr) or (np.all((ij >= 0) & (ij < M)) and np.all(arr[:, 2] >= 0)
                            and np.all(arr[:, 2] <= MAX_HORIZON_MS)):
            return arr
    rows = []
    for k, r in enumerate(raw):
        where = f"deps[{k}]"
        seq(where, r)
        if len(r) != 3:
            raise InstanceError(where, f"must be [pre, succ, delay_ms], got {len(r)} entries")
        row = []
        for i, what in ((0, "pre"), (1, "succ")):
            v = number(f"{where}[{i}]", r[i], integer=True, lo=0)
            if v >= M:
                raise InstanceError(f"{where}[{i}]", f"{what} task {v} out of range (the instance "
                                                     f"has {M} tasks)")
            row.append(v)
        rows.append(row + [_ms(f"{where}[2]", r[2])])
    return np.array(rows, dtype=float).reshape(-1, 3)      # e.g. integral floats as indices


def check_horizon(inst, field: str) -> None:
    """Refuse an iteration whose critical path at full NIC rate (a lower bound on any
    topology's iteration time) exceeds MAX_HORIZON_MS."""
    lb = critical_path_ms(inst)
    if not lb <= MAX_HORIZON_MS:
        raise InstanceError(field, f"the iteration takes at least {lb:.3g} ms (critical path at full "
                                   f"NIC rate), over the {MAX_HORIZON_MS:g} ms horizon")


def critical_path_ms(inst) -> float:
    """Longest release -> task -> delay -> ... -> tail path with every task at its full
    NIC rate V/(F B). O(M + |D|), once per instance (the horizon check, the checker's lower
    bound and the problem's bound read it; an instance is not changed once built)."""
    cached = inst.__dict__.get("_critical_path")
    if cached is None:
        cached = inst._critical_path = _critical_path(inst)
    return cached


def _critical_path(inst) -> float:
    from instances.dag import topological_order

    M = inst.n_tasks
    with np.errstate(over="ignore", divide="ignore"):
        dur = inst.volume / (inst.flows * inst.bandwidth)
    es = inst.release.astype(float).copy()
    if len(inst.deps):
        pre = inst.deps[:, 0].astype(np.int64)
        suc = inst.deps[:, 1].astype(np.int64)
        by_pre = np.argsort(pre, kind="stable")
        ptr = np.zeros(M + 1, dtype=np.int64)
        ptr[1:] = np.cumsum(np.bincount(pre, minlength=M))
        suc_s, del_s = suc[by_pre], inst.deps[by_pre, 2]
        topo = inst.__dict__.get("_task_order")            # the instance's check found it
        if topo is None or len(topo) != M:
            topo = topological_order(M, pre, suc)
        # a dependency listed twice needs maximum.at; else a plain maximum does the same
        twice = len(np.unique(pre * M + suc)) < len(pre)
        ptr = ptr.tolist()
        for m in topo.tolist():
            a, b = ptr[m], ptr[m + 1]
            if a < b:
                s, v = suc_s[a:b], es[m] + dur[m] + del_s[a:b]
                if twice:
                    np.maximum.at(es, s, v)
                else:
                    es[s] = np.maximum(es[s], v)
    return float(max(inst.q0, np.max(es + dur + inst.tail, initial=0.0)))


# ------------------------------------------------------------------------------------------
# The job form: size and compute-horizon estimates before the DAG is built
# ------------------------------------------------------------------------------------------
def job_size(job) -> tuple[int, int]:
    """(inter-pod tasks, full-DAG nodes) the generator would build (instances.delta.dag)."""
    R, P, N = job.replicas_count, job.pp, job.micro_batches
    reps = 1 if job.replicas == "canonical" else R
    blocks = -(-P // job.stages_per_pod)
    parts = 0 if R == 1 else (1 if job.dp_ring == "unidirectional" or R == 2 else 2)
    tasks = reps * (2 * N * (blocks - 1) + P * parts)
    nodes = reps * P * (9 * N + 2) + tasks       # F, B, 2 per call, transfers, OPT
    return tasks, nodes


def guard_job(job) -> None:
    """Refuse a job whose DAG or compute time is absurd, before anything is built."""
    from instances.delta.models import pp_volume_mb, stage_times

    M, nodes = job_size(job)
    # the reduction's two M x M float matrices, its distance vectors (about one per
    # pipeline stage live at a time) and the full DAG's Python objects (~400 B a node)
    guard("job.micro_batches", 16.0 * M * M + 8.0 * M * job.pp * 4 + 400.0 * nodes,
          f"the job's DAG ({M} inter-pod tasks, {nodes} nodes)")
    intra = pp_volume_mb(job) / (job.n_s * job.intra_bandwidth)     # one intra-pod P2P transfer
    if not intra <= MAX_HORIZON_MS:
        raise InstanceError("job.intra_bandwidth_gbps", f"an intra-pod activation transfer takes "
                            f"{intra:.3g} ms, over the {MAX_HORIZON_MS:g} ms horizon")
    tF, tB = stage_times(job)
    busiest = max(range(job.pp), key=lambda s: tF[s] + tB[s])
    compute = job.micro_batches * (tF[busiest] + tB[busiest]) + job.opt_ms   # N forwards + N backwards
    if not compute <= MAX_HORIZON_MS:
        raise InstanceError("job", f"stage {busiest} alone computes for {compute:.3g} ms per iteration "
                                   f"(micro_batches, mbs, seq_len, gpu_tflops and the model), over "
                                   f"the {MAX_HORIZON_MS:g} ms horizon")
