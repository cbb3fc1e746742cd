"""A SimAI / AICB workload file as a DELTA job (``solve.py generate delta --from-simai FILE``).

The file (instances.delta.simai) is one rank's program; the converter turns it into a
profiled Job (instances.delta.models: ``job.profile`` replaces the FLOP model), so the
1F1B DAG, its inter-Pod reduction and the replica isomorphism are those of
``generate delta --model`` (instances.delta.dag) and every delta method runs on it.
Delta spec 1.1 (system model), 1.2.5 (generator), 6 (decisions); decisions of this module
are marked [D].

Rows. AICB writes once-per-iteration rows around the layer rows: its gradient and
optimizer steps (``grad_gather``, ``grad_param(_comm|_compute)``, ``grad_norm``, ``norm``,
``layernorm``, ``embedding_grads``, ``moe_grad_norm1/2``, ``embedding_norm``,
``optimizer<k>``). [D] These ITERATION_ROWS are recognized by name; the loss rows
``cross_entropy<k>`` (written once, after the layer rows) are one micro-batch's loss; every
other row is a per-micro-batch layer row. A new-header file repeats its layer rows GA times
(the first copy can differ); the per-micro-batch numbers are their sums over the file divided
by GA [D: the mean copy, which keeps the iteration's total compute].

Stage placement (issue 31; Megatron's ``pre_process`` / ``post_process``): AICB's mocked
model writes the embedding (``embedding_layer``) and the output layer (``final_column``,
hidden x vocab) into every rank's program. Megatron runs the embedding on the first pipeline
stage only and the output layer and the loss on the last: so does the converter, in both
``stages`` modes (stage 0 gets the embedding rows, stage PP-1 the ``final*`` and loss rows,
every stage the other layer rows). [D] The DP bytes stay per stage as written (the file's
gradient collectives are one row for all its parameters, embedding included: they cannot be
split by layer).

* Compute (ns in the file): t_F = forward compute of the layer rows, t_B = input-gradient +
  weight-gradient compute. The iteration rows' compute becomes ``opt_ms``, the OPT step after
  the DP synchronization [D: Megatron's optimizer step follows the gradient reduce-scatter].
* Groups (SimAI Workload.cc): forward and input-gradient collectives without suffix run in
  the TP group, weight-gradient ones in the DP group; ``_EP`` = the EP group; ``_DP_EP`` = a
  group of DP/EP ranks. TP and EP stay inside a Pod (paper: "we restrict inter-pod
  communication to PP and DP"): [D] by default their time is not added (the file's compute
  only, spec 1.2.5 ``tp_ep_overhead`` 0); with ``fold_gbps`` > 0 each adds factor x bytes /
  bus bandwidth (NCCL's bus-bandwidth convention) to the phase it belongs to.
* DP: every DP and DP_EP collective (its bytes as written, summed over the file) is the
  stage's DP synchronization, one per iteration after its last backward (spec decision 9).
  [D] Collectives are hierarchical: the k members of a group inside one Pod unit share the
  buffer, and the inter-Pod ring over the R replicas carries factor(R) x bytes / k per GPU;
  factor(n) = 2(n-1)/n for ALLREDUCE, (n-1)/n for ALLGATHER, REDUCESCATTER, ALLTOALL,
  3(n-1)/n for ALLREDUCEALLTOALL; BROADCAST is ignored, as SimAI ignores it.
* P2P: the activation A = ``pp_comm`` (read as the full activation 2*mbs*seq*h bytes, as AICB
  wrote it before commit a076fdb), else 2 x ``seq_len`` x ``hidden`` (mbs 1), else [D] the
  most frequent size of the layer rows' forward TP collectives (Megatron's TP collective on a
  layer output is one activation). Bytes per TP rank: ``full`` = A, ``split`` = A/TP,
  ``auto`` (default) = split under sequence parallelism, which [D] the file shows when no
  non-embedding layer row has a forward TP ALLREDUCE and some have ALLGATHER/REDUCESCATTER
  (AICB's SP layout), else full (Megatron-core sends the full tensor without SP). The choice
  matters (the data README: GPT-175B's best-baseline NCT at 400 Gb/s, about 1.54 full vs 1.09
  split; measured here with ``--pp 8``, defaults otherwise: iter-halve 1.235 vs 1.079).
  For a file written after a076fdb with SP, ``pp_comm`` is already A/TP: give ``full``.

Placement (spec 1.2.5, decisions 3-4): a stage unit is n_s = TP GPUs (dense) or EP x ETP
(MoE, [D] ETP default = TP, Megatron-core's default, which makes SimAI's DP/EP group exactly
the R replicas); R = DP x TP / n_s replicas; stage s of replica r sits in Pod (r, s // sp),
sp stages per Pod per replica (``gpus_per_pod`` = sp x n_s, or ``pods`` = R x ceil(PP/sp) in
total); [D] default sp = 2, as Table I's two smaller jobs (16 GPUs per Pod per replica with
8-GPU stages). PP = the header's ``pp``, else 1; DP = ``all_gpus`` / (TP x PP), else [D] two
replicas; micro-batches = GA, else 8 x PP (the paper). ``stages``: ``file`` (default: every
stage runs the file's program, as SimAI runs it on every rank; AICB's GPT-175B file is one
stage of eight) or ``split`` (the file holds the whole model: compute, DP bytes and the
iteration rows are divided evenly over the PP stages).

Interleaved 1F1B (Megatron's virtual pipeline, vpp model chunks per stage) is refused
([D], issue 31): ``vpp`` (0 = the header's, else 1) above 1 is an error naming vpp. Its
DAG would be another one (each micro-batch circles the PP stages vpp times, with vpp x the
stage-boundary transfers and a link from the last stage's Pod back to the first's), and
the header is no evidence of it: AICB writes ``vpp: <layers per stage>`` (utils.get_params
divides num_layers by PP; SimAI's analytical backend reads it as the interleaving degree of
its bubble term (PP-1) / (GA x vpp)). A file with ``vpp`` > 1 converts with ``--vpp 1``:
the same rows as non-interleaved 1F1B, knowingly.
"""
from __future__ import annotations

