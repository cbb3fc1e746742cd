"""DELTA workloads: the Table I jobs (:class:`Job`), their per-stage compute times and
volumes (FLOP and parameter counts of the architectures in instances.delta.archs), and
profiled jobs (measured per-stage numbers instead of an architecture).

Ye, Liu, Sun, Hu, "DELTA: A DAG-aware Efficient OCS Logical Topology Optimization
Framework for AIDCs", 2026, Section V-A1, Table I; delta spec section 1.2.5, decisions 2-3
and 6-8 of section 6.

Units: time ms, volume MB (1e6 bytes), bandwidth MB/ms (400 Gb/s = 50 MB/ms).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from instances.delta.archs import ARCHS, Arch, arch_from_dict
from instances.errors import InstanceError, boolean, choice, known_fields, number, obj, seq, text


# Ranges of the job's fields (inclusive; real ones: (lo, hi, lo excluded)). The upper ends
# are far beyond any real job; the DAG size and the compute horizon are guarded separately
# (instances.delta.input) from the values that pass these.
JOB_INT_RANGES = {"tp": (1, 2**16), "pp": (1, 2**16), "gpus": (1, 2**24),
                  "gpus_per_pod_per_replica": (1, 2**20), "micro_batches": (1, 2**20),
                  "ep": (1, 2**16), "etp": (1, 2**16), "mbs": (1, 2**16), "seq_len": (1, 2**24),
                  "grad_bytes": (1, 16), "act_bytes": (1, 16)}
MAX_GBPS = 8e4      # 80 Tb/s per NIC (10,000 MB/ms): 50 times today's fastest
MIN_GBPS = 1e-3     # 1 Mb/s: below it every transfer outlasts the horizon anyway
JOB_REAL_RANGES = {"bandwidth_gbps": (MIN_GBPS, MAX_GBPS, False),
                   "intra_bandwidth_gbps": (0.0, 1e6, False),        # 0 = bandwidth_gbps
                   "gpu_tflops": (1e-6, 1e6, False), "opt_ms": (0.0, 1e6, False)}


@dataclass
class Job:
    """One training job (Table I row) and the knobs of the DAG generator (spec 1.2.5)."""

    model: str
    tp: int
    pp: int
    gpus: int
    gpus_per_pod_per_replica: int
    micro_batches: int
    ep: int = 1
    etp: int = 1
    mbs: int = 1
    seq_len: int = 4096
    bandwidth_gbps: float = 400.0       # per GPU NIC = per OCS port
    intra_bandwidth_gbps: float = 0.0   # 0 = same as bandwidth_gbps
    gpu_tflops: float = 400.0           # effective throughput (about 40% MFU of an H100)
    grad_bytes: int = 2
    act_bytes: int = 2
    p2p_mode: str = "megatron_blocking"  # or "async"
    dp_ring: str = "bidirectional"       # or "unidirectional"
    opt_ms: float = 0.0
    replicas: str = "canonical"          # "canonical" (replica 0 + orbits, spec 3.2) or "full"
    arch: dict = field(default_factory=dict)  # overrides / a custom architecture
    profile: dict = field(default_factory=dict)  # measured per-stage numbers (PROFILE_KEYS), no arch

    def architecture(self) -> Arch:
        cached = self.__dict__.get("_arch")
        if cached is not None:
            return cached
        if self.model in ARCHS:
            base = asdict(ARCHS[self.model])
        elif self.arch:
            base = {"name": self.model}
        else:
            raise InstanceError("job.model", f"unknown model {self.model!r} (known: "
                                f"{', '.join(ARCHS)}; or give job.arch)")
        base.update(obj("job.arch", self.arch))
        self.__dict__["_arch"] = arch = arch_from_dict(base)
        return arch

    @classmethod
    def from_dict(cls, d: dict, where: str = "job") -> "Job":
        """A Job from a file's ``job`` object: known keys only, every field of the right JSON
        type and in range (named ``job.<field>``), then the consistency checks of validate()."""
        obj(where, d)
        known_fields(where, d, {f.name for f in fields(cls)})
        for key in ("model", "tp", "pp", "gpus", "gpus_per_pod_per_replica", "micro_batches"):
            if key not in d:
                raise InstanceError(f"{where}.{key}", "missing")
        kw = {}
        for key, v in d.items():
            f = f"{where}.{key}"
            if key in JOB_INT_RANGES:
                kw[key] = number(f, v, integer=True, lo=JOB_INT_RANGES[key][0], hi=JOB_INT_RANGES[key][1])
            elif key in JOB_REAL_RANGES:
                lo, hi, strict = JOB_REAL_RANGES[key]
                kw[key] = number(f, v, lo=lo, hi=hi, strict_lo=strict)
            elif key == "arch":
                kw[key] = dict(obj(f, v))
            elif key == "profile":
                kw[key] = profile_from_dict(v, f)
            else:
                kw[key] = text(f, v)
        job = cls(**kw)
        job.validate()
        return job

    @property
    def moe(self) -> bool:
        return self.profile.get("moe", False) if self.profile else self.architecture().moe

    @property
    def n_s(self) -> int:
        """GPUs per pipeline stage per replica: TP for dense, EP*ETP for MoE (spec decision 3)."""
        return self.ep * self.etp if self.moe else self.tp

    @property
    def replicas_count(self) -> int:
        return self.gpus // (self.pp * self.n_s)

    @property
    def stages_per_pod(self) -> int:
        return self.gpus_per_pod_per_replica // self.n_s

    @property
    def bandwidth(self) -> float:
        """B in MB/ms."""
        return self.bandwidth_gbps / 8.0

    @property
    def intra_bandwidth(self) -> float:
        return (self.intra_bandwidth_gbps or self.bandwidth_gbps) / 8.0

    def validate(self) -> None:
        """Ranges and consistency (divisibility, placement); types are checked by from_dict."""
        for name, (lo, hi) in JOB_INT_RANGES.items():
            number(f"job.{name}", getattr(self, name), integer=True, lo=lo, hi=hi)
        for name, (lo, hi, strict) in JOB_REAL_RANGES.items():
            number(f"job.{name}", getattr(self, name), lo=lo, hi=hi, strict_lo=strict)
        for name in ("model", "p2p_mode", "dp_ring", "replicas"):
            text(f"job.{name}", getattr(self, name))
        if 0 < self.intra_bandwidth_gbps < MIN_GBPS:
            raise InstanceError("job.intra_bandwidth_gbps", f"must be 0 (= bandwidth_gbps) or >= "
                                f"{MIN_GBPS:g}, got {self.intra_bandwidth_gbps!r}")
        choice("job.p2p_mode", self.p2p_mode, ("megatron_blocking", "async"))
        choice("job.dp_ring", self.dp_ring, ("bidirectional", "unidirectional"))
        choice("job.replicas", self.replicas, ("canonical", "full"))
        n_s = self.n_s
        if self.moe and n_s % self.tp:
            raise InstanceError("job.tp", f"EP*ETP={n_s} must be a multiple of tp={self.tp}")
        if self.gpus % (self.pp * n_s):
            raise InstanceError("job.gpus", f"{self.gpus} GPUs are not a multiple of pp*n_s="
                                f"{self.pp * n_s}")
        if self.gpus_per_pod_per_replica % n_s:
            raise InstanceError("job.gpus_per_pod_per_replica",
                                f"must be a multiple of the stage size n_s={n_s}")
        if self.dp_ring == "bidirectional" and n_s % 2 and self.replicas_count > 2:
            raise InstanceError("job.dp_ring", f"bidirectional ring needs an even stage size, n_s={n_s}")
        if self.profile:
            if self.pp > 1 and "pp_mb" not in self.profile:
                raise InstanceError("job.profile.pp_mb", f"missing (needed with pp={self.pp})")
            for key in ("fwd_ms", "bwd_ms", "dp_mb"):
                if len(self.profile[key]) != self.pp:
                    raise InstanceError(f"job.profile.{key}", f"needs one value per stage (pp={self.pp}), "
                                        f"got {len(self.profile[key])}")
        else:
            self.architecture().layers_per_stage(self.pp)


TABLE_I: dict[str, dict] = {
    "megatron-177b": dict(model="megatron-177b", tp=8, pp=6, gpus=384, gpus_per_pod_per_replica=16,
                          micro_batches=48),
    "mixtral-8x22b": dict(model="mixtral-8x22b", tp=2, pp=8, etp=1, ep=8, gpus=128,
                          gpus_per_pod_per_replica=16, micro_batches=64),
    "megatron-462b": dict(model="megatron-462b", tp=8, pp=16, gpus=1024, gpus_per_pod_per_replica=32,
                          micro_batches=128),
    "deepseek-671b": dict(model="deepseek-671b", tp=2, pp=16, etp=1, ep=8, gpus=256,
                          gpus_per_pod_per_replica=32, micro_batches=128),
    # Fig. 1/3 toy (spec 5.6 T1): TP=2, PP=4, DP=2, 16 GPUs in 4 Pods (2 stages per Pod), N=4
    "gpt-7b": dict(model="gpt-7b", tp=2, pp=4, gpus=16, gpus_per_pod_per_replica=4, micro_batches=4),
}


# ------------------------------------------------------------------------------------------
# Per-stage quantities (spec 1.2.5 "Compute durations" and "Volumes and flows")
# ------------------------------------------------------------------------------------------
def stage_layer_ranges(job: Job) -> list[range]:
    per = job.architecture().layers_per_stage(job.pp)
    out, start = [], 0
    for k in per:
        out.append(range(start, start + k))
        start += k
    return out


def forward_ms(job: Job) -> list[float]:
    """t_F(s): forward time of one micro-batch on stage s (t_B = 2 t_F, no recomputation);
    a profiled job's measured ``fwd_ms``.

    FLOPs = sum over the stage's layers of 2*active_params*tokens + 4*tokens*seq*attn_width,
    plus 2*tokens*h*vocab for the logits on the last stage, with tokens = (n_s/TP)*mbs*seq;
    divided by n_s * throughput.
    """
    if job.profile:
        return list(job.profile["fwd_ms"])
    arch = job.architecture()
    tokens = (job.n_s // job.tp) * job.mbs * job.seq_len
    flop_per_ms = job.gpu_tflops * 1e9       # TFLOP/s -> FLOP/ms
    out = []
    for s, layers in enumerate(stage_layer_ranges(job)):
        flops = sum(2 * arch.layer_params(l)[2] * tokens + 4 * tokens * job.seq_len * arch.attn_width()
                    for l in layers)
        if s == job.pp - 1:
            flops += 2 * tokens * arch.hidden * arch.vocab
        out.append(flops / (job.n_s * flop_per_ms))
    return out


def grad_mb_per_gpu(job: Job) -> list[float]:
    """Gradient MB resident on one GPU of stage s (replicated params / TP, experts / EP)."""
    arch = job.architecture()
    out = []
    for s, layers in enumerate(stage_layer_ranges(job)):
        rep = sum(arch.layer_params(l)[0] for l in layers)
        exp = sum(arch.layer_params(l)[1] for l in layers)
        if s == 0:
            rep += arch.vocab * arch.hidden
        if s == job.pp - 1:
            rep += arch.vocab * arch.hidden
        params = rep / job.tp + exp / (job.ep * job.etp)   # experts split over the EP*ETP GPUs
        out.append(params * job.grad_bytes / 1e6)
    return out


def backward_ms(job: Job) -> list[float]:
    """t_B(s) = 2 t_F(s) (spec 1.2.5, no recomputation); a profiled job's measured ``bwd_ms``."""
    if job.profile:
        return list(job.profile["bwd_ms"])
    return [2 * t for t in forward_ms(job)]


