"""The ``lumos-sim`` instance: one architecture of the LumosCore papers running a job list
through the flow-level cluster simulator ([002] 6.3, [001] 6.3; spec 2.12, 4.1-4.2; issue 16).

File fields (besides ``problem``, ``format``, ``name``, ``meta``):

* ``arch``: one of ``heuristics.lumos.sim.architectures.arch_names()`` (``best``,
  ``clos-<chip>-<t>tier``, ``lumos-<chip>-tau<t>``, ``uniform-<chip>-tau<t>``);
* ``gpus``: cluster size, a multiple of the architecture's Pod (at least 2 Pods; for a
  Clos, of (k/2)^2 within its capacity);
* ``ecmp`` (optional, Clos only): ``polarized`` (default) or ``independent``;
* ``layout`` (optional, issue 31): the intra-Pod wiring of GPUs to leaves / ToRs,
  ``server`` (default) or ``rail`` (rail-optimized, [002] Fig. 24;
  ``instances.lumos.placement`` module docstring);
* ``rail_rule`` (optional, issue 31; OCS architectures in the rail layout only, refused
  elsewhere): the leaf-level requirement's rule, ``lane-pairs`` (default, the authors' rule:
  one unit per cross-Pod GPU pair) or ``leaf-pairs`` (Principle 3: one unit per distinct
  cross-Pod leaf pair; ``heuristics.lumos.requirement`` module docstring);
* ``failures`` (optional, issue 31): ``{"rate": r, "seed": s}``, GPU failures at
  steady-state down share 0 <= r < 1 ([002] Fig. 8(d); ``heuristics.lumos.sim.failures``);
* exactly one of
  - ``workload``: ``{"kind": "helios"|"trace", "jobs": n, "rho": r, "seed": s}``, the
    generators ``helios_jobs`` / ``trace_jobs`` of ``heuristics.lumos.sim.workload``
    (Poisson arrivals at workload level rho, deterministic in the seed);
  - ``jobs``: the explicit list ``[[arrival_s, duration_s, gpus, tp, pp, dp, ep, z_ar,
    z_a2a], ...]`` (duration_s = T, the running time without contention; z_ar / z_a2a the
    AllReduce / All2All communication ratios of spec 4.2). Job ids are list positions;
    the list need not be sorted (FIFO order is (arrival_s, id)).

[DECISION] Every job must be placeable on the empty cluster (the greedy of
``heuristics.lumos.placement`` is tried once per distinct job shape): then a FIFO
simulation always ends, since the queue's head fits once everything before it is done.
Size guards (before anything is built): per-GPU arrays and, on OCS fabrics, the dense
leaf-level requirement and reconfiguration instances (``instances.lumos.size``); at most
:data:`MAX_JOBS` jobs at the default memory limit (scaled with ``--max-memory``): the
event loop re-rates every running flow at each of its ~3 events per job.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from instances.errors import InstanceError, choice, known_fields, number, obj, seq, text, tracing
from instances.limits import DEFAULT_GIB, GIB, fmt_bytes, guard, max_bytes
from instances.lumos.placement import Cluster, Job

ROW = ("arrival_s", "duration_s", "gpus", "tp", "pp", "dp", "ep", "z_ar", "z_a2a")
INT_COLS = (2, 3, 4, 5, 6)
WORKLOAD_KINDS = ("helios", "trace")
ECMP = ("polarized", "independent")
LAYOUTS = ("server", "rail")
GPUS_PER_SERVER = 8
MAX_JOBS = 100_000          # at the default memory limit (work cap, module docstring)
BYTES_PER_GPU = 4096        # flows, route matrices and rate arrays of a full cluster
BYTES_PER_JOB = 4096        # a SimJob, its result row and its share of the data frames
MAX_TIME_S = 1e12           # arrivals and durations (s): float time keeps ~1e-4 s resolution


def arch_cluster(arch: str, gpus: int, ecmp: str | None = None, layout: str = "server"
                 ) -> Cluster:
    """The GPU geometry of ``arch`` at ``gpus`` GPUs in ``layout``, checked as ``make_arch``
    would build it (InstanceError naming ``arch``, ``gpus`` or ``layout``), guarded before
    anything large is built."""
    from heuristics.lumos.sim.architectures import ARCH_RE, arch_names, lumos_cluster
    from heuristics.lumos.sim.clos import ClosNetwork, clos_for

    m = ARCH_RE.match(arch)
    if not m:
        raise InstanceError("arch", f"unknown architecture {arch!r}; known: {', '.join(arch_names())}")
    if ecmp is not None and not m.group(2):
        raise InstanceError("ecmp", f"applies to Clos architectures only, not {arch}")
    guard("gpus", BYTES_PER_GPU * float(gpus), f"a {gpus}-GPU simulation")
    if m.group(2):
        chip, tiers = float(m.group(2)), int(m.group(3))
        try:
            gbps, k = clos_for(chip, tiers, gpus)
            return ClosNetwork(gpus, k, tiers, gbps, ecmp or "polarized",
                               layout=layout).cluster
        except InstanceError as exc:
            raise InstanceError(exc.field, f"{arch}: {exc.msg}") from None
        except ValueError as exc:
            raise InstanceError("gpus", f"{arch}: {exc}") from None
    chip, tau = (51.2, 2) if arch == "best" else (float(m.group(5)), int(m.group(6)))
    cl = lumos_cluster(chip, tau, gpus, layout)
    if m.group(4):
        from instances.lumos.size import logical_bytes, reconfig_bytes

        wiring = "cross" if m.group(4) == "lumos" else "uniform"
        fab = cl.fabric
        guard("gpus", logical_bytes(fab) + reconfig_bytes(fab, wiring),
              f"{fab.n_leaves} leaves x {fab.pods} Pods of OCS state")
    return cl


def _job_cap() -> int:
    return int(MAX_JOBS * max_bytes() / (DEFAULT_GIB * GIB))


def guard_jobs(field_name: str, n: int) -> None:
    """Refuse more jobs than the simulator handles in bounded time and memory."""
    cap = _job_cap()
    if n > cap:
        raise InstanceError(field_name, f"{n} jobs exceed the {cap} the simulator handles in "
                            f"bounded time at the {fmt_bytes(max_bytes())} limit (raise it "
                            f"with --max-memory GIB)")
    guard(field_name, BYTES_PER_JOB * float(n), f"{n} jobs")


def parse_workload(d) -> dict:
    """The ``workload`` object, strictly checked."""
    obj("workload", d)
    known_fields("workload", d, ("kind", "jobs", "rho", "seed"))
    for key in ("kind", "jobs", "rho"):
        if key not in d:
            raise InstanceError(f"workload.{key}", "missing")
    kind = choice("workload.kind", d["kind"], WORKLOAD_KINDS)
    n = number("workload.jobs", d["jobs"], integer=True, lo=1)
    guard_jobs("workload.jobs", n)
    rho = number("workload.rho", d["rho"], lo=0, strict_lo=True)
    seed = number("workload.seed", d.get("seed", 0), integer=True, lo=0)
    return {"kind": kind, "jobs": n, "rho": rho, "seed": seed}


def parse_failures(d) -> dict:
    """The ``failures`` object, strictly checked."""
    obj("failures", d)
    known_fields("failures", d, ("rate", "seed"))
    if "rate" not in d:
        raise InstanceError("failures.rate", "missing")
    rate = number("failures.rate", d["rate"], lo=0)
    if rate >= 1:
        raise InstanceError("failures.rate", f"must be < 1 (a share of the GPUs down), got {rate!r}")
    seed = number("failures.seed", d.get("seed", 0), integer=True, lo=0)
    return {"rate": rate, "seed": seed}


def parse_rail_rule(v, arch: str, layout: str) -> str:
    """The optional ``rail_rule`` (module docstring), strictly checked: refused where it
    would change nothing (the server layout, or an architecture without OCS)."""
    from heuristics.lumos.requirement import RAIL_RULES

    rule = choice("rail_rule", v, RAIL_RULES)
    if layout != "rail":
        raise InstanceError("rail_rule", 'applies to the rail layout only ("layout": "rail"); '
                            "the server layout's requirement rule is spec 2.10's")
    if not arch.startswith(("lumos-", "uniform-")):
        raise InstanceError("rail_rule", f"applies to OCS architectures only (lumos-*, "
                            f"uniform-*: the leaf-level requirement), not {arch}")
    return rule


def parse_jobs(rows) -> np.ndarray:
    """The explicit ``jobs`` list as an (n, 9) float array, strictly checked (the first bad
    entry is named ``jobs[k]`` or ``jobs[k][i]``)."""
    rows = seq("jobs", rows)
    if not rows:
        raise InstanceError("jobs", "must list at least one job")
    guard_jobs("jobs", len(rows))
    for k, r in enumerate(rows):
        if not isinstance(r, list) or len(r) != len(ROW):
            raise InstanceError(f"jobs[{k}]", f"must be a list of {len(ROW)} numbers "
                                f"[{', '.join(ROW)}], got {type(r).__name__} {str(r)[:40]}")
    if tracing() or not all(type(v) in (int, float) for r in rows for v in r):
        for k, r in enumerate(rows):
            for i, v in enumerate(r):
                number(f"jobs[{k}][{i}]", v, integer=i in INT_COLS)
    a = np.array(rows, dtype=float)
    ints = a[:, INT_COLS]
    frac = np.argwhere(ints != np.floor(ints))
    if len(frac):
        k, i = map(int, frac[0])
        raise InstanceError(f"jobs[{k}][{INT_COLS[i]}]", f"{ROW[INT_COLS[i]]} must be an "
                            f"integer, got {float(a[k, INT_COLS[i]])!r}")
    checks = ((0, (a[:, 0] < 0) | (a[:, 0] > MAX_TIME_S), f"must be within [0, {MAX_TIME_S:g}]"),
              (1, (a[:, 1] <= 0) | (a[:, 1] > MAX_TIME_S), f"must be within (0, {MAX_TIME_S:g}]"),
              *((i, a[:, i] < 1, "must be >= 1") for i in INT_COLS),
              (7, (a[:, 7] < 0) | (a[:, 7] > 1), "must be within [0, 1]"),
              (8, (a[:, 8] < 0) | (a[:, 8] > 1), "must be within [0, 1]"))
    for i, bad, what in checks:
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InstanceError(f"jobs[{k}][{i}]", f"{ROW[i]} {what}, got {float(a[k, i])!r}")
    over = np.flatnonzero(a[:, 7] + a[:, 8] > 1)
    if len(over):
        k = int(over[0])
        raise InstanceError(f"jobs[{k}][8]", f"z_ar + z_a2a must be <= 1 (shares of the running "
                            f"time), got {float(a[k, 7])!r} + {float(a[k, 8])!r}")
    return a


def _rows_to_jobs(a: np.ndarray, cluster: Cluster) -> list:
    from heuristics.lumos.sim.workload import SimJob

    out = []
    for k, r in enumerate(a):
        g, tp, pp, dp, ep = (int(x) for x in r[list(INT_COLS)])
        if g > cluster.n_gpus:
            raise InstanceError(f"jobs[{k}][2]", f"{g} GPUs exceed the cluster's {cluster.n_gpus}")
        if tp > cluster.gpus_per_server:
            raise InstanceError(f"jobs[{k}][3]", f"tp must be <= {cluster.gpus_per_server} GPUs "
                                f"per server (TP inside a server), got {tp}")
        try:
            job = Job(g, tp, pp, dp, ep)
        except InstanceError as exc:
            col = {"job.gpus": 2, "job.ep": 6}.get(exc.field, 2)
            raise InstanceError(f"jobs[{k}][{col}]", exc.msg) from None
        out.append(SimJob(k, float(r[0]), float(r[1]), job, float(r[7]), float(r[8])))
    return out


def workload_jobs(w: dict, n_gpus: int) -> list:
    """The job list of a ``workload`` spec (``parse_workload``)."""
    from heuristics.lumos.sim.workload import helios_jobs, trace_jobs

    make = helios_jobs if w["kind"] == "helios" else trace_jobs
    try:
        jobs = make(w["jobs"], n_gpus, w["rho"], w["seed"], gpus_per_server=GPUS_PER_SERVER)
    except ValueError as exc:
        raise InstanceError("workload", str(exc)) from None
    if not all(j.arrival_s <= MAX_TIME_S for j in jobs):      # NaN fails too
        raise InstanceError("workload.rho", f"{w['rho']!r} is so small that arrivals pass "
                            f"{MAX_TIME_S:g} s")
    return jobs


def check_placeable(jobs, cluster: Cluster, field_of) -> None:
    """InstanceError naming ``field_of(k)`` when job k fits no empty cluster (module
    docstring); the greedy runs once per distinct shape."""
    from heuristics.lumos.placement import NoPlacement, greedy_placement
    from instances.lumos.placement import PlacementInstance

    free = np.zeros(cluster.n_gpus, dtype=bool)
    seen = set()
    for j in jobs:
        shape = (j.job.gpus, j.job.tp, j.job.pp, j.job.dp, j.job.ep)
        if shape in seen:
            continue
        seen.add(shape)
        try:
            greedy_placement(PlacementInstance(cluster, free, j.job))
        except (NoPlacement, InstanceError) as exc:
            raise InstanceError(field_of(j.id), f"job {j.id} ({j.job.gpus} GPUs, tp {j.job.tp}, "
                                f"ep {j.job.ep}) fits no placement even on the empty cluster: "
                                f"{exc}") from None


@dataclass
class SimInstance:
    """``jobs`` (a list of ``SimJob``, ids 0..n-1) on architecture ``arch`` of ``gpus``
    GPUs (module docstring). ``workload`` is the spec the jobs came from (None for an
    explicit list); ``cluster`` the placement geometry."""

    arch: str
    gpus: int
    jobs: list
    workload: dict | None = None
    ecmp: str | None = None
    name: str = "lumos-sim"
    meta: dict = field(default_factory=dict)
    cluster: Cluster | None = None
    failures: dict | None = None
    layout: str = "server"
    rail_rule: str | None = None

    problem = "lumos-sim"
    FIELDS = ("arch", "gpus", "workload", "jobs", "ecmp", "failures", "layout", "rail_rule")

    def __post_init__(self):
        if self.cluster is None:
            self.cluster = arch_cluster(self.arch, self.gpus, self.ecmp, self.layout)

    def failure_model(self):
        """The ``failures.FailureModel`` of the instance, None without failures."""
        if not self.failures or not self.failures["rate"]:
            return None
        from heuristics.lumos.sim.failures import FailureModel

        return FailureModel(self.failures["rate"], self.failures["seed"])

    @property
    def is_ocs(self) -> bool:
        return self.arch.startswith(("lumos-", "uniform-"))

    @property
    def wiring(self) -> str | None:
        return {"lumos": "cross", "uniform": "uniform"}.get(self.arch.split("-")[0])

    def arrays(self) -> dict:
        """Per job (index = id): arrival_s, duration_s, gpus, z_ar, z_a2a as arrays."""
        js = self.jobs
        return {"arrival_s": np.array([j.arrival_s for j in js], dtype=float),
                "duration_s": np.array([j.duration_s for j in js], dtype=float),
                "gpus": np.array([j.job.gpus for j in js], dtype=np.int64),
                "z_ar": np.array([j.z_ar for j in js], dtype=float),
                "z_a2a": np.array([j.z_a2a for j in js], dtype=float)}

    @classmethod
    def from_dict(cls, d: dict) -> "SimInstance":
        for key in ("arch", "gpus"):
            if key not in d:
                raise InstanceError(key, "missing")
        if ("workload" in d) == ("jobs" in d):
            raise InstanceError("workload", "give exactly one of 'workload' (a generator spec) "
                                "and 'jobs' (an explicit job list)")
        arch = text("arch", d["arch"])
        gpus = number("gpus", d["gpus"], integer=True, lo=1)
        ecmp = None
        if "ecmp" in d:
            ecmp = choice("ecmp", d["ecmp"], ECMP)
        layout = choice("layout", d.get("layout", "server"), LAYOUTS)
        w = parse_workload(d["workload"]) if "workload" in d else None
        rows = parse_jobs(d["jobs"]) if w is None else None
        cl = arch_cluster(arch, gpus, ecmp, layout)
        rule = parse_rail_rule(d["rail_rule"], arch, layout) if "rail_rule" in d else None
        if w is not None:
            jobs, where = workload_jobs(w, gpus), (lambda k: "workload")
        else:
            jobs, where = _rows_to_jobs(rows, cl), (lambda k: f"jobs[{k}]")
        check_placeable(jobs, cl, where)
        name = text("name", d.get("name", "lumos-sim"))
        fails = parse_failures(d["failures"]) if "failures" in d else None
        return cls(arch, gpus, jobs, w, ecmp, name, dict(d.get("meta", {})), cl, fails, layout,
                   rule)

    def job_rows(self) -> list[list]:
        return [[j.arrival_s, j.duration_s, j.job.gpus, j.job.tp, j.job.pp, j.job.dp, j.job.ep,
                 j.z_ar, j.z_a2a] for j in self.jobs]

    def to_dict(self) -> dict:
        d = {"problem": self.problem, "format": 1, "name": self.name, "arch": self.arch,
             "gpus": int(self.gpus)}
        if self.ecmp is not None:
            d["ecmp"] = self.ecmp
        if self.failures is not None:
            d["failures"] = dict(self.failures)
        if self.layout != "server":
            d["layout"] = self.layout
        if self.rail_rule is not None:
            d["rail_rule"] = self.rail_rule
        if self.workload is not None:
            d["workload"] = dict(self.workload)
        else:
            d["jobs"] = self.job_rows()
        if self.meta:
            d["meta"] = self.meta
        return d


@dataclass
class SimSolution:
    """A simulation's outcome: one record per finished job (``job``, ``start_s``,
    ``finish_s``, ``jrt_s``, ``jwt_s``, ``jct_s``, ``cl_ar``, ``cl_a2a``, ...) and one per
    OCS reconfiguration (``t``, ``wall_s``, ``method``, rewiring metrics), as lists of
    plain dicts (``engine.SimResult`` tables as records)."""

    jobs: list
    reconfigs: list = field(default_factory=list)

    def to_dict(self) -> dict:
        from toolkit.outdir import null_nonfinite

        return {"jobs": null_nonfinite(list(self.jobs)),
                "reconfigs": null_nonfinite(list(self.reconfigs))}

    @classmethod
    def from_dict(cls, d: dict) -> "SimSolution":
        obj("solution", d)
        return cls(list(seq("jobs", d.get("jobs", []))), list(seq("reconfigs", d.get("reconfigs", []))))