import os
import re

import numpy as np

from instances.delta.simai import SimaiWorkload, read_simai, warn_row_count
from instances.errors import InstanceError

ITERATION_ROWS = frozenset({"norm", "grad_norm", "grad_gather", "grad_param", "grad_param_comm",
                            "grad_param_compute", "layernorm", "embedding_grads", "moe_grad_norm1",
                            "moe_grad_norm2", "embedding_norm"})
_ITER_PATTERN = re.compile(r"optimizer\d+")
_LOSS_PATTERN = re.compile(r"cross_entropy\d+")
FIRST_STAGE_ROWS = frozenset({"embedding_layer"})      # Megatron: pre_process stage only
FACTOR = {"ALLREDUCE": 2.0, "ALLGATHER": 1.0, "REDUCESCATTER": 1.0, "ALLTOALL": 1.0,
          "ALLREDUCEALLTOALL": 3.0}         # x (n-1)/n per GPU (ring / bus-bandwidth convention)
P2P_CHOICES = ("auto", "full", "split")
STAGE_CHOICES = ("file", "split")
MAX_COUNT = 2**16                           # PP, DP, micro-batches, Pods (the Job's ranges)


def is_iteration_row(name: str) -> bool:
    return name in ITERATION_ROWS or _ITER_PATTERN.fullmatch(name) is not None


def row_stage(name: str) -> str:
    """Where Megatron runs a per-micro-batch row: ``first`` (the embedding), ``last`` (the
    output layer ``final*`` and the loss ``cross_entropy<k>``) or ``every`` stage."""
    if name in FIRST_STAGE_ROWS:
        return "first"
    if name == "final" or name.startswith("final_") or _LOSS_PATTERN.fullmatch(name):
        return "last"
    return "every"


