"""The DELTA problem type for the command line: baselines, metrics, generator."""
from __future__ import annotations

import numpy as np

from heuristics.delta_baselines import BASELINES
from heuristics.delta_sim import critical_path_bound, evaluate
from instances.delta import DeltaInstance, check_solution, from_job
from instances.delta_models import TABLE_I
from instances.errors import InstanceError
from toolkit.registry import Generator, Method, MethodOutput, Problem, RunConfig, register_problem


def _baseline(name):
    def run(inst: DeltaInstance, cfg: RunConfig) -> MethodOutput:
        policy = cfg.option("policy", "maxmin")
        if policy not in ("maxmin", "link_equal"):
            raise ValueError(f"option policy: expected maxmin or link_equal, got {policy!r}")
        x = BASELINES[name](inst)
        ev = evaluate(inst, x, policy=policy)
        metrics = {k: ev[k] for k in ("nct", "nct_exposed", "ideal_iteration_time") if k in ev}
        return MethodOutput(ev["sim"].solution(x), metrics=metrics)
    return run


def metrics(inst: DeltaInstance, sol) -> tuple[list[str], dict]:
    bad, m = check_solution(inst, sol)
    m["lower_bound"] = critical_path_bound(inst)
    m["tasks"] = inst.n_tasks
    return bad, m


GEN_PARAMS = {
    "model": (str, "gpt-7b", f"Table I workload ({', '.join(TABLE_I)})"),
    "micro_batches": (int, 0, "micro-batches per iteration (0 = Table I value)"),
    "seq_len": (int, 4096, "sequence length"),
    "bandwidth_gbps": (float, 400.0, "per-GPU NIC = OCS port bandwidth, Gb/s"),
    "gpu_tflops": (float, 400.0, "effective GPU throughput, TFLOP/s"),
    "p2p_mode": (str, "megatron_blocking", "megatron_blocking or async"),
    "dp_ring": (str, "bidirectional", "bidirectional or unidirectional"),
    "replicas": (str, "canonical", "canonical (replica 0 + orbits) or full"),
    "form": (str, "job", "job (the description; the DAG is generated on load) or derived"),
    "name": (str, "", "instance name"),
}


def generate(model="gpt-7b", micro_batches=0, seq_len=4096, bandwidth_gbps=400.0, gpu_tflops=400.0,
             p2p_mode="megatron_blocking", dp_ring="bidirectional", replicas="canonical",
             form="job", name="") -> DeltaInstance:
    if model not in TABLE_I:
        raise InstanceError("model", f"unknown workload {model!r} (known: {', '.join(TABLE_I)})")
    if form not in ("job", "derived"):
        raise InstanceError("form", f"must be job or derived, got {form!r}")
    job = dict(TABLE_I[model])
    if micro_batches:
        job["micro_batches"] = micro_batches
    job.update(seq_len=seq_len, bandwidth_gbps=bandwidth_gbps, gpu_tflops=gpu_tflops,
               p2p_mode=p2p_mode, dp_ring=dp_ring, replicas=replicas)
    auto = f"{model}-n{job['micro_batches']}-seq{seq_len}-{bandwidth_gbps:g}g"
    inst = from_job(job, name=name or auto)
    if form == "derived":
        inst.job = None
    return inst


register_problem(Problem(
    name="delta",
    summary="DAG-aware OCS logical topology for one LLM training job across pods (Ye et al. 2026)",
    check=metrics,
    objective="iteration_time",
    sense="min",
    metrics=("iteration_time", "nct", "nct_exposed", "ideal_iteration_time", "lower_bound",
             "ports_used", "port_ratio", "tasks"),
    methods={m.name: m for m in [
        Method("prop-alloc", "heuristic", _baseline("prop-alloc"),
               "Prop-Alloc baseline (from SiP-ML): circuits proportional to traffic volume",
               "policy=maxmin|link_equal"),
        Method("sqrt-alloc", "heuristic", _baseline("sqrt-alloc"),
               "Sqrt-Alloc baseline: circuits proportional to sqrt(volume)", "policy=maxmin|link_equal"),
        Method("iter-halve", "heuristic", _baseline("iter-halve"),
               "Iter-Halve baseline (from TopoOpt): heaviest pair gets a circuit, weight halves",
               "policy=maxmin|link_equal"),
    ]},
    default_method="sqrt-alloc",
    bound=critical_path_bound,
    generator=Generator(generate, GEN_PARAMS),
))