def stage_times(job: Job) -> tuple[list[float], list[float]]:
    """(:func:`forward_ms`, :func:`backward_ms`), the forward times computed once."""
    if job.profile:
        return forward_ms(job), backward_ms(job)
    tF = forward_ms(job)
    return tF, [2 * t for t in tF]


def dp_volume_mb(job: Job) -> list[float]:
    """v_DP(s): inter-pod MB each GPU of stage s sends in the DP synchronization; ring
    all-reduce 2(R-1)/R x gradient MB per GPU (spec decision 6), or a profiled job's ``dp_mb``."""
    if job.profile:
        return list(job.profile["dp_mb"])
    R = job.replicas_count
    return [2 * (R - 1) / R * g if R > 1 else 0.0 for g in grad_mb_per_gpu(job)]


def pp_volume_mb(job: Job) -> float:
    """V_PP = (n_s/TP) * mbs * seq * h * act_bytes (one activation tensor per TP group);
    a profiled job's ``pp_mb`` (the task's volume over its n_s flows)."""
    if job.profile:
        return job.profile.get("pp_mb", 0.0)
    return (job.n_s // job.tp) * job.mbs * job.seq_len * job.architecture().hidden * job.act_bytes / 1e6


# ------------------------------------------------------------------------------------------
# Profiled jobs: measured per-stage numbers instead of an architecture (e.g. a SimAI file,
# instances.delta.simai_job). Times in ms per micro-batch, volumes in MB.
# ------------------------------------------------------------------------------------------
PROFILE_LISTS = ("fwd_ms", "bwd_ms", "dp_mb")
PROFILE_KEYS = PROFILE_LISTS + ("pp_mb", "moe", "source", "settings")
MAX_PROFILE_MB = 1e9        # 1 PB in one task: far beyond any job, keeps every sum finite


def profile_from_dict(d, where: str = "job.profile") -> dict:
    """A checked ``job.profile``: ``fwd_ms``, ``bwd_ms`` (per stage, ms per micro-batch),
    ``dp_mb`` (per stage, inter-pod MB per GPU of the DP synchronization), ``pp_mb`` (MB of
    one inter-stage activation transfer over the stage's n_s GPUs, > 0; needed when pp > 1),
    optional ``moe`` (n_s = EP*ETP instead of TP), ``source`` and ``settings`` (provenance)."""
    obj(where, d)
    known_fields(where, d, PROFILE_KEYS)
    out = {}
    for key in PROFILE_LISTS:
        if key not in d:
            raise InstanceError(f"{where}.{key}", "missing")
        vals = seq(f"{where}.{key}", d[key], max_len=2**16)
        hi = MAX_PROFILE_MB if key == "dp_mb" else 1e6
        out[key] = [number(f"{where}.{key}[{i}]", v, lo=0.0, hi=hi) for i, v in enumerate(vals)]
    if "pp_mb" in d:         # needed when pp > 1 (Job.validate)
        out["pp_mb"] = number(f"{where}.pp_mb", d["pp_mb"], lo=0.0, hi=MAX_PROFILE_MB, strict_lo=True)
    if "moe" in d:
        out["moe"] = boolean(f"{where}.moe", d["moe"])
    if "source" in d:
        out["source"] = text(f"{where}.source", d["source"], max_len=1000)
    if "settings" in d:
        settings = obj(f"{where}.settings", d["settings"])
        for k, v in settings.items():
            if not isinstance(v, (str, int, float, bool)) or isinstance(v, float) and not v == v:
                raise InstanceError(f"{where}.settings.{k}", "must be a string, number or boolean")
        out["settings"] = dict(settings)
    return out
