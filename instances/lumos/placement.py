"""LumosCore GPU placement as data ([002] 4.2.1, spec 2.8): which GPUs a job holds.

A ``Cluster`` is a ``Fabric`` plus ``gpus_per_server`` (T) and the intra-Pod ``layout``.
GPUs are numbered Pod-major, server-major (0-based, spec 7.1): GPU ``g`` sits on server
``g // T`` and Pod ``g // gpus_per_pod``. Its leaf (a leaf has K_leaf GPU-facing ports,
spec 1.1) depends on the layout:

* ``server`` (default, spec 7.1): a leaf holds K_leaf / T whole servers, leaf ``g // K_leaf``;
* ``rail`` ([002] §6.5 and Fig. 24, rail-optimized after Qian et al. 2024): the servers are
  cut into *rail groups* of K_leaf consecutive servers, each wired to T leaves ("rails"),
  GPU r of every server of the group to rail r: leaf ``(g // (T K_leaf)) T + g % T`` (the
  authors' simulator, ``generate_gpu_leaf_table``). [DECISION] A rail group must lie inside
  one Pod (``leaves_per_pod`` a multiple of T), so Pods, servers and the numbering are the
  same in both layouts and only the GPU-to-leaf map differs. [DECISION] Placement
  (``heuristics.lumos.placement``) is the same in both layouts: it packs blocks of K_leaf / T
  consecutive servers (a leaf of the server layout), as the authors' simulator changes only
  the GPU-to-leaf table; a compact block run stays inside a rail group where it fits one.

A ``Job`` has the parallelism degrees TP, PP, DP, EP and ``gpus = TP * PP * DP`` (the
corrected eq. 37). A ``Placement`` is the sorted GPU ids a
job holds; it is independent of how it was computed (placement methods live elsewhere).

Domains of a placement: a TP group is ``tp`` of the job's GPUs inside one server (each
server's GPUs of the job, in id order, cut into runs of ``tp``); an EP domain is ``ep``
consecutive GPUs of the job in id order (as in [REPO] ``generate_flow_demand``), so every
EP domain is whole inside a Pod iff every Pod holds a multiple of ``ep`` of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from instances.errors import (InstanceError, choice, known_fields, number, obj, per_instance, seq,
                             text, tracing)
from instances.lumos.fabric import Fabric
from instances.limits import guard


LAYOUTS = ("server", "rail")


@dataclass(frozen=True)
class Cluster:
    """GPU geometry of a fabric: T GPUs per server, K_leaf / T servers per leaf (``server``
    layout) or per server block of placement; the leaves by ``layout`` (module docstring)."""

    fabric: Fabric
    gpus_per_server: int = 8
    layout: str = "server"

    def __post_init__(self):
        T = self.gpus_per_server
        if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
            raise InstanceError("gpus_per_server", f"must be a positive integer, got {T!r}")
        if self.fabric.k_leaf % T:
            raise InstanceError("gpus_per_server", f"must divide k_leaf = {self.fabric.k_leaf} "
                                f"(a leaf holds whole servers), got {T}")
        if self.layout not in LAYOUTS:
            raise InstanceError("layout", f"must be one of {', '.join(LAYOUTS)}, got "
                                f"{self.layout!r}")
        if self.layout == "rail" and self.fabric.leaves_per_pod % T:
            raise InstanceError("layout", f"rail needs a multiple of gpus_per_server = {T} "
                                f"leaves per Pod (a rail group of {T} leaves inside a Pod), "
                                f"got {self.fabric.leaves_per_pod}")

    @property
    def servers_per_leaf(self) -> int:
        """K_leaf / T: the servers of a leaf (``server`` layout), and in both layouts the
        servers of one block of placement (``heuristics.lumos.placement``)."""
        return self.fabric.k_leaf // self.gpus_per_server

    @property
    def gpus_per_pod(self) -> int:
        return self.fabric.k_leaf * self.fabric.leaves_per_pod

    @property
    def n_gpus(self) -> int:
        return self.fabric.gpus

    @property
    def n_servers(self) -> int:
        return self.n_gpus // self.gpus_per_server

    def server_of(self, g):
        return np.asarray(g) // self.gpus_per_server

    def leaf_of(self, g):
        g = np.asarray(g)
        if self.layout == "rail":
            T = self.gpus_per_server
            return g // (T * self.fabric.k_leaf) * T + g % T
        return g // self.fabric.k_leaf

    def pod_of(self, g):
        return np.asarray(g) // self.gpus_per_pod

    def to_dict(self) -> dict:
        d = {"fabric": self.fabric.to_dict(), "gpus_per_server": self.gpus_per_server}
        if self.layout != "server":
            d["layout"] = self.layout
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Cluster":
        obj("cluster", d)
        known_fields("cluster", d, ("fabric", "gpus_per_server", "layout"))
        if "fabric" not in d:
            raise InstanceError("cluster.fabric", "missing")
        T = number("cluster.gpus_per_server", d.get("gpus_per_server", 8), integer=True, lo=1)
        layout = choice("cluster.layout", d.get("layout", "server"), LAYOUTS)
        try:
            return cls(Fabric.from_dict(d["fabric"], "cluster.fabric"), T, layout)
        except InstanceError as exc:
            if exc.field == "layout":
                raise InstanceError("cluster.layout", exc.msg) from None
            raise


JOB_KEYS = ("gpus", "tp", "pp", "dp", "ep")


@dataclass(frozen=True)
class Job:
    """A training job: ``gpus = tp * pp * dp`` GPUs, EP domains of ``ep`` GPUs ([002] 2.1)."""

    gpus: int
    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    model: str = ""

    def __post_init__(self):
        for key in JOB_KEYS:
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InstanceError(f"job.{key}", f"must be a positive integer, got {v!r}")
        want = self.tp * self.pp * self.dp
        if self.gpus != want:
            raise InstanceError("job.gpus", f"must equal tp * pp * dp = {want} (spec 2.8, "
                                f"corrected eq. 37), got {self.gpus}")
        if self.gpus % self.ep:
            raise InstanceError("job.ep", f"must divide gpus = {self.gpus} (whole EP domains), "
                                f"got {self.ep}")

    def to_dict(self) -> dict:
        d = {k: int(getattr(self, k)) for k in JOB_KEYS}
        if self.model:
            d["model"] = self.model
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Job":
        obj("job", d)
        known_fields("job", d, JOB_KEYS + ("model",))
        if "gpus" not in d:
            raise InstanceError("job.gpus", "missing")
        vals = {k: number(f"job.{k}", d[k], integer=True, lo=1) for k in JOB_KEYS if k in d}
        return cls(**vals, model=text("job.model", d.get("model", "")))


@dataclass
class Placement:
    """The GPUs (sorted ids) a job holds. Valid: ids exist and are distinct, their count is
    the job's, and every server holds a multiple of ``tp`` of them (TP inside a server)."""

    cluster: Cluster
    job: Job
    gpus: np.ndarray
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        try:
            g = np.asarray(self.gpus)
            ok = g.ndim == 1 and (g.size == 0 or np.issubdtype(g.dtype, np.integer))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise InstanceError("gpus", "must be a list of integer GPU ids")
        g = np.sort(g.astype(np.int64))
        n = self.cluster.n_gpus
        if g.size and (g[0] < 0 or g[-1] >= n):
            bad = g[0] if g[0] < 0 else g[-1]
            raise InstanceError("gpus", f"GPU {bad} does not exist (ids 0..{n - 1})")
        if np.any(g[1:] == g[:-1]):
            raise InstanceError("gpus", f"GPU {g[1:][g[1:] == g[:-1]][0]} listed twice")
        if g.size != self.job.gpus:
            raise InstanceError("gpus", f"{g.size} GPUs placed, the job needs {self.job.gpus}")
        srv, cnt = np.unique(self.cluster.server_of(g), return_counts=True)
        bad = np.flatnonzero(cnt % self.job.tp)
        if len(bad):
            raise InstanceError("gpus", f"server {srv[bad[0]]} holds {cnt[bad[0]]} of the job's "
                                f"GPUs, not a multiple of tp = {self.job.tp} (TP inside a server)")
        self.gpus = g

    # -- where the job sits ------------------------------------------------------------
    def pods(self) -> np.ndarray:
        """Pods used, ascending."""
        return np.unique(self.cluster.pod_of(self.gpus))

    def leaves(self) -> np.ndarray:
        """Leaves used, ascending."""
        return np.unique(self.cluster.leaf_of(self.gpus))

    def servers(self) -> np.ndarray:
        return np.unique(self.cluster.server_of(self.gpus))

    def gpus_per_pod(self) -> np.ndarray:
        """The job's GPUs in each Pod (length P)."""
        return np.bincount(self.cluster.pod_of(self.gpus), minlength=self.cluster.fabric.pods)

    def tp_groups(self) -> np.ndarray:
        """(gpus / tp, tp) GPU ids, one row per TP group, ascending. Each row lies inside
        one server (validated), so consecutive runs of ``tp`` ids are the groups."""
        return self.gpus.reshape(-1, self.job.tp)

    def ep_domains(self) -> np.ndarray:
        """(gpus / ep, ep) GPU ids: ``ep`` consecutive GPUs of the job per domain."""
        return self.gpus.reshape(-1, self.job.ep)

    def cross_pod_ep_domains(self) -> int:
        """EP domains not whole inside one Pod (the fragmentation exception of [002] 4.2.1)."""
        pod = self.cluster.pod_of(self.ep_domains())
        return int(np.count_nonzero(pod.min(axis=1) != pod.max(axis=1)))

    def check_free(self, busy) -> None:
        """InstanceError unless none of the job's GPUs is in the boolean mask ``busy``."""
        busy = np.asarray(busy, dtype=bool)
        if busy.shape != (self.cluster.n_gpus,):
            raise InstanceError("busy", f"must have one entry per GPU ({self.cluster.n_gpus})")
        taken = self.gpus[busy[self.gpus]]
        if len(taken):
            raise InstanceError("gpus", f"GPU {taken[0]} is busy")

    # -- serialisation -----------------------------------------------------------------
    def to_dict(self) -> dict:
        d = {"job": self.job.to_dict(), "gpus": self.gpus.tolist()}
        if self.meta:
            d["meta"] = self.meta
        return d

    @classmethod
    def from_dict(cls, d: dict, cluster: Cluster) -> "Placement":
        obj("placement", d)
        known_fields("placement", d, ("job", "gpus", "meta"))
        for key in ("job", "gpus"):
            if key not in d:
                raise InstanceError(key, "missing")
        ids = seq("gpus", d["gpus"])
        g = np.array([number(f"gpus[{k}]", v, integer=True) for k, v in enumerate(ids)],
                     dtype=np.int64)
        return cls(cluster, Job.from_dict(d["job"]), g, dict(d.get("meta", {})))


