"""DELTA computation-communication DAG: 1F1B programs, full DAG, reduced inter-pod DAG.

Ye et al. 2026, Section III-A (Fig. 3). The paper's traces came from SimAI; this is the
spec's Megatron-faithful generator (delta spec 1.2.5): per-stage programs of Megatron's
non-interleaved 1F1B schedule with blocking batched P2P (rendezvous), DP gradient sync
after the last backward of each stage (a barrier across replicas), then the reduction
of section 1.2.3 (:mod:`instances.delta.reduce`): intra-pod work between two inter-pod
tasks becomes a weighted edge (longest intra-only path), work before the first one a
release time r_m, work after the last one a tail q_m.

Replicas (spec 3.2): ``replicas="full"`` builds every DP replica; ``"canonical"`` builds
replica 0 only, with one topology variable per orbit of Pod pairs under replica rotation.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from instances.delta.models import Job, dp_volume_mb, pp_volume_mb, stage_times
from instances.delta.reduce import reduce_plan


@dataclass
class FullDag:
    """Nodes with fixed durations (intra-pod) or an inter-pod comm task index; edges."""

    names: list[str] = field(default_factory=list)
    dur: list[float] = field(default_factory=list)
    comm: list[int] = field(default_factory=list)     # task index, or -1 for intra-pod nodes
    edges: list[tuple[int, int]] = field(default_factory=list)
    tasks: list[dict] = field(default_factory=list)   # inter-pod communication tasks
    # reduce_dag's view of the shape (reduce_plan), shared by the DAGs of one job shape
    plan: dict | None = field(default=None, repr=False, compare=False)

    def add(self, name: str, dur: float = 0.0, task: dict | None = None) -> int:
        self.plan = None
        self.names.append(name)
        self.dur.append(dur)
        if task is not None:
            self.tasks.append(task)
            self.comm.append(len(self.tasks) - 1)
        else:
            self.comm.append(-1)
        return len(self.names) - 1

    def edge(self, a: int, b: int) -> None:
        self.plan = None
        self.edges.append((a, b))


def stage_program(s: int, P: int, N: int) -> list[tuple]:
    """Megatron forward_backward_pipelining_without_interleaving for stage s (spec 1.2.5).

    Ops: ("F", b), ("B", b), ("CALL", [(kind, b), ...]) with kind in send_fwd, recv_fwd,
    send_bwd, recv_bwd.
    """
    w = min(P - 1 - s, N)
    rem = N - w
    prog: list[tuple] = []
    for i in range(w):                                   # warm-up
        if s > 0:
            prog.append(("CALL", [("recv_fwd", i)]))
        prog.append(("F", i))
        if s < P - 1:
            prog.append(("CALL", [("send_fwd", i)]))
    if rem > 0 and s > 0:
        prog.append(("CALL", [("recv_fwd", w)]))
    for i in range(rem):                                 # steady 1F1B
        bf, bb = w + i, i
        prog.append(("F", bf))
        if s < P - 1:
            prog.append(("CALL", [("send_fwd", bf), ("recv_bwd", bb)]))
        prog.append(("B", bb))
        if s > 0:
            if i == rem - 1:
                prog.append(("CALL", [("send_bwd", bb)]))
            else:
                prog.append(("CALL", [("send_bwd", bb), ("recv_fwd", bf + 1)]))
    for i in range(w):                                   # cool-down
        bb = rem + i
        if s < P - 1:
            prog.append(("CALL", [("recv_bwd", bb)]))
        prog.append(("B", bb))
        if s > 0:
            prog.append(("CALL", [("send_bwd", bb)]))
    return prog


@dataclass
class Layout:
    """Pods, links (topology variables) and GPU ids of a job (spec 1.2.5 placement, 3.2)."""

    job: Job
    canonical: bool
    pods: list[str] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    links: list[dict] = field(default_factory=list)
    _link_of: dict = field(default_factory=dict)

    def __post_init__(self):
        j = self.job
        self.R, self.P, self.ns, self.sp = j.replicas_count, j.pp, j.n_s, j.stages_per_pod
        self.blocks = -(-self.P // self.sp)
        reps = [0] if self.canonical else range(self.R)
        for r in reps:
            for b in range(self.blocks):
                self.pods.append(self.pod(r, b))
                stages = min(self.sp, self.P - b * self.sp)
                self.ports.append(stages * self.ns)     # U_p = the job's GPUs in the Pod

    def pod(self, r: int, b: int) -> str:
        return f"r{r % self.R}b{b}"

    def block(self, s: int) -> int:
        return s // self.sp

    def gpu(self, r: int, s: int, l: int) -> int:
        r = 0 if self.canonical else r % self.R
        return (r * self.P + s) * self.ns + l

    def link(self, src: tuple[int, int], dst: tuple[int, int], kind: str) -> tuple[int, int]:
        """(link index, direction) of a transfer from Pod (r, b) to Pod (r', b')."""
        (r0, b0), (r1, b1) = src, dst
        if self.canonical:
            if kind == "pp":
                lo = min(b0, b1)
                key, incid = f"PP{lo}", {self.pod(0, lo): 1, self.pod(0, lo + 1): 1}
                direction = 0 if b1 > b0 else 1
            else:  # DP orbit of pairs {(r,b),(r+1,b)}; "+" is direction 0, "-" direction 1
                key = f"DP{b0}"
                incid = {self.pod(0, b0): 1 if self.R == 2 else 2}
                direction = 0 if (r1 - r0) % self.R == 1 else 1
            ends = (self.pod(0, b0 if kind == "dp" else min(b0, b1)),
                    self.pod(1, b0) if kind == "dp" else self.pod(0, max(b0, b1)))
        else:
            a, c = sorted([self.pod(r0, b0), self.pod(r1, b1)], key=self.pods.index)
            key, incid = f"{a}-{c}", {a: 1, c: 1}
            direction = 0 if self.pod(r0, b0) == a else 1
            ends = (a, c)
        if key not in self._link_of:
            self._link_of[key] = len(self.links)
            self.links.append({"name": key, "ends": list(ends), "incidence": incid})
        return self._link_of[key], direction


def build_full_dag(job: Job) -> tuple[FullDag, Layout]:
    """The full computation-communication DAG (Fig. 3a) with inter-pod tasks marked.

    Its shape (nodes, edges, tasks, links) depends on the job's parallelism, micro-batches,
    P2P mode, DP ring and which stages synchronize gradients, not on its durations and
    volumes: it is built once per shape and process (:func:`_skeleton`; a sweep of
    bandwidths or GPU speeds reuses it, issue 29 item 3) and filled with this job's
    numbers, the same numbers the builder computes."""
    job.validate()
    L = Layout(job, canonical=job.replicas == "canonical")
    tF, tB = stage_times(job)
    v_dps, v_pp = dp_volume_mb(job), pp_volume_mb(job)
    key = (L.R, L.P, job.micro_batches, L.ns, L.sp, L.canonical, job.p2p_mode, job.dp_ring,
           tuple(L.R > 1 and v > 0 for v in v_dps))
    sk = _skeleton(key, L)
    # duration codes: 0 none, 1 an intra-pod transfer, 2 OPT, 3 + s F(s), 3 + P + s B(s)
    table = np.array([0.0, v_pp / (L.ns * job.intra_bandwidth), job.opt_ms, *tF, *tB])
    g = FullDag(list(sk["names"]), table[sk["codes"]].tolist(), list(sk["comm"]),
                list(sk["edges"]), [_task(t, v_pp, v_dps) for t in sk["tasks"]], sk["plan"])
    L.links = [dict(l, ends=list(l["ends"]), incidence=dict(l["incidence"])) for l in sk["links"]]
    L._link_of = dict(sk["link_of"])
    return g, L


def _task(t: dict, v_pp: float, v_dps: list) -> dict:
    """A task of a skeleton with its volume (a DP task's: its flows' share of the stage's)."""
    out = dict(t, src_gpus=list(t["src_gpus"]), dst_gpus=list(t["dst_gpus"]))
    out["volume"] = v_pp if t["kind"] == "pp" else len(t["src_gpus"]) * v_dps[t["volume"]]
    return out


_SKELETONS: dict = {}       # job shape -> its DAG without numbers (the last few shapes)
_SKELETONS_LOCK = threading.Lock()      # Dask worker threads build instances side by side


def _skeleton(key: tuple, L: Layout) -> dict:
    with _SKELETONS_LOCK:
        sk = _SKELETONS.get(key)
        if sk is None:
            sk = _build_shape(L, *key[2:])
            if len(_SKELETONS) >= 4:
                del _SKELETONS[next(iter(_SKELETONS))]
            _SKELETONS[key] = sk
    return sk


def _build_shape(L: Layout, N: int, ns: int, sp: int, canonical: bool, p2p_mode: str,
                 dp_ring: str, syncs: tuple) -> dict:
    """The DAG of a job shape: node names, duration codes (see :func:`build_full_dag`),
    edges, tasks (a DP task's ``volume`` holds its stage), the links, and reduce_dag's plan."""
    R, P = L.R, L.P
    L = Layout(L.job, canonical=canonical)       # its own links, numbered as they appear
    g = FullDag()
    codes: list[int] = []
    reps = [0] if L.canonical else list(range(R))
    xfer: dict[tuple, int] = {}
    edge = g.edges.append                       # (a, b): a before b

    def add(name, code, task=None):
        codes.append(code)
        return g.add(name, task=task)

    def transfer(r, kind, b, s_from, s_to):
        key = (r, kind, b, s_from)
        if key in xfer:
            return xfer[key]
        blk0, blk1 = L.block(s_from), L.block(s_to)
        name = f"{'PF' if kind == 'fwd' else 'PB'}(r{r},b{b},s{s_from}->s{s_to})"
        if blk0 == blk1:
            node = add(name, 1)
        else:
            link, d = L.link((r, blk0), (r, blk1), "pp")
            node = add(name, 0, dict(
                name=name, kind="pp", src_pod=L.pod(r, blk0), dst_pod=L.pod(r, blk1), link=link,
                dir=d, flows=ns, volume=None,
                src_gpus=[L.gpu(r, s_from, l) for l in range(ns)],
                dst_gpus=[L.gpu(r, s_to, l) for l in range(ns)]))
        xfer[key] = node
        return node

    stage_end = {}
    for r in reps:
        for s in range(P):
            prev = None
            for op in stage_program(s, P, N):
                if op[0] in ("F", "B"):
                    node = add(f"{op[0]}(r{r},b{op[1]},s{s})", 3 + s + (P if op[0] == "B" else 0))
                    if prev is not None:
                        edge((prev, node))
                    prev = node
                    continue
                post = add(f"POST(r{r},s{s},#{len(g.names)})", 0)
                done = add(f"DONE(r{r},s{s},#{len(g.names)})", 0)
                if prev is not None:
                    edge((prev, post))
                for kind, b in op[1]:
                    if kind == "send_fwd":
                        x, sender = transfer(r, "fwd", b, s, s + 1), True
                    elif kind == "recv_fwd":
                        x, sender = transfer(r, "fwd", b, s - 1, s), False
                    elif kind == "send_bwd":
                        x, sender = transfer(r, "bwd", b, s, s - 1), True
                    else:
                        x, sender = transfer(r, "bwd", b, s + 1, s), False
                    if p2p_mode == "megatron_blocking" or sender:
                        edge((post, x))                     # rendezvous: both sides posted
                    if p2p_mode == "megatron_blocking" or not sender:
                        edge((x, done))                     # a call completes with its transfers
                edge((post, done))
                prev = done
            stage_end[r, s] = prev

    # DP gradient synchronization (spec 1.2.5, decision 5/9): after every replica's stage end.
    for s in range(P):
        blk = L.block(s)
        for r in reps:
            dp_nodes = []
            if syncs[s]:                # R > 1 and the stage has gradients to synchronize
                if dp_ring == "unidirectional" or R == 2:
                    parts = [(+1, list(range(ns)))]
                else:
                    parts = [(+1, list(range(ns // 2))), (-1, list(range(ns // 2, ns)))]
                for sign, locs in parts:
                    r2 = (r + sign) % R
                    link, d = L.link((r, blk), (r2, blk), "dp")
                    name = f"DP{'+' if sign > 0 else '-'}(r{r},s{s})"
                    node = add(name, 0, dict(
                        name=name, kind="dp", src_pod=L.pod(r, blk), dst_pod=L.pod(r2, blk),
                        link=link, dir=d, flows=len(locs), volume=s,
                        src_gpus=[L.gpu(r, s, l) for l in locs],
                        dst_gpus=[L.gpu(r2, s, l) for l in locs]))
                    for r_any in reps:                       # DP barrier across replicas
                        edge((stage_end[r_any, s], node))
                    dp_nodes.append((node, r2))
            stage_end[r, s, "dp"] = dp_nodes
        for r in reps:
            opt = add(f"OPT(r{r},s{s})", 2)
            if not stage_end[r, s, "dp"]:          # R = 1 or nothing to synchronize
                edge((stage_end[r, s], opt))
            for r_src in reps:
                for node, r_dst in stage_end[r_src, s, "dp"]:
                    if r_src == r or (not L.canonical and r_dst == r):
                        edge((node, opt))
    return dict(names=g.names, codes=np.array(codes, dtype=np.int64), comm=g.comm,
                edges=g.edges, tasks=g.tasks, links=L.links, link_of=L._link_of,
                plan=reduce_plan(g, [c == 0 for c in codes]))