def convert_simai(path: str, name: str = "", lenient: bool = False, **options):
    """The DeltaInstance of a SimAI file (job form; the DAG is built on load). Options: see
    :func:`simai_job`; ``lenient``: see instances.delta.simai. Every error names the file
    (and the line when a row is at fault)."""
    from instances.delta.instance import from_job

    w = read_simai(path, lenient=lenient)
    try:
        job = simai_job(w, **options)
        inst = from_job(job, name=name or auto_name(job))
        if inst.n_tasks == 0:
            raise InstanceError("job", "no inter-Pod communication with these settings (no "
                                "DP collective across Pods and no pipeline stage boundary "
                                "between Pods): nothing for a logical topology to serve")
        warn_row_count(w)
        return inst
    except InstanceError as exc:
        raise exc if exc.source else exc.with_source(str(path))


def auto_name(job: dict) -> str:
    st = job["profile"]["settings"]
    return (f"{job['model']}-pp{job['pp']}-dp{st['dp']}-n{job['micro_batches']}-"
            f"{job['bandwidth_gbps']:g}g")


def simai_job(w: SimaiWorkload, pp: int = 0, dp: int = 0, micro_batches: int = 0, pods: int = 0,
              gpus_per_pod: int = 0, etp: int = 0, bandwidth_gbps: float = 400.0,
              p2p_per_rank: str = "auto", hidden: int = 0, seq_len: int = 4096,
              stages: str = "file", fold_gbps: float = 0.0, vpp: int = 0, **job_keys) -> dict:
    """The job dict (``job`` of a file; keys of instances.delta.models.Job) of a parsed file.
    0 means the default of the module docstring; ``job_keys`` (p2p_mode, dp_ring, replicas,
    intra_bandwidth_gbps) pass through to the Job."""
    for key, v in (("pp", pp), ("dp", dp), ("micro_batches", micro_batches), ("pods", pods),
                   ("gpus_per_pod", gpus_per_pod), ("etp", etp), ("hidden", hidden),
                   ("seq_len", seq_len), ("vpp", vpp)):
        hi = 2**24 if key in ("gpus_per_pod", "hidden", "seq_len") else MAX_COUNT
        if not 0 <= v <= hi:
            raise InstanceError(key, f"must be in [0, {hi}], got {v}")
    if not fold_gbps >= 0 or fold_gbps > 1e7:
        raise InstanceError("fold_gbps", f"must be in [0, 1e7] Gb/s, got {fold_gbps!r}")
    if p2p_per_rank not in P2P_CHOICES:
        raise InstanceError("p2p_per_rank", f"must be one of {', '.join(P2P_CHOICES)}, got {p2p_per_rank!r}")
    if stages not in STAGE_CHOICES:
        raise InstanceError("stages", f"must be one of {', '.join(STAGE_CHOICES)}, got {stages!r}")
    h = w.header
    if vpp > 1:
        raise InstanceError("vpp", f"interleaved 1F1B (vpp = {vpp} model chunks per stage) is not "
                            "modelled: the DAG is Megatron's non-interleaved 1F1B (vpp 1)")
    if not vpp and (h["vpp"] or 1) > 1:
        raise InstanceError("line 1, vpp", f"vpp: {h['vpp']} reads as interleaved 1F1B, which is "
                            "not modelled; AICB writes vpp = layers per stage, so --vpp 1 converts "
                            "the file as non-interleaved 1F1B", w.path)
    tp, ep = h["tp"], h["ep"] or 1
    moe = ep > 1
    P = pp or h["pp"] or 1
    if etp and not moe:
        raise InstanceError("etp", "applies only to an MoE file (header ep > 1)")
    etp = etp or tp
    n_s = ep * etp if moe else tp
    if moe and n_s % tp:
        raise InstanceError("etp", f"EP x ETP = {n_s} must be a multiple of TP = {tp}")
    if dp:
        DP = dp
    elif h["all_gpus"] is not None:
        if h["all_gpus"] % (tp * P):
            raise InstanceError("line 1, all_gpus", f"{h['all_gpus']} GPUs are not a multiple of "
                                f"TP x PP = {tp * P}", w.path)
        DP = h["all_gpus"] // (tp * P)
    else:
        DP = 2 * n_s // tp
    if (DP * tp) % n_s:
        raise InstanceError("dp", f"DP x TP = {DP * tp} GPUs per stage are not whole stage units "
                            f"of n_s = {n_s} GPUs (EP x ETP)")
    R = DP * tp // n_s
    if R * P * n_s > 2**24:
        raise InstanceError("dp", f"{R * P * n_s} GPUs exceed the 2^24 cap")
    N = micro_batches or h["ga"] or 8 * P
    sp = _stages_per_pod(P, R, n_s, pods, gpus_per_pod)

    it = np.array([is_iteration_row(n) for n in w.names], dtype=bool)
    place = np.array([row_stage(n) for n in w.names], dtype=object)
    loss = np.array([_LOSS_PATTERN.fullmatch(n) is not None for n in w.names], dtype=bool)
    mb = ~it & ~loss
    copies = h["ga"] or 1
    if mb.sum() % copies:
        raise InstanceError("line 1, ga", f"the {int(mb.sum())} layer rows are not {copies} equal "
                            "copies (ga)", w.path)
    group = _groups(w.comm_type)                         # (n, 3): "TP", "EP", "DP", "DP_EP", ""
    base = np.vectorize(_base, otypes=[object])(w.comm_type)
    size = w.comm_bytes.astype(float)

    # compute (+ folded TP/EP collectives), ns
    fold = np.zeros(size.shape)
    if fold_gbps > 0:
        n_of = {"TP": tp, "EP": ep}
        for g_name, n in n_of.items():
            sel = group == g_name
            f = np.array([FACTOR.get(b, 0.0) for b in base[sel]]) * (n - 1) / n
            fold[sel] = f * size[sel] / (fold_gbps / 8.0)      # bytes / (bytes per ns)
    work = w.compute + fold
    # per micro-batch ns (fwd, bwd) of the rows every stage runs, the first's and the last's
    per_mb = {k: np.array([work[mb & (place == k), 0].sum(), work[mb & (place == k), 1:].sum()])
              / copies for k in ("every", "first", "last")}
    per_mb["last"] = per_mb["last"] + [work[loss, 0].sum(), work[loss, 1:].sum()]
    opt_ns = work[it].sum()

    # DP synchronization: inter-Pod bytes per GPU over the ring of R replicas
    dp_bytes = 0.0
    for g_name, members in (("DP", DP), ("DP_EP", DP // ep if DP % ep == 0 else 0)):
        sel = group == g_name
        if not sel.any() or R == 1:
            continue
        if members == 0 or members % R:
            r0 = int(w.line[np.argmax(sel.any(axis=1))])
            size_txt = f"DP/EP = {DP}/{ep}" if g_name == "DP_EP" else f"DP = {DP}"
            raise InstanceError(f"line {r0}", f"the {g_name} group ({size_txt} ranks) does not span "
                                f"the {R} replicas evenly (--etp {etp}, --dp {DP})", w.path)
        k = members // R
        f = np.array([FACTOR[b] for b in base[sel]]) * (R - 1) / R
        dp_bytes += float((f * size[sel]).sum()) / k
    share = 1.0 / P if stages == "split" else 1.0
    settings = {"tp": tp, "ep": ep, "etp": etp if moe else 0, "dp": DP, "replicas": R, "n_s": n_s,
                "stages": stages, "ga_copies": copies, "iteration_rows": int(it.sum()),
                "first_stage_rows": int((mb & (place == "first")).sum()),
                "last_stage_rows": int((mb & (place == "last")).sum() + loss.sum()),
                "fold_gbps": float(fold_gbps)}
    stage_ns = [per_mb["every"] * share + per_mb["first"] * (s == 0) + per_mb["last"] * (s == P - 1)
                for s in range(P)]
    profile = {"fwd_ms": [float(t[0]) / 1e6 for t in stage_ns],
               "bwd_ms": [float(t[1]) / 1e6 for t in stage_ns],
               "dp_mb": [dp_bytes * share / 1e6] * P, "moe": moe,
               "source": os.path.basename(w.path), "settings": settings}
    if P > 1:
        per_rank, how = _p2p_bytes(w, mb, mb & (place == "every"), group, base, size, p2p_per_rank,
                                   hidden, seq_len, tp)
        profile["pp_mb"] = float(n_s * per_rank / 1e6)
        settings.update(how)
    model = "simai-" + re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.splitext(profile["source"])[0])[:120]
    job = dict(model=model, tp=tp, pp=P, gpus=R * P * n_s, gpus_per_pod_per_replica=sp * n_s,
               micro_batches=N, bandwidth_gbps=float(bandwidth_gbps), opt_ms=float(opt_ns) * share / 1e6)
    if moe:
        job.update(ep=ep, etp=etp)
    job.update(job_keys)
    job["profile"] = profile
    return job


def _stages_per_pod(P: int, R: int, n_s: int, pods: int, gpus_per_pod: int) -> int:
    """sp from ``gpus_per_pod`` (GPUs per Pod per replica) or ``pods`` (in total); default 2."""
    sp = None
    if gpus_per_pod:
        if gpus_per_pod % n_s:
            raise InstanceError("gpus_per_pod", f"{gpus_per_pod} is not a multiple of the stage "
                                f"unit n_s = {n_s} GPUs")
        sp = min(gpus_per_pod // n_s, P)
    if pods:
        blocks = pods // R
        if pods % R or not 1 <= blocks <= P or -(-P // -(-P // blocks)) != blocks:
            raise InstanceError("pods", f"{pods} Pods cannot hold {R} replicas of {P} stages in "
                                "equal blocks of consecutive stages")
        if sp is not None and -(-P // sp) != blocks:
            raise InstanceError("pods", f"{pods} Pods disagree with --gpus-per-pod {gpus_per_pod} "
                                f"({R * -(-P // sp)} Pods)")
        sp = -(-P // blocks)
    return sp if sp is not None else min(2, P)


def _base(kind: str) -> str:
    for suffix in ("_DP_EP", "_EP"):
        if kind.endswith(suffix):
            return kind[: -len(suffix)]
    return kind


def _groups(types: np.ndarray) -> np.ndarray:
    """The group of every (row, phase) collective per SimAI's Workload.cc ("" = none)."""
    t = types.astype(str)
    dp_ep = np.char.endswith(t, "_DP_EP")
    ep = np.char.endswith(t, "_EP") & ~dp_ep
    bare = ~np.isin(t, ["NONE", "BROADCAST"]) & ~dp_ep & ~ep
    wg = np.zeros(t.shape, dtype=bool)
    wg[:, 2] = True
    out = np.full(t.shape, "", dtype=object)
    out[dp_ep], out[ep] = "DP_EP", "EP"
    out[bare & wg], out[bare & ~wg] = "DP", "TP"
    return out


def _p2p_bytes(w, mb, layer, group, base, size, mode, hidden, seq_len, tp):
    """Bytes each GPU sends across a stage boundary per micro-batch, and how they were found
    (``layer``: the transformer-layer rows, which show sequence parallelism)."""
    tp_fwd = layer & (group[:, 0] == "TP")
    has_ar = bool((tp_fwd & (base[:, 0] == "ALLREDUCE")).any())
    has_agrs = bool((tp_fwd & np.isin(base[:, 0], ["ALLGATHER", "REDUCESCATTER"])).any())
    sp = has_agrs and not has_ar
    if w.header["pp_comm"]:
        act, src = float(w.header["pp_comm"]), "pp_comm"
    elif hidden:
        act, src = 2.0 * seq_len * hidden, "hidden"
    else:
        cand = mb & (group[:, 0] == "TP") & np.isin(base[:, 0], ["ALLREDUCE", "ALLGATHER", "REDUCESCATTER"])
        vals = size[cand, 0]
        vals = vals[vals > 0]
        if not vals.size:
            raise InstanceError("line 2", "no P2P activation size: the header has no pp_comm and no "
                                "layer row has a forward TP collective; give --hidden and --seq-len",
                                w.path)
        u, c = np.unique(vals, return_counts=True)
        act, src = float(u[np.flatnonzero(c == c.max())[-1]]), "tp_collectives"
    split = mode == "split" or (mode == "auto" and sp)
    return act / tp if split else act, {"activation_bytes": act, "activation_from": src,
                                        "sequence_parallel": sp,
                                        "p2p_per_rank": "split" if split else "full"}