# ----------------------------------------------------------------------------------------
# the lumos-placement instance: a cluster state and one arriving job
# ----------------------------------------------------------------------------------------
BYTES_PER_GPU = 64      # the free mask, per-GPU id arrays of the methods and the checker


def guard_placement(cluster: Cluster) -> None:
    """Refuse a cluster too big to hold per-GPU arrays, before allocating any."""
    guard(_gpu_culprit(cluster.fabric), BYTES_PER_GPU * float(cluster.n_gpus),
          f"{cluster.n_gpus} GPUs ({cluster.fabric.pods} Pods x {cluster.gpus_per_pod})")


def _gpu_culprit(fab: Fabric) -> str:
    sizes = {"pods": fab.pods, "k_leaf": fab.k_leaf, "k_spine": fab.k_spine}
    return "cluster.fabric." + max(sizes, key=sizes.get)


def _id_list(field_name: str, value, n: int, what: str) -> np.ndarray:
    """A list of distinct ids in [0, n) as int64 (strict: names the first bad entry)."""
    ids = seq(field_name, value, max_len=per_instance(n))
    if all(type(v) is int for v in ids) and not tracing():
        arr = np.array(ids, dtype=np.int64) if ids else np.zeros(0, np.int64)
    else:
        arr = np.array([number(f"{field_name}[{k}]", v, integer=True) for k, v in enumerate(ids)],
                       dtype=np.int64)
    bad = np.flatnonzero((arr < 0) | (arr >= n))
    if len(bad):
        k = int(bad[0])
        raise InstanceError(f"{field_name}[{k}]", f"{what} {arr[k]} does not exist (0..{n - 1})")
    s = np.sort(arr)
    dup = s[1:][s[1:] == s[:-1]]
    if len(dup):
        k = int(np.flatnonzero(arr == dup[0])[1])
        raise InstanceError(f"{field_name}[{k}]", f"{what} {dup[0]} listed twice")
    return arr


