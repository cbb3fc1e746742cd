"""The ``lumos-placement`` problem type: place an arriving job on a cluster's free GPUs.

Methods ([002] 4.2.1, A.4; spec 2.8): ``placement-greedy`` (best fit by locality, default),
``placement-ilp`` (the corrected model, Pod level then leaf level; exact) and
``placement-authors`` (the [REPO] variant). Objective: idle GPUs left in the chosen Pods
(eq. 41: best fit), checked by ``instances.lumos.placement_check``.
"""
from __future__ import annotations

import numpy as np

from instances.errors import InstanceError
from instances.lumos.placement import PlacementInstance, guard_placement
from instances.lumos.placement_check import check_placement
from toolkit.options import MAX_MODEL_VARS, Option
from toolkit.registry import lazy, Generator, Method, MethodOutput, Problem, RunConfig, register_problem

greedy_placement = lazy("heuristics.lumos.placement", "greedy_placement")
solve_placement = lazy("models.lumos.placement", "solve_placement")

PODS_FIRST = Option("pods_first", bool, False,
                    "fewest Pods (and leaves) first, then fewest idle GPUs (spec 2.8 weighting)")
MAX_VARS = 200_000
MAX_VARS_OPT = Option("max_vars", int, MAX_VARS, "decline clusters whose models could have more "
                      "variables (3 per Pod + 2 per leaf)", minimum=0, maximum=MAX_MODEL_VARS)
EP_SPLIT = Option("ep_split", bool, False, "allow EP domains across Pods when no placement keeps "
                  "them whole (the [002] 4.2.1 fragmentation exception)")


def run_greedy(inst: PlacementInstance, cfg: RunConfig) -> MethodOutput:
    from heuristics.lumos.placement import NoPlacement
    from models.backend import Result

    try:
        return MethodOutput(greedy_placement(inst, cfg.option("ep_split")))
    except NoPlacement as exc:
        return MethodOutput(None, Result("infeasible", message=f"no placement: {exc}"))


def run_model(variant: str):
    def run(inst: PlacementInstance, cfg: RunConfig) -> MethodOutput:
        first = cfg.option("pods_first") if variant == "corrected" else False
        sol, res = solve_placement(inst, variant, first, cfg.solve_kw, cfg.budget.stage)
        return MethodOutput(sol, res)
    return run


def ilp_applicable(inst: PlacementInstance, cfg: RunConfig) -> str | None:
    fab = inst.cluster.fabric
    n, cap = 3 * fab.pods + 1 + 2 * fab.n_leaves, cfg.option("max_vars")
    return f"up to {n} variables > max_vars={cap} (--option max_vars=N forces)" if n > cap else None


GEN_PARAMS = {
    "gpus": (int, 4096, "cluster GPUs (the paper's scales: 2048 to 32768), a multiple of the GPUs per Pod"),
    "k_leaf": (int, 32, "K_leaf: GPU ports per leaf"), "k_spine": (int, 32, "K_spine (even)"),
    "tau": (int, 2, "links per (leaf, spine); GPUs per Pod = k_spine * k_leaf / tau"),
    "gpus_per_server": (int, 8, "T"),
    "load": (float, 0.7, "fraction of GPUs busy"),
    "state": (str, "trace", "trace (trace jobs placed by the greedy, then random departures) or "
              "random (whole servers busy independently)"),
    "job": (int, -1, "trace index of the arriving job (-1: random)"),
    "trace": (str, "", "trace file (default: the shipped instances/lumos/trace/request_sequence)"),
    "seed": (int, 0, "random seed"), "name": (str, "", "instance name"),
}


def generate(gpus=4096, k_leaf=32, k_spine=32, tau=2, gpus_per_server=8, load=0.7, state="trace",
             job=-1, trace="", seed=0, name="") -> PlacementInstance:
    from instances.lumos.placement_workloads import (TRACE, load_trace, make_cluster, random_state,
                                                     trace_job, trace_state)

    if not 0 <= load < 1:
        raise InstanceError("load", f"must be within [0, 1), got {load}")
    if state not in ("trace", "random"):
        raise InstanceError("state", f"must be trace or random, got {state!r}")
    if seed < 0:
        raise InstanceError("seed", f"must be >= 0, got {seed}")
    for key, v in (("k_leaf", k_leaf), ("k_spine", k_spine), ("tau", tau),
                   ("gpus_per_server", gpus_per_server)):
        if v < 1:
            raise InstanceError(key, f"must be >= 1, got {v}")
    cl = make_cluster(gpus, k_leaf, k_spine, tau, gpus_per_server)
    guard_placement(cl)
    tr = load_trace(trace or TRACE)
    if not -1 <= job < len(tr):
        raise InstanceError("job", f"must be -1 or a trace index 0..{len(tr) - 1}, got {job}")
    rng = np.random.default_rng(seed)
    busy = trace_state(cl, load, rng, tr) if state == "trace" else random_state(cl, load, rng)
    k = int(rng.integers(len(tr))) if job < 0 else job
    j, ratios = trace_job(int(tr[k, 2]), rng, gpus_per_server)
    auto = f"placement-{gpus}-{state}-l{load:g}-j{k}-s{seed}"
    meta = {"generator": dict(state=state, load=load, seed=seed, trace_index=k,
                              duration_s=int(tr[k, 1])), "job_ratios": ratios}
    return PlacementInstance(cl, busy, j, name or auto, meta)


register_problem(Problem(
    name="lumos-placement",
    summary="LumosCore GPU placement of an arriving job ([002] Section 4.2.1, A.4)",
    check=check_placement,
    objective="idle_gpus",
    sense="min",
    metrics=("idle_gpus", "pods_used", "leaves_used", "servers_used", "cross_pod_ep_domains",
             "ep_exception", "fragmentation", "free_gpus"),
    methods={m.name: m for m in [
        Method("placement-greedy", "heuristic", run_greedy,
               "best fit by locality: one leaf, else Pods then leaves then servers (fewest idle)",
               (EP_SPLIT,)),
        Method("placement-ilp", "model", run_model("corrected"),
               "corrected A.4 model (spec 2.8), Pod level then leaf level: min idle GPUs",
               (PODS_FIRST, MAX_VARS_OPT), applicable=ilp_applicable, exact=True),
        Method("placement-authors", "model", run_model("authors"),
               "[REPO] variant: 100 * Pods + free slots - mini_x, leaves likewise, GPUs in id order",
               (MAX_VARS_OPT,), applicable=ilp_applicable),
    ]},
    default_method="placement-greedy",
    generator=Generator(generate, GEN_PARAMS),
))