@dataclass
class PlacementInstance:
    """Place ``job`` on the free GPUs of ``cluster`` ([002] 4.2.1, spec 2.8).

    ``busy`` is the boolean mask of GPUs already held by running jobs (files give it as
    ``busy_servers`` and ``busy_gpus``, either or both). The job's TP degree must fit a
    server (``tp <= gpus_per_server``): TP stays inside a server."""

    cluster: Cluster
    busy: np.ndarray               # (n_gpus,) bool
    job: Job
    name: str = "lumos-placement"
    meta: dict = field(default_factory=dict)

    problem = "lumos-placement"
    FIELDS = ("cluster", "busy_servers", "busy_gpus", "job")

    def __post_init__(self):
        guard_placement(self.cluster)
        busy = np.asarray(self.busy, dtype=bool)
        if busy.shape != (self.cluster.n_gpus,):
            raise InstanceError("busy_gpus", f"mask must have one entry per GPU "
                                f"({self.cluster.n_gpus}), got shape {busy.shape}")
        self.busy = busy
        T = self.cluster.gpus_per_server
        if self.job.tp > T:
            raise InstanceError("job.tp", f"must be <= gpus_per_server = {T} (TP inside a "
                                f"server), got {self.job.tp}")

    @property
    def free(self) -> np.ndarray:
        return ~self.busy

    @classmethod
    def from_dict(cls, d: dict) -> "PlacementInstance":
        for key in ("cluster", "job"):
            if key not in d:
                raise InstanceError(key, "missing")
        try:
            cl = Cluster.from_dict(d["cluster"])
        except InstanceError as exc:      # a check of the fabric's values names it unqualified
            f = exc.field if exc.field.startswith("cluster") else f"cluster.{exc.field}"
            raise InstanceError(f, exc.msg) from None
        guard_placement(cl)
        job = Job.from_dict(d["job"])
        busy = np.zeros(cl.n_gpus, dtype=bool)
        srv = _id_list("busy_servers", d.get("busy_servers", []), cl.n_servers, "server")
        g = _id_list("busy_gpus", d.get("busy_gpus", []), cl.n_gpus, "GPU")
        busy.reshape(cl.n_servers, cl.gpus_per_server)[srv] = True
        busy[g] = True
        name = text("name", d.get("name", "lumos-placement"))
        return cls(cl, busy, job, name, dict(d.get("meta", {})))

    def to_dict(self) -> dict:
        per_server = self.busy.reshape(self.cluster.n_servers, self.cluster.gpus_per_server)
        whole = per_server.all(axis=1)
        part = np.flatnonzero((per_server & ~whole[:, None]).ravel())
        d = {"problem": self.problem, "format": 1, "name": self.name,
             "cluster": self.cluster.to_dict(), "busy_servers": np.flatnonzero(whole).tolist(),
             "busy_gpus": part.tolist(), "job": self.job.to_dict()}
        if self.meta:
            d["meta"] = self.meta
        return d
